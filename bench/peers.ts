/**
 * Benchmark: tool calls against the real Weaviate server (built from its Go module), in one run:
 * - `execute_query` (a GraphQL `Get` of 10 rows) through our daemon, against the same GraphQL sent
 *   directly to Weaviate (`direct-graphql`): the latency we add. Target: p50 ≤ 1 ms, p99 ≤ 3 ms added.
 *   Both sides are sent with the same HTTP client (fetch): ours as the modern `tools/call` request the
 *   v2 client sends, so the rows measure the daemon, not a client library. The same call through the
 *   SDK v1 client is printed beside it.
 * - `vector_search` (mode `hybrid`) through us against Weaviate's own MCP server (`/v1/mcp` of the same
 *   server, same data): its `weaviate-query-hybrid` tool. lean-node (bench/support/lean-tools.mjs)
 *   runs the same search in the same turns, the floor of any server between the client and Weaviate.
 * - an upsert of one row through our `insert_rows` (approved by `--approvals exec`, a command that
 *   always accepts; first access and Safe Mode's confirmation go through it too, as by default) against
 *   its `weaviate-objects-upsert` tool. Target for both: p50 and throughput at least equal to theirs.
 * Both MCP servers are driven by the same client, the official SDK v1 client over streamable HTTP, so
 * the protocol work on the client side is the same. Our daemon is the built CLI (`weaviate-mcp serve`,
 * token authentication on) pinned to core 0; Weaviate is pinned to core 1; the client is this process.
 * Latency: each side warmed up with `WARMUP` calls (default 2,000: both sides at their steady state; 200
 * left the JIT still at work in the timed calls), then `CALLS` sequential calls (after `WARMUP_OTHERS`,
 * default 2,000 too, for the scenarios after execute_query); throughput: `CONCURRENCY` calls in flight for
 * `DURATION_MS`. Merges rows into `bench/results.json`. Run with `npm run bench:peers`.
 *
 * `execute_query` is measured interleaved: direct GraphQL, ours and lean-node take turns in `ROUNDS`
 * (default 20) windows of `EXECUTE_CALLS / ROUNDS` calls each, so that a slower minute of the machine weighs on
 * every side alike (measured one after the other, the same build's CPU ratio moved between 1.7× and
 * 3.7× from run to run). The CPU ratio printed is the median of the rounds' ratios, with their range.
 * `BENCH_BASELINE_BIN=/path/to/other/bin/weaviate-mcp.js` adds another build of ours to the turns (an
 * A/B experiment: a change measured against the build without it, in the same run);
 * `BENCH_BASELINE_UNCAPPED=1` starts that build without the young-generation cap `npm start` gives
 * (`--max-semi-space-size=4`), to measure what the cap costs.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as NodeChildProcess from "node:child_process"
import { setMaxListeners } from "node:events"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import { startRealWeaviate } from "../test/weaviate/RealWeaviate.ts"
import * as Cores from "./support/Cores.ts"
import { merge, percentile, type Row } from "./support/Results.ts"
import * as Profiles from "./support/Profiles.ts"
import * as ServerCost from "./support/ServerCost.ts"
import { DAEMON_HEAP_FLAG } from "../src/Bridge/BridgeMain.ts"

const CALLS = Math.min(Math.max(Number(process.env.CALLS ?? 300), 20), 5000)
/**
 * execute_query's interleaved calls per side (`EXECUTE_CALLS`, default 2,000: 100 per window; the CPU is
 * read from the scheduler's nanoseconds, ServerCost.cpuMs). With 5 windows of 200 calls the ratio of one
 * run's rounds spread over 1.85–3.44× and the run's figure over 2.43–2.61× between runs: a collection or
 * a slow stretch of the machine falling in one side's window weighed on that side alone.
 */
