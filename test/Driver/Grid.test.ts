import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { Driver } from "../../src/Driver/Driver.ts"
import type { Filter } from "../../src/Driver/FilterBuilder.ts"
import type { PageRequest } from "../../src/Driver/Grid.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"
import { type DriverRuntime, failureOf, loadArticles, loadBig, makeRuntime, tempHome, uuidOf } from "./support.ts"

let w: WeaviateTestInstance
let runtime: DriverRuntime
beforeAll(async () => {
  w = await startTestWeaviate()
  await loadArticles(w)
  await loadBig(w, 10_050)
  runtime = makeRuntime(tempHome())
  await runtime.runPromise(Effect.flatMap(ConnectionStore, (s) => s.add({ name: "local", host: "127.0.0.1", port: w.port })))
})
afterAll(async () => {
  await runtime.dispose()
  await w.close()
})

const browse = (table: string, request: PageRequest = {}) => runtime.runPromise(Effect.flatMap(Driver, (d) => d.browse("local", table, request)))
const titles = async (...filters: Array<Filter>) =>
  (await browse("Article", { filters })).rows.map((r) => r.title as string).sort()
// Schema reads (the whole schema, or one class) are not data requests.
const dataRequests = () => w.requests.filter((r) => !r.path.startsWith("/v1/schema"))

describe("the grid", () => {
  it("columns: uuid first (read-only primary key), properties from the schema, vector last", async () => {
    const page = await browse("Article", { limit: 2 })
    assert.deepStrictEqual(page.columns.map((c) => c.name), ["uuid", "title", "wordCount", "price", "published", "tags", "meta", "vector"])
    assert.isTrue(page.columns[0]!.readOnly && page.columns[0]!.primaryKey)
    assert.isTrue(page.columns[7]!.readOnly)
    assert.deepStrictEqual(page.rows[0]!.vector, [0, 1, 0.5])
    assert.deepStrictEqual(page.rows[0]!.tags, ["news", "tech"])
    assert.deepStrictEqual(page.rows[0]!.meta, { source: "a" })
  })
  it("an unfiltered, unsorted page is GET /v1/objects with class, limit, offset and include=vector", async () => {
    w.clearRequests()
    const page = await browse("Article", { limit: 2, offset: 1 })
    assert.strictEqual(page.source, "rest")
    assert.deepStrictEqual(page.rows.map((r) => r.uuid), [uuidOf(2), uuidOf(3)])
    const request = dataRequests()[0]!
    assert.strictEqual(request.path, "/v1/objects")
    assert.deepStrictEqual(request.query, { class: "Article", limit: "2", offset: "1", include: "vector" })
  })
  it("a filter or a sort turns the page into a GraphQL Get with where and sort", async () => {
    w.clearRequests()
    const page = await browse("Article", { sort: [{ column: "wordCount", direction: "desc" }], filters: [{ column: "wordCount", operator: ">", value: "15" }] })
    assert.strictEqual(page.source, "graphql")
    assert.deepStrictEqual(page.rows.map((r) => r.wordCount), [40, 30, 20])
    assert.deepStrictEqual(page.rows[0]!.vector, [3, 1, 0.5])
    const body = JSON.parse(dataRequests()[0]!.body) as { query: string }
    assert.include(body.query, "where:")
    assert.include(body.query, "sort: [{path: [\"wordCount\"], order: desc}]")
  })
  it("sort ascending by text", async () => {
    const page = await browse("Article", { sort: [{ column: "title", direction: "asc" }] })
    assert.deepStrictEqual(page.rows.map((r) => r.title), ["Goodbye moon", "Hello there", "Hello world", "Weather report"])
  })
  it("row counts come from Aggregate", async () => {
    w.clearRequests()
    const count = await runtime.runPromise(Effect.flatMap(Driver, (d) => d.count("local", "Article")))
    assert.strictEqual(count, 4)
    assert.include((JSON.parse(w.requests.at(-1)!.body) as { query: string }).query, "Aggregate")
    const filtered = await runtime.runPromise(Effect.flatMap(Driver, (d) => d.count("local", "Article", { filters: [{ column: "title", operator: "contains", value: "hello" }] })))
    assert.strictEqual(filtered, 2)
  })
})

