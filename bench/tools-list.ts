/**
 * Benchmark: `tools/list` throughput over keep-alive HTTP on 127.0.0.1.
 *
 * Three servers in this process, each driven in turn by the load generator `bench/support/load.ts`
 * in a child process (64 keep-alive connections, `DURATION_MS` per server after a 1 s warm-up):
 * - `node:http`: a bare server answering fixed bytes, as many as our `tools/list` response;
 * - ours: the real daemon (`auth: "off"`, rate limit off; `AUTH=tokens` for the default authentication,
 *   the first-run token sent as a bearer token) with the default catalogue, modern era;
 * - `sdk-v2`: the official SDK v2 server (`createMcpHandler` from `@modelcontextprotocol/server`, a
 *   server built per request, modern era only, JSON responses) behind the official Node adapter
 *   (`toNodeHandler` from `@modelcontextprotocol/node`), listing the same tool descriptors and sent
 *   the same modern request.
 * Prints requests/s, p50 and p99 per server and (authentication off) merges two rows `{scenario: "tools/list", metric:
 * "requests_per_second", ...}` (against `node:http` and against `sdk-v2`) into `bench/results.json`.
 * Run with `npm run bench:tools-list` (`DURATION_MS=n`, `CONNECTIONS=n` to change the load;
 * `SERVERS=node:http,ours` measures only those, in that order, and merges only the rows it can; run it
 * with `SERVERS=ours node --cpu-prof --import tsx bench/tools-list.ts` to profile the daemon alone).
 */
import { toNodeHandler } from "@modelcontextprotocol/node"
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import type * as NodeNet from "node:net"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as Daemon from "../src/Daemon/Daemon.ts"
import { Home } from "../src/Daemon/Home.ts"
import * as Settings from "../src/Daemon/Settings.ts"
import { BoundAddress } from "../src/Mcp/HttpTransport.ts"
import * as Tracing from "../src/Tracing/Tracing.ts"
import { merge, type Row } from "./support/Results.ts"

const DURATION_MS = Math.min(Math.max(Number(process.env.DURATION_MS ?? 5000), 500), 60_000)
const WARMUP_MS = 1000
const CONNECTIONS = Math.min(Math.max(Number(process.env.CONNECTIONS ?? 64), 1), 512)
const MODERN = "2026-07-28"
const AUTH = process.env.AUTH === "tokens" ? "tokens" : "off"
const SERVERS = new Set((process.env.SERVERS ?? "node:http,ours,sdk-v2").split(",").map((name) => name.trim()))
const LOAD = NodePath.join(import.meta.dirname, "support", "load.ts")

// ===== The servers =====

const home = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-bench-"))

/** The first-run token, when the daemon runs with `AUTH=tokens`. */
let bearer: string | undefined

const daemon = Layer.unwrapEffect(Effect.gen(function*() {
  const defaults = yield* Effect.orDie(Effect.withConfigProvider(Settings.ServeSettings, ConfigProvider.fromJson({})))
  return Daemon.layer({
    settings: { ...defaults, auth: AUTH, rateLimit: 0 },
    port: 0,
    // OTEL_EXPORTER_OTLP_ENDPOINT measures the daemon with its span exporter on.
    otlpTracesUrl: Tracing.tracesUrl(undefined),
    onDefaultToken: (created) => Effect.sync(() => (bearer = created.token))
  })
})).pipe(Layer.provide(Layer.effect(Home, Home.make(home))))

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

interface Target {
  readonly name: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: string
}

/**
 * A modern `tools/list` as the official v2 client sends it: the headers it derives from the body
 * (`MCP-Protocol-Version`, `Mcp-Method`), its `Accept`, and the three reserved `_meta` keys including
 * `clientInfo` (decoded on every request), so the benchmark measures the path real clients take.
 */
