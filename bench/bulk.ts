/**
 * Benchmark: whole-collection export and import against the real Weaviate server, `ROWS` rows (default
 * 5,000: the other benchmarks take about 8.5 of `npm run bench`'s 10 minutes on a 2-core machine, and
 * this one with bench:bulk-memory about 1.5 more; `ROWS=100000` for the issue's size, alone) of 5
 * properties and a 384-dimension vector, through three clients in one run:
 * - ours: the real binary, `weaviate-mcp export --include-vector --page-size 1000 --output FILE --json`
 *   (JSONL) and `weaviate-mcp import` of that file into a new collection (its defaults: batches of 100,
 *   4 in flight);
 * - `weaviate-ts-client` (2.x, REST): walking the same `after` cursor (`data.getter().withAfter()`,
 *   1,000 per page, with vectors) into a JSONL file, and its `objectsBatcher` (100 per batch, one at a
 *   time, as its docs show) from the same file;
 * - `weaviate-client` (3.x, gRPC), printed beside: the `after` cursor walked a page of 1,000 at a time
 *   (`query.fetchObjects({after, limit})`), its `collection.iterator()` on a sample (see below), and
 *   `data.insertMany` of 1,000 rows at a time (the file's first 2,000 rows: it is the slowest).
 * Each command of ours pays a fixed start (node, the CLI bundle, the connection, the schema): the time
 * of a 1-row export and a 1-row import is measured too, and the rates without it are printed beside.
 * Ours and `weaviate-ts-client` run `ROUNDS` times each, interleaved, the order swapped every round (the
 * first import into a fresh Weaviate once ran at 57% of the next); rows/s is all rows over all their seconds. Each
 * import's collection is counted and then deleted, so every round starts from the same server.
 * Weaviate is pinned to core 1 and the clients (this process and the CLI it starts) to core 0
 * (`bench/support/Cores.ts`). Beside wall time, each line has the client's CPU time (user + system:
 * ours the CLI process, the others this process) and Weaviate's (`/proc/PID/stat`, all threads), which
 * a busy machine moves less than wall time.
 *
 * `weaviate-client`'s iterator (3.12.1, and the repository's main branch as of 2026-08) asks for 100
 * objects on every `next()` and hands out only the first (`collections/iterator/index.js` fills its
 * cache and never reads it), so each row costs a whole 100-row request: it is measured on
 * `ITERATOR_SAMPLE` rows, next to the time of one 100-row request, which it matches.
 *
 * Writes `export` and `import` rows to `bench/results.json`. Run with `npm run bench:bulk` (in
 * `npm run bench`); it also runs `bench/bulk-memory.ts`.
 */
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import * as NodeReadline from "node:readline"
import weaviateImport from "weaviate-ts-client"
import weaviateV3 from "weaviate-client"
import { startRealWeaviate } from "../test/weaviate/RealWeaviate.ts"
import * as Cores from "./support/Cores.ts"
import * as Results from "./support/Results.ts"
import * as ServerCost from "./support/ServerCost.ts"

type App = typeof weaviateImport extends { default: infer D } ? D : typeof weaviateImport
const weaviateV2 = ((weaviateImport as { default?: App }).default ?? weaviateImport) as App

const ROWS = Math.max(Number(process.env.ROWS ?? 5_000), 1_000)
const ROUNDS = Math.max(Number(process.env.ROUNDS ?? 2), 1)
const ITERATOR_SAMPLE = 50
/** insertMany (gRPC, printed beside) is the slowest client here: it writes the file's first rows only. */
const GRPC_IMPORT_ROWS = Math.min(ROWS, 2_000)
const DIMENSIONS = 384
const PAGE = 1000
/** `BULK_BIN=/path/to/bin/weaviate-mcp.js` measures another build of ours (before and after a change). */
const BIN = process.env.BULK_BIN ?? NodePath.resolve(import.meta.dirname, "../bin/weaviate-mcp.js")

const uuidOf = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

