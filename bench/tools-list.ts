/**
 * Benchmark: `tools/list` throughput over keep-alive HTTP on 127.0.0.1, modern era.
 *
 * Every server runs in a process of its own, pinned to core 0; the load comes from `wrk` (Debian's
 * package, a C load generator whose one-core ceiling is far above any Node server's) pinned to core 1,
 * 64 keep-alive connections, `DURATION_MS` per server after a `WARMUP_MS` warm-up (default 3 s: after
 * 1 s our daemon's code was still being optimized, which cut its requests/s and raised its p99 in the
 * measured window; every server gets the same, in turns), in `ROUNDS` (default 3) turns, each window
 * after `REWARM_MS` (default 1 s) of unmeasured load, see `measureAll` (`bench/support/Wrk.ts`,
 * `bench/support/Cores.ts`).
 * Measured in the same run:
 * - ours: the built CLI, as users run it (`weaviate-mcp serve`), with its defaults: token authentication
 *   ON, the first-run token sent as a bearer token, rate limit off (64 connections of one principal
 *   would otherwise be limited, as they should), its operational log (a line per request) to a file;
 * - ours with `--auth off` (reported beside it);
 * - the baselines, plain JavaScript (`bench/support/tools-list-servers.mjs`): `node:http`, a bare
 *   server answering fixed bytes, as many as our `tools/list` response (the ceiling); `lean-node`,
 *   plain `node:http` doing only the per-request work the contract asks (token HMAC, header checks,
 *   JSON parse, a chained activity line and a log line per request): how close to the ceiling that
 *   work alone allows; `sdk-v2`, the official SDK v2 server (`createMcpHandler` from
 *   `@modelcontextprotocol/server`, a server built per request, modern era only, JSON responses) behind
 *   the official Node adapter (`toNodeHandler` from `@modelcontextprotocol/node`), listing the same
 *   tool descriptors and sent the same modern request.
 * Prints requests/s, p50 and p99 per server (each answer's own latency, timed by wrk's script: see
 * `TIMING` in bench/support/Wrk.ts; wrk's own p99, corrected for coordinated omission, is printed beside
 * it), the slowest first request on a new connection, and merges the `tools/list` rows (ours with authentication
 * on against `node:http` and `sdk-v2`; authentication off against `node:http`) into `bench/results.json`.
 * Run with `npm run bench:tools-list` after `npm run build` (`DURATION_MS=n`, `CONNECTIONS=n` to change
 * the load; `SERVERS=node:http,ours` measures only those; `BENCH_BASELINE_UNCAPPED=1` starts the baseline build
 * below without the young-generation cap `npm start` gives (`--max-semi-space-size=4`); `BENCH_BASELINE_BIN=/other/bin/weaviate-mcp.js`
 * adds another build of ours, in the same turns, to measure a change against the code without it).
 */
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as Cores from "./support/Cores.ts"
import { merge, percentile, type Row } from "./support/Results.ts"
import * as Profiles from "./support/Profiles.ts"
import * as ServerCost from "./support/ServerCost.ts"
import * as Wrk from "./support/Wrk.ts"
import { DAEMON_HEAP_FLAG } from "../src/Bridge/BridgeMain.ts"

const DURATION_MS = Math.min(Math.max(Number(process.env.DURATION_MS ?? 5000), 1000), 60_000)
const WARMUP_MS = Math.min(Math.max(Number(process.env.WARMUP_MS ?? 3000), 0), 30_000)
const CONNECTIONS = Math.min(Math.max(Number(process.env.CONNECTIONS ?? 64), 1), 64)
const ROUNDS = Math.min(Math.max(Number(process.env.ROUNDS ?? 3), 1), 10)
/** Unmeasured load just before each measured window (`REWARM_MS`, default 1000; wrk counts whole seconds): see `measureAll`. */
const REWARM_MS = Math.min(Math.max(Number(process.env.REWARM_MS ?? 1000), 0), 10_000)
const BASELINE_NAME = "baseline-build"
/**
 * `BENCH_WINDOWS=1` prints each window (`BENCH_STALL_PROBE=1` adds where each request's time went on the
 * server's side, alloc-probe.mjs); `BENCH_WRK_FIRST_DELAY_MS=n` holds each connection's first request n ms
 * (Wrk.ts), so that every connection is accepted before the load starts.
 */