const EXECUTE_CALLS = Math.min(Math.max(Number(process.env.EXECUTE_CALLS ?? 2000), 20), 20_000)
// Enough calls for the JIT to settle on both sides before anything is timed.
const WARMUP = Math.min(Math.max(Number(process.env.WARMUP ?? 2000), 0), 20_000)
// The other scenarios' warm-up, as long as execute_query's: after 500, our hybrid search still paid
// for V8's compiler in the timed calls (2.33–2.43 against 1.67–1.97 ms of CPU per call after 2,000,
// four runs alternating), where Weaviate's own server, in Go, has no compiler to wait for
// (its commit message).
const WARMUP_OTHERS = Math.min(Math.max(Number(process.env.WARMUP_OTHERS ?? 2000), 0), 20_000)
const CONCURRENCY = Math.min(Math.max(Number(process.env.CONCURRENCY ?? 8), 1), 32)
const DURATION_MS = Math.min(Math.max(Number(process.env.DURATION_MS ?? 3000), 500), 30_000)
// The official v1 client's transport hands one AbortSignal to every fetch it makes, and each request
// leaves an abort listener on it: past 1,500 Node printed a warning per listener (1,600 lines a run).
// The client's, not the daemon's; the limit is lifted for this process only.
setMaxListeners(0)
const ROUNDS = Math.min(Math.max(Number(process.env.ROUNDS ?? 20), 1), 40)
const BIN = process.env.BENCH_BIN ?? NodePath.resolve(import.meta.dirname, "..", "bin", "weaviate-mcp.js")
const BASELINE_BIN = process.env.BENCH_BASELINE_BIN
const TABLE = "BenchArticle"
const GET = `{ Get { ${TABLE}(limit: 10) { title body _additional { id } } } }`

const words = ["vector", "database", "search", "hybrid", "graph", "query", "index", "shard", "tenant", "model", "ocean", "river"]
const sentence = (n: number, length: number) => Array.from({ length }, (_, i) => words[(n * 7 + i * 3) % words.length]).join(" ")

const post = async (url: string, path: string, body: unknown) => {
  const response = await fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`${path}: ${response.status} ${text}`)
  return JSON.parse(text) as unknown
}

/** `BENCH_NODE_ARGS="--trace-deopt"`: more node flags for the servers (V8's are refused in NODE_OPTIONS). */
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter((word) => word !== "")

/** `BENCH_SERVE_ARGS="--log-level warning"`: more `serve` flags for ours, for experiments that remove one cost. */
const EXTRA_SERVE_ARGS = (process.env.BENCH_SERVE_ARGS ?? "").split(" ").filter((word) => word !== "")

const cli = (args: ReadonlyArray<string>) => NodeChildProcess.execFileSync(process.execPath, [BIN, ...args], { encoding: "utf8" })

/** The built daemon on core 0; resolves with its endpoint once it prints it (bounded to 20 s). */
const serve = (home: string, probe: ReturnType<typeof ServerCost.probe>, bin = BIN, name = "ours-execute_query", capped = true) =>
  spawnServer(name, [...(capped ? [DAEMON_HEAP_FLAG] : []), bin, "serve", "--home", home, "--port", "0", "--rate-limit", "0", "--approvals", "exec", "--approval-command", "cat >/dev/null", ...EXTRA_SERVE_ARGS], probe)

/** `lean-node` (bench/support/lean-tools.mjs), the floor of `execute_query` and of a hybrid `vector_search`, on core 0. */
const serveLean = (weaviateUrl: string, token: string, dir: string, probe: ReturnType<typeof ServerCost.probe>) =>
  // The token in the environment: on the command line any local user could read it.
  spawnServer("lean-node", [NodePath.join(import.meta.dirname, "support", "lean-tools.mjs"), weaviateUrl, dir], probe, { LEAN_TOKEN: token })

/** A Node server on core 0 (with the allocation probe); resolves with its endpoint once it prints it (bounded to 20 s). */
const spawnServer = (name: string, script: ReadonlyArray<string>, probe: ReturnType<typeof ServerCost.probe>, env: Record<string, string> = {}) =>
  new Promise<{ child: NodeChildProcess.ChildProcess; endpoint: string }>((resolve, reject) => {
    const args = [...probe.nodeArgs, ...NODE_ARGS, ...script]
    const [command, argv] = Cores.onServerCore(process.execPath, args)
    const child = NodeChildProcess.spawn(command, argv, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...probe.env, ...Profiles.env(name), ...env } })
    let out = ""
    const timer = setTimeout(() => (child.kill("SIGKILL"), reject(new Error(`serve did not start:\n${out}`))), 20_000)
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
      const endpoint = /listening on (http:\/\/\S+)/.exec(out)?.[1]
      if (endpoint !== undefined) (clearTimeout(timer), resolve({ child, endpoint }))
    })
    child.stderr!.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
    // `BENCH_SERVER_OUT=/tmp/x`: each server's output kept in /tmp/x.<name> (what `BENCH_NODE_ARGS="--trace-opt"` prints).
    const keep = process.env.BENCH_SERVER_OUT
    if (keep !== undefined && keep !== "") {
      const file = NodeFs.createWriteStream(`${keep}.${name}`)
      child.stdout!.pipe(file, { end: false })
      child.stderr!.pipe(file, { end: false })
      child.once("close", () => file.end())
    }
  })

