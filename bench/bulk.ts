/**
 * Benchmark: whole-collection export and import against the real Weaviate server, `ROWS` rows (default
 * 100,000) of 5 properties and a 384-dimensional vector, through three clients in one run:
 * - ours: the real binary, `weaviate-mcp export --include-vector --page-size 1000 --output FILE`
 *   (JSONL) and `weaviate-mcp import` of that file into a new collection (batches of 100, 4 in flight);
 * - `weaviate-ts-client` (2.x, REST): walking the same `after` cursor (`data.getter().withAfter()`,
 *   1,000 per page, with vectors) into a JSONL file, and its `objectsBatcher` (100 per batch, one at a
 *   time, as its docs show) from the same file;
 * - `weaviate-client` (3.x, gRPC): `collection.iterator({includeVector: true})` into a JSONL file, and
 *   `data.insertMany` of 1,000 rows at a time, printed beside.
 * Also the export's peak RSS (VmHWM of the CLI process) at 10,000 rows and at `ROWS` rows.
 * Prints the numbers; `bench/results.json` has no scenario for bulk work, so nothing is merged.
 * Run with `npm run bench:bulk` (ROWS=20000 for a quicker run); it also runs `bench/bulk-memory.ts`.
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

type App = typeof weaviateImport extends { default: infer D } ? D : typeof weaviateImport
const weaviateV2 = ((weaviateImport as { default?: App }).default ?? weaviateImport) as App

const ROWS = Math.max(Number(process.env.ROWS ?? 100_000), 10_000)
const SMALL = 10_000
const DIMENSIONS = 384
const BIN = NodePath.resolve(import.meta.dirname, "../bin/weaviate-mcp.js")

const uuidOf = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

const post = async (url: string, path: string, body: unknown) => {
  const response = await fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`${path}: ${response.status} ${text}`)
  return JSON.parse(text) as unknown
}

const properties = [
  { name: "title", dataType: ["text"] },
  { name: "body", dataType: ["text"] },
  { name: "rank", dataType: ["int"] },
  { name: "price", dataType: ["number"] },
  { name: "tags", dataType: ["text[]"] }
]

const createCollection = (url: string, name: string) => post(url, "/v1/schema", { class: name, vectorizer: "none", properties })

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
    const results = (await post(url, "/v1/batch/objects", { objects })) as Array<{ result?: { errors?: unknown } }>
    const failed = results.filter((r) => r.result?.errors !== undefined)
    if (failed.length > 0) throw new Error(`batch failed: ${JSON.stringify(failed[0])}`)
  }
}

const count = async (url: string, name: string) => {
  const r = await post(url, "/v1/graphql", { query: `{ Aggregate { ${name} { meta { count } } } }` }) as {
    data: { Aggregate: Record<string, Array<{ meta: { count: number } }>> }
  }
  return r.data.Aggregate[name]![0]!.meta.count
}

/** Runs the CLI; answers its time and peak RSS (VmHWM, sampled until it exits). */
const cli = (args: ReadonlyArray<string>) =>
  new Promise<{ seconds: number; peakMb: number; stdout: string }>((resolve, reject) => {
    const started = performance.now()
    const child = NodeChildProcess.spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    let peak = 0
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const sample = setInterval(() => {
      try {
        const kb = /VmHWM:\s+(\d+)/.exec(NodeFs.readFileSync(`/proc/${child.pid}/status`, "utf8"))?.[1]
        if (kb !== undefined) peak = Math.max(peak, Number(kb))
      } catch {
        // exited between two samples
      }
    }, 10)
    child.once("exit", (code) => {
      clearInterval(sample)
      if (code !== 0) return reject(new Error(`weaviate-mcp ${args.join(" ")}: exit ${code}\n${stderr}`))
      resolve({ seconds: (performance.now() - started) / 1000, peakMb: peak / 1024, stdout })
    })
  })

const writer = (path: string) => {
  const stream = NodeFs.createWriteStream(path)
  return {
    write: (text: string) => (stream.write(text) ? Promise.resolve() : new Promise<void>((r) => stream.once("drain", () => r()))),
    close: () => new Promise<void>((r) => stream.end(() => r()))
  }
}

const time = async (f: () => Promise<number>) => {
  const started = performance.now()
  const rows = await f()
  return { rows, seconds: (performance.now() - started) / 1000 }
}

const readJsonl = async function*(path: string) {
  for await (const line of NodeReadline.createInterface({ input: NodeFs.createReadStream(path), crlfDelay: Infinity })) {
    if (line.length > 0) yield JSON.parse(line) as Record<string, unknown>
  }
}

const rate = (rows: number, seconds: number) => `${Math.round(rows / seconds).toLocaleString("en-US").padStart(8)} rows/s (${seconds.toFixed(2)} s)`