/** `BENCH_STOP_IDLE=1`: the servers not measured are stopped (SIGSTOP) during each window, so that their own background work cannot fall on the measured server's core. */
const STOP_IDLE = process.env.BENCH_STOP_IDLE === "1"
const MODERN = "2026-07-28"
const SERVERS = new Set((process.env.SERVERS ?? "node:http,lean-node,ours,ours-auth-off,sdk-v2").split(",").map((name) => name.trim()))

// ===== The servers =====

/** The built CLI, as users run it (`npm run build` first; `npm run bench` builds it). */
const BIN = process.env.BENCH_BIN ?? NodePath.resolve(import.meta.dirname, "..", "bin", "weaviate-mcp.js")
/** `BENCH_BASELINE_BIN=/other/bin/weaviate-mcp.js`: another build of ours in the same turns (an A/B experiment). */
const BASELINE_BIN = process.env.BENCH_BASELINE_BIN
/** `BENCH_BASELINE_NODE_ARGS="--single-threaded-gc"`: node flags for that build only (an experiment that removes one cost: pass our own bin as the baseline). */
const BASELINE_NODE_ARGS = (process.env.BENCH_BASELINE_NODE_ARGS ?? "").split(" ").filter((word) => word !== "")
const BASELINES = NodePath.join(import.meta.dirname, "support", "tools-list-servers.mjs")

// ===== Requests =====

/**
 * A modern `tools/list` as the official v2 client sends it: the headers it derives from the body
 * (`MCP-Protocol-Version`, `Mcp-Method`), its `Accept`, and the three reserved `_meta` keys including
 * `clientInfo` (decoded on every request), so the benchmark measures the path real clients take.
 */
const modernRequest = (url: string, name: string): Wrk.Target => ({
  name,
  url,
  headers: {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
    "mcp-method": "tools/list"
  },
  body: JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/list",
    params: {
      _meta: {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": { name: "weaviate-mcp-bench", version: "0.0.0" },
        "io.modelcontextprotocol/clientCapabilities": {}
      }
    }
  })
})

/** One request on its own connection, closed after the answer. */
const fetchOnce = (target: Wrk.Target) =>
  new Promise<Buffer>((resolve, reject) => {
    const request = NodeHttp.request(target.url, { method: "POST", headers: target.headers, agent: false }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => {
        const bytes = Buffer.concat(chunks)
        if (response.statusCode !== 200) reject(new Error(`${target.name}: ${response.statusCode} ${bytes.toString("utf8").slice(0, 500)}`))
        else resolve(bytes)
      })
    })
    request.on("error", reject)
    request.end(target.body)
  })

// ===== Load =====

interface Measured extends Wrk.Measurement {
  readonly cpuMicrosPerRequest: number
  readonly bytesPerRequest: number
  /** Each round's requests per second, in order. */
  readonly rounds: ReadonlyArray<number>
  /** Each window's p99, in order (the p99 reported is their median). */
  readonly windowP99s: ReadonlyArray<number>
  readonly windowSteals: ReadonlyArray<number | undefined>
  readonly windowLossProbes: ReadonlyArray<number | undefined>
  /** The slowest first request on a connection, over the windows (undefined when the answers could not be timed). */
  readonly firstRequestsMaxMs: number | undefined
}

const median = (values: ReadonlyArray<number>) => percentile(values, 50)

/** A server under load: its target, and its process (each server runs in a process of its own). */
interface Served {
  readonly target: Wrk.Target
  readonly pid: number
  readonly probeFile: string
}