describe("filters, each operator against the instance", () => {
  it("equals / not equals", async () => {
    assert.deepStrictEqual(await titles({ column: "wordCount", operator: "equals", value: "20" }), ["Hello there"])
    assert.deepStrictEqual(await titles({ column: "wordCount", operator: "!=", value: "20" }), ["Goodbye moon", "Hello world", "Weather report"])
  })
  it("greater / less on numbers and dates", async () => {
    assert.deepStrictEqual(await titles({ column: "price", operator: "greater than", value: "300" }), ["Weather report"])
    assert.deepStrictEqual(await titles({ column: "price", operator: ">=", value: "300" }), ["Goodbye moon", "Weather report"])
    assert.deepStrictEqual(await titles({ column: "wordCount", operator: "<", value: "20" }), ["Hello world"])
    assert.deepStrictEqual(await titles({ column: "published", operator: "less or equal", value: "2024-02-01T00:00:00Z" }), ["Hello there", "Hello world"])
  })
  it("contains, not contains, starts with, ends with (Like)", async () => {
    assert.deepStrictEqual(await titles({ column: "title", operator: "contains", value: "ell" }), ["Hello there", "Hello world"])
    assert.deepStrictEqual(await titles({ column: "title", operator: "not contains", value: "ell" }), ["Goodbye moon", "Weather report"])
    assert.deepStrictEqual(await titles({ column: "title", operator: "starts with", value: "good" }), ["Goodbye moon"])
    assert.deepStrictEqual(await titles({ column: "title", operator: "ends with", value: "port" }), ["Weather report"])
  })
  it("in list / not in list (ContainsAny / ContainsNone); an array filters on one element", async () => {
    assert.deepStrictEqual(await titles({ column: "wordCount", operator: "in list", value: "10, 30" }), ["Goodbye moon", "Hello world"])
    assert.deepStrictEqual(await titles({ column: "tags", operator: "not in list", value: "tech" }), ["Goodbye moon", "Weather report"])
    assert.deepStrictEqual(await titles({ column: "tags", operator: "equals", value: "news" }), ["Hello world"])
  })
  it("between is inclusive", async () => {
    assert.deepStrictEqual(await titles({ column: "price", operator: "between", value: "200 and 300" }), ["Goodbye moon", "Hello there"])
  })
  it("is NULL / is not NULL with indexNullState", async () => {
    assert.deepStrictEqual(await titles({ column: "published", operator: "is NULL" }), ["Weather report"])
    assert.deepStrictEqual(await titles({ column: "published", operator: "is not NULL" }), ["Goodbye moon", "Hello there", "Hello world"])
  })
  it("is empty / is not empty with indexPropertyLength", async () => {
    assert.deepStrictEqual(await titles({ column: "tags", operator: "is empty" }), ["Goodbye moon", "Weather report"])
    assert.deepStrictEqual(await titles({ column: "tags", operator: "is not empty" }), ["Hello there", "Hello world"])
  })
  it("a uuid filter", async () => {
    assert.deepStrictEqual(await titles({ column: "uuid", operator: "=", value: uuidOf(3) }), ["Goodbye moon"])
  })
})

describe("filters the database cannot run are refused before any request", () => {
  const cases: Array<[string, string, Filter]> = [
    ["REGEX", "Article", { column: "title", operator: "REGEX", value: "^H" }],
    ["IsNull without indexNullState", "Plain", { column: "title", operator: "is NULL" }],
    ["len() without indexPropertyLength", "Plain", { column: "title", operator: "is empty" }],
    ["a bad date", "Article", { column: "published", operator: "=", value: "2024-01-01" }],
    ["a bad number", "Article", { column: "wordCount", operator: "=", value: "ten" }],
    ["an unknown column", "Article", { column: "nope", operator: "=", value: "1" }],
    ["an operator not valid for the type", "Article", { column: "title", operator: ">", value: "a" }]
  ]
  for (const [name, table, filter] of cases) {
    it(`${name}: reason given, nothing sent to /v1/objects or /v1/graphql`, async () => {
      w.clearRequests()
      const error = await failureOf(runtime, Effect.flatMap(Driver, (d) => d.browse("local", table, { filters: [filter] })))
      assert.match(error.message, /^Filter refused/)
      assert.deepStrictEqual(dataRequests(), [])
    })
  }
})

describe("paging depth", () => {
  it("pages reach row 10,000 and the grid stops there", async () => {
    const last = await browse("Big", { limit: 50, offset: 9_950 })
    assert.strictEqual(last.rows.length, 50)
    assert.isUndefined(last.nextOffset)
    const before = await browse("Big", { limit: 50, offset: 9_900 })
    assert.strictEqual(before.nextOffset, 9_950)
  })
  it("offset plus limit beyond QUERY_MAXIMUM_RESULTS is the database's refusal (REST and GraphQL)", async () => {
    const rest = await failureOf(runtime, Effect.flatMap(Driver, (d) => d.browse("local", "Big", { limit: 10, offset: 9_995 })))
    assert.match(rest.message, /^The database refused the request \(HTTP 422\): .*QUERY_MAXIMUM_RESULTS/)
    const graphql = await failureOf(runtime, Effect.flatMap(Driver, (d) => d.browse("local", "Big", { limit: 10, offset: 9_995, sort: [{ column: "n", direction: "asc" }] })))
    assert.match(graphql.message, /QUERY_MAXIMUM_RESULTS/)
  })
  it("a full read (export) walks the after cursor and is not capped", async () => {
    w.clearRequests()
    const rows = await runtime.runPromise(Stream.runCollect(Stream.unwrap(Effect.map(Driver, (d) => d.readAll("local", "Big", { pageSize: 2_000 })))))
    assert.strictEqual(Chunk.size(rows), 10_050)
    const pages = w.requests.filter((r) => r.path === "/v1/objects")
    assert.isTrue(pages.every((r) => r.query.offset === undefined && r.query.after !== undefined))
  })
})

