/**
 * Benchmark: browsing 10,000 rows in pages of 100 against the real Weaviate server (built from its Go
 * module, `test/weaviate/RealWeaviate.ts`), through three clients in the same run:
 * - ours: the driver's grid (`Driver.browse`, GraphQL `Get` with `limit`/`offset`, rows typed by the
 *   schema, `uuid` first and `vector` last);
 * - `weaviate-ts-client` (2.x, REST/GraphQL): the same GraphQL `Get` with the same fields;
 * - `weaviate-client` (3.x, gRPC): `collection.query.fetchObjects({limit, offset})` with the vector.
 *   3.12.1 is the newest release that runs on Node 20 (3.13 and later need Node 22).
 * Weaviate runs pinned to core 1 and this process (the clients) to core 0, so they do not share a core.
 * Each client browses all 100 pages `ROUNDS` times after one warm-up round; prints the median time per
 * full browse and per page, and merges `{scenario: "browse", …}` rows: against `weaviate-ts-client` (the
 * contract's baseline) and against `weaviate-client` (gRPC), measured in the same run.
 * Run with `npm run bench:browse`.
 */
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import weaviateImport from "weaviate-ts-client"
import weaviateV3 from "weaviate-client"
import { driverLayer } from "../src/Cli/DriverCli.ts"
import { ConnectionStore } from "../src/Driver/ConnectionStore.ts"
import { Driver } from "../src/Driver/Driver.ts"
import { startRealWeaviate } from "../test/weaviate/RealWeaviate.ts"
import * as Cores from "./support/Cores.ts"
import { merge, type Row } from "./support/Results.ts"
import * as ServerCost from "./support/ServerCost.ts"

// weaviate-ts-client is CommonJS: its default export arrives as `default` of the namespace under tsx.
type App = typeof weaviateImport extends { default: infer D } ? D : typeof weaviateImport
const weaviateV2 = ((weaviateImport as { default?: App }).default ?? weaviateImport) as App

const ROWS = 10_000
const PAGE = 100
const ROUNDS = Math.min(Math.max(Number(process.env.ROUNDS ?? 5), 1), 50)
const TABLE = "BenchBrowse"
const DIMENSIONS = 32

const uuidOf = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

const post = async (url: string, path: string, body: unknown) => {
  const response = await fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
  const text = await response.text()
  if (response.status >= 300) throw new Error(`${path}: ${response.status} ${text}`)
  return JSON.parse(text) as unknown
}

