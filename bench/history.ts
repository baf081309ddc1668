/**
 * Benchmark: the query history (`history.db`), against the real Weaviate server, in one run:
 *
 * - **Recording is free.** `execute_query` calls (one GraphQL `Get`) through the real daemon with the
 *   history on, and again with `serve --history off`: in each of `ROUNDS` rounds a daemon of each, the
 *   calls in `WINDOWS` windows taken in turns; the daemons' CPU per call (all threads, from /proc) is
 *   compared. Row `history / execute_query_cpu_per_call /
 *   history-off`.
 * - **Search at scale.** A history of `HISTORY_BENCH_ENTRIES` entries (default 1,000,000; ~1% name
 *   "harbour") is written through the store, then `search_query_history` with the text search
 *   "harbour" (limit 50) is called through the daemon over HTTP; its p50 is compared with the same
 *   FTS5 query (the store's own SQL) run directly on the same file with better-sqlite3, the bare floor
 *   (`history / search_p50 / better-sqlite3`), and with lean-node (bench/support/lean-tools.mjs): the
 *   same search and answer over plain node:http with the contract's per-call work (token check,
 *   activity and log lines), taken in turns with ours (`history / search_p50 / lean-node`). Both
 *   servers use token authentication, on the servers' core; the client on the other. The absolute
 *   figures are printed beside the ratios.
 * - **Disk.** Bytes per entry of that file (after a WAL checkpoint), beside the same entries as JSON
 *   lines (`history / bytes_per_entry / jsonl`); and a store capped at `maxEntries` written eight times
 *   over: the file's growth over the last two rounds (the FTS5 index settles after about five) (`history / growth_at_max_entries / history-at-max`,
 *   ratio to the file's size at the cap; 0 = it stopped growing).
 *
 * Small runs: `HISTORY_BENCH_ENTRIES=20000 CALLS=300 ROUNDS=2 SEARCHES=50 npm run bench:history`.
 */
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Home } from "../src/Base/Home.ts"
import { performance } from "node:perf_hooks"
import * as HistoryEntry from "../src/History/HistoryEntry.ts"
import * as HistoryQuery from "../src/History/HistoryQuery.ts"
import { DEFAULTS, HistoryStore } from "../src/History/HistoryStore.ts"
import * as Cli from "../test/support/Cli.ts"
import { startRealWeaviate } from "../test/weaviate/RealWeaviate.ts"
import * as Cores from "./support/Cores.ts"
import { merge, percentile, type Row } from "./support/Results.ts"
import * as ServerCost from "./support/ServerCost.ts"

const tempHome = () => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-bench-history-"))
const homeAt = (dir: string) => Home.layer(Option.some(dir))

const bounded = (name: string, fallback: number, min: number, max: number) => Math.min(Math.max(Number(process.env[name] ?? fallback), min), max)
const ENTRIES = bounded("HISTORY_BENCH_ENTRIES", 1_000_000, 1_000, 5_000_000)
const CALLS = bounded("CALLS", 2_000, 50, 100_000)
const ROUNDS = bounded("ROUNDS", 3, 1, 20)
/** The windows each daemon of a round gets, in turns (`WINDOWS`, default 10). */
const WINDOWS = bounded("WINDOWS", 10, 1, 100)
/** Calls before each measured window (`WARMUP_CALLS`, default 2000, as bench:peers). */
const WARMUP_CALLS = bounded("WARMUP_CALLS", 2000, 0, 20_000)
const SEARCHES = bounded("SEARCHES", 200, 10, 10_000)
const CAP = Math.max(1_000, Math.floor(ENTRIES / 20))
const TABLE = "BenchHistory"
const QUERY = `{ Get { ${TABLE}(limit: 5) { title } } }`

const WORDS = ["meadow", "river", "granite", "lantern", "orchard", "signal", "vector", "summit", "copper", "willow", "ember", "tundra"]

/** A varied statement; every 100th names the harbour. */
const statementOf = (i: number) =>
  i % 100 === 0
    ? `{ Get { Article(hybrid: {query: "harbour lights ${i}", alpha: 0.5}, limit: 10) { title } } }`
    : `{ Get { ${["Article", "Author", "Product"][i % 3]}(where: {path: ["title"], operator: Like, valueText: "${WORDS[i % 12]} ${WORDS[(i * 7) % 12]}"}, limit: ${1 + (i % 50)}) { title body } } }`

const entryOf = (i: number, time: number): HistoryEntry.NewEntry => ({
  time,
  connection: "bench",
  collection: ["Article", "Author", "Product"][i % 3]!,
  tenant: null,
  consistencyLevel: null,
  source: "mcp",
  client: i % 2 === 0 ? "claude-code" : "cursor",
  principal: "tok_bench",
  principalName: "bench",
  tool: "execute_query",
  statement: statementOf(i),
  digest: HistoryEntry.digest(statementOf(i)),
  durationMs: 3.2,
  rows: i % 50,
  outcome: i % 37 === 0 ? "error" : "ok",
  errorCode: i % 37 === 0 ? "query_failed" : null,
  errorMessage: i % 37 === 0 ? "Cannot query field" : null,
  approval: null
})