describe("row edits", () => {
  it("create sends an id only when one is given; update PATCHes changed cells on the class-scoped route; delete uses it too", async () => {
    w.clearRequests()
    const driver = (f: (d: Driver["Type"]) => Effect.Effect<unknown, unknown>) => runtime.runPromise(Effect.flatMap(Driver, f) as Effect.Effect<any, never, Driver>)
    const created = await driver((d) => d.insertRows("local", "Plain", [{ properties: { title: "new" } }, { id: uuidOf(200), properties: { title: "given" } }]))
    assert.strictEqual(created.applied[1], uuidOf(200))
    const posts = w.requests.filter((r) => r.method === "POST").map((r) => JSON.parse(r.body))
    assert.notProperty(posts[0], "id")
    assert.strictEqual(posts[1].id, uuidOf(200))
    w.clearRequests()
    const updated = await driver((d) => d.updateRows("local", "Plain", [{ uuid: uuidOf(200), values: { title: "edited", vector: [1], uuid: "x" } }]))
    assert.deepStrictEqual(updated.applied, [uuidOf(200)])
    const patch = w.requests.find((r) => r.method === "PATCH")!
    assert.strictEqual(patch.path, `/v1/objects/Plain/${uuidOf(200)}`)
    assert.deepStrictEqual(JSON.parse(patch.body), { class: "Plain", properties: { title: "edited" } })
    const row = await driver((d) => d.getRow("local", "Plain", uuidOf(200)))
    assert.strictEqual(Option.getOrThrow(row as Option.Option<Record<string, unknown>>).title, "edited")
    w.clearRequests()
    await driver((d) => d.deleteRows("local", "Plain", [uuidOf(200)]))
    assert.deepStrictEqual(w.requests.filter((r) => r.method === "DELETE").map((r) => r.path), [`/v1/objects/Plain/${uuidOf(200)}`])
  })
  it("an update or delete without uuid is skipped and logged; no request is sent", async () => {
    w.clearRequests()
    const result = await runtime.runPromise(Effect.gen(function*() {
      const d = yield* Driver
      const updated = yield* d.updateRows("local", "Plain", [{ values: { title: "x" } }, { uuid: "", values: { title: "y" } }])
      const deleted = yield* d.deleteRows("local", "Plain", [undefined, null, ""])
      return { updated, deleted }
    }))
    assert.deepStrictEqual(result.updated.applied, [])
    assert.strictEqual(result.updated.skipped.length, 2)
    assert.strictEqual(result.deleted.skipped.length, 3)
    assert.deepStrictEqual(dataRequests(), [])
  })
})

describe("tenants", () => {
  it("a tenant can be named for a page, a query and an edit", async () => {
    const call = async (method: string, path: string, body: unknown) => {
      const r = await fetch(`${w.url}${path}`, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
      assert.isBelow(r.status, 300, await r.clone().text())
    }
    await call("POST", "/v1/schema", { class: "Mt", vectorizer: "none", multiTenancyConfig: { enabled: true }, properties: [{ name: "title", dataType: ["text"] }] })
    await call("POST", "/v1/schema/Mt/tenants", [{ name: "t1" }, { name: "t2" }])
    const result = await runtime.runPromise(Effect.gen(function*() {
      const d = yield* Driver
      yield* d.insertRows("local", "Mt", [{ id: uuidOf(300), properties: { title: "in t1" } }], { tenant: "t1" })
      yield* d.updateRows("local", "Mt", [{ uuid: uuidOf(300), values: { title: "edited in t1" } }], { tenant: "t1" })
      const page = yield* d.browse("local", "Mt", { tenant: "t1" })
      const other = yield* d.browse("local", "Mt", { tenant: "t2", filters: [{ column: "title", operator: "contains", value: "t1" }] })
      const query = yield* d.graphql("local", "{ Get { Mt { title } } }", { tenant: "t1" })
      return { page, other, query }
    }))
    assert.deepStrictEqual(result.page.rows.map((r) => r.title), ["edited in t1"])
    assert.deepStrictEqual(result.other.rows, [])
    assert.strictEqual(result.query.kind, "grid")
    if (result.query.kind === "grid") assert.deepStrictEqual(result.query.tables[0]!.rows, [{ title: "edited in t1" }])
  })
})
