/**
 * Benchmark: `tools/list` throughput over keep-alive HTTP on 127.0.0.1, modern era.
 *
 * The servers run in this process, pinned to core 0; the load comes from `wrk` (Debian's package, a C
 * load generator whose one-core ceiling is far above any Node server's) pinned to core 1, 64
 * keep-alive connections, `DURATION_MS` per server after a `WARMUP_MS` warm-up (default 3 s: after
 * 1 s our daemon's code was still being optimized, which cut its requests/s and raised its p99 in the
 * measured window; every server gets the same, in turns), in `ROUNDS` (default 3) turns, each window
 * after `REWARM_MS` (default 1 s) of unmeasured load, see `measureAll` (`bench/support/Wrk.ts`,
 * `bench/support/Cores.ts`).
 * Measured in the same run:
 * - `node:http`: a bare server answering fixed bytes, as many as our `tools/list` response (the ceiling);
 * - `lean-node`: plain `node:http` doing only the per-request work the contract asks (token HMAC,
 *   header checks, JSON parse, a chained activity line and a log line per request), printed beside:
 *   how close to the ceiling that work alone allows;
 * - ours with the default configuration: token authentication ON, the first-run token sent as a bearer
 *   token, rate limit off (64 connections of one principal would otherwise be limited, as they should);
 * - ours with `--auth off` (reported beside it);
 * - `sdk-v2`: the official SDK v2 server (`createMcpHandler` from `@modelcontextprotocol/server`, a
 *   server built per request, modern era only, JSON responses) behind the official Node adapter
 *   (`toNodeHandler` from `@modelcontextprotocol/node`), listing the same tool descriptors and sent
 *   the same modern request.
 * Prints requests/s, p50 and p99 per server, and merges the `tools/list` rows (ours with authentication
 * on against `node:http` and `sdk-v2`; authentication off against `node:http`) into `bench/results.json`.
 * Run with `npm run bench:tools-list` (`DURATION_MS=n`, `CONNECTIONS=n` to change the load;
 * `SERVERS=node:http,ours` measures only those; `BENCH_BASELINE_DIR=/path/to/another/checkout` adds
 * ours as that checkout has it, in the same turns, to measure a change against the code without it).
 */
import { toNodeHandler } from "@modelcontextprotocol/node"
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as NodeChildProcess from "node:child_process"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import type * as NodeNet from "node:net"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as Daemon from "../src/Daemon/Daemon.ts"
import * as Logging from "../src/Daemon/Logging.ts"
import { Home } from "../src/Base/Home.ts"
import * as Settings from "../src/Daemon/Settings.ts"
import { BoundAddress } from "../src/Mcp/HttpTransport.ts"
import * as Cores from "./support/Cores.ts"
import * as Tracing from "../src/Tracing/Tracing.ts"
import { merge, percentile, type Row } from "./support/Results.ts"
import * as Profiles from "./support/Profiles.ts"
import * as ServerCost from "./support/ServerCost.ts"
import * as Wrk from "./support/Wrk.ts"

const DURATION_MS = Math.min(Math.max(Number(process.env.DURATION_MS ?? 5000), 1000), 60_000)
const WARMUP_MS = Math.min(Math.max(Number(process.env.WARMUP_MS ?? 3000), 0), 30_000)
const CONNECTIONS = Math.min(Math.max(Number(process.env.CONNECTIONS ?? 64), 1), 64)
const ROUNDS = Math.min(Math.max(Number(process.env.ROUNDS ?? 3), 1), 10)
/** Unmeasured load just before each measured window (`REWARM_MS`, default 1000; wrk counts whole seconds): see `measureAll`. */
const REWARM_MS = Math.min(Math.max(Number(process.env.REWARM_MS ?? 1000), 0), 10_000)
const BASELINE_DIR = process.env.BENCH_BASELINE_DIR
const BASELINE_NAME = "baseline-build"
const MODERN = "2026-07-28"
const SERVERS = new Set((process.env.SERVERS ?? "node:http,lean-node,ours,ours-auth-off,sdk-v2").split(",").map((name) => name.trim()))

// ===== The servers =====

const homes: Array<string> = []