/** Writes `count` entries into the home's history through the store, in batches. */
const fill = (home: string, count: number, options: Partial<typeof DEFAULTS> = {}) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const store = yield* HistoryStore.make({ ...DEFAULTS, maxEntries: Math.max(count, DEFAULTS.maxEntries), ...options })
    const start = Date.now() - count
    for (let i = 0; i < count; i++) {
      store.record(entryOf(i, start + i))
      if (i % 5_000 === 4_999) yield* store.flush
    }
    yield* store.flush
    return store
  })).pipe(Effect.provide(homeAt(home))))

const checkpointSize = (path: string) => {
  const db = new Database(path)
  db.pragma("wal_checkpoint(TRUNCATE)")
  db.close()
  return NodeFs.statSync(path).size
}

const modernCall = (endpoint: string, name: string, args: Record<string, unknown>, id: number, extra: Record<string, string> = {}) =>
  fetch(endpoint, {
    method: "POST",
    headers: { ...extra, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": name },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: {
        name,
        arguments: args,
        _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": { name: "bench", version: "1" }, "io.modelcontextprotocol/clientCapabilities": {} }
      }
    })
  }).then(async (response) => {
    const text = await response.text()
    if (!text.includes('"resultType":"complete"') || text.includes('"isError":true')) throw new Error(`${name}: ${text.slice(0, 300)}`)
    return text
  })

/** `HISTORY_BENCH_CPU_PROF=DIR` writes the search daemon's CPU profile there (node --cpu-prof). */
const PROFILE_DIR = process.env["HISTORY_BENCH_CPU_PROF"]

/** `BENCH_NODE_ARGS="--no-memory-reducer"`: more node flags for the daemons (V8's are refused in NODE_OPTIONS). */
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter((word) => word !== "")

const serveIn = async (home: string, history: "on" | "off", nodeArgs: ReadonlyArray<string> = NODE_ARGS, auth = false) =>
  Cli.serve(["--port", "0", "--home", home, ...(auth ? [] : ["--auth", "off"]), "--approvals", "exec", "--approval-command", "true", "--rate-limit", "0", "--log-level", "warning", "--history", history], { nodeArgs })

/** lean-node (bench/support/lean-tools.mjs) serving `search_query_history` from `db` with the store's `sql`, on the servers' core. */
const serveLean = (weaviateUrl: string, token: string, dir: string, db: string, sql: HistoryQuery.Sql) =>
  new Promise<{ child: NodeChildProcess.ChildProcess; endpoint: string }>((resolve, reject) => {
    const [command, argv] = Cores.onServerCore(process.execPath, [NodePath.join(import.meta.dirname, "support", "lean-tools.mjs"), weaviateUrl, dir])
    // The token in the environment: on the command line any local user could read it.
    const child = NodeChildProcess.spawn(command, argv, {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, LEAN_TOKEN: token, LEAN_HISTORY_DB: db, LEAN_HISTORY_SQL: JSON.stringify(sql) }
    })
    let out = ""
    const timer = setTimeout(() => (child.kill("SIGKILL"), reject(new Error(`lean-node did not start:\n${out}`))), 20_000)
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
      const endpoint = /listening on (http:\/\/\S+)/.exec(out)?.[1]
      if (endpoint !== undefined) (clearTimeout(timer), resolve({ child, endpoint }))
    })
    child.stderr!.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
  })

const stop = async (running: Cli.Running) => {
  running.child.kill("SIGTERM")
  await running.exited
}

