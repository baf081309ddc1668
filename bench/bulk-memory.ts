/**
 * Benchmark: the peak RSS of `weaviate-mcp export --include-vector` at 10,000 and at 100,000 rows (5
 * properties, 384-dimension vectors), against a synthetic Weaviate on loopback that makes each page of
 * `GET /v1/objects?after=` on the fly, so no 100,000-row collection has to be loaded first. Runs each
 * size `ROUNDS` times (default 2, interleaved) as the CLI ships (the export in a child Node with its
 * young generation capped, `--max-semi-space-size=4`, and V8's `--heap-growing-percent=50`:
 * `bin/weaviate-mcp.js`, `src/Cli/BulkHeap.ts`); with `BULK_MEMORY_UNCAPPED=1` also with V8's own
 * young generation (given in NODE_OPTIONS: the export runs in the command's process, as before the
 * cap), and with `BULK_MEMORY_CAPPED=1` with the old space capped as well (`--max-old-space-size=48`),
 * which shows what the export itself keeps. A peak is the VmHWM of the process that runs the export
 * (the command's own process is printed beside); one run's peak depends on where in V8's collection
 * cycle the export ends, so each size's peak is the highest of its runs. Each run's time is printed.
 * Run with `npm run bench:bulk-memory` (also in `npm run bench:bulk`).
 */
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import * as ServerCost from "./support/ServerCost.ts"

const BIN = NodePath.resolve(import.meta.dirname, "../bin/weaviate-mcp.js")
const DIMENSIONS = 384
const PAGE = 500
const ROUNDS = Math.min(Math.max(Number(process.env.ROUNDS ?? 2), 1), 10)

const uuidOf = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

const schema = {
  class: "Bulk",
  vectorizer: "none",
  properties: [
    { name: "title", dataType: ["text"] },
    { name: "body", dataType: ["text"] },
    { name: "rank", dataType: ["int"] },
    { name: "price", dataType: ["number"] },
    { name: "tags", dataType: ["text[]"] }
  ]
}

const VECTORS = Array.from({ length: 16 }, (_, n) => JSON.stringify(Array.from({ length: DIMENSIONS }, (_, d) => Math.sin(n + d))))

/** A Weaviate of one collection of `rows` rows, made page by page. */
const synthetic = async (rows: number) => {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    const json = (body: unknown) => {
      const text = JSON.stringify(body)
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
      res.end(text)
    }
    if (url.pathname === "/v1/schema/Bulk") return json(schema)
    if (url.pathname === "/v1/schema") return json({ classes: [schema] })
    if (url.pathname === "/v1/meta") return json({ version: "1.39.0", modules: {} })
    if (url.pathname === "/v1/objects") {
      const limit = Number(url.searchParams.get("limit"))
      const after = url.searchParams.get("after")
      const start = after !== null && after !== "" ? parseInt(after.slice(24), 16) + 1 : 0
      // The page's text from a template (16 vectors, made once): serving costs the benchmark little.
      const objects: Array<string> = []
      for (let n = start; n < Math.min(rows, start + limit); n++) {
        const properties = { title: `Row number ${n}`, body: `The body of row ${n}, with a comma`, rank: n, price: (n % 997) / 10, tags: [`t${n % 7}`] }
        objects.push(`{"class":"Bulk","id":"${uuidOf(n)}","properties":${JSON.stringify(properties)},"vector":${VECTORS[n % VECTORS.length]}}`)
      }
      const text = `{"objects":[${objects.join(",")}],"totalResults":${objects.length}}`
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
      return void res.end(text)
    }
    res.writeHead(404, { "content-type": "application/json" })
    res.end("{}")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { port: (server.address() as AddressInfo).port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

/**
 * Runs the CLI to the end; answers its peak RSS in MB (VmHWM, sampled until it exits): the largest of
 * its processes' (an export runs in a child of the command's process) and, in `parts`, each one's.
 */
const peakOf = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = {}) =>
  new Promise<{ peak: number; parts: Array<number> }>((resolve, reject) => {
    const child = NodeChildProcess.spawn(process.execPath, [BIN, ...args], { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, ...env } })
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += d))
    const rss = ServerCost.peakRss(child.pid, 10)
    child.once("exit", (code) => {
      const peak = rss.stop()
      if (code !== 0) reject(new Error(`weaviate-mcp ${args.join(" ")}: exit ${code}\n${stderr}`))
      else resolve({ peak, parts: rss.peaks() })
    })
  })

const main = async () => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-bulk-memory-"))
  try {
    console.log(`export peak RSS, ${DIMENSIONS}-dimension vectors, pages of ${PAGE}, synthetic server:`)
    // BULK_MEMORY_UNCAPPED=1 adds a run with V8's own young generation (16 MB semi-spaces: given in
    // NODE_OPTIONS, the export runs in the command's process, as before the cap); BULK_MEMORY_CAPPED=1
    // one with the old space capped too, which shows what the export itself keeps.
    const variants = [
      { label: "as shipped", env: {} },
      ...(process.env.BULK_MEMORY_UNCAPPED === "1" ? [{ label: "--max-semi-space-size=16", env: { NODE_OPTIONS: "--max-semi-space-size=16" } }] : []),
      ...(process.env.BULK_MEMORY_CAPPED === "1" ? [{ label: "--max-old-space-size=48", env: { NODE_OPTIONS: "--max-old-space-size=48" } }] : [])
    ]
    for (const { env, label } of variants) {
      const runs: Record<number, Array<{ peak: number; seconds: number }>> = { 10_000: [], 100_000: [] }
      const parents: Array<number> = []
      for (let round = 0; round < ROUNDS; round++) for (const rows of [10_000, 100_000]) {
        const server = await synthetic(rows)
        const home = NodePath.join(dir, `home-${rows}-${round}-${label.replace(/\W/g, "")}`)
        NodeFs.mkdirSync(home)
        try {
          await peakOf(["connections", "add", "--name", "s", "--host", "127.0.0.1", "--port", String(server.port), "--home", home])
          const out = NodePath.join(dir, "out.jsonl")
          const started = performance.now()
          const { parts, peak } = await peakOf(["export", "s", "Bulk", "--include-vector", "--page-size", String(PAGE), "--output", out, "--home", home], env)
          runs[rows]!.push({ peak, seconds: (performance.now() - started) / 1000 })
          if (parts.length > 1) parents.push(parts[0]!)
          NodeFs.rmSync(out, { force: true })
        } finally {
          await server.close()
        }
      }
      const parent = parents.length === 0 ? "" : `; the command's own process beside it ${Math.max(...parents).toFixed(1)} MB`
      const peakOfRuns = (rows: number) => Math.max(...runs[rows]!.map((r) => r.peak))
      const each = (rows: number) => runs[rows]!.map((r) => `${r.peak.toFixed(1)} MB in ${r.seconds.toFixed(1)} s`).join(", ")
      console.log(`  ${label.padEnd(26)} 10,000 rows ${peakOfRuns(10_000).toFixed(1)} MB (${each(10_000)})  100,000 rows ${peakOfRuns(100_000).toFixed(1)} MB (${each(100_000)})  growth ${(peakOfRuns(100_000) - peakOfRuns(10_000)).toFixed(1)} MB (target ≤ 10 MB)${parent}`)
    }
  } finally {
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