/** The daemon with its defaults but the rate limit, in a fresh home; resolves its first-run token. */
const daemon = (auth: "tokens" | "off") => {
  const home = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-bench-"))
  homes.push(home)
  let bearer: string | undefined
  const layer = Layer.unwrapEffect(Effect.gen(function*() {
    const defaults = yield* Effect.orDie(Effect.withConfigProvider(Settings.ServeSettings, ConfigProvider.fromJson({})))
    return Daemon.layer({
      settings: { ...defaults, auth, rateLimit: 0 },
      port: 0,
      // OTEL_EXPORTER_OTLP_ENDPOINT measures the daemon with its span exporter on.
      otlpTracesUrl: Tracing.tracesUrl(undefined),
      onDefaultToken: (created) => Effect.sync(() => (bearer = created.token))
    })
  })).pipe(Layer.provide(Layer.effect(Home, Home.make(home))))
  // The operational log as `serve` writes it (logfmt, info, every line redacted), to a file in the
  // home instead of the terminal, batched per tick as `serve` batches its stderr.
  const logFd = NodeFs.openSync(NodePath.join(home, "serve.log"), "a", 0o600)
  const logging = Logging.layer({ format: "text", level: "info", sink: Logging.batchedSink((text) => void NodeFs.writeSync(logFd, text)) })
  const runtime = ManagedRuntime.make(Layer.provide(layer, logging))
  return {
    runtime,
    target: async (name: string): Promise<Wrk.Target> => {
      const address = await runtime.runPromise(BoundAddress)
      const request = modernRequest(`${address.url}/mcp`, name)
      return bearer === undefined ? request : { ...request, headers: { ...request.headers, authorization: `Bearer ${bearer}` } }
    }
  }
}

const listen = (server: NodeHttp.Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as NodeNet.AddressInfo).port}/mcp`))
  )

const close = (server: NodeHttp.Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })

/** Fixed bytes for every request, after reading the body (as any server must). */
const bareServer = (body: Buffer) =>
  NodeHttp.createServer((request, response) => {
    request.resume()
    request.on("end", () => {
      response.writeHead(200, { "content-type": "application/json", "content-length": body.length })
      response.end(body)
    })
  })

/**
 * `lean-node`: plain `node:http` doing only the per-request work the contract asks of a `tools/list`,
 * without any framework: the Host and protocol-version checks, the bearer token checked by HMAC
 * against a salted digest, the JSON body parsed, the id spliced into the cached reply, one
 * SHA-256-chained activity line and one log line per request (both appended to files once per tick).
 * It shows how far the 0.6× target is reachable at all with that work.
 */
const leanServer = (reply: Buffer, token: string, dir: string) => {
  const salt = NodeCrypto.randomBytes(16)
  const digest = NodeCrypto.createHmac("sha256", salt).update(token).digest()
  const activity = NodeFs.openSync(NodePath.join(dir, "lean-activity.log"), "a", 0o600)
  const log = NodeFs.openSync(NodePath.join(dir, "lean-serve.log"), "a", 0o600)
  // The reply without its id: `{"jsonrpc":"2.0","id":1,` is re-made per request.
  const head = Buffer.from("{\"jsonrpc\":\"2.0\",\"id\":1,")
  if (!reply.subarray(0, head.length).equals(head)) throw new Error("lean-node: the reply does not start with the expected id")
  const rest = reply.subarray(head.length)
  let previous = "0".repeat(64)
  let activityLines = ""
  let logLines = ""
  const flush = () => {
    NodeFs.write(activity, activityLines, () => {})
    NodeFs.write(log, logLines, () => {})
    activityLines = ""
    logLines = ""
  }
  return NodeHttp.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const started = performance.now()
      const refuse = (status: number) => (response.writeHead(status), response.end())
      if (request.headers.host === undefined || request.headers["mcp-protocol-version"] !== MODERN) return refuse(400)
      const bearer = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/.exec(request.headers.authorization ?? "")
      if (bearer === null) return refuse(401)
      const presented = NodeCrypto.createHmac("sha256", salt).update(bearer[1]!).digest()
      if (!NodeCrypto.timingSafeEqual(presented, digest)) return refuse(401)
      const message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: unknown; method: unknown }
      if (message.method !== "tools/list") return refuse(400)
      const id = Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},`)
      response.writeHead(200, { "content-type": "application/json", "content-length": id.length + rest.length })
      response.write(id)
      response.end(rest)
      const line = JSON.stringify({ time: new Date().toISOString(), client: "weaviate-mcp-bench", method: "tools/list", outcome: "ok", prev: previous })
      previous = NodeCrypto.createHash("sha256").update(line).digest("hex")
      if (activityLines.length === 0) setImmediate(flush)
      activityLines += `${line}\n`
      logLines += `timestamp=${new Date().toISOString()} level=INFO message="mcp request" method=tools/list durationMs=${(performance.now() - started).toFixed(1)}\n`
    })
  })
}