const connect = async (url: string, headers: Record<string, string> = {}) => {
  const client = new Client({ name: "weaviate-mcp-bench", version: "0.0.0" })
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
  return client
}

interface Latency extends ServerCost.Cost {
  readonly p50: number
  readonly p99: number
}

/** A server whose cost per call is measured beside the latency. */
interface Measured {
  readonly pid: number
  readonly probeFile: string
}

/** Sequential calls after a warm-up: p50 and p99, and, for a server of ours, its CPU and allocation per call. */
const latency = async (name: string, call: (i: number) => Promise<void>, server?: Measured, warmup = WARMUP_OTHERS): Promise<Latency> => {
  for (let i = 0; i < warmup; i++) await call(i)
  const samples: Array<number> = []
  const timed = async () => {
    for (let i = 0; i < CALLS; i++) {
      const started = performance.now()
      await call(warmup + i)
      samples.push(performance.now() - started)
    }
  }
  const cost = server === undefined
    ? (await timed(), { cpuMsPerCall: undefined, bytesPerCall: undefined })
    : await ServerCost.measure(server.pid, CALLS, timed, server.probeFile)
  const result = { p50: percentile(samples, 50), p99: percentile(samples, 99), ...cost }
  console.log(
    `${name.padEnd(34)} p50 ${result.p50.toFixed(2).padStart(7)} ms  p99 ${result.p99.toFixed(2).padStart(7)} ms` +
      (server === undefined ? "" : `  ${ServerCost.describe(cost)}`)
  )
  return result
}

/** A side of the interleaved measurement. */
interface Contender {
  readonly name: string
  readonly call: (i: number) => Promise<void>
  readonly server?: Measured
}

interface Interleaved extends Latency {
  /** Each round's cost, in order. */
  readonly rounds: ReadonlyArray<ServerCost.Cost>
}

/**
 * Each contender's `warmup` calls, then `ROUNDS` rounds in which each contender makes `calls / ROUNDS`
 * sequential calls in turn: latency over all of a contender's calls, cost per call over its windows.
 * (`execute_query`'s by default; the other scenarios pass `WARMUP_OTHERS` and `CALLS`.)
 */
const interleaved = async (
  contenders: ReadonlyArray<Contender>,
  { calls = EXECUTE_CALLS, warmup = WARMUP }: { readonly warmup?: number; readonly calls?: number } = {}
): Promise<ReadonlyArray<Interleaved>> => {
  // The order turns every round: no side always follows the same one.
  const turn = (round: number) => {
    const order = contenders.map((_, k) => k)
    return round % 2 === 1 ? order.reverse() : order
  }
  // The warm-up takes turns too. Warmed up one after the other, the first side sat idle for the others'
  // warm-ups (~20 s), long enough for V8's memory reducer to shrink its young generation: it then ran
  // the timed calls with twice the scavenges (34 against 16 per 1,000 calls) and about 1.15× the CPU
  // of the same build in the last slot (its commit message).
  // Ten turns of warmup / 10 calls each (turn t makes calls [warmup * t / 10, warmup * (t + 1) / 10)).
  const warmupTurns = 10
  const warmupStart = (t: number) => Math.floor((warmup * t) / warmupTurns)
  for (let round = 0; round < warmupTurns; round++) {
    for (const k of turn(round)) for (let i = warmupStart(round); i < warmupStart(round + 1); i++) await contenders[k]!.call(i)
  }
  const perRound = Math.ceil(calls / ROUNDS)
  const sides = contenders.map(() => ({ samples: [] as Array<number>, rounds: [] as Array<ServerCost.Cost> }))
  for (let round = 0; round < ROUNDS; round++) {
    for (const k of turn(round)) {
      const contender = contenders[k]!
      const side = sides[k]!
      const timed = async () => {
        for (let i = 0; i < perRound; i++) {
          const started = performance.now()
          await contender.call(warmup + round * perRound + i)
          side.samples.push(performance.now() - started)
        }
      }
      side.rounds.push(
        contender.server === undefined
          ? (await timed(), { cpuMsPerCall: undefined, bytesPerCall: undefined })
          : await ServerCost.measure(contender.server.pid, perRound, timed, contender.server.probeFile)
      )
    }
  }
  return contenders.map((contender, k) => {
    const { rounds, samples } = sides[k]!
    const result: Interleaved = {
      p50: percentile(samples, 50),
      p99: percentile(samples, 99),
      cpuMsPerCall: ServerCost.mean(rounds.map((r) => r.cpuMsPerCall)),
      mainCpuMsPerCall: ServerCost.mean(rounds.map((r) => r.mainCpuMsPerCall)),
      bytesPerCall: ServerCost.mean(rounds.map((r) => r.bytesPerCall)),
      gc: ServerCost.meanGc(rounds.map((r) => r.gc)),
      rounds
    }
    console.log(
      `${contender.name.padEnd(34)} p50 ${result.p50.toFixed(2).padStart(7)} ms  p99 ${result.p99.toFixed(2).padStart(7)} ms` +
        (contender.server === undefined ? "" : `  ${ServerCost.describe(result)}`)
    )
    return result
  })
}

