/**
 * `npm run bench:profile`: the servers of the hot scenarios profile exactly their measured windows
 * (the allocation probe, `alloc-probe.mjs`, starts and stops V8's profiler with the window), each
 * writing `bench/profiles/<server>.<window>.cpuprofile` (git-ignored); `summary` prints the functions
 * with the most self time, the first thing to read in a profile.
 */
import type * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

export const DIR = NodePath.join(import.meta.dirname, "..", "profiles")

/** Whether this run profiles (`BENCH_PROFILE=1`, set by `npm run bench:profile`). */
export const enabled = process.env.BENCH_PROFILE === "1"

// A run's profiles only: those of an earlier run would be reported beside them.
if (enabled && NodeFs.existsSync(DIR)) {
  for (const name of NodeFs.readdirSync(DIR)) if (name.endsWith(".cpuprofile")) NodeFs.rmSync(NodePath.join(DIR, name))
}

/** The environment that makes a server started with the probe write a CPU profile of each window. */
export const env = (name: string): Record<string, string> => {
  if (!enabled) return {}
  NodeFs.mkdirSync(DIR, { recursive: true })
  return { WEAVIATE_MCP_CPU_PROFILE: NodePath.join(DIR, name) }
}

/** Ends a server with SIGTERM and waits (bounded to 15 s) until it has exited, so its profile is written. */
export const stop = (child: NodeChildProcess.ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(() => (child.kill("SIGKILL"), resolve()), 15_000)
    child.once("exit", () => (clearTimeout(timer), resolve()))
    child.kill("SIGTERM")
  })

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly hitCount?: number
}

/** Samples that are not the process's own work. */
const NOT_BUSY = new Set(["(idle)", "(program)"])

/** The `top` functions by self time of a profile, as lines `  12.3%  name  file:line`: shares of the busy samples (idle left out). */
export const summary = (file: string, top = 15): ReadonlyArray<string> => {
  const profile = JSON.parse(NodeFs.readFileSync(file, "utf8")) as { nodes: ReadonlyArray<ProfileNode> }
  const byFunction = new Map<string, number>()
  let total = 0
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0
    const frame = node.callFrame
    if (NOT_BUSY.has(frame.functionName)) continue
    total += hits
    const key = `${frame.functionName || "(anonymous)"}  ${NodePath.basename(frame.url)}:${frame.lineNumber + 1}`
    byFunction.set(key, (byFunction.get(key) ?? 0) + hits)
  }
  return [...byFunction.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([key, hits]) => `  ${((100 * hits) / Math.max(total, 1)).toFixed(1).padStart(5)}%  ${key}`)
}

/** Prints the summary of every profile written in this run. */
export const report = () => {
  if (!enabled || !NodeFs.existsSync(DIR)) return
  for (const name of NodeFs.readdirSync(DIR).filter((f) => f.endsWith(".cpuprofile")).sort()) {
    console.log(`\n${name} (bench/profiles), self time as a share of busy samples:`)
    for (const line of summary(NodePath.join(DIR, name))) console.log(line)
  }
}