const main = async () => {
  const weaviate = await startRealWeaviate()
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-bulk-"))
  const home = NodePath.join(dir, "home")
  NodeFs.mkdirSync(home)
  try {
    console.log(`bulk: loading ${ROWS} rows (5 properties, ${DIMENSIONS} dimensions) and ${SMALL} more into Weaviate ${weaviate.version}…`)
    await load(weaviate.url, "Bulk", ROWS)
    await load(weaviate.url, "BulkSmall", SMALL)
    await cli(["connections", "add", "--name", "bench", "--host", "127.0.0.1", "--port", String(weaviate.port), "--home", home])

    // ===== Export =====
    const small = await cli(["export", "bench", "BulkSmall", "--include-vector", "--page-size", "1000", "--output", NodePath.join(dir, "small.jsonl"), "--home", home])
    const oursFile = NodePath.join(dir, "ours.jsonl")
    const ours = await cli(["export", "bench", "Bulk", "--include-vector", "--page-size", "1000", "--output", oursFile, "--home", home])

    const v2 = weaviateV2.client({ scheme: "http", host: `127.0.0.1:${weaviate.port}` })
    const tsExport = await time(async () => {
      const out = writer(NodePath.join(dir, "ts.jsonl"))
      let after: string | undefined
      let rows = 0
      for (;;) {
        let getter = v2.data.getter().withClassName("Bulk").withLimit(1000).withVector()
        if (after !== undefined) getter = getter.withAfter(after)
        const page = (await getter.do()) as unknown as { objects?: Array<{ id: string; properties: Record<string, unknown>; vector: Array<number> }> }
        const objects = page.objects ?? []
        let text = ""
        for (const o of objects) text += `${JSON.stringify({ uuid: o.id, ...o.properties, vector: o.vector })}\n`
        await out.write(text)
        rows += objects.length
        if (objects.length < 1000) break
        after = objects[objects.length - 1]!.id
      }
      await out.close()
      return rows
    })

    const v3 = await weaviateV3.connectToLocal({ host: "127.0.0.1", port: weaviate.port, grpcPort: weaviate.grpcPort, skipInitChecks: true })
    const grpcExport = await time(async () => {
      const out = writer(NodePath.join(dir, "grpc.jsonl"))
      let rows = 0
      let text = ""
      for await (const o of v3.collections.get("Bulk").iterator({ includeVector: true })) {
        text += `${JSON.stringify({ uuid: o.uuid, ...o.properties, vector: o.vectors["default"] })}\n`
        if (++rows % 1000 === 0) {
          await out.write(text)
          text = ""
        }
      }
      await out.write(text)
      await out.close()
      return rows
    })

    // ===== Import =====
    await createCollection(weaviate.url, "CopyOurs")
    const oursImport = await cli(["import", "bench", "CopyOurs", oursFile, "--home", home])
    if (await count(weaviate.url, "CopyOurs") !== ROWS) throw new Error("our import did not write every row")

    await createCollection(weaviate.url, "CopyTs")
    const tsImport = await time(async () => {
      let batch: Array<Record<string, unknown>> = []
      let rows = 0
      const flush = async () => {
        if (batch.length === 0) return
        await v2.batch.objectsBatcher().withObjects(...batch).do()
        rows += batch.length
        batch = []
      }
      for await (const row of readJsonl(oursFile)) {
        const { uuid, vector, ...props } = row
        batch.push({ class: "CopyTs", id: uuid, properties: props, vector })
        if (batch.length === 100) await flush()
      }
      await flush()
      return rows
    })

    await createCollection(weaviate.url, "CopyGrpc")
    const grpcImport = await time(async () => {
      const collection = v3.collections.get("CopyGrpc")
      let batch: Array<{ id: string; properties: Record<string, unknown>; vectors: Array<number> }> = []
      let rows = 0
      const flush = async () => {
        if (batch.length === 0) return
        await collection.data.insertMany(batch as never)
        rows += batch.length
        batch = []
      }
      for await (const row of readJsonl(oursFile)) {
        const { uuid, vector, ...props } = row
        batch.push({ id: uuid as string, properties: props, vectors: vector as Array<number> })
        if (batch.length === 1000) await flush()
      }
      await flush()
      return rows
    })
    await v3.close()

    console.log(`export of ${ROWS} rows with ${DIMENSIONS}-dimension vectors (JSONL file):`)
    console.log(`  ours (weaviate-mcp export)        ${rate(ROWS, ours.seconds)}  peak RSS ${ours.peakMb.toFixed(1)} MB (${small.peakMb.toFixed(1)} MB at ${SMALL} rows)`)
    console.log(`  weaviate-ts-client (after cursor) ${rate(tsExport.rows, tsExport.seconds)}`)
    console.log(`  weaviate-client (gRPC iterator)   ${rate(grpcExport.rows, grpcExport.seconds)}`)
    console.log(`  ours against weaviate-ts-client: ${(tsExport.seconds / ours.seconds).toFixed(2)}× (target ≥ 1.0×); RSS growth ${(ours.peakMb - small.peakMb).toFixed(1)} MB (target ≤ 10 MB)`)
    console.log(`import of the same ${ROWS} rows:`)
    console.log(`  ours (weaviate-mcp import)        ${rate(ROWS, oursImport.seconds)}`)
    console.log(`  weaviate-ts-client objectsBatcher ${rate(tsImport.rows, tsImport.seconds)}`)
    console.log(`  weaviate-client insertMany (gRPC) ${rate(grpcImport.rows, grpcImport.seconds)}`)
    console.log(`  ours against weaviate-ts-client: ${(tsImport.seconds / oursImport.seconds).toFixed(2)}× (target ≥ 0.9×)`)
  } finally {
    await weaviate.stop()
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
