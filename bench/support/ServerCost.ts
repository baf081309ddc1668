/**
 * What a server process spends per call, measured from outside it over a window of calls:
 * - CPU: user + system time of every thread of the process, from `/proc/PID/stat` (Linux);
 * - bytes allocated on its JavaScript heap, when it was started with `alloc-probe.mjs` preloaded
 *   (`probeArgs`): two SIGUSR2 signals open and close the window;
 * - from the same probe, what its collections cost: the main thread's pauses and the bytes promoted to
 *   the old generation (what outlives a scavenge is copied, promoted, then marked and swept).
 */
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as NodeV8 from "node:v8"
import { allocated, type Collected, collected, type Stalls } from "./alloc-probe.mjs"

export type { Stalls }

const TICKS_PER_SECOND = 100

/** Node arguments that preload the allocation probe, and the environment it reads. */
export const probe = () => {
  const file = NodePath.join(NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-alloc-")), "alloc.json")
  return {
    nodeArgs: ["--import", NodePath.join(import.meta.dirname, "alloc-probe.mjs")],
    env: { WEAVIATE_MCP_ALLOC_FILE: file, ...(process.env.BENCH_STALL_PROBE === "1" ? { WEAVIATE_MCP_STALL_PROBE: "1" } : {}) },
    file
  }
}

/**
 * Process CPU (user + system, all threads) in milliseconds; undefined where /proc is absent. Read from
 * each thread's `/proc/PID/task/TID/schedstat` (the scheduler's run time, in nanoseconds) where the
 * kernel keeps it, else from `/proc/PID/stat` (clock ticks: 10 ms, which was ±10% of a 200-call window
 * of lean-node's, and spread execute_query's CPU ratio over 1.85–3.44× between rounds of one run). The
 * threads a Node process starts live as long as it does, so none leaves the sum during a window.
 */
export const cpuMs = (pid: number): number | undefined => {
  try {
    let ns = 0
    for (const task of NodeFs.readdirSync(`/proc/${pid}/task`)) ns += schedstatNs(`/proc/${pid}/task/${task}/schedstat`) ?? Number.NaN
    if (Number.isFinite(ns)) return ns / 1e6
  } catch {
    // no /proc, or the process is gone
  }
  return statCpuMs(`/proc/${pid}/stat`)
}

/** The CPU of the process's main thread alone (JavaScript; the rest is GC helpers and the thread pool). */
export const mainThreadCpuMs = (pid: number): number | undefined => {
  const ns = schedstatNs(`/proc/${pid}/task/${pid}/schedstat`)
  return ns === undefined ? statCpuMs(`/proc/${pid}/task/${pid}/stat`) : ns / 1e6
}

/** The first field of a schedstat file: time spent running, ns; undefined when it cannot be read. */
const schedstatNs = (path: string): number | undefined => {
  try {
    const ns = Number(NodeFs.readFileSync(path, "utf8").split(" ", 1)[0])
    return Number.isFinite(ns) ? ns : undefined
  } catch {
    return undefined
  }
}

const statCpuMs = (path: string): number | undefined => {
  try {
    const stat = NodeFs.readFileSync(path, "utf8")
    // The command name may hold spaces: fields are counted after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND
  } catch {
    return undefined
  }
}

export interface Cost {
  /** CPU per call, ms (undefined without /proc). */
  readonly cpuMsPerCall: number | undefined
  /** Of which the main thread's (undefined without /proc, or measured in process). */
  readonly mainCpuMsPerCall?: number | undefined
  /** Bytes allocated per call (undefined without the probe). */
  readonly bytesPerCall: number | undefined
  /** What its collections cost per call (undefined without the probe). */
  readonly gc?: GcPerCall | undefined
  /** Where the requests' time went on the server's side (`BENCH_STALL_PROBE=1`; see alloc-probe.mjs). */
  readonly stalls?: Stalls | undefined
}

/** Collections per call. */
export interface GcPerCall {
  /** Main-thread pause of all collections, ms per call. */
  readonly pauseMsPerCall: number
  /** Scavenges per 1,000 calls. */
  readonly scavengesPer1000: number
  /** Bytes promoted to the old generation per call. */
  readonly promotedBytesPerCall: number
}

const perCall = (gc: Collected, calls: number): GcPerCall => ({
  pauseMsPerCall: (gc.scavengeMs + gc.fullMs) / calls,
  scavengesPer1000: (gc.scavenges * 1000) / calls,
  promotedBytesPerCall: gc.promotedBytes / calls
})

/** The mean of several windows' figures (undefined when any is). */
export const mean = (values: ReadonlyArray<number | undefined>): number | undefined =>
  values.length === 0 || values.some((v) => v === undefined) ? undefined : (values as ReadonlyArray<number>).reduce((a, b) => a + b, 0) / values.length

/** The mean of several windows' collection figures (undefined when any window has none). */
export const meanGc = (windows: ReadonlyArray<GcPerCall | undefined>): GcPerCall | undefined => {
  if (windows.length === 0 || windows.some((w) => w === undefined)) return undefined
  const all = windows as ReadonlyArray<GcPerCall>
  return {
    pauseMsPerCall: mean(all.map((w) => w.pauseMsPerCall))!,
    scavengesPer1000: mean(all.map((w) => w.scavengesPer1000))!,
    promotedBytesPerCall: mean(all.map((w) => w.promotedBytesPerCall))!
  }
}

/** Waits (bounded) for the probe's file after the closing signal. */
const readProbe = async (file: string): Promise<{ readonly bytes: number; readonly gc: Collected; readonly stalls?: Stalls } | undefined> => {
  for (let i = 0; i < 100; i++) {
    if (NodeFs.existsSync(file)) {
      try {
        const read = JSON.parse(NodeFs.readFileSync(file, "utf8")) as { bytes: number; gc: Collected; stalls?: Stalls }
        NodeFs.rmSync(file)
        return { bytes: read.bytes, gc: read.gc, ...(read.stalls === undefined ? {} : { stalls: read.stalls }) }
      } catch {
        // written partly: read again
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return undefined
}

/**
 * With `BENCH_STRACE=1` (Linux, strace installed), the system calls of every thread of the process
 * over the window (`strace -f -c -p PID`), printed per call: the second of the brief's three things to
 * look at per call. strace slows the process down, so the window's CPU and latency are not comparable
 * with a run without it.
 */
const straceWindow = async (pid: number): Promise<((calls: number) => Promise<void>) | undefined> => {
  if (process.env.BENCH_STRACE !== "1") return undefined
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-strace-"))
  const out = NodePath.join(dir, "strace.txt")
  const child = NodeChildProcess.spawn("strace", ["-f", "-c", "-p", String(pid), "-o", out], { stdio: ["ignore", "ignore", "pipe"] })
  // Attached once it says so ("Process N attached with M threads", after attaching them all); bounded to 5 s.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 5_000)
    let said = ""
    child.stderr!.on("data", (chunk: Buffer) => {
      said += chunk.toString("utf8")
      if (/attached/i.test(said)) (clearTimeout(timer), resolve())
    })
    child.once("exit", () => (clearTimeout(timer), resolve()))
  })
  return async (calls) => {
    const exited = new Promise((resolve) => child.once("exit", resolve))
    child.kill("SIGINT")
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))])
    const table = NodeFs.existsSync(out) ? NodeFs.readFileSync(out, "utf8") : ""
    NodeFs.rmSync(dir, { recursive: true, force: true })
    const rows = [...table.matchAll(/^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/gm)]
      .map((m) => [m[2]!, Number(m[1]) / calls] as const)
      .filter(([name, perCall]) => name !== "total" && perCall >= 0.05)
      .sort((a, b) => b[1] - a[1])
    console.log(`  system calls per call (strace -f -c, ${calls} calls): ${rows.map(([name, perCall]) => `${name} ${perCall.toFixed(2)}`).join(", ")}`)
  }
}

