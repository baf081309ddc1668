/**
 * `weaviate-mcp aggregate CONN TABLE --group-by P --metric P:M …` through the real binary, against the
 * real Weaviate with the sample data (scale 0.1); every figure is counted here from the same rows.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"
import { loadSampleData, sampleObjects } from "../weaviate/SampleData.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"

let w: WeaviateTestInstance
const home = TestHome.tempDirSync()

const rows = sampleObjects(0.1)
const of = (cls: string, tenant?: string) =>
  rows.filter((o) => o["class"] === cls && (tenant === undefined || o["tenant"] === tenant)).map((o) => o["properties"] as Record<string, any>)
const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)

beforeAll(async () => {
  w = await startTestWeaviate()
  await loadSampleData(w, { scale: 0.1 })
  const added = await Cli.run(["connections", "add", "--home", home, "--name", "w", "--host", "127.0.0.1", "--port", String(w.port)])
  if (added.code !== 0) throw new Error(added.stderr)
}, 120_000)
afterAll(() => w.close())

const aggregate = (...args: ReadonlyArray<string>) => Cli.run(["aggregate", "w", ...args, "--home", home])

describe("weaviate-mcp aggregate", () => {
  it("--group-by and --metric give an aligned table, one row per group, and the whole set's count", async () => {
    const products = of("Product")
    const run = await aggregate("Product", "--group-by", "category", "--metric", "price:mean", "--metric", "stock:sum")
    expect(run.code, run.stderr).toBe(0)
    const lines = run.stdout.trimEnd().split("\n")
    expect(lines[0]!.split(/\s+/)).toEqual(["category", "count", "price:mean", "stock:sum"])
    const categories = new Set(products.map((p) => p.category as string))
    const body = lines.slice(2, -1).map((l) => l.split(/\s+/))
    expect(body.map((cells) => cells[0]).sort()).toEqual([...categories].sort())
    for (const [category, count, meanText, stockSum] of body) {
      const group = products.filter((p) => p.category === category)
      expect(Number(count)).toBe(group.length)
      expect(Number(meanText)).toBeCloseTo(sum(group.map((p) => p.price)) / group.length, 6)
      expect(Number(stockSum)).toBe(sum(group.map((p) => p.stock)))
    }
    expect(lines.at(-1)).toBe(`(${products.length} rows in all; ${categories.size} groups by category)`)
  })

  it("--json, with --filter, --tenant and topOccurrences with its limit", async () => {
    const tickets = of("Ticket", "acme").filter((t) => t.priority >= 3)
    const run = await aggregate("Ticket", "--tenant", "acme", "--filter", "priority >= 3", "--metric", "priority:sum", "--metric", "status:topOccurrences:1", "--json")
    expect(run.code, run.stderr).toBe(0)
    const json = JSON.parse(run.stdout)
    expect(json).toMatchObject({ table: "Ticket", groupBy: null, count: tickets.length, columns: ["count", "priority:sum", "status:topOccurrences"], moreGroups: false })
    expect(json.rows[0]["priority:sum"]).toBe(sum(tickets.map((t) => t.priority)))
    const [top] = json.rows[0]["status:topOccurrences"]
    const counts = new Map<string, number>()
    for (const t of tickets) counts.set(t.status, (counts.get(t.status) ?? 0) + 1)
    expect(top.occurs).toBe(Math.max(...counts.values()))
    expect(counts.get(top.value)).toBe(top.occurs)
  })

  it("a metric that does not fit its property is refused with the metrics that do (exit 1); a malformed --metric is a usage error (exit 2)", async () => {
    const refused = await aggregate("Product", "--metric", "category:mean")
    expect(refused.code).toBe(1)
    expect(refused.stderr.trim()).toBe("Statement refused: mean does not fit category, which is text; its metrics are count, topOccurrences")
    const malformed = await aggregate("Product", "--metric", "price-mean")
    expect(malformed.code).toBe(2)
    expect(malformed.stderr).toContain("--metric takes PROPERTY:METRIC")
    const tenantless = await aggregate("Ticket")
    expect(tenantless.code).toBe(1)
    expect(tenantless.stderr.trim()).toBe("Ticket is multi-tenant; pass tenant (tenants: acme, globex)")
  })

  it("the command is recorded in the query history (source cli)", async () => {
    const run = await aggregate("Author", "--group-by", "active")
    expect(run.code, run.stderr).toBe(0)
    const history = await Cli.run(["history", "--home", home, "--tool", "aggregate", "--json"])
    expect(history.code, history.stderr).toBe(0)
    const entries = JSON.parse(history.stdout) as Array<Record<string, unknown>>
    const entry = entries.find((e) => e.table === "Author")
    expect(entry).toMatchObject({ tool: "aggregate", source: "cli", outcome: "ok", rows: 2 })
    expect(JSON.parse(entry!.statement as string)).toMatchObject({ table: "Author", group_by: "active" })
  })

  it("--target-vector names the named vector a search goes through; a collection with several needs it", async () => {
    const created = await fetch(`${w.url}/v1/schema`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        class: "TwoVectors",
        properties: [{ name: "title", dataType: ["text"] }],
        vectorConfig: { a: { vectorizer: { none: {} }, vectorIndexType: "hnsw" }, b: { vectorizer: { none: {} }, vectorIndexType: "hnsw" } }
      })
    })
    expect(created.status, await created.text()).toBe(200)
    const refused = await aggregate("TwoVectors", "--hybrid", "x", "--alpha", "0", "--object-limit", "5")
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("TwoVectors has several named vectors (a, b); pass target_vectors")
    const run = await aggregate("TwoVectors", "--hybrid", "x", "--alpha", "0", "--object-limit", "5", "--target-vector", "a", "--json")
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toMatchObject({ table: "TwoVectors", count: 0 })
    expect(JSON.parse(run.stdout).query).toContain('targetVectors: ["a"]')
  })
})