/** The median of the rounds' CPU ratios, and their range: `2.10× (rounds 1.90–2.40×)`. */
const roundRatios = (ours: Interleaved, baseline: Interleaved): string => {
  const ratios = ours.rounds.flatMap((r, i) => {
    const a = r.cpuMsPerCall
    const b = baseline.rounds[i]?.cpuMsPerCall
    return a === undefined || b === undefined || b === 0 ? [] : [a / b]
  }).sort((a, b) => a - b)
  if (ratios.length === 0) return "n/a"
  return `${percentile(ratios, 50).toFixed(2)}× (rounds ${ratios[0]!.toFixed(2)}–${ratios[ratios.length - 1]!.toFixed(2)}×)`
}

/** `CONCURRENCY` calls in flight for `ms`: the calls done and the time taken. */
const callWindow = async (call: (i: number) => Promise<void>, ms: number, first: number) => {
  let done = 0
  let next = first
  const stopAt = performance.now() + ms
  const started = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < stopAt) {
      await call(next++)
      done++
    }
  }))
  return { done, ms: performance.now() - started }
}

/** How many windows each side of a throughput comparison gets, taken in turns. */
const THROUGHPUT_TURNS = 4

/**
 * Calls per second of each of `sides`, with `CONCURRENCY` in flight: `DURATION_MS` each, in
 * `THROUGHPUT_TURNS` windows taken in turns (the order reversed every other turn), so that a slower
 * stretch of the machine or of Weaviate falls on every side alike. Measured one after the other, the
 * hybrid search's ratio moved from 0.75x to 1.00x between two runs of the same build.
 */
const throughputInTurns = async (sides: ReadonlyArray<{ readonly name: string; readonly call: (i: number) => Promise<void> }>) => {
  const totals = sides.map(() => ({ done: 0, ms: 0 }))
  let first = 1_000_000
  for (let turn = 0; turn < THROUGHPUT_TURNS; turn++) {
    const order = turn % 2 === 0 ? sides.map((_, i) => i) : sides.map((_, i) => sides.length - 1 - i)
    for (const i of order) {
      const measured = await callWindow(sides[i]!.call, DURATION_MS / THROUGHPUT_TURNS, first)
      first += measured.done + CONCURRENCY
      totals[i]!.done += measured.done
      totals[i]!.ms += measured.ms
    }
  }
  return sides.map((side, i) => {
    const perSecond = totals[i]!.done / (totals[i]!.ms / 1000)
    console.log(`${side.name.padEnd(34)} ${perSecond.toFixed(0).padStart(7)} calls/s (${CONCURRENCY} in flight, ${THROUGHPUT_TURNS} windows in turns)`)
    return perSecond
  })
}

const isError = (result: unknown) => (result as { isError?: boolean }).isError === true
const check = (name: string, result: unknown) => {
  if (isError(result)) throw new Error(`${name} failed: ${JSON.stringify(result).slice(0, 500)}`)
}

const round = (n: number) => Math.round(n * 1000) / 1000