/** One window of load on a server: wrk's measurement, and the CPU and bytes its process spent on it. */
const window = async ({ pid, probeFile, target }: Served) => {
  let result: Wrk.Measurement | undefined
  // The count is known only afterwards: measured per run, divided by the requests served.
  const cost = await ServerCost.measure(pid, 1, async () => {
    result = await Wrk.run(target, { connections: CONNECTIONS, durationMs: DURATION_MS / ROUNDS })
  }, probeFile)
  if (result!.errors > 0) throw new Error(`${target.name}: ${result!.errors} requests failed (${result!.firstError ?? "no detail"})`)
  if (process.env.BENCH_WINDOWS === "1" || cost.stalls !== undefined) {
    const t = result!.timed
    console.log(
      `  ${target.name}: ${result!.requestsPerSecond.toFixed(0)} req/s, p99 ${result!.p99Ms.toFixed(1)} ms` +
        (t === undefined ? "" : ` (p99.9 ${t.p999Ms.toFixed(1)}, max ${t.maxMs.toFixed(1)}; first requests max ${t.firstRequestsMaxMs.toFixed(1)}, the others p99 ${t.othersP99Ms.toFixed(1)} ms; wrk's corrected p99 ${result!.wrkP99Ms.toFixed(1)} ms)`) +
        (cost.stalls === undefined ? "" : `; on the server: ${ServerCost.describeStalls(cost.stalls)}`)
    )
  }
  return { result: result!, cpuMs: cost.cpuMsPerCall ?? 0, bytes: cost.bytesPerCall ?? 0 }
}

/**
 * Each server's warm-up, then `ROUNDS` rounds in which every server gets `DURATION_MS / ROUNDS` of
 * load in turn, the order turned by one each round, so that a slower minute of the machine weighs on
 * every server alike. Each server is a process of its own, pinned to core 0 (in one process they
 * shared a heap: a server paid for the garbage of the one before it, sdk-v2's 270 KB per request
 * included). Requests/s and CPU per request are over all of a server's windows; p50 and p99 are the
 * median of its windows'. The CPU is its process's (user + system, all threads, from /proc): on a
 * machine shared with other work, requests/s move with the load, CPU per request much less.
 */