/** The official SDK v2 server: `createMcpHandler` builds a server per request, as its docs show. */
const sdkServer = (tools: ReadonlyArray<unknown>) => {
  const handler = createMcpHandler(() => {
    const mcp = new McpServer({ name: "weaviate-mcp-bench", version: "0.0.0" }, { capabilities: { tools: {} } })
    mcp.server.setRequestHandler("tools/list", () => ({ tools: tools as never }))
    return mcp
  }, { legacy: "reject", responseMode: "json" })
  const serve = toNodeHandler(handler)
  // The adapter's structural request type is stricter than node's under exactOptionalPropertyTypes.
  return NodeHttp.createServer((request, response) => void serve(request as never, response))
}

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
  // and paid for it in its window, the more the more it allocates per request (docs/benchmarks.md,
  // "Issue 27, eighth session").
  // (wrk runs whole seconds, at least one: a knob set to 0 skips its load.)
  for (let round = 0; round < ROUNDS && WARMUP_MS > 0; round++) {
    for (const { target } of turn(round)) await Wrk.run(target, { connections: CONNECTIONS, durationMs: WARMUP_MS / ROUNDS })
  }
  const windows = new Map(servers.map((s) => [s.target.name, [] as Array<Awaited<ReturnType<typeof window>>>]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const server of turn(round)) {
      if (REWARM_MS > 0) await Wrk.run(server.target, { connections: CONNECTIONS, durationMs: REWARM_MS })
      windows.get(server.target.name)!.push(await window(server))
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
      cpuMicrosPerRequest: (list.reduce((n, w) => n + w.cpuMs, 0) * 1000) / requests,
      bytesPerRequest: list.reduce((n, w) => n + w.bytes, 0) / requests,
      rounds: list.map((w) => w.result.requestsPerSecond)
    }
    console.log(
      `${target.name.padEnd(14)} ${m.requestsPerSecond.toFixed(0).padStart(7)} req/s  p50 ${m.p50Ms.toFixed(2)} ms  ` +
        `p99 ${m.p99Ms.toFixed(2)} ms  CPU ${m.cpuMicrosPerRequest.toFixed(0)} µs/request  alloc ${(m.bytesPerRequest / 1024).toFixed(1)} KB/request  ` +
        `(${requests} requests in ${ROUNDS} rounds; load average ${NodeOs.loadavg()[0]!.toFixed(2)})`
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

/** What a server process prints once it listens: `SERVING {"url":…,"headers":…}`. */
const SERVING = "SERVING "

/**
 * A server process (`tools-list.ts --serve NAME REPLY_FILE [TOKEN DIR]`): ours with or without
 * authentication, or, given our reply, node:http, lean-node or sdk-v2. It serves until SIGTERM.
 */
const serveOne = async (name: string, replyFile: string, token: string, dir: string) => {
  const reply = () => NodeFs.readFileSync(replyFile)
  let target: Wrk.Target
  let stop: () => Promise<void>
  if (name === "ours" || name === "ours-auth-off") {
    const served = daemon(name === "ours" ? "tokens" : "off")
    target = await served.target(name)
    stop = () => served.runtime.dispose()
  } else {
    const server = name === "node:http"
      ? bareServer(reply())
      : name === "lean-node"
      ? leanServer(reply(), token, dir)
      : sdkServer((JSON.parse(reply().toString("utf8")) as { result: { tools: ReadonlyArray<unknown> } }).result.tools)
    target = modernRequest(await listen(server), name)
    stop = () => close(server)
  }
  process.once("SIGTERM", () =>
    void stop().finally(() => {
      for (const home of homes) NodeFs.rmSync(home, { recursive: true, force: true })
      process.exit(0)
    }))
  process.stdout.write(`${SERVING}${JSON.stringify({ url: target.url, headers: target.headers })}\n`)
}

/** Starts a server process on core 0 with the allocation probe; resolves once it serves (bounded to 60 s). */
const spawnServer = (name: string, args: ReadonlyArray<string>, children: Array<NodeChildProcess.ChildProcess>, script = import.meta.filename) =>
  new Promise<Served>((resolve, reject) => {
    const probe = ServerCost.probe()
    const argv = [...probe.nodeArgs, "--import", "tsx", script, "--serve", name, ...args]
    const [command, commandArgs] = Cores.onServerCore(process.execPath, argv)
    const child = NodeChildProcess.spawn(command, commandArgs, { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, ...probe.env } })
    children.push(child)
    let out = ""
    const timer = setTimeout(() => reject(new Error(`${name} did not start: ${out}`)), 60_000)
    child.once("exit", (code) => reject(new Error(`${name} exited (${code}): ${out}`)))
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
      const line = out.split("\n").find((l) => l.startsWith(SERVING))
      if (line === undefined) return
      clearTimeout(timer)
      const { headers, url } = JSON.parse(line.slice(SERVING.length)) as { url: string; headers: Record<string, string> }
      const base = modernRequest(url, script === import.meta.filename ? name : BASELINE_NAME)
      resolve({ target: { ...base, headers }, pid: child.pid!, probeFile: probe.file })
    })
  })