const send = async (url: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`)
  return text.length > 0 ? JSON.parse(text) as unknown : undefined
}

const properties = [
  { name: "title", dataType: ["text"] },
  { name: "body", dataType: ["text"] },
  { name: "rank", dataType: ["int"] },
  { name: "price", dataType: ["number"] },
  { name: "tags", dataType: ["text[]"] }
]

const createCollection = (url: string, name: string) => send(url, "POST", "/v1/schema", { class: name, vectorizer: "none", properties })

const load = async (url: string, name: string, rows: number) => {
  await createCollection(url, name)
  for (let start = 0; start < rows; start += 1000) {
    const objects = Array.from({ length: Math.min(1000, rows - start) }, (_, i) => {
      const n = start + i
      return {
        class: name,
        id: uuidOf(n),
        properties: { title: `Row number ${n}`, body: `The body of row ${n}, with a comma`, rank: n, price: (n % 997) / 10, tags: [`t${n % 7}`, `u${n % 13}`] },
        vector: Array.from({ length: DIMENSIONS }, (_, d) => Math.sin(n + d))
      }
    })
    const results = (await send(url, "POST", "/v1/batch/objects", { objects })) as Array<{ result?: { errors?: unknown } }>
    const failed = results.filter((r) => r.result?.errors !== undefined)
    if (failed.length > 0) throw new Error(`batch failed: ${JSON.stringify(failed[0])}`)
  }
}

const count = async (url: string, name: string) => {
  const r = await send(url, "POST", "/v1/graphql", { query: `{ Aggregate { ${name} { meta { count } } } }` }) as {
    data: { Aggregate: Record<string, Array<{ meta: { count: number } }>> }
  }
  return r.data.Aggregate[name]![0]!.meta.count
}

// ===== Costs =====

/** User + system seconds from `/proc/PID/stat`: the process's own (utime, stime) or its waited-for children's. */
const cpuOf = (pid: number | "self", which: "own" | "children") => {
  const fields = NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  // Fields 14/15 (utime, stime) and 16/17 (cutime, cstime), counted from 1; the list starts at field 3.
  const [a, b] = which === "own" ? [fields[11], fields[12]] : [fields[13], fields[14]]
  return (Number(a) + Number(b)) / 100
}

interface Measured {
  readonly rows: number
  readonly seconds: number
  /** The client's CPU seconds. */
  readonly cpu: number
  /** Weaviate's CPU seconds. */
  readonly server: number
}

/** Runs the CLI; its time, CPU and peak RSS (VmHWM, sampled until it exits). */
const cli = (args: ReadonlyArray<string>, serverPid: number) =>
  new Promise<Measured & { peakMb: number; stdout: string }>((resolve, reject) => {
    const started = performance.now()
    const cpu0 = cpuOf("self", "children")
    const server0 = cpuOf(serverPid, "own")
    const child = NodeChildProcess.spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const rss = ServerCost.peakRss(child.pid, 20)
    child.once("exit", (code) => {
      const peakMb = rss.stop()
      if (code !== 0) return reject(new Error(`weaviate-mcp ${args.join(" ")}: exit ${code}\n${stderr}`))
      const summary = JSON.parse(stdout.trim().split("\n").at(-1)!) as { rows: number }
      resolve({
        rows: summary.rows,
        seconds: (performance.now() - started) / 1000,
        cpu: cpuOf("self", "children") - cpu0,
        server: cpuOf(serverPid, "own") - server0,
        peakMb,
        stdout
      })
    })
  })

/** Runs a client in this process; its time and CPU. */
const inProcess = async (serverPid: number, f: () => Promise<number>): Promise<Measured> => {
  const started = performance.now()
  const cpu0 = process.cpuUsage()
  const server0 = cpuOf(serverPid, "own")
  const rows = await f()
  const cpu = process.cpuUsage(cpu0)
  return { rows, seconds: (performance.now() - started) / 1000, cpu: (cpu.user + cpu.system) / 1e6, server: cpuOf(serverPid, "own") - server0 }
}

const total = (runs: ReadonlyArray<Measured>): Measured => ({
  rows: runs.reduce((n, r) => n + r.rows, 0),
  seconds: runs.reduce((n, r) => n + r.seconds, 0),
  cpu: runs.reduce((n, r) => n + r.cpu, 0),
  server: runs.reduce((n, r) => n + r.server, 0)
})

const perSecond = (m: Measured) => m.rows / m.seconds

const line = (name: string, m: Measured) =>
  `  ${name.padEnd(38)} ${Math.round(perSecond(m)).toLocaleString("en-US").padStart(7)} rows/s  (${m.rows} rows in ${m.seconds.toFixed(2)} s; ` +
  `client CPU ${(1000 * m.cpu / m.rows).toFixed(3)} ms/row, Weaviate CPU ${(1000 * m.server / m.rows).toFixed(3)} ms/row)`

// ===== Clients =====

const writer = (path: string) => {
  const stream = NodeFs.createWriteStream(path)
  return {
    write: (text: string) => (stream.write(text) ? Promise.resolve() : new Promise<void>((r) => stream.once("drain", () => r()))),
    close: () => new Promise<void>((r) => stream.end(() => r()))
  }
}

const readJsonl = async function*(path: string) {
  for await (const text of NodeReadline.createInterface({ input: NodeFs.createReadStream(path), crlfDelay: Infinity })) {
    if (text.length > 0) yield JSON.parse(text) as Record<string, unknown>
  }
}

type V2 = ReturnType<App["client"]>
type V3 = Awaited<ReturnType<typeof weaviateV3.connectToLocal>>

/**
 * Walks the `after` cursor a page at a time into a JSONL file, as a client's user would: `page(after)`
 * asks for one page of `PAGE` objects as the client gives them, `row` makes a line's object
 * (`{uuid, ...properties, vector}`) and `id` names the cursor's next start. No copy of a page is made,
 * so each client pays only its own work.
 */
const walkCursor = async <O>(
  path: string,
  page: (after: string | undefined) => Promise<ReadonlyArray<O>>,
  id: (o: O) => string,
  row: (o: O) => Record<string, unknown>
) => {
  const out = writer(path)
  let after: string | undefined
  let rows = 0
  for (;;) {
    const objects = await page(after)
    let text = ""
    for (const o of objects) text += `${JSON.stringify(row(o))}\n`
    await out.write(text)
    rows += objects.length
    if (objects.length < PAGE) break
    after = id(objects[objects.length - 1]!)
  }
  await out.close()
  return rows
}

/** weaviate-ts-client walking the `after` cursor into a JSONL file. */
const tsExport = (v2: V2, path: string) => () =>
  walkCursor(path, async (after) => {
    let getter = v2.data.getter().withClassName("Bulk").withLimit(PAGE).withVector()
    if (after !== undefined) getter = getter.withAfter(after)
    const page = (await getter.do()) as unknown as { objects?: Array<{ id: string; properties: Record<string, unknown>; vector: Array<number> }> }
    return page.objects ?? []
  }, (o) => o.id, (o) => ({ uuid: o.id, ...o.properties, vector: o.vector }))

/** weaviate-client (gRPC) walking the same cursor a page at a time (what its iterator would do with a working cache). */
const grpcExport = (v3: V3, path: string) => () => {
  const collection = v3.collections.get("Bulk")
  return walkCursor(path, async (after) => {
    const { objects } = await collection.query.fetchObjects({ limit: PAGE, includeVector: true, ...(after !== undefined ? { after } : {}) })
    return objects
  }, (o) => o.uuid, (o) => ({ uuid: o.uuid, ...o.properties, vector: o.vectors["default"] }))
}

/** weaviate-client's own iterator, on the first `ITERATOR_SAMPLE` rows. */
const grpcIterator = (v3: V3) => async () => {
  let rows = 0
  for await (const o of v3.collections.get("Bulk").iterator({ includeVector: true })) {
    JSON.stringify({ uuid: o.uuid, ...o.properties, vector: o.vectors["default"] })
    if (++rows === ITERATOR_SAMPLE) break
  }
  return rows
}

/** weaviate-ts-client's objectsBatcher, 100 objects per batch, one batch at a time. */
const tsImport = (v2: V2, file: string, name: string) => async () => {
  let batch: Array<Record<string, unknown>> = []
  let rows = 0
  const flush = async () => {
    if (batch.length === 0) return
    await v2.batch.objectsBatcher().withObjects(...batch).do()
    rows += batch.length
    batch = []
  }
  for await (const row of readJsonl(file)) {
    const { uuid, vector, ...props } = row
    batch.push({ class: name, id: uuid, properties: props, vector })
    if (batch.length === 100) await flush()
  }
  await flush()
  return rows
}

/** weaviate-client's insertMany (gRPC), 1,000 rows per call, the first `limit` rows of the file. */
const grpcImport = (v3: V3, file: string, name: string, limit: number) => async () => {
  const collection = v3.collections.get(name)
  let batch: Array<{ id: string; properties: Record<string, unknown>; vectors: Array<number> }> = []
  let rows = 0
  const flush = async () => {
    if (batch.length === 0) return
    await collection.data.insertMany(batch as never)
    rows += batch.length
    batch = []
  }
  for await (const row of readJsonl(file)) {
    const { uuid, vector, ...props } = row
    batch.push({ id: uuid as string, properties: props, vectors: vector as Array<number> })
    if (batch.length === 1000) await flush()
    if (rows + batch.length === limit) break
  }
  await flush()
  return rows
}

// ===== The run =====

const main = async () => {
  const weaviate = await startRealWeaviate()
  const serverPid = weaviate.serverPid()!
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-bulk-"))
  const home = NodePath.join(dir, "home")
  NodeFs.mkdirSync(home)
  const started = performance.now()
  try {
    if (Cores.pinned) {
      Cores.pinToLoadCore(serverPid)
      Cores.pinServer()
    }
    console.log(`bulk: ${ROWS} rows (5 properties, ${DIMENSIONS} dimensions), ${ROUNDS} rounds; Weaviate ${weaviate.version}; ` +
      `${Cores.pinned ? "Weaviate on core 1, the clients on core 0" : "not pinned"}; load average ${NodeOs.loadavg().map((l) => l.toFixed(2)).join(" ")}`)
    await load(weaviate.url, "Bulk", ROWS)
    await load(weaviate.url, "Tiny", 1)
    NodeChildProcess.execFileSync(process.execPath, [BIN, "connections", "add", "--name", "bench", "--host", "127.0.0.1", "--port", String(weaviate.port), "--home", home], { stdio: "ignore" })
    const v2 = weaviateV2.client({ scheme: "http", host: `127.0.0.1:${weaviate.port}` })
    const v3 = await weaviateV3.connectToLocal({ host: "127.0.0.1", port: weaviate.port, grpcPort: weaviate.grpcPort, skipInitChecks: true })

    // ===== Export =====
    const file = NodePath.join(dir, "ours-0.jsonl")
    const exports = { ours: [] as Array<Measured>, ts: [] as Array<Measured> }
    let peakMb = 0
    for (let round = 0; round < ROUNDS; round++) {
      const ours = async () => {
        const r = await cli(["export", "bench", "Bulk", "--include-vector", "--page-size", String(PAGE), "--output", NodePath.join(dir, `ours-${round}.jsonl`), "--home", home, "--json"], serverPid)
        peakMb = Math.max(peakMb, r.peakMb)
        exports.ours.push(r)
      }
      const ts = async () => void exports.ts.push(await inProcess(serverPid, tsExport(v2, NodePath.join(dir, `ts-${round}.jsonl`))))
      for (const step of round % 2 === 0 ? [ours, ts] : [ts, ours]) await step()
    }
    // The command's fixed cost (starting node, loading the CLI, the connection and the schema): a 1-row export.
    const start = await cli(["export", "bench", "Tiny", "--include-vector", "--output", NodePath.join(dir, "tiny.jsonl"), "--home", home, "--json"], serverPid)
    const grpcCursor = await inProcess(serverPid, grpcExport(v3, NodePath.join(dir, "grpc.jsonl")))
    const iterator = await inProcess(serverPid, grpcIterator(v3))
    const oneFetch = await inProcess(serverPid, async () => (await v3.collections.get("Bulk").query.fetchObjects({ limit: 100, includeVector: true })).objects.length)
    for (const measured of [...exports.ours, ...exports.ts, grpcCursor]) {
      if (measured.rows !== ROWS) throw new Error(`an export wrote ${measured.rows} rows, not ${ROWS}`)
    }

    // ===== Import (the file our export wrote) =====
    const imports = { ours: [] as Array<Measured>, ts: [] as Array<Measured> }
    let k = 0
    const into = async (measure: (name: string) => Promise<Measured>, rows = ROWS) => {
      const name = `Copy${k++}`
      await createCollection(weaviate.url, name)
      const measured = await measure(name)
      const landed = await count(weaviate.url, name)
      if (landed !== rows) throw new Error(`${name}: ${landed} rows landed, not ${rows}`)
      await send(weaviate.url, "DELETE", `/v1/schema/${name}`)
      return measured
    }
    for (let round = 0; round < ROUNDS; round++) {
      const ours = async () => void imports.ours.push(await into((name) => cli(["import", "bench", name, file, "--home", home, "--json"], serverPid)))
      const ts = async () => void imports.ts.push(await into((name) => inProcess(serverPid, tsImport(v2, file, name))))
      for (const step of round % 2 === 0 ? [ours, ts] : [ts, ours]) await step()
    }
    const importStart = await into(async (name) => {
      NodeFs.writeFileSync(NodePath.join(dir, "one.jsonl"), `${NodeFs.readFileSync(file, "utf8").split("\n")[0]}\n`)
      return cli(["import", "bench", name, NodePath.join(dir, "one.jsonl"), "--home", home, "--json"], serverPid)
    }, 1)
    const insertMany = await into((name) => inProcess(serverPid, grpcImport(v3, file, name, GRPC_IMPORT_ROWS)), GRPC_IMPORT_ROWS)
    await v3.close()

    // ===== Report =====
    const [exportOurs, exportTs, importOurs, importTs] = [total(exports.ours), total(exports.ts), total(imports.ours), total(imports.ts)]
    const exportRatio = perSecond(exportOurs) / perSecond(exportTs)
    const importRatio = perSecond(importOurs) / perSecond(importTs)
    console.log(`export of ${ROWS} rows with vectors to a JSONL file, pages of ${PAGE} (${ROUNDS} rounds):`)
    console.log(line("ours (weaviate-mcp export)", exportOurs))
    console.log(line("weaviate-ts-client (after cursor)", exportTs))
    console.log(line("weaviate-client (gRPC, after cursor)", grpcCursor))
    console.log(line(`weaviate-client iterator (${ITERATOR_SAMPLE} rows)`, iterator))
    console.log(`    (one gRPC fetchObjects of 100 rows with vectors: ${(oneFetch.seconds * 1000).toFixed(1)} ms; the iterator: ${(iterator.seconds * 1000 / iterator.rows).toFixed(1)} ms per row)`)
    const streaming = { ...exportOurs, seconds: exportOurs.seconds - ROUNDS * start.seconds }
    console.log(`  ours against weaviate-ts-client: ${exportRatio.toFixed(2)}× (target ≥ 1.0×); peak RSS of our export ${peakMb.toFixed(1)} MB (the memory target: bench:bulk-memory)`)
    console.log(`  a command's start (a 1-row export): ${start.seconds.toFixed(2)} s, ${start.cpu.toFixed(2)} s of CPU; ours without it: ` +
      `${Math.round(perSecond(streaming)).toLocaleString("en-US")} rows/s, ${(perSecond(streaming) / perSecond(exportTs)).toFixed(2)}× weaviate-ts-client`)
    console.log(`import of the same ${ROWS} rows (${ROUNDS} rounds):`)
    console.log(line("ours (weaviate-mcp import, 100 × 4)", importOurs))
    console.log(line("weaviate-ts-client objectsBatcher (100)", importTs))
    console.log(line(`weaviate-client insertMany (gRPC, 1000; ${GRPC_IMPORT_ROWS} rows)`, insertMany))
    const importStreaming = { ...importOurs, seconds: importOurs.seconds - ROUNDS * importStart.seconds }
    console.log(`  ours against weaviate-ts-client: ${importRatio.toFixed(2)}× (target ≥ 0.9×)`)
    console.log(`  a command's start (a 1-row import): ${importStart.seconds.toFixed(2)} s, ${importStart.cpu.toFixed(2)} s of CPU; ours without it: ` +
      `${Math.round(perSecond(importStreaming)).toLocaleString("en-US")} rows/s, ${(perSecond(importStreaming) / perSecond(importTs)).toFixed(2)}× weaviate-ts-client`)
    for (const [name, runs] of [["export ours", exports.ours], ["export ts", exports.ts], ["import ours", imports.ours], ["import ts", imports.ts]] as const) {
      console.log(`  rounds, ${name}: ${runs.map((r) => `${Math.round(perSecond(r))} rows/s`).join(", ")}`)
    }
    console.log(`bench:bulk took ${((performance.now() - started) / 1000).toFixed(0)} s; load average ${NodeOs.loadavg().map((l) => l.toFixed(2)).join(" ")}`)

    const row = (scenario: "export" | "import", metric: string, unit: string, ours: number, baseline: number, baselineName: Results.Row["baselineName"]): Results.Row => ({
      scenario,
      metric,
      unit,
      ours: Math.round(ours * 1000) / 1000,
      baseline: Math.round(baseline * 1000) / 1000,
      baselineName,
      ratio: Math.round((Math.round(ours * 1000) / Math.round(baseline * 1000)) * 1000) / 1000
    })
    const cpuPerRow = (m: Measured) => (1000 * m.cpu) / m.rows
    Results.merge([
      row("export", "rows/s", "rows/s", perSecond(exportOurs), perSecond(exportTs), "weaviate-ts-client"),
      row("export", "rows/s", "rows/s", perSecond(exportOurs), perSecond(grpcCursor), "weaviate-client"),
      row("export", "rows/s after the command's start", "rows/s", perSecond(streaming), perSecond(exportTs), "weaviate-ts-client"),
      row("export", "client CPU per row", "ms", cpuPerRow(exportOurs), cpuPerRow(exportTs), "weaviate-ts-client"),
      row("import", "rows/s", "rows/s", perSecond(importOurs), perSecond(importTs), "weaviate-ts-client"),
      row("import", "rows/s", "rows/s", perSecond(importOurs), perSecond(insertMany), "weaviate-client"),
      row("import", "rows/s after the command's start", "rows/s", perSecond(importStreaming), perSecond(importTs), "weaviate-ts-client"),
      row("import", "client CPU per row", "ms", cpuPerRow(importOurs), cpuPerRow(importTs), "weaviate-ts-client")
    ])
  } finally {
    await weaviate.stop()
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