const measureAll = async (servers: ReadonlyArray<Served>): Promise<Map<string, Measured>> => {
  const turn = (round: number) => servers.map((_, i) => servers[(i + round) % servers.length]!)
  // The warm-up takes turns too, and every window starts after REWARM_MS of unmeasured load: a server
  // left idle while the others ran (up to ~15 s) had its young generation shrunk by V8's memory reducer,
  // and paid for it in its window, the more the more it allocates per request (its commit message).
  // (wrk runs whole seconds, at least one: a knob set to 0 skips its load.)
  for (let round = 0; round < ROUNDS && WARMUP_MS > 0; round++) {
    for (const { target } of turn(round)) await Wrk.run(target, { connections: CONNECTIONS, durationMs: WARMUP_MS / ROUNDS })
  }
  const windows = new Map(servers.map((s) => [s.target.name, [] as Array<Awaited<ReturnType<typeof window>>>]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const server of turn(round)) {
      const others = STOP_IDLE ? servers.filter((s) => s !== server) : []
      for (const other of others) process.kill(other.pid, "SIGSTOP")
      try {
        if (REWARM_MS > 0) await Wrk.run(server.target, { connections: CONNECTIONS, durationMs: REWARM_MS })
        windows.get(server.target.name)!.push(await window(server))
      } finally {
        for (const other of others) process.kill(other.pid, "SIGCONT")
      }
    }
  }
  const measured = new Map<string, Measured>()
  for (const { target } of servers) {
    const list = windows.get(target.name)!
    const requests = Math.max(list.reduce((n, w) => n + w.result.requests, 0), 1)
    const seconds = list.reduce((n, w) => n + w.result.seconds, 0)
    const m: Measured = {
      requests,
      errors: 0,
      seconds,
      requestsPerSecond: requests / seconds,
      p50Ms: median(list.map((w) => w.result.p50Ms)),
      p99Ms: median(list.map((w) => w.result.p99Ms)),
      wrkP99Ms: median(list.map((w) => w.result.wrkP99Ms)),
      cpuMicrosPerRequest: (list.reduce((n, w) => n + w.cpuMs, 0) * 1000) / requests,
      bytesPerRequest: list.reduce((n, w) => n + w.bytes, 0) / requests,
      rounds: list.map((w) => w.result.requestsPerSecond),
      windowP99s: list.map((w) => w.result.p99Ms),
      windowSteals: list.map((w) => w.result.stealMs),
      windowLossProbes: list.map((w) => w.result.lossProbes),
      firstRequestsMaxMs: list.every((w) => w.result.timed !== undefined) ? Math.max(...list.map((w) => w.result.timed!.firstRequestsMaxMs)) : undefined
    }
    console.log(
      `${target.name.padEnd(14)} ${m.requestsPerSecond.toFixed(0).padStart(7)} req/s  p50 ${m.p50Ms.toFixed(2)} ms  ` +
        `p99 ${m.p99Ms.toFixed(2)} ms  CPU ${m.cpuMicrosPerRequest.toFixed(0)} µs/request  alloc ${(m.bytesPerRequest / 1024).toFixed(1)} KB/request  ` +
        `(${requests} requests in ${ROUNDS} rounds; load average ${NodeOs.loadavg()[0]!.toFixed(2)}; p99 by window ${m.windowP99s.map((p) => p.toFixed(1)).join(", ")} ms; wrk's corrected p99 ${m.wrkP99Ms.toFixed(1)} ms${
          m.firstRequestsMaxMs === undefined ? "" : `; a connection's first request at most ${m.firstRequestsMaxMs.toFixed(1)} ms`
        }${
          m.windowSteals.every((t) => t === undefined) ? "" : `; stolen by the hypervisor ${m.windowSteals.map((t) => t ?? "?").join(", ")} ms`
        }${m.windowLossProbes.every((n) => n === undefined) ? "" : `; TCP loss probes ${m.windowLossProbes.map((n) => n ?? "?").join(", ")}`})`
    )
    measured.set(target.name, m)
  }
  return measured
}

/** The median of the rounds' ratios and their range: `0.61 (rounds 0.58–0.64)`. */
const roundRatios = (ours: Measured, baseline: Measured) => {
  const ratios = ours.rounds.map((r, i) => r / baseline.rounds[i]!).sort((a, b) => a - b)
  return `${median(ratios).toFixed(3)} (rounds ${ratios[0]!.toFixed(3)}–${ratios[ratios.length - 1]!.toFixed(3)})`
}

// ===== Results =====

const round = (n: number) => Math.round(n * 1000) / 1000

const rowsFor = (measured: Wrk.Measurement, against: Wrk.Measurement, baselineName: Row["baselineName"], suffix = ""): Array<Row> => [
  {
    scenario: "tools/list",
    metric: `requests_per_second${suffix}`,
    unit: "req/s",
    ours: measured.requestsPerSecond,
    baseline: against.requestsPerSecond,
    baselineName,
    ratio: round(measured.requestsPerSecond / against.requestsPerSecond)
  },
  {
    scenario: "tools/list",
    metric: `p99${suffix}`,
    unit: "ms",
    ours: measured.p99Ms,
    baseline: against.p99Ms,
    baselineName,
    ratio: round(measured.p99Ms / against.p99Ms)
  }
]

// ===== Each server in a process of its own =====

/**
 * Starts a server process on core 0 with the allocation probe, its stderr kept in `logFile`; resolves
 * once it prints `listening on URL` (bounded to 60 s), with the bearer token it printed if any (the
 * daemon's first-run token).
 */
const spawnServer = (
  name: string,
  args: ReadonlyArray<string>,
  logFile: string,
  children: Array<NodeChildProcess.ChildProcess>,
  { env = {}, withToken = false }: { readonly env?: Record<string, string>; readonly withToken?: boolean } = {}
) =>
  new Promise<Served & { readonly bearer: string | undefined }>((resolve, reject) => {
    const probe = ServerCost.probe()
    const [command, commandArgs] = Cores.onServerCore(process.execPath, [...probe.nodeArgs, ...args])
    const log = NodeFs.openSync(logFile, "a", 0o600)
    const child = NodeChildProcess.spawn(command, commandArgs, {
      stdio: ["ignore", "pipe", log],
      env: { ...process.env, ...probe.env, ...Profiles.env(name), ...env }
    })
    NodeFs.closeSync(log)
    children.push(child)
    let out = ""
    const timer = setTimeout(() => reject(new Error(`${name} did not start: ${out}`)), 60_000)
    child.once("exit", (code) => reject(new Error(`${name} exited (${code}): ${out}; see ${logFile}`)))
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1]
      // A daemon with tokens prints its first-run token after the address.
      const bearer = /Bearer (wmcp_[A-Za-z0-9_-]+)"/.exec(out)?.[1]
      if (url === undefined || (withToken && bearer === undefined)) return
      clearTimeout(timer)
      resolve({ target: modernRequest(url, name), pid: child.pid!, probeFile: probe.file, bearer })
    })
  })

/** Our daemon, built, with its defaults but the rate limit (64 connections of one principal would be limited), in a fresh home. */
const spawnOurs = (name: string, bin: string, auth: "tokens" | "off", dir: string, children: Array<NodeChildProcess.ChildProcess>, capped = true, nodeArgs: ReadonlyArray<string> = []) => {
  const home = NodeFs.mkdtempSync(NodePath.join(dir, "home-"))
  // Its operational log (logfmt, info: a line per request, batched per tick) goes to a file, as lean-node's.
  return spawnServer(name, [...(capped ? [DAEMON_HEAP_FLAG] : []), ...nodeArgs, bin, "serve", "--home", home, "--port", "0", "--rate-limit", "0", ...(auth === "off" ? ["--auth", "off"] : [])], NodePath.join(home, "serve.log"), children, { withToken: auth === "tokens" })
}

const main = async () => {
  if (!Wrk.available) throw new Error("wrk is not installed: apt-get install wrk")
  // This process only starts the servers and reads wrk's reports: off the servers' core.
  Cores.pinToLoadCore()
  const children: Array<NodeChildProcess.ChildProcess> = []
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-bench-"))
  try {
    if (!NodeFs.existsSync(NodePath.join(NodePath.dirname(BIN), "..", "dist", "weaviate-mcp.cjs"))) {
      throw new Error("the CLI is not built: run `npm run build` first (`npm run bench` does)")
    }
    // Ours first: the others answer with its reply (the same bytes), lean-node checks its token.
    const ours = await spawnOurs("ours", BIN, "tokens", dir, children)
    if (ours.bearer === undefined) throw new Error("ours printed no first-run token")
    const oursTarget = { ...ours.target, headers: { ...ours.target.headers, authorization: `Bearer ${ours.bearer}` } }
    const response = await fetchOnce(oursTarget)
    const replyFile = NodePath.join(dir, "reply.json")
    NodeFs.writeFileSync(replyFile, response)
    const tools = (JSON.parse(response.toString("utf8")) as { result: { tools: ReadonlyArray<unknown> } }).result.tools
    const others = await Promise.all([
      ...(SERVERS.has("ours-auth-off") ? [spawnOurs("ours-auth-off", BIN, "off", dir, children)] : []),
      ...(["node:http", "lean-node", "sdk-v2"] as const).filter((name) => SERVERS.has(name)).map((name) =>
        // The token in the environment: on the command line any local user could read it.
        spawnServer(name, [BASELINES, name, replyFile, dir], NodePath.join(dir, `${name.replace(":", "-")}.log`), children, { env: { LEAN_TOKEN: ours.bearer! } })
      )
    ])
    // `BENCH_BASELINE_BIN`: another build of ours in the same turns (an A/B experiment), with
    // authentication, or without it when only that is measured.
    const baselineOf = SERVERS.has("ours") ? "ours" : "ours-auth-off"
    const baselineBuild = BASELINE_BIN === undefined
      ? []
      : [await spawnOurs(BASELINE_NAME, BASELINE_BIN, baselineOf === "ours" ? "tokens" : "off", dir, children, process.env.BENCH_BASELINE_UNCAPPED !== "1", BASELINE_NODE_ARGS)]
    // Every server is sent exactly what ours is (each daemon its own first-run token, lean-node ours).
    const withToken = (s: Awaited<ReturnType<typeof spawnServer>>) =>
      ({ ...s, target: { ...s.target, headers: { ...s.target.headers, authorization: `Bearer ${s.bearer ?? ours.bearer}` } } })
    const byName = new Map([ours, ...others, ...baselineBuild].map((s) => [s.target.name, withToken(s)]))
    const sdk = byName.get("sdk-v2")
    const sdkBytes = sdk === undefined ? 0 : (await fetchOnce(sdk.target)).length
    console.log(
      `tools/list: ${tools.length} tools, ${response.length} bytes (sdk-v2: ${sdkBytes} bytes); wrk, ${CONNECTIONS} keep-alive ` +
        `connections, ${DURATION_MS} ms each in ${ROUNDS} rounds, each server a process of its own; ${Cores.placement()}; ` +
        `load average ${NodeOs.loadavg().map((n) => n.toFixed(2)).join(" ")}, ${NodeOs.cpus().length} CPUs (${NodeOs.cpus()[0]?.model ?? "unknown"})`
    )
    const all = await measureAll(
      ["node:http", "lean-node", "ours", "ours-auth-off", "sdk-v2", BASELINE_NAME].filter((name) => (SERVERS.has(name) || name === BASELINE_NAME) && byName.has(name)).map((name) => byName.get(name)!)
    )
    const baseline = all.get("node:http")
    const leanMeasured = all.get("lean-node")
    const measured = all.get("ours")
    const measuredOff = all.get("ours-auth-off")
    const official = all.get("sdk-v2")
    const costRows = (m: Measured, against: Measured, baselineName: Row["baselineName"]): Array<Row> => [
      { scenario: "tools/list", metric: "cpu_per_request", unit: "µs", ours: round(m.cpuMicrosPerRequest), baseline: round(against.cpuMicrosPerRequest), baselineName, ratio: round(round(m.cpuMicrosPerRequest) / round(against.cpuMicrosPerRequest)) },
      { scenario: "tools/list", metric: "bytes_allocated_per_request", unit: "bytes", ours: round(m.bytesPerRequest), baseline: round(against.bytesPerRequest), baselineName, ratio: round(round(m.bytesPerRequest) / round(against.bytesPerRequest)) }
    ]
    const rows = [
      ...(measured && leanMeasured ? [...rowsFor(measured, leanMeasured, "lean-node"), ...costRows(measured, leanMeasured, "lean-node")] : []),
      ...(measured && baseline ? rowsFor(measured, baseline, "node:http") : []),
      ...(measured && official ? rowsFor(measured, official, "sdk-v2") : []),
      ...(measuredOff && baseline ? rowsFor(measuredOff, baseline, "node:http", "_auth_off") : [])
    ]
    for (const r of rows) console.log(`${r.metric} against ${r.baselineName}: ${r.ratio}`)
    if (measured && leanMeasured) console.log(`requests/s against lean-node, round by round: ${roundRatios(measured, leanMeasured)}`)
    const baselineMeasured = all.get(BASELINE_NAME)
    const sameAsBaseline = all.get(baselineOf)
    if (sameAsBaseline && baselineMeasured) {
      console.log(
        `${baselineOf} requests/s against the baseline build, round by round: ${roundRatios(sameAsBaseline, baselineMeasured)}; ` +
          `CPU per request ${round(sameAsBaseline.cpuMicrosPerRequest / baselineMeasured.cpuMicrosPerRequest)}×`
      )
    }
    if (leanMeasured && baseline) {
      console.log(`lean-node (the contract's per-request work, no framework) against node:http: ${round(leanMeasured.requestsPerSecond / baseline.requestsPerSecond)}`)
    }
    merge(rows)
  } finally {
    await Promise.all(children.map(Profiles.stop))
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
