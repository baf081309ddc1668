// Preloaded into a server under benchmark (`node --import …/alloc-probe.mjs`): counts the bytes the
// process allocates on its JavaScript heap between two SIGUSR2 signals, from V8's own GC statistics
// (v8.GCProfiler: the heap in use before each collection, minus what the previous one left). The second
// signal writes `{ "bytes": N, "collections": N, "gc": {…} }` to the file named by WEAVIATE_MCP_ALLOC_FILE.
// `allocated` and `collected` are the counting rules, also used in process by ServerCost.ts.
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import * as NodeInspector from "node:inspector"
import { monitorEventLoopDelay, performance } from "node:perf_hooks"
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

// With WEAVIATE_MCP_STALL_PROBE=1 the window also records where each HTTP request's time went, on the
// server's side (`BENCH_STALL_PROBE=1` in bench:tools-list): for every request on node:http, the time
// from its `request` event to `response.end()` (the server's work), from `end()` to `finish` (its bytes
// waiting for the socket: the client reading slowly, or the kernel), and from the previous `finish` on
// the same socket to this `request` event (the client's turn-around plus the time the server left the
// bytes unread); the event loop's delay (monitorEventLoopDelay, 1 ms resolution), the longest single
// collection pause, and the longest time without any response finishing. A tail that is the server's
// shows in the first, the loop delay or the gaps; one that is the client's, in the drain or the gaps.
const stallProbe = process.env.WEAVIATE_MCP_STALL_PROBE === "1"
let stall
if (stallProbe) {
  const emit = NodeHttp.Server.prototype.emit
  const lastFinish = new WeakMap()
  const connectedAt = new WeakMap()
  NodeHttp.Server.prototype.emit = function (event, request, response) {
    if (event === "connection" && stall !== undefined) {
      const now = performance.now()
      connectedAt.set(request, now)
      stall.firstConnection ??= now
      stall.lastConnection = now
    }
    if (event === "request" && stall !== undefined) {
      const window = stall
      const start = performance.now()
      const socket = request.socket
      const previous = lastFinish.get(socket)
      if (previous !== undefined) window.turnaround.push(start - previous)
      else if (connectedAt.has(socket)) window.firstRequest.push(start - connectedAt.get(socket))
      let ended = start
      const end = response.end
      response.end = function (...args) {
        ended = performance.now()
        return end.apply(this, args)
      }
      response.once("finish", () => {
        const finished = performance.now()
        lastFinish.set(socket, finished)
        window.work.push(ended - start)
        window.drain.push(finished - ended)
        window.longestGap = Math.max(window.longestGap, finished - window.lastFinished)
        window.lastFinished = finished
      })
    }
    return emit.apply(this, arguments)
  }
}
const quantiles = (values) => {
  const sorted = Float64Array.from(values).sort()
  const at = (p) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))])
  return { p50: at(50), p99: at(99), max: sorted.length === 0 ? 0 : sorted[sorted.length - 1] }
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
      if (stallProbe) {
        const loop = monitorEventLoopDelay({ resolution: 1 })
        loop.enable()
        stall = { loop, work: [], drain: [], turnaround: [], firstRequest: [], longestGap: 0, lastFinished: performance.now(), opened: performance.now() }
      }
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
    let stalls
    if (stall !== undefined) {
      stall.loop.disable()
      stalls = {
        requests: stall.work.length,
        work: quantiles(stall.work),
        drain: quantiles(stall.drain),
        turnaround: quantiles(stall.turnaround),
        firstRequest: quantiles(stall.firstRequest),
        connectionsSpreadMs: (stall.lastConnection ?? 0) - (stall.firstConnection ?? 0),
        openedAfterMs: (stall.firstConnection ?? stall.opened) - stall.opened,
        loopDelayMaxMs: stall.loop.max / 1e6,
        loopDelayP99Ms: stall.loop.percentile(99) / 1e6,
        longestGcPauseMs: Math.max(0, ...statistics.map((entry) => entry.cost / 1000)),
        longestGapMs: stall.longestGap
      }
      stall = undefined
    }
    NodeFs.writeFileSync(file, JSON.stringify({ bytes: allocated(startUsed, statistics, endUsed), collections: statistics.length, gc: collected(statistics), stalls }))
  })
}