/** Runs `calls` and measures what the process `pid` spent on them. */
export const measure = async (pid: number, calls: number, run: () => Promise<void>, probeFile?: string): Promise<Cost> => {
  const strace = await straceWindow(pid)
  if (probeFile !== undefined) process.kill(pid, "SIGUSR2")
  const before = cpuMs(pid)
  const mainBefore = mainThreadCpuMs(pid)
  await run()
  const after = cpuMs(pid)
  const mainAfter = mainThreadCpuMs(pid)
  await strace?.(calls)
  let probed: Awaited<ReturnType<typeof readProbe>>
  if (probeFile !== undefined) {
    process.kill(pid, "SIGUSR2")
    probed = await readProbe(probeFile)
  }
  return {
    cpuMsPerCall: before === undefined || after === undefined ? undefined : (after - before) / calls,
    mainCpuMsPerCall: mainBefore === undefined || mainAfter === undefined ? undefined : (mainAfter - mainBefore) / calls,
    bytesPerCall: probed === undefined ? undefined : probed.bytes / calls,
    gc: probed === undefined ? undefined : perCall(probed.gc, calls),
    stalls: probed?.stalls
  }
}

/** `work p99 0.4 max 3.1, drain p99 0.0 max 0.2, turn-around p99 9.0 max 40.2, loop delay max 3.2, longest GC pause 1.1, longest gap 3.3 ms` */
export const describeStalls = (s: Stalls) => {
  const q = (x: Stalls["work"]) => `p99 ${x.p99.toFixed(1)} max ${x.max.toFixed(1)}`
  return `${s.requests} requests, work ${q(s.work)}, drain ${q(s.drain)}, turn-around ${q(s.turnaround)}, connection to first request ${q(s.firstRequest)}, connections ${s.connectionsSpreadMs.toFixed(1)} ms apart from ${s.openedAfterMs.toFixed(1)} ms on, loop delay p99 ${s.loopDelayP99Ms.toFixed(1)} max ${s.loopDelayMaxMs.toFixed(1)}, ` +
    `longest GC pause ${s.longestGcPauseMs.toFixed(1)}, longest gap ${s.longestGapMs.toFixed(1)} ms`
}

