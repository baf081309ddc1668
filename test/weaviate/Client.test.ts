/**
 * Fidelity check with an independent client: the official weaviate-ts-client v2 (REST + GraphQL)
 * drives the test instance through schema, object CRUD, batch, filters, sort, paging and search.
 */
import weaviateImport, { type WeaviateClient, type WhereFilter as ClientWhereFilter } from "weaviate-ts-client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startWeaviate, type WeaviateTestInstance } from "./WeaviateServer.ts"

// The package's single index.d.ts is read as CommonJS under NodeNext; at run time the ESM build's
// default export is the app object itself.
type App = typeof weaviateImport extends { default: infer D } ? D : typeof weaviateImport
const weaviate = ((weaviateImport as { default?: App }).default ?? weaviateImport) as App

// weaviate-ts-client 2.2 types predate the ContainsNone and Not operators, which the server accepts.
type WhereFilter = Omit<ClientWhereFilter, "operator" | "operands"> & { operator?: string; operands?: Array<WhereFilter> }
const asClientFilter = (f: WhereFilter): ClientWhereFilter => f as ClientWhereFilter

let w: WeaviateTestInstance
let client: WeaviateClient

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`
const BOOKS = [
  { id: id(1), title: "The Hobbit", pages: 310, price: 9.5, tags: ["fantasy", "classic"], published: "1937-09-21T00:00:00Z", available: true },
  { id: id(2), title: "Dune", pages: 412, price: 12.0, tags: ["scifi", "classic"], published: "1965-08-01T00:00:00Z", available: false },
  { id: id(3), title: "Neuromancer", pages: 271, price: 8.25, tags: ["scifi", "cyberpunk"], published: "1984-07-01T00:00:00Z", available: true },
  { id: id(4), title: "The Left Hand of Darkness", pages: 304, price: 10.0, tags: [], published: "1969-03-01T00:00:00Z", available: true },
  { id: id(5), title: "Hyperion", pages: 482, tags: ["scifi"], published: "1989-05-26T00:00:00Z", available: false },
  { id: id(6), title: "Hobbit Houses of the Shire", pages: 96, price: 30.0, tags: ["guide"], published: "2001-01-01T00:00:00Z" }
]

beforeAll(async () => {
  w = await startWeaviate()
  client = weaviate.client({ scheme: "http", host: w.url.replace("http://", "") })
  await client.schema
    .classCreator()
    .withClass({
      class: "Book",
      invertedIndexConfig: { indexNullState: true, indexPropertyLength: true },
      properties: [
        { name: "title", dataType: ["text"] },
        { name: "pages", dataType: ["int"] },
        { name: "price", dataType: ["number"] },
        { name: "tags", dataType: ["text[]"] },
        { name: "published", dataType: ["date"] },
        { name: "available", dataType: ["boolean"] }
      ]
    })
    .do()
  const batcher = client.batch.objectsBatcher()
  for (const { id: bookId, ...properties } of BOOKS) batcher.withObject({ class: "Book", id: bookId, properties })
  const results = await batcher.do()
  expect(results.map((r) => r.result?.status)).toEqual(BOOKS.map(() => "SUCCESS"))
})

afterAll(async () => {
  await w.close()
})

const titles = async (where: WhereFilter): Promise<Array<string>> => {
  const r = await client.graphql.get().withClassName("Book").withFields("title").withWhere(asClientFilter(where)).do()
  return (r.data.Get.Book as Array<{ title: string }>).map((b) => b.title).sort()
}

describe("schema through weaviate-ts-client", () => {
  it("creates, reads and deletes a class with Weaviate's defaults applied", async () => {
    const created = await client.schema.classCreator().withClass({ class: "tempClass", properties: [{ name: "Name", dataType: ["text"] }] }).do()
    expect(created.class).toBe("TempClass")
    expect(created.vectorizer).toBe("none")
    expect(created.properties?.[0]).toMatchObject({ name: "name", tokenization: "word", indexFilterable: true, indexSearchable: true })
    const got = await client.schema.classGetter().withClassName("TempClass").do()
    expect(got.invertedIndexConfig?.bm25).toEqual({ b: 0.75, k1: 1.2 })
    const all = await client.schema.getter().do()
    expect(all.classes?.map((c) => c.class)).toContain("TempClass")
    await client.schema.classDeleter().withClassName("TempClass").do()
    await expect(client.schema.classGetter().withClassName("TempClass").do()).rejects.toThrow(/404/)
  })
})

describe("objects through weaviate-ts-client", () => {
  it("creates with a generated UUID v4, reads, merges, replaces, checks and deletes", async () => {
    const created = await client.data.creator().withClassName("Book").withProperties({ title: "Temp", pages: 1 }).do()
    expect(created.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    const newId = created.id!
    const got = await client.data.getterById().withClassName("Book").withId(newId).do()
    expect(got.properties).toEqual({ title: "Temp", pages: 1 })
    await client.data.merger().withClassName("Book").withId(newId).withProperties({ pages: 2 }).do()
    const merged = await client.data.getterById().withClassName("Book").withId(newId).do()
    expect(merged.properties).toEqual({ title: "Temp", pages: 2 })
    await client.data.updater().withClassName("Book").withId(newId).withProperties({ title: "Replaced" }).do()
    const replaced = await client.data.getterById().withClassName("Book").withId(newId).do()
    expect(replaced.properties).toEqual({ title: "Replaced" })
    expect(await client.data.checker().withClassName("Book").withId(newId).do()).toBe(true)
    await client.data.deleter().withClassName("Book").withId(newId).do()
    expect(await client.data.checker().withClassName("Book").withId(newId).do()).toBe(false)
    // deleting a missing id is a 204 too
    await expect(client.data.deleter().withClassName("Book").withId(newId).do()).resolves.toBeUndefined()
  })

  it("rejects a duplicate id with Weaviate's 422 message", async () => {
    await expect(client.data.creator().withClassName("Book").withId(id(1)).withProperties({ title: "x" }).do()).rejects.toThrow(
      `id '${id(1)}' already exists`
    )
  })

  it("pages through a class with the REST cursor", async () => {
    const seen: Array<string> = []
    let after = ""
    for (let page = 0; page < 10; page++) {
      const r = await client.data.getter().withClassName("Book").withLimit(4).withAfter(after).do()
      if (r.objects === undefined || r.objects.length === 0) break
      seen.push(...r.objects.map((o) => o.id!))
      after = r.objects[r.objects.length - 1]!.id!
    }
    expect(seen).toEqual(BOOKS.map((b) => b.id))
  })

  it("batch-deletes by filter and reports the matches", async () => {
    await client.data.creator().withClassName("Scratch").withProperties({ n: 1 }).do()
    await client.data.creator().withClassName("Scratch").withProperties({ n: 2 }).do()
    const r = await client.batch
      .objectsBatchDeleter()
      .withClassName("Scratch")
      .withWhere({ path: ["n"], operator: "GreaterThan", valueNumber: 1.5 })
      .do()
    expect(r.results).toMatchObject({ matches: 1, successful: 1, failed: 0, limit: 10000 })
    const left = await client.data.getter().withClassName("Scratch").do()
    expect(left.objects?.map((o) => o.properties?.["n"])).toEqual([1])
  })
})

describe("GraphQL Get where filters through weaviate-ts-client", () => {
  const cases: ReadonlyArray<readonly [string, WhereFilter, ReadonlyArray<string>]> = [
    ["Equal matches all tokens of a word-tokenized text", { path: ["title"], operator: "Equal", valueText: "hobbit" }, ["Hobbit Houses of the Shire", "The Hobbit"]],
    ["NotEqual is the complement of Equal", { path: ["title"], operator: "NotEqual", valueText: "hobbit" }, ["Dune", "Hyperion", "Neuromancer", "The Left Hand of Darkness"]],
    ["GreaterThan on int", { path: ["pages"], operator: "GreaterThan", valueInt: 310 }, ["Dune", "Hyperion"]],
    ["GreaterThanEqual on int", { path: ["pages"], operator: "GreaterThanEqual", valueInt: 310 }, ["Dune", "Hyperion", "The Hobbit"]],
    ["LessThan on number", { path: ["price"], operator: "LessThan", valueNumber: 10 }, ["Neuromancer", "The Hobbit"]],
    ["LessThanEqual on number", { path: ["price"], operator: "LessThanEqual", valueNumber: 10 }, ["Neuromancer", "The Hobbit", "The Left Hand of Darkness"]],
    ["Like with * over tokens", { path: ["title"], operator: "Like", valueText: "hyp*" }, ["Hyperion"]],
    ["Like with ? over tokens", { path: ["title"], operator: "Like", valueText: "d?ne" }, ["Dune"]],
    ["ContainsAny on text[]", { path: ["tags"], operator: "ContainsAny", valueTextArray: ["cyberpunk", "guide"] }, ["Hobbit Houses of the Shire", "Neuromancer"]],
    ["ContainsAll on text[]", { path: ["tags"], operator: "ContainsAll", valueTextArray: ["scifi", "classic"] }, ["Dune"]],
    ["ContainsNone on text[] keeps objects without the values", { path: ["tags"], operator: "ContainsNone", valueTextArray: ["scifi", "classic"] }, ["Hobbit Houses of the Shire", "The Left Hand of Darkness"]],
    ["IsNull true matches missing values", { path: ["price"], operator: "IsNull", valueBoolean: true }, ["Hyperion"]],
    ["IsNull true matches empty arrays", { path: ["tags"], operator: "IsNull", valueBoolean: true }, ["The Left Hand of Darkness"]],
    ["len() counts characters of text", { path: ["len(title)"], operator: "LessThanEqual", valueInt: 4 }, ["Dune"]],
    ["len() counts array elements", { path: ["len(tags)"], operator: "Equal", valueInt: 0 }, ["The Left Hand of Darkness"]],
    ["Equal on boolean", { path: ["available"], operator: "Equal", valueBoolean: false }, ["Dune", "Hyperion"]],
    ["dates compare as instants", { path: ["published"], operator: "GreaterThan", valueDate: "1984-07-01T00:00:00Z" }, ["Hobbit Houses of the Shire", "Hyperion"]],
    [
      "And combines operands",
      { operator: "And", operands: [{ path: ["tags"], operator: "Equal", valueText: "scifi" }, { path: ["pages"], operator: "LessThan", valueInt: 420 }] },
      ["Dune", "Neuromancer"]
    ],
    [
      "Or combines operands",
      { operator: "Or", operands: [{ path: ["title"], operator: "Equal", valueText: "dune" }, { path: ["pages"], operator: "LessThan", valueInt: 100 }] },
      ["Dune", "Hobbit Houses of the Shire"]
    ],
    ["Not negates its operand", { operator: "Not", operands: [{ path: ["available"], operator: "Equal", valueBoolean: true }] }, ["Dune", "Hobbit Houses of the Shire", "Hyperion"]]
  ]
  it.each(cases)("%s", async (_name, where, expected) => {
    expect(await titles(where)).toEqual([...expected].sort())
  })
})

describe("GraphQL sort, paging, search and Aggregate through weaviate-ts-client", () => {
  it("sorts by a property descending", async () => {
    const r = await client.graphql.get().withClassName("Book").withFields("pages").withSort([{ path: ["pages"], order: "desc" }]).withLimit(3).do()
    expect(r.data.Get.Book.map((b: { pages: number }) => b.pages)).toEqual([482, 412, 310])
  })

  it("sorts text case-insensitively ascending by default", async () => {
    const r = await client.graphql.get().withClassName("Book").withFields("title").withSort([{ path: ["title"] }]).do()
    expect(r.data.Get.Book.map((b: { title: string }) => b.title)).toEqual([
      "Dune", "Hobbit Houses of the Shire", "Hyperion", "Neuromancer", "The Hobbit", "The Left Hand of Darkness"
    ])
  })

  it("pages with the GraphQL cursor in UUID order", async () => {
    const first = await client.graphql.get().withClassName("Book").withFields("_additional { id }").withLimit(2).do()
    const ids1 = first.data.Get.Book.map((b: { _additional: { id: string } }) => b._additional.id)
    const next = await client.graphql.get().withClassName("Book").withFields("_additional { id }").withLimit(2).withAfter(ids1[1]).do()
    const ids2 = next.data.Get.Book.map((b: { _additional: { id: string } }) => b._additional.id)
    expect([...ids1, ...ids2]).toEqual([id(1), id(2), id(3), id(4)])
  })

  it("pages with offset and limit", async () => {
    const r = await client.graphql.get().withClassName("Book").withFields("_additional { id }").withOffset(4).withLimit(10).do()
    expect(r.data.Get.Book.map((b: { _additional: { id: string } }) => b._additional.id)).toEqual([id(5), id(6)])
  })

  it("ranks bm25 results by score", async () => {
    const r = await client.graphql.get().withClassName("Book").withFields("title _additional { score }").withBm25({ query: "hobbit shire" }).do()
    const hits = r.data.Get.Book as Array<{ title: string; _additional: { score: string } }>
    expect(hits.map((h) => h.title)).toEqual(["Hobbit Houses of the Shire", "The Hobbit"])
    expect(Number(hits[0]!._additional.score)).toBeGreaterThan(Number(hits[1]!._additional.score))
  })

  it("runs hybrid with alpha 0 as pure keyword search without a vectorizer", async () => {
    const r = await client.graphql.get().withClassName("Book").withFields("title").withHybrid({ query: "dune", alpha: 0 }).do()
    expect(r.data.Get.Book).toEqual([{ title: "Dune" }])
  })

  it("counts with Aggregate meta count, with and without where", async () => {
    const all = await client.graphql.aggregate().withClassName("Book").withFields("meta { count }").do()
    expect(all.data.Aggregate.Book).toEqual([{ meta: { count: 6 } }])
    const some = await client.graphql
      .aggregate()
      .withClassName("Book")
      .withFields("meta { count }")
      .withWhere({ path: ["tags"], operator: "Equal", valueText: "scifi" })
      .do()
    expect(some.data.Aggregate.Book).toEqual([{ meta: { count: 3 } }])
  })

  it("reports the server version the client uses to pick namespaced object paths", async () => {
    const meta = await client.misc.metaGetter().do()
    expect(meta.version).toBe("1.39.0")
    expect(await client.misc.liveChecker().do()).toBe(true)
    expect(await client.misc.readyChecker().do()).toBe(true)
  })
})