/** 10,000 rows with four properties and a 32-dimensional vector, in batches of 1,000. */
const load = async (url: string) => {
  await post(url, "/v1/schema", {
    class: TABLE,
    vectorizer: "none",
    properties: [
      { name: "title", dataType: ["text"] },
      { name: "rank", dataType: ["int"] },
      { name: "price", dataType: ["number"] },
      { name: "tags", dataType: ["text[]"] }
    ]
  })
  for (let start = 0; start < ROWS; start += 1000) {
    const objects = Array.from({ length: 1000 }, (_, i) => {
      const n = start + i
      return {
        class: TABLE,
        id: uuidOf(n),
        properties: { title: `Row number ${n}`, rank: n, price: (n % 997) / 10, tags: [`t${n % 7}`, `u${n % 13}`] },
        vector: Array.from({ length: DIMENSIONS }, (_, d) => Math.sin(n + d))
      }
    })
    const results = (await post(url, "/v1/batch/objects", { objects })) as Array<{ result?: { errors?: unknown } }>
    const failed = results.filter((r) => r.result?.errors !== undefined)
    if (failed.length > 0) throw new Error(`batch failed: ${JSON.stringify(failed[0])}`)
  }
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const round = (n: number) => Math.round(n * 1000) / 1000

/** Times `ROUNDS` full browses (after one warm-up); checks every browse saw all rows once. */
const measure = async (name: string, page: (offset: number) => Promise<ReadonlyArray<string>>) => {
  const times: Array<number> = []
  const browse = async (round: number) => {
    const seen = new Set<string>()
    const started = performance.now()
    for (let offset = 0; offset < ROWS; offset += PAGE) for (const id of await page(offset)) seen.add(id)
    const elapsed = performance.now() - started
    if (seen.size !== ROWS) throw new Error(`${name} saw ${seen.size} distinct rows, not ${ROWS}`)
    if (round > 0) times.push(elapsed)
  }
  await browse(0)
  // The client's own cost per page (this process; Weaviate runs in its own).
  const { cost } = await ServerCost.inProcess(ROUNDS * (ROWS / PAGE), async () => {
    for (let round = 1; round <= ROUNDS; round++) await browse(round)
  })
  const full = median(times)
  console.log(`${name.padEnd(20)} ${full.toFixed(1).padStart(8)} ms per browse of ${ROWS} rows  ${(full / (ROWS / PAGE)).toFixed(2)} ms per page  ${ServerCost.describe(cost)} (page)`)
  return full
}

const main = async () => {
  const weaviate = await startRealWeaviate()
  const home = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-bench-"))
  const runtime = ManagedRuntime.make(driverLayer(Option.some(home)))
  try {
    if (Cores.pinned) {
      NodeChildProcess.execFileSync("sh", ["-c", `pgrep -f 'weaviate-server.*--port ${weaviate.port}' | xargs -r -n1 taskset -a -cp ${Cores.LOAD_CORE}`], { stdio: "ignore" })
      Cores.pinServer()
    }
    await load(weaviate.url)
    console.log(`browse: ${ROWS} rows in pages of ${PAGE}, ${ROUNDS} rounds each; Weaviate ${weaviate.version}; ${Cores.pinned ? "Weaviate on core 1, clients on core 0" : "not pinned"}`)
    const connection = await runtime.runPromise(
      Effect.flatMap(ConnectionStore, (store) => store.add({ name: "bench", host: "127.0.0.1", port: weaviate.port }))
    )
    const ours = await measure("ours (driver grid)", (offset) =>
      runtime.runPromise(Effect.flatMap(Driver, (driver) => driver.browse(connection.id, TABLE, { limit: PAGE, offset })))
        .then((page) => page.rows.map((row) => row.uuid as string)))

    const v2 = weaviateV2.client({ scheme: "http", host: `127.0.0.1:${weaviate.port}` })
    const tsClient = await measure("weaviate-ts-client", async (offset) => {
      const result = await v2.graphql.get().withClassName(TABLE)
        .withFields("title rank price tags _additional { id vector }")
        .withLimit(PAGE).withOffset(offset).do()
      return (result.data.Get[TABLE] as Array<{ _additional: { id: string } }>).map((row) => row._additional.id)
    })

    const v3 = await weaviateV3.connectToLocal({ host: "127.0.0.1", port: weaviate.port, grpcPort: weaviate.grpcPort, skipInitChecks: true })
    const collection = v3.collections.get(TABLE)
    const grpcClient = await measure("weaviate-client (gRPC)", async (offset) => {
      const result = await collection.query.fetchObjects({ limit: PAGE, offset, includeVector: true })
      return result.objects.map((object) => object.uuid)
    })
    await v3.close()

    console.log(`ours against weaviate-ts-client: ${(tsClient / ours).toFixed(2)}× as fast; against weaviate-client (gRPC): ${(grpcClient / ours).toFixed(2)}×`)
    const rows: Array<Row> = [
      { scenario: "browse", metric: "ms_per_10k_rows", unit: "ms", ours: round(ours), baseline: round(tsClient), baselineName: "weaviate-ts-client", ratio: round(ours / tsClient) },
      { scenario: "browse", metric: "ms_per_10k_rows", unit: "ms", ours: round(ours), baseline: round(grpcClient), baselineName: "weaviate-client", ratio: round(ours / grpcClient) }
    ]
    merge(rows)
  } finally {
    await runtime.dispose()
    await weaviate.stop()
    NodeFs.rmSync(home, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