const modernRequest = (url: string, name: string): Target => ({
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



/**
 * One request on its own connection, closed after the answer: the daemon takes at most 64 connections
 * (the contract's limit), all of which the load generator uses.
 */
const fetchOnce = (target: Target) =>
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

interface Measurement {
  readonly requests: number
  readonly errors: number
  readonly seconds: number
  readonly requestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly firstError?: string
}

const load = (target: Target, durationMs: number) =>
  new Promise<Measurement>((resolve, reject) => {
    const child = NodeChildProcess.spawn(process.execPath, ["--import", "tsx", LOAD], {
      env: {
        ...process.env,
        LOAD_URL: target.url,
        LOAD_BODY: target.body,
        LOAD_HEADERS: JSON.stringify(target.headers),
        CONNECTIONS: String(CONNECTIONS),
        DURATION_MS: String(durationMs)
      },
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout.on("data", (chunk) => (out += chunk))
    // Bounded: the generator stops itself after its duration; this only catches a stuck child.
    const timer = setTimeout(() => child.kill("SIGKILL"), durationMs + 30_000)
    child.on("exit", (code) => {
      clearTimeout(timer)
      if (code !== 0) return reject(new Error(`load generator exited with ${code}`))
      resolve(JSON.parse(out.trim()) as Measurement)
    })
  })

/**
 * Also prints the CPU time the servers' process spent per request (user + system): on a machine
 * shared with other work, requests/s move with the load, CPU per request much less.
 */
const measure = async (target: Target) => {
  await load(target, WARMUP_MS)
  const cpu = process.cpuUsage()
  const result = await load(target, DURATION_MS)
  const used = process.cpuUsage(cpu)
  const cpuPerRequest = result.requests === 0 ? 0 : (used.user + used.system) / result.requests
  console.log(
    `${target.name.padEnd(10)} ${result.requestsPerSecond.toFixed(0).padStart(7)} req/s  p50 ${result.p50Ms.toFixed(2)} ms  ` +
      `p99 ${result.p99Ms.toFixed(2)} ms  CPU ${cpuPerRequest.toFixed(0)} µs/request  (${result.requests} requests, ` +
      `${result.errors} errors; load average ${NodeOs.loadavg()[0]!.toFixed(2)})`
  )
  if (result.errors > 0) throw new Error(`${target.name}: ${result.errors} requests failed, the first: ${result.firstError}`)
  return result
}

// ===== Results =====



const round = (n: number) => Math.round(n * 1000) / 1000

const main = async () => {
  const runtime = ManagedRuntime.make(daemon)
  const servers: Array<NodeHttp.Server> = []
  try {
    const address = await runtime.runPromise(BoundAddress)
    const request = modernRequest(`${address.url}/mcp`, "ours")
    const ours = bearer === undefined ? request : { ...request, headers: { ...request.headers, authorization: `Bearer ${bearer}` } }
    const response = await fetchOnce(ours)
    const tools = (JSON.parse(response.toString("utf8")) as { result: { tools: ReadonlyArray<unknown> } }).result.tools
    const bare = bareServer(response)
    const sdk = sdkServer(tools)
    servers.push(bare, sdk)
    const bareTarget = modernRequest(await listen(bare), "node:http")
    const sdkTarget = modernRequest(await listen(sdk), "sdk-v2")
    const sdkBytes = (await fetchOnce(sdkTarget)).length
    console.log(
      `tools/list: ${tools.length} tools, ${response.length} bytes (sdk-v2: ${sdkBytes} bytes); ` +
        `auth ${AUTH}; ${CONNECTIONS} connections, ${DURATION_MS} ms each; load average ${NodeOs.loadavg().map((n) => n.toFixed(2)).join(" ")}, ` +
        `${NodeOs.availableParallelism()} CPUs`
    )
    const baseline = SERVERS.has("node:http") ? await measure(bareTarget) : undefined
    const measured = await measure(ours)
    const official = SERVERS.has("sdk-v2") ? await measure(sdkTarget) : undefined
    const row = (against: Measurement, baselineName: Row["baselineName"]): Row => ({
      scenario: "tools/list",
      metric: "requests_per_second",
      unit: "req/s",
      ours: measured.requestsPerSecond,
      baseline: against.requestsPerSecond,
      baselineName,
      ratio: round(measured.requestsPerSecond / against.requestsPerSecond)
    })
    const rows = [
      ...(baseline === undefined ? [] : [row(baseline, "node:http")]),
      ...(official === undefined ? [] : [row(official, "sdk-v2")])
    ]
    for (const r of rows) console.log(`ratio to ${r.baselineName}: ${r.ratio}`)
    // bench/results.json holds the configuration the README states (authentication off).
    if (AUTH === "off") merge(rows)
  } finally {
    await Promise.all(servers.map(close))
    await runtime.dispose()
    NodeFs.rmSync(home, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