const weaviate = await startRealWeaviate()
const rows: Array<Row> = []
try {
  await fetch(`${weaviate.url}/v1/schema`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ class: TABLE, vectorizer: "none", properties: [{ name: "title", dataType: ["text"] }] })
  })
  await fetch(`${weaviate.url}/v1/batch/objects`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ objects: Array.from({ length: 5 }, (_, i) => ({ class: TABLE, properties: { title: `row ${i}` } })) })
  })

  // ===== Recording is free =====
  // Each round starts a daemon of each mode and gives them the calls in turns, WINDOWS windows each:
  // one daemon per mode, one after the other, moved the ratio between 1.02x and 1.10x between runs of
  // one build (a slower stretch of the machine, or a collection, fell on one side). Each daemon's CPU
  // is read from before its first window to after its last, so that the history's batch, written on a
  // timer, is counted wherever it falls.
  const cpu: Record<"on" | "off", Array<number>> = { on: [], off: [] }
  const roundRatios: Array<number> = []
  for (let round = 0; round < ROUNDS; round++) {
    const daemons: Array<{ mode: "on" | "off"; home: string; running: Cli.Running }> = []
    try {
      for (const mode of ["on", "off"] as const) {
        const home = tempHome()
        await Cli.run(["connections", "add", "--name", "w", "--host", "127.0.0.1", "--port", String(weaviate.port), "--home", home])
        daemons.push({ mode, home, running: await serveIn(home, mode) })
      }
      // Each daemon's first thousands of calls pay V8's compiler (docs/benchmarks.md), which moved the
      // ratio from 1.03x to 1.19x between two runs of one build with 100 calls of warm-up.
      for (const { running } of daemons) {
        for (let i = 0; i < WARMUP_CALLS; i++) await modernCall(running.endpoint, "execute_query", { connection_id: "w", query: QUERY }, i)
      }
      const before = daemons.map(({ running }) => ServerCost.cpuMs(running.child.pid!)!)
      const perWindow = Math.ceil(CALLS / WINDOWS)
      for (let window = 0; window < WINDOWS; window++) {
        for (const d of window % 2 === 0 ? daemons : [...daemons].reverse()) {
          for (let i = 0; i < perWindow; i++) {
            await modernCall(d.running.endpoint, "execute_query", { connection_id: "w", query: QUERY }, WARMUP_CALLS + window * perWindow + i)
          }
        }
      }
      // The last batch is written on a timer after the last answer: give it that time inside the window.
      await new Promise((resolve) => setTimeout(resolve, 250))
      const perCall = daemons.map(({ running }, i) => (ServerCost.cpuMs(running.child.pid!)! - before[i]!) / (perWindow * WINDOWS))
      cpu.on.push(perCall[0]!)
      cpu.off.push(perCall[1]!)
      roundRatios.push(perCall[0]! / perCall[1]!)
    } finally {
      for (const { home, running } of daemons) {
        await stop(running)
        NodeFs.rmSync(home, { recursive: true, force: true })
      }
    }
  }
  const on = ServerCost.mean(cpu.on)!
  const off = ServerCost.mean(cpu.off)!
  console.log(
    `execute_query CPU per call: history on ${on.toFixed(3)} ms, off ${off.toFixed(3)} ms (${(on / off).toFixed(3)}x; ${CALLS} calls each in ${WINDOWS} windows in turns, ` +
      `${ROUNDS} rounds of a daemon of each; rounds ${roundRatios.map((r) => r.toFixed(3)).join(", ")})`
  )
  rows.push({ scenario: "history", metric: "execute_query_cpu_per_call", unit: "ms", ours: on, baseline: off, baselineName: "history-off", ratio: on / off })

  // ===== Search at scale =====
  const home = tempHome()
  await Cli.run(["connections", "add", "--name", "bench", "--host", "127.0.0.1", "--port", String(weaviate.port), "--home", home])
  const connectionId = (JSON.parse((await Cli.run(["connections", "list", "--json", "--home", home])).stdout) as Array<{ id: string }>)[0]!.id
  const filled = performance.now()
  await fill(home, ENTRIES)
  const path = NodePath.join(home, "history.db")
  // The entries name the connection by its id, as the daemon records them.
  const db = new Database(path)
  db.prepare("UPDATE entries SET connection = ?").run(connectionId)
  db.close()
  console.log(`wrote ${ENTRIES} entries in ${((performance.now() - filled) / 1000).toFixed(1)} s`)
  const size = checkpointSize(path)

  // The store's own SQL for the search and the visibility the benchmark's token has, on the same file.
  const sql = HistoryQuery.select({ search: "harbour", limit: 50, visibility: { connections: [connectionId] } })
  // Ours with token authentication on, as users run it, and lean-node (the same search and answer over
  // plain node:http, with the contract's per-call work), each on the servers' core; the client on the other.
  const created = (await Cli.run(["tokens", "create", "--home", home, "--name", "bench", "--access", "readOnly"])).stdout
  const token = /(wmcp_[A-Za-z0-9_-]+)/.exec(created)?.[1]
  if (token === undefined) throw new Error(`no token in: ${created}`)
  const running = await serveIn(home, "on", PROFILE_DIR === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`], true)
  Cores.pinServer(running.child.pid!)
  const lean = await serveLean(weaviate.url, token, home, path, sql)
  Cores.pinToLoadCore()
  const auth = { authorization: `Bearer ${token}` }
  let ours: Array<number> = []
  const leanTimes: Array<number> = []
  try {
    const search = (endpoint: string, id: number) => modernCall(endpoint, "search_query_history", { search: "harbour", limit: 50 }, id, auth)
    for (let i = 0; i < 20; i++) await search(running.endpoint, i)
    for (let i = 0; i < 20; i++) await search(lean.endpoint, i)
    // Rounds taken in turn, so that a change in the machine's load falls on both.
    const ROUND = Math.max(1, Math.floor(SEARCHES / 10))
    for (let round = 0, id = 100; round * ROUND < SEARCHES; round++) {
      for (const [endpoint, into] of [[running.endpoint, ours], [lean.endpoint, leanTimes]] as const) {
        for (let i = 0; i < ROUND; i++) {
          const t0 = performance.now()
          await search(endpoint, id++)
          into.push(performance.now() - t0)
        }
      }
    }
    // What any tool call costs over HTTP here, for scale: list_connections reads no database.
    const plain: Array<number> = []
    for (let i = 0; i < SEARCHES; i++) {
      const t0 = performance.now()
      await modernCall(running.endpoint, "list_connections", {}, 20_000 + i, auth)
      plain.push(performance.now() - t0)
    }
    console.log(`for scale: list_connections p50 ${percentile(plain, 50).toFixed(3)} ms through the same daemon (${Cores.placement()})`)
  } finally {
    await stop(running)
    lean.child.kill("SIGTERM")
  }
  // The bare floor: that SQL run directly on the file, in this process.
  const floorDb = new Database(path, { readonly: true })
  const statement = floorDb.prepare(sql.text)
  for (let i = 0; i < 20; i++) statement.all(...sql.params)
  const floor: Array<number> = []
  for (let i = 0; i < SEARCHES; i++) {
    const t0 = performance.now()
    const found = statement.all(...sql.params)
    floor.push(performance.now() - t0)
    if (found.length === 0) throw new Error("the floor query found nothing")
  }
  floorDb.close()
  const p50 = percentile(ours, 50)
  const floorP50 = percentile(floor, 50)
  console.log(`search_query_history "harbour" over ${ENTRIES} entries: p50 ${p50.toFixed(3)} ms (the same FTS5 query on the file: ${floorP50.toFixed(3)} ms; ${(p50 / floorP50).toFixed(2)}x)`)
  rows.push({ scenario: "history", metric: "search_p50", unit: "ms", ours: p50, baseline: floorP50, baselineName: "better-sqlite3", ratio: p50 / floorP50 })
  const leanP50 = percentile(leanTimes, 50)
  console.log(`  against lean-node (the same search and answer over plain node:http): ${leanP50.toFixed(3)} ms; ${(p50 / leanP50).toFixed(2)}x`)
  rows.push({ scenario: "history", metric: "search_p50", unit: "ms", ours: p50, baseline: leanP50, baselineName: "lean-node", ratio: p50 / leanP50 })
  ours = []

  // ===== Disk =====
  let jsonl = 0
  for (let i = 0; i < ENTRIES; i += Math.max(1, Math.floor(ENTRIES / 10_000))) jsonl += Buffer.byteLength(JSON.stringify(entryOf(i, Date.now()))) + 1
  const sampled = Math.ceil(ENTRIES / Math.max(1, Math.floor(ENTRIES / 10_000)))
  const perEntry = size / ENTRIES
  const jsonlPerEntry = jsonl / sampled
  console.log(`disk: ${(size / 1024 / 1024).toFixed(1)} MB for ${ENTRIES} entries, ${perEntry.toFixed(0)} bytes per entry (as JSON lines: ${jsonlPerEntry.toFixed(0)})`)
  rows.push({ scenario: "history", metric: "bytes_per_entry", unit: "bytes", ours: perEntry, baseline: jsonlPerEntry, baselineName: "jsonl", ratio: perEntry / jsonlPerEntry })
  NodeFs.rmSync(home, { recursive: true, force: true })

  const capped = tempHome()
  const sizes: Array<number> = []
  await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const store = yield* HistoryStore.make({ ...DEFAULTS, maxEntries: CAP })
    for (let round = 0; round < 8; round++) {
      for (let i = 0; i < CAP; i++) {
        store.record(entryOf(round * CAP + i, Date.now()))
        if (i % 5_000 === 4_999) yield* store.flush
      }
      yield* store.flush
      yield* store.prune
      sizes.push(checkpointSize(NodePath.join(capped, "history.db")))
    }
  })).pipe(Effect.provide(homeAt(capped))))
  const growth = sizes[7]! - sizes[5]!
  console.log(`maxEntries ${CAP}: file after each of 8 rounds of ${CAP} entries: ${sizes.map((s) => `${(s / 1024 / 1024).toFixed(2)} MB`).join(", ")} (growth over the last two: ${growth} bytes)`)
  rows.push({ scenario: "history", metric: "growth_at_max_entries", unit: "bytes", ours: growth, baseline: sizes[5]!, baselineName: "history-at-max", ratio: growth / sizes[5]! })
  NodeFs.rmSync(capped, { recursive: true, force: true })
} finally {
  await weaviate.stop()
}
merge(rows)
console.log(JSON.stringify(rows, null, 2))