const row = (scenario: Row["scenario"], metric: string, unit: string, ours: number, baseline: number, baselineName: Row["baselineName"]): Row =>
  ({ scenario, metric, unit, ours: round(ours), baseline: round(baseline), baselineName, ratio: round(round(ours) / round(baseline)) })

/** `PEERS=execute_query` measures only execute_query against direct GraphQL and lean-node. */
const ONLY_EXECUTE_QUERY = process.env.PEERS === "execute_query"

const main = async () => {
  const weaviate = await startRealWeaviate()
  const home = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-bench-"))
  let daemon: NodeChildProcess.ChildProcess | undefined
  let lean: NodeChildProcess.ChildProcess | undefined
  let baselineDaemon: NodeChildProcess.ChildProcess | undefined
  let baselineHome: string | undefined
  let ours: Client | undefined
  let theirs: Client | undefined
  try {
    if (Cores.pinned) {
      NodeChildProcess.execFileSync("sh", ["-c", `pgrep -f 'weaviate-server.*--port ${weaviate.port}' | xargs -r -n1 taskset -a -cp ${Cores.LOAD_CORE}`], { stdio: "ignore" })
      // The client (this process) too: left free, the scheduler ran it on the daemon's core (perf saw a
      // sixth of core 0's samples in it), where it took CPU and caches from the process measured.
      Cores.pinToLoadCore()
    }
    await post(weaviate.url, "/v1/schema", {
      class: TABLE,
      vectorizer: "text2vec-transformers",
      properties: [{ name: "title", dataType: ["text"] }, { name: "body", dataType: ["text"] }]
    })
    const objects = Array.from({ length: 500 }, (_, n) => ({ class: TABLE, properties: { title: sentence(n, 3), body: sentence(n, 20) } }))
    await post(weaviate.url, "/v1/batch/objects", { objects })

    const created = cli(["tokens", "create", "--home", home, "--name", "bench", "--access", "readWrite"])
    const token = /(wmcp_[A-Za-z0-9_-]+)/.exec(created)?.[1]
    if (token === undefined) throw new Error(`no token in: ${created}`)
    // A fullAccess token: Safe Mode `confirm` asks a second time on this machine for any other level.
    const fullToken = /(wmcp_[A-Za-z0-9_-]+)/.exec(cli(["tokens", "create", "--home", home, "--name", "bench-full", "--access", "fullAccess"]))?.[1]
    if (fullToken === undefined) throw new Error("no fullAccess token")
    const added = JSON.parse(cli(["connections", "add", "--home", home, "--name", "bench", "--host", "127.0.0.1", "--port", String(weaviate.port), "--json"])) as { id: string }
    // The baseline build serves a copy of the home (one daemon per home), made before ours starts.
    if (BASELINE_BIN !== undefined) {
      baselineHome = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-bench-baseline-"))
      NodeFs.cpSync(home, baselineHome, { recursive: true })
    }
    const probe = ServerCost.probe()
    const started = await serve(home, probe)
    daemon = started.child
    const oursMeasured = { pid: started.child.pid!, probeFile: probe.file }
    // The other servers start right after ours, and no server has a client connected during
    // execute_query's turns (the SDK clients connect after them), so the sides differ only in their
    // build; the warm-up in turns (`interleaved`) is what made the same build measure alike in both slots.
    const baselineProbe = ServerCost.probe()
    const baselineStarted = baselineHome === undefined ? undefined : await serve(baselineHome, baselineProbe, BASELINE_BIN, "baseline-build-execute_query", process.env.BENCH_BASELINE_UNCAPPED !== "1")
    baselineDaemon = baselineStarted?.child
    const leanProbe = ServerCost.probe()
    const leanStarted = await serveLean(weaviate.url, token, home, leanProbe)
    lean = leanStarted.child
    console.log(`peers: Weaviate ${weaviate.version}; execute_query ${EXECUTE_CALLS} sequential calls after ${WARMUP} in ${ROUNDS} rounds, the others ${CALLS}; throughput with ${CONCURRENCY} in flight for ${DURATION_MS} ms; ` +
      `${Cores.pinned ? "servers on core 0, Weaviate and the client on core 1" : "not pinned"}`)

    const connection_id = added.id

    // ===== execute_query against direct GraphQL and lean-node, interleaved =====
    /** A modern `tools/call` as the v2 client sends it; `answer` carries elicitation answers in-band. */
    const send = async (
      endpoint: string,
      i: number,
      name: string,
      args: Record<string, unknown>,
      answer: { readonly bearer?: string; readonly elicitation?: boolean; readonly params?: Record<string, unknown> } = {}
    ) => {
      const response = await fetch(endpoint, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: `Bearer ${answer.bearer ?? token}`,
          "mcp-protocol-version": "2026-07-28",
          "mcp-method": "tools/call",
          "mcp-name": name
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: i,
          method: "tools/call",
          params: {
            name,
            arguments: args,
            ...answer.params,
            _meta: {
              "io.modelcontextprotocol/protocolVersion": "2026-07-28",
              "io.modelcontextprotocol/clientInfo": { name: "weaviate-mcp-bench", version: "0.0.0" },
              "io.modelcontextprotocol/clientCapabilities": answer.elicitation === true ? { elicitation: {} } : {}
            }
          }
        })
      })
      const body = (await response.json()) as { result?: Record<string, unknown>; error?: unknown }
      return body.result ?? { isError: true, error: body.error }
    }
    const rawCall = async (endpoint: string, i: number, name: string, args: Record<string, unknown>) =>
      check(name, await send(endpoint, i, name, args))
    /**
     * A write approved in-band: the client declares elicitation, gets `input_required`
     * (`approve_statement`; first access the first time too) and answers it with the `requestState`.
     */
    const elicitedCall = async (i: number, name: string, args: Record<string, unknown>) => {
      const accept = { approve_statement: { action: "accept", content: { approved: true } } }
      let result = await send(started.endpoint, i, name, args, { bearer: fullToken, elicitation: true })
      for (let round = 0; round < 3 && result.resultType === "input_required"; round++) {
        result = await send(started.endpoint, i, name, args, {
          bearer: fullToken,
          elicitation: true,
          params: { requestState: result.requestState, inputResponses: accept }
        })
      }
      check(name, result)
    }
    const executeQuery = (endpoint: string) => (i: number) => rawCall(endpoint, i, "execute_query", { connection_id, query: GET })
    const measured = await interleaved([
      { name: "direct GraphQL Get (10 rows)", call: async () => void (await post(weaviate.url, "/v1/graphql", { query: GET })) },
      { name: "ours execute_query (same Get)", call: executeQuery(started.endpoint), server: oursMeasured },
      { name: "lean-node execute_query (same Get)", call: executeQuery(leanStarted.endpoint), server: { pid: leanStarted.child.pid!, probeFile: leanProbe.file } },
      ...(baselineStarted === undefined ? [] : [{
        name: "baseline build execute_query",
        call: executeQuery(baselineStarted.endpoint),
        server: { pid: baselineStarted.child.pid!, probeFile: baselineProbe.file }
      }])
    ])
    const [direct, viaUs, viaLean] = [measured[0]!, measured[1]!, measured[2]!]
    const viaBaseline = measured[3]
    if (baselineDaemon !== undefined) await Profiles.stop(baselineDaemon)
    // The same request frame with a tool that does not reach the database: what a tools/call costs around the tool.
    await latency("ours list_connections (no database)", (i) => rawCall(started.endpoint, i, "list_connections", {}), oursMeasured)
    const oursClient = ours = await connect(started.endpoint, { authorization: `Bearer ${token}` })
    const theirsClient = theirs = await connect(`${weaviate.url}/v1/mcp`)
    console.log(
      `execute_query: ours adds p50 ${(viaUs.p50 - direct.p50).toFixed(2)} ms, p99 ${(viaUs.p99 - direct.p99).toFixed(2)} ms; ` +
        `lean-node adds p50 ${(viaLean.p50 - direct.p50).toFixed(2)} ms, p99 ${(viaLean.p99 - direct.p99).toFixed(2)} ms; ` +
        `CPU per call ${roundRatios(viaUs, viaLean)} lean-node` +
        (viaBaseline === undefined ? "" : `; ${roundRatios(viaUs, viaBaseline)} the baseline build`)
    )
    if (!ONLY_EXECUTE_QUERY) {
      await latency("ours execute_query (SDK v1 client)", async () => check("execute_query", await oursClient.callTool({ name: "execute_query", arguments: { connection_id, query: GET } })))
    }
    const executeRows = [
      row("execute_query", "p50", "ms", viaUs.p50, direct.p50, "direct-graphql"),
      row("execute_query", "p99", "ms", viaUs.p99, direct.p99, "direct-graphql"),
      row("execute_query", "p50_added", "ms", viaUs.p50 - direct.p50, viaLean.p50 - direct.p50, "lean-node"),
      row("execute_query", "p99_added", "ms", viaUs.p99 - direct.p99, viaLean.p99 - direct.p99, "lean-node"),
      ...(viaUs.cpuMsPerCall !== undefined && viaLean.cpuMsPerCall !== undefined
        ? [row("execute_query", "cpu_per_call", "ms", viaUs.cpuMsPerCall, viaLean.cpuMsPerCall, "lean-node")]
        : []),
      ...(viaUs.bytesPerCall !== undefined && viaLean.bytesPerCall !== undefined
        ? [row("execute_query", "bytes_allocated_per_call", "bytes", viaUs.bytesPerCall, viaLean.bytesPerCall, "lean-node")]
        : []),
      ...(viaUs.gc !== undefined && viaLean.gc !== undefined && viaLean.gc.pauseMsPerCall > 0 && viaLean.gc.promotedBytesPerCall > 0
        ? [
          row("execute_query", "gc_pause_per_call", "µs", viaUs.gc.pauseMsPerCall * 1000, viaLean.gc.pauseMsPerCall * 1000, "lean-node"),
          row("execute_query", "promoted_bytes_per_call", "bytes", viaUs.gc.promotedBytesPerCall, viaLean.gc.promotedBytesPerCall, "lean-node")
        ]
        : [])
    ]
    if (ONLY_EXECUTE_QUERY) {
      merge(executeRows)
      return
    }

    // ===== hybrid against Weaviate's MCP =====
    const hybridArgs = (i: number) => ({ connection_id, table: TABLE, mode: "hybrid", query: words[i % words.length]!, limit: 10 })
    const hybridOurs = async (i: number) => check("vector_search", await oursClient.callTool({ name: "vector_search", arguments: hybridArgs(i) }))
    const hybridTheirs = async (i: number) =>
      check("weaviate-query-hybrid", await theirsClient.callTool({ name: "weaviate-query-hybrid", arguments: { collection_name: TABLE, query: words[i % words.length]!, limit: 10 } }))
    // The floor of the same search: lean-node, and ours, sent as execute_query's calls are (one fetch,
    // no SDK client), so the two differ only in the server. Weaviate's own server answers inside
    // Weaviate; anything between the client and Weaviate adds a hop (see the line printed below).
    const hybridLean = (i: number) => rawCall(leanStarted.endpoint, i, "vector_search", hybridArgs(i))
    const hybridOursRaw = (i: number) => rawCall(started.endpoint, i, "vector_search", hybridArgs(i))
    // In turns, as execute_query: measured one after the other, a slower minute fell on one side only.
    const [hybridLatencyOurs, hybridLatencyTheirs, hybridLatencyOursRaw, hybridLatencyLean] = await interleaved([
      { name: "ours vector_search hybrid", call: hybridOurs, server: oursMeasured },
      { name: "weaviate-query-hybrid (/v1/mcp)", call: hybridTheirs },
      { name: "ours vector_search hybrid (fetch)", call: hybridOursRaw, server: oursMeasured },
      { name: "lean-node vector_search hybrid (fetch)", call: hybridLean, server: { pid: leanStarted.child.pid!, probeFile: leanProbe.file } }
    ], { warmup: WARMUP_OTHERS, calls: CALLS }) as [Interleaved, Interleaved, Interleaved, Interleaved]
    // Against Weaviate's server both go through the SDK client; against lean-node both are sent with
    // fetch, as the p50 rows are: through the SDK client, ours paid the client's CPU, on the core
    // Weaviate runs on, and lean-node did not (in one run: 0.96x of lean-node's calls/s through the
    // client, 1.02x sent alike).
    const [hybridRateOurs, hybridRateTheirs, hybridRateOursRaw, hybridRateLean] = await throughputInTurns([
      { name: "ours vector_search hybrid", call: hybridOurs },
      { name: "weaviate-query-hybrid (/v1/mcp)", call: hybridTheirs },
      { name: "ours vector_search hybrid (fetch)", call: hybridOursRaw },
      { name: "lean-node vector_search hybrid (fetch)", call: hybridLean }
    ]) as [number, number, number, number]
    console.log(
      `vector_search hybrid: p50 ours ${(hybridLatencyOurs.p50 / hybridLatencyTheirs.p50).toFixed(2)}× Weaviate's /v1/mcp; ` +
        `lean-node (the floor) ${(hybridLatencyLean.p50 / hybridLatencyTheirs.p50).toFixed(2)}×, ` +
        `${(hybridRateLean / hybridRateTheirs).toFixed(2)}× its calls/s; ours (fetch) ${(hybridLatencyOursRaw.p50 / hybridLatencyLean.p50).toFixed(2)}× lean-node's p50`
    )

    // ===== one-row upsert against Weaviate's MCP =====
    const upsertOurs = async (i: number) =>
      check("insert_rows", await oursClient.callTool({ name: "insert_rows", arguments: { connection_id, table: TABLE, rows: [{ properties: { title: `ours ${i}`, body: sentence(i, 12) } }] } }))
    const upsertTheirs = async (i: number) =>
      check("weaviate-objects-upsert", await theirsClient.callTool({ name: "weaviate-objects-upsert", arguments: { collection_name: TABLE, objects: [{ properties: { title: `theirs ${i}`, body: sentence(i, 12) } }] } }))
    const upsertElicited = (i: number) =>
      elicitedCall(i, "insert_rows", { connection_id, table: TABLE, rows: [{ properties: { title: `elicited ${i}`, body: sentence(i, 12) } }] })
    const [upsertLatencyOurs, upsertLatencyElicited, upsertLatencyTheirs] = await interleaved([
      { name: "ours insert_rows (exec approval)", call: upsertOurs, server: oursMeasured },
      { name: "ours insert_rows (elicitation)", call: upsertElicited, server: oursMeasured },
      { name: "weaviate-objects-upsert (/v1/mcp)", call: upsertTheirs }
    ], { warmup: WARMUP_OTHERS, calls: CALLS }) as [Interleaved, Interleaved, Interleaved]
    const [upsertRateOurs, upsertRateTheirs] = await throughputInTurns([
      { name: "ours insert_rows (exec approval)", call: upsertOurs },
      { name: "weaviate-objects-upsert (/v1/mcp)", call: upsertTheirs }
    ]) as [number, number]

    merge([
      ...executeRows,
      row("vector_search", "p50", "ms", hybridLatencyOurs.p50, hybridLatencyTheirs.p50, "weaviate-mcp-server"),
      row("vector_search", "calls_per_second", "calls/s", hybridRateOurs, hybridRateTheirs, "weaviate-mcp-server"),
      // The floor's own rows: ours and lean-node sent alike (fetch), and lean-node against Weaviate's server.
      row("vector_search", "p50_fetch", "ms", hybridLatencyOursRaw.p50, hybridLatencyLean.p50, "lean-node"),
      row("vector_search", "calls_per_second_vs_lean", "calls/s", hybridRateOursRaw, hybridRateLean, "lean-node"),
      ...(hybridLatencyOursRaw.cpuMsPerCall !== undefined && hybridLatencyLean.cpuMsPerCall !== undefined
        ? [row("vector_search", "cpu_per_call", "ms", hybridLatencyOursRaw.cpuMsPerCall, hybridLatencyLean.cpuMsPerCall, "lean-node")]
        : []),
      row("insert_rows", "p50", "ms", upsertLatencyOurs.p50, upsertLatencyTheirs.p50, "weaviate-mcp-server"),
      row("insert_rows", "p50_elicitation", "ms", upsertLatencyElicited.p50, upsertLatencyTheirs.p50, "weaviate-mcp-server"),
      row("insert_rows", "calls_per_second", "calls/s", upsertRateOurs, upsertRateTheirs, "weaviate-mcp-server")
    ])
  } finally {
    if (daemon !== undefined) await Profiles.stop(daemon)
    if (lean !== undefined) await Profiles.stop(lean)
    if (baselineDaemon !== undefined) await Profiles.stop(baselineDaemon)
    await ours?.close()
    await theirs?.close()
    await weaviate.stop()
    for (const dir of [home, baselineHome]) if (dir !== undefined) NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}

main().then(Profiles.report).catch((error) => {
  console.error(error)
  process.exitCode = 1
})