/**
 * `CPU 0.84 ms/call (main thread 0.61), alloc 212 KB/call, GC pause 0.180 ms/call (17.5 scavenges per
 * 1,000 calls), promoted 23.1 KB/call` for a report line.
 */
export const describe = (cost: Cost) =>
  `CPU ${cost.cpuMsPerCall === undefined ? "n/a" : `${cost.cpuMsPerCall.toFixed(3)} ms`}/call` +
  `${cost.mainCpuMsPerCall === undefined ? "" : ` (main thread ${cost.mainCpuMsPerCall.toFixed(3)})`}, ` +
  `alloc ${cost.bytesPerCall === undefined ? "n/a" : `${(cost.bytesPerCall / 1024).toFixed(1)} KB`}/call` +
  (cost.gc === undefined
    ? ""
    : `, GC pause ${cost.gc.pauseMsPerCall.toFixed(3)} ms/call (${cost.gc.scavengesPer1000.toFixed(1)} scavenges per 1,000 calls), ` +
      `promoted ${(cost.gc.promotedBytesPerCall / 1024).toFixed(1)} KB/call`)

/**
 * The same figures for work done in this process (the servers of `bench:tools-list` and
 * `bench:cancel`, the clients of `bench:browse`): `process.cpuUsage` (all threads), and the bytes this
 * process allocated on its JavaScript heap and what its collections cost (v8.GCProfiler, as
 * `alloc-probe.mjs` counts them).
 */
export const inProcess = async <A>(calls: number, run: () => Promise<A>): Promise<{ readonly result: A; readonly cost: Cost }> => {
  const profiler = new NodeV8.GCProfiler()
  const startUsed = NodeV8.getHeapStatistics().used_heap_size
  profiler.start()
  const cpu = process.cpuUsage()
  const result = await run()
  const used = process.cpuUsage(cpu)
  const endUsed = NodeV8.getHeapStatistics().used_heap_size
  const statistics = profiler.stop()?.statistics ?? []
  const bytes = allocated(startUsed, statistics, endUsed)
  return {
    result,
    cost: { cpuMsPerCall: (used.user + used.system) / 1000 / calls, bytesPerCall: bytes / calls, gc: perCall(collected(statistics), calls) }
  }
}

/** The process's children (Linux). */
const childrenOf = (pid: number): Array<number> => {
  try {
    return NodeFs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter((p) => p.length > 0).map(Number)
  } catch {
    return []
  }
}

/**
 * Follows the peak RSS (VmHWM from /proc, sampled every `intervalMs` until it exits) of a child
 * process and of the processes it starts (`export` runs in a child of the command's own process);
 * `stop()` ends the sampling and answers the largest peak in MB (the process doing the work), and
 * `peaks()` each process's.
 */
export const peakRss = (pid: number | undefined, intervalMs: number) => {
  const peaksKb = new Map<number, number>()
  const sample = setInterval(() => {
    if (pid === undefined) return
    for (const p of [pid, ...childrenOf(pid)]) {
      try {
        const kb = /VmHWM:\s+(\d+)/.exec(NodeFs.readFileSync(`/proc/${p}/status`, "utf8"))?.[1]
        if (kb !== undefined) peaksKb.set(p, Math.max(peaksKb.get(p) ?? 0, Number(kb)))
      } catch {
        // exited between two samples
      }
    }
  }, intervalMs)
  return {
    stop: () => {
      clearInterval(sample)
      return Math.max(0, ...peaksKb.values()) / 1024
    },
    /** Each process's peak in MB, the command's own first. */
    peaks: () => [...peaksKb.values()].map((kb) => kb / 1024)
  }
}
