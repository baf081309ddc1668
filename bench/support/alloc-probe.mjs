// Preloaded into a server under benchmark (`node --import …/alloc-probe.mjs`): counts the bytes the
// process allocates on its JavaScript heap between two SIGUSR2 signals, from V8's own GC statistics
// (v8.GCProfiler: the heap in use before each collection, minus what the previous one left). The second
// signal writes `{ "bytes": N, "collections": N, "gc": {…} }` to the file named by WEAVIATE_MCP_ALLOC_FILE.
// `allocated` and `collected` are the counting rules, also used in process by ServerCost.ts.
import * as NodeFs from "node:fs"
import * as NodeInspector from "node:inspector"
import * as NodeV8 from "node:v8"

/** Bytes allocated between a heap size in use at the start, the collections since, and the size in use now. */
export const allocated = (startUsed, statistics, endUsed) => {
  let bytes = 0
  let after = startUsed
  for (const gc of statistics) {
    bytes += gc.beforeGC.heapStatistics.usedHeapSize - after
    after = gc.afterGC.heapStatistics.usedHeapSize
  }
  return bytes + endUsed - after
}

const oldSpaceUsed = (heap) => heap.heapSpaceStatistics.find((space) => space.spaceName === "old_space")?.spaceUsedSize ?? 0

/**
 * What the collections of a window cost, from the same statistics: scavenges (young generation) and
 * full collections, each with their pause on the main thread (GCProfiler's `cost`, µs), and the bytes
 * scavenges promoted to the old generation (its growth across each scavenge). Objects that outlive a
 * scavenge or two are copied, then promoted, then marked and swept by the full collections (much of
 * that on V8's helper threads): short-lived garbage costs almost nothing, long-lived garbage a lot.
 */
export const collected = (statistics) => {
  const gc = { scavenges: 0, scavengeMs: 0, fullCollections: 0, fullMs: 0, promotedBytes: 0 }
  for (const entry of statistics) {
    if (entry.gcType === "Scavenge") {
      gc.scavenges++
      gc.scavengeMs += entry.cost / 1000
      gc.promotedBytes += Math.max(0, oldSpaceUsed(entry.afterGC) - oldSpaceUsed(entry.beforeGC))
    } else {
      // Incremental marking steps (and weak-callback processing) pause the main thread too; only a
      // mark-compact is a full collection.
      if (entry.gcType === "MarkSweepCompact") gc.fullCollections++
      gc.fullMs += entry.cost / 1000
    }
  }
  return gc
}

// With WEAVIATE_MCP_ALLOC_SAMPLE=FILE the same window also records where the bytes were allocated:
// V8's sampling heap profiler, counting objects already collected, written as a .heapprofile
// (read it in Chrome DevTools' Memory tab). For what outlives the young generation, V8's own map and
// GC logs said more (`BENCH_NODE_ARGS="--trace-gc --trace-gc-nvp"`, `--log-maps`; docs/benchmarks.md).
const sampleFile = process.env.WEAVIATE_MCP_ALLOC_SAMPLE
// With WEAVIATE_MCP_CPU_PROFILE=PATH (`npm run bench:profile`), a CPU profile of exactly the window is
// written to PATH.<window>.cpuprofile: the start-up and the warm-up stay out of it, where a whole-process
// `--cpu-prof` was mostly loading and compiling on a run of a few hundred calls.
const cpuProfile = process.env.WEAVIATE_MCP_CPU_PROFILE
let windows = 0
const session = sampleFile || cpuProfile ? new NodeInspector.Session() : undefined
session?.connect()
if (cpuProfile) {
  session.post("Profiler.enable")
  session.post("Profiler.setSamplingInterval", { interval: 250 })
}

const file = process.env.WEAVIATE_MCP_ALLOC_FILE
if (file !== undefined && file !== "") {
  let profiler
  let startUsed = 0
  process.on("SIGUSR2", () => {
    if (profiler === undefined) {
      if (cpuProfile) session.post("Profiler.start")
      if (sampleFile) session.post("HeapProfiler.startSampling", {
        samplingInterval: 4096,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true
      })
      startUsed = NodeV8.getHeapStatistics().used_heap_size
      profiler = new NodeV8.GCProfiler()
      profiler.start()
      return
    }
    const endUsed = NodeV8.getHeapStatistics().used_heap_size
    const { statistics } = profiler.stop()
    profiler = undefined
    const window = ++windows
    if (cpuProfile) {
      session.post("Profiler.stop", (error, result) => {
        if (error === null) NodeFs.writeFileSync(`${cpuProfile}.${window}.cpuprofile`, JSON.stringify(result.profile))
      })
    }
    if (sampleFile) {
      session.post("HeapProfiler.stopSampling", (error, result) => {
        if (error === null) NodeFs.writeFileSync(`${sampleFile}.${process.pid}.${window}.heapprofile`, JSON.stringify(result.profile))
      })
    }
    NodeFs.writeFileSync(file, JSON.stringify({ bytes: allocated(startUsed, statistics, endUsed), collections: statistics.length, gc: collected(statistics) }))
  })
}
