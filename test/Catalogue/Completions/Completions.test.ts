import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Completions } from "../../../src/Mcp/Catalogue.ts"
import { completeFrom } from "../../../src/Catalogue/Completions/Completions.ts"
import type { Principal } from "../../../src/Auth/Principal.ts"
import { loadManyCollections } from "../../support/ManyCollections.ts"
import { as, type Catalogue, codeOf, requestContext, startCatalogue, token } from "../Resources/support.ts"

let cat: Catalogue
beforeAll(async () => {
  // 120 collections take a real Weaviate ~25 s to create (one Raft round each); completion paging
  // does not depend on the server, so these tests keep the compatible instance.
  cat = await startCatalogue({ compatible: true })
  await loadManyCollections(cat.w, 120, { prefix: "Bulk" })
})
afterAll(async () => {
  await cat.dispose()
})

type Ref = { readonly type: "ref/prompt"; readonly name: string } | { readonly type: "ref/resource"; readonly uri: string }
const request = (ref: Ref, name: string, value: string, context: Record<string, string> = {}) => ({
  ref,
  argument: { name, value },
  context
})
const complete = (req: ReturnType<typeof request>, principal: Principal = token()) =>
  cat.runtime.runPromise(Effect.flatMap(Completions, (c) => c.complete(req)).pipe(as(principal, requestContext({ method: "completion/complete" }))))
const completeCode = (req: ReturnType<typeof request>) =>
  codeOf(cat.runtime.runPromise(Effect.either(Effect.flatMap(Completions, (c) => c.complete(req)).pipe(as(token(), requestContext())))))

const prompt = (name: string): Ref => ({ type: "ref/prompt", name })
const template = (uri: string): Ref => ({ type: "ref/resource", uri })
const TABLE_TEMPLATE = "weaviate://connections/{connection_id}/tables/{table}"

describe("completion/complete: connection_id", () => {
  it("completes the visible connections by id prefix and by name prefix, case-insensitively; blocked ones are invisible", async () => {
    const all = await complete(request(prompt("explain_schema"), "connection_id", ""))
    assert.sameMembers([...all.values], [cat.ids.local, cat.ids.readonly, cat.ids.down])
    assert.notInclude(all.values, cat.ids.blocked)
    const byName = await complete(request(prompt("explain_schema"), "connection_id", "READ"))
    assert.deepStrictEqual(byName.values, [cat.ids.readonly])
    const byId = await complete(request(template("weaviate://connections/{connection_id}/meta"), "connection_id", cat.ids.local.slice(0, 6).toUpperCase()))
    assert.include(byId.values, cat.ids.local)
    const blockedByName = await complete(request(prompt("explain_schema"), "connection_id", "bl"))
    assert.deepStrictEqual(blockedByName.values, [])
  })
  it("an allowlisted token completes only its connections", async () => {
    const result = await complete(request(prompt("explain_table"), "connection_id", ""), token({ connections: [cat.ids.readonly] }))
    assert.deepStrictEqual(result.values, [cat.ids.readonly])
  })
})

describe("completion/complete: table", () => {
  it("completes the collections of the connection in context.arguments, for prompts and templates", async () => {
    const forPrompt = await complete(request(prompt("explain_table"), "table", "ar", { connection_id: cat.ids.local }))
    assert.deepStrictEqual(forPrompt.values, ["Article"])
    const forTemplate = await complete(request(template(TABLE_TEMPLATE), "table", "P", { connection_id: cat.ids.readonly }))
    assert.deepStrictEqual(forTemplate.values, ["Product"])
  })
  it("at most 100 values, with total and hasMore", async () => {
    const result = await complete(request(template(TABLE_TEMPLATE), "table", "bulk", { connection_id: cat.ids.local }))
    assert.strictEqual(result.values.length, 100)
    assert.strictEqual(result.total, 120)
    assert.isTrue(result.hasMore)
    const few = await complete(request(template(TABLE_TEMPLATE), "table", "bulk11", { connection_id: cat.ids.local }))
    assert.deepStrictEqual(few, { values: ["Bulk110", "Bulk111", "Bulk112", "Bulk113", "Bulk114", "Bulk115", "Bulk116", "Bulk117", "Bulk118", "Bulk119"], total: 10, hasMore: false })
  })
  it("nothing without a connection in context, or for a blocked, not allowlisted or down connection", async () => {
    assert.deepStrictEqual((await complete(request(prompt("explain_table"), "table", ""))).values, [])
    assert.deepStrictEqual((await complete(request(prompt("explain_table"), "table", "", { connection_id: cat.ids.blocked }))).values, [])
    assert.deepStrictEqual(
      (await complete(request(prompt("explain_table"), "table", "", { connection_id: cat.ids.local }), token({ connections: [cat.ids.readonly] }))).values,
      []
    )
    assert.deepStrictEqual((await complete(request(prompt("explain_table"), "table", "", { connection_id: cat.ids.down }))).values, [])
  })
})

describe("completion/complete: property names", () => {
  it("completes column and property arguments from the table in context", async () => {
    const column = await complete(request(prompt("data_quality_audit"), "column", "W", { connection_id: cat.ids.local, table: "Article" }))
    assert.deepStrictEqual(column.values, ["wordCount"])
    const property = await complete(request(prompt("tune_hybrid_search"), "property", "", { connection_id: "local", table: "product" }))
    assert.deepStrictEqual(property.values, ["name", "sku", "category", "price", "stock", "colors", "location"])
  })
  it("nothing for an unknown table", async () => {
    assert.deepStrictEqual((await complete(request(prompt("data_quality_audit"), "column", "", { connection_id: cat.ids.local, table: "Nope" }))).values, [])
  })
})

describe("completion/complete: what cannot be completed", () => {
  it("free-text arguments and the uuid variable complete to nothing", async () => {
    assert.deepStrictEqual((await complete(request(prompt("question_to_graphql"), "question", "how"))).values, [])
    const uuid = await complete(request(template("weaviate://connections/{connection_id}/tables/{table}/rows/{uuid}"), "uuid", "0", { connection_id: cat.ids.local, table: "Article" }))
    assert.deepStrictEqual(uuid.values, [])
  })
  it("an argument the prompt does not have completes to nothing", async () => {
    assert.deepStrictEqual((await complete(request(prompt("explain_schema"), "table", "", { connection_id: cat.ids.local }))).values, [])
  })
  it("an unknown prompt or a URI that is not a template is -32602", async () => {
    assert.strictEqual(await completeCode(request(prompt("nope"), "connection_id", "")), -32602)
    assert.strictEqual(await completeCode(request(template(`weaviate://connections/${"x"}/meta`), "connection_id", "")), -32602)
  })
})

describe("completeFrom", () => {
  it("prefix match on any key, without duplicates, in order", () => {
    assert.deepStrictEqual(
      completeFrom([{ value: "a1", keys: ["a1", "Local"] }, { value: "b2", keys: ["b2", "lab"] }, { value: "a1", keys: ["a1"] }], "L"),
      { values: ["a1", "b2"], total: 2, hasMore: false }
    )
  })
})
