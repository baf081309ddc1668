/**
 * Benchmark: the time from sending `notifications/cancelled` to receiving the `-33002` answer of the
 * cancelled `tools/call`, over real HTTP on 127.0.0.1 against the real daemon (authentication off,
 * rate limit off, a catalogue with one tool that waits until it is stopped).
 *
 * Baseline: a plain round trip of a cheap request (`server/discover`) on the same server.
 * Prints one line and merges `{scenario: "cancel", metric: "p50" | "p99", ...}` into
 * `bench/results.json`. Run with `npm run bench:cancel` (`ITERATIONS=n` to change the count).
 */
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import * as Daemon from "../src/Daemon/Daemon.ts"
import * as Logging from "../src/Daemon/Logging.ts"
import { Home } from "../src/Base/Home.ts"
import * as Settings from "../src/Daemon/Settings.ts"
import * as Catalogue from "../src/Mcp/Catalogue.ts"
import { BoundAddress } from "../src/Mcp/HttpTransport.ts"
import { merge, percentile, type Row } from "./support/Results.ts"
import * as ServerCost from "./support/ServerCost.ts"

const ITERATIONS = Math.min(Math.max(Number(process.env.ITERATIONS ?? 300), 10), 5_000)
const WARMUP = 30
const VERSION = "2026-07-28"

/** Resolves the promise registered for a request id when the tool starts running it. */
const started = new Map<string | number, () => void>()
const whenStarted = (id: string | number) => new Promise<void>((resolve) => started.set(id, resolve))

const catalogue = Layer.mergeAll(
  Layer.succeed(Catalogue.Tools, Catalogue.Tools.of({
    all: [{
      descriptor: { name: "wait", description: "Waits until stopped", inputSchema: { type: "object", properties: {} } },
      scopes: [],
      call: () =>
        Effect.flatMap(Catalogue.RequestContext, ({ requestId }) =>
          Effect.zipRight(Effect.sync(() => started.get(requestId)?.()), Effect.never))
    }]
  })),
  Catalogue.Resources.empty,
  Catalogue.Prompts.empty,
  Catalogue.Completions.empty
)

const home = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-bench-"))

// The operational log as `serve` writes it (logfmt, info, batched per tick), to a file in the home:
// on the console it was two lines per cancelled call in `npm run bench`'s output.
const logFd = NodeFs.openSync(NodePath.join(home, "serve.log"), "a", 0o600)
const logging = Logging.layer({ format: "text", level: "info", sink: Logging.batchedSink((text) => void NodeFs.writeSync(logFd, text)) })

const daemon = Layer.unwrapEffect(Effect.gen(function*() {
  const defaults = yield* Effect.orDie(Effect.withConfigProvider(Settings.ServeSettings, ConfigProvider.fromJson({})))
  return Daemon.layer({ settings: { ...defaults, auth: "off", rateLimit: 0 }, port: 0, catalogue })
})).pipe(Layer.provide(Layer.effect(Home, Home.make(home))), Layer.provide(logging))

const meta = { "io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {} }

const post = (url: string, headers: Record<string, string>, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) })

const call = (url: string, id: number) =>
  post(url, { "mcp-protocol-version": VERSION, "mcp-method": "tools/call", "mcp-name": "wait" }, {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "wait", arguments: {}, _meta: meta }
  }).then((response) => response.json() as Promise<{ error?: { code: number } }>)

const discover = (url: string, id: number) =>
  post(url, { "mcp-protocol-version": VERSION, "mcp-method": "server/discover" }, { jsonrpc: "2.0", id, method: "server/discover", params: { _meta: meta } })
    .then((response) => response.json() as Promise<{ result?: unknown }>)

/** One cancellation: start a call, wait until its tool runs, then time notification → -33002. */
const cancelOnce = async (url: string, id: number) => {
  const running = whenStarted(id)
  const answer = call(url, id)
  await running
  const t0 = performance.now()
  const notified = post(url, {}, { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } })
  const body = await answer
  const elapsed = performance.now() - t0
  const notification = await notified
  await notification.arrayBuffer()
  if (body.error?.code !== -33002 || notification.status !== 202) {
    throw new Error(`iteration ${id}: expected -33002 and 202, got ${JSON.stringify(body)} and ${notification.status}`)
  }
  started.delete(id)
  return elapsed
}

const roundTrip = async (url: string, id: number) => {
  const t0 = performance.now()
  const body = await discover(url, id)
  const elapsed = performance.now() - t0
  if (body.result === undefined) throw new Error(`baseline ${id}: ${JSON.stringify(body)}`)
  return elapsed
}




const round = (n: number) => Math.round(n * 1000) / 1000

const main = async () => {
  const runtime = ManagedRuntime.make(daemon)
  try {
    const address = await runtime.runPromise(BoundAddress)
    const url = `${address.url}/mcp`
    let id = 0
    for (let i = 0; i < WARMUP; i++) {
      await cancelOnce(url, ++id)
      await roundTrip(url, ++id)
    }
    const ours: Array<number> = []
    const baseline: Array<number> = []
    // Interleaved, so that both see the same machine state. CPU and allocation are of this process:
    // the daemon and its caller together, per cancelled call and round trip.
    const { cost } = await ServerCost.inProcess(ITERATIONS, async () => {
      for (let i = 0; i < ITERATIONS; i++) {
        ours.push(await cancelOnce(url, ++id))
        baseline.push(await roundTrip(url, ++id))
      }
    })
    console.log(`cancel: ${ServerCost.describe(cost)} (a cancelled call and a round trip, daemon and caller)`)
    const rows: Array<Row> = (["p50", "p99"] as const).map((metric) => {
      const p = metric === "p50" ? 50 : 99
      const o = percentile(ours, p)
      const b = percentile(baseline, p)
      return { scenario: "cancel", metric, unit: "ms", ours: round(o), baseline: round(b), baselineName: "node:http", ratio: round(round(o) / round(b)) }
    })
    console.log(
      `cancel (notifications/cancelled → -33002, n=${ITERATIONS}): ` +
        rows.map((r) => `${r.metric} ${r.ours} ms (baseline ${r.baselineName} round trip ${r.baseline} ms, ratio ${r.ratio})`).join("; ")
    )
    merge(rows)
  } finally {
    await runtime.dispose()
    NodeFs.rmSync(home, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