const main = async () => {
  if (!Wrk.available) throw new Error("wrk is not installed: apt-get install wrk")
  // This process only starts the servers and reads wrk's reports: off the servers' core.
  Cores.pinToLoadCore()
  const children: Array<NodeChildProcess.ChildProcess> = []
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-bench-lean-"))
  homes.push(dir)
  try {
    // Ours first: the others answer with its reply (the same bytes), lean-node checks its token.
    const ours = await spawnServer("ours", [], children)
    const response = await fetchOnce(ours.target)
    const replyFile = NodePath.join(dir, "reply.json")
    NodeFs.writeFileSync(replyFile, response)
    const tools = (JSON.parse(response.toString("utf8")) as { result: { tools: ReadonlyArray<unknown> } }).result.tools
    const bearer = /^Bearer (.+)$/.exec(ours.target.headers.authorization ?? "")?.[1] ?? ""
    const others = await Promise.all(
      (["ours-auth-off", "node:http", "lean-node", "sdk-v2"] as const).filter((name) => SERVERS.has(name)).map((name) => spawnServer(name, [replyFile, bearer, dir], children))
    )
    // `BENCH_BASELINE_DIR`: ours as another checkout builds it, in the same turns (an A/B experiment).
    // Ours with authentication, or without it when only that is measured.
    const baselineOf = SERVERS.has("ours") ? "ours" : "ours-auth-off"
    const baselineBuild = BASELINE_DIR === undefined ? [] : [await spawnServer(baselineOf, [], children, NodePath.join(BASELINE_DIR, "bench", "tools-list.ts"))]
    const byName = new Map([ours, ...others, ...baselineBuild].map((s) => [s.target.name, s]))
    // lean-node is sent exactly what ours is (its token included).
    const lean = byName.get("lean-node")
    if (lean !== undefined) byName.set("lean-node", { ...lean, target: { ...lean.target, headers: { ...ours.target.headers } } })
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
    for (const home of homes) NodeFs.rmSync(home, { recursive: true, force: true })
  }
}

if (process.argv[2] === "--serve") {
  serveOne(process.argv[3]!, process.argv[4] ?? "", process.argv[5] ?? "", process.argv[6] ?? "").catch((error) => {
    console.error(error)
    process.exit(1)
  })
} else {
  main().catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
}
