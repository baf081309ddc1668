import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import { print } from "graphql"
import * as GraphqlEditor from "../../src/Driver/GraphqlEditor.ts"
import * as RestConsole from "../../src/Driver/RestConsole.ts"

const refusal = (text: string) => {
  const result = GraphqlEditor.validate(text)
  assert.isTrue(Either.isLeft(result), text)
  return Either.isLeft(result) ? result.left.message : ""
}

describe("GraphQL editor is read-only (rule 3)", () => {
  it("accepts { Get {…} } and query {…}", () => {
    assert.isTrue(Either.isRight(GraphqlEditor.validate("{ Get { Article { title } } }")))
    assert.isTrue(Either.isRight(GraphqlEditor.validate("query Q { Aggregate { Article { meta { count } } } }")))
    assert.isTrue(Either.isRight(GraphqlEditor.validate("query { Get { Article { ...F } } } fragment F on Article { title }")))
  })
  it("refuses mutations, subscriptions, several operations and syntax errors before sending", () => {
    assert.match(refusal("mutation { Delete { Article } }"), /^Statement refused: the GraphQL editor is read-only: mutation/)
    assert.match(refusal("subscription { x }"), /subscription operations are refused/)
    assert.match(refusal("query A { a } query B { b }"), /exactly one operation/)
    assert.match(refusal("{ Get { "), /not valid GraphQL/)
    assert.match(refusal("type T { a: Int }"), /only a query/)
  })
  it("names a tenant inside the operation", () => {
    const query = Either.getOrThrow(GraphqlEditor.validate(`{ Get { Article(limit: 2) { title } } Aggregate { Article(tenant: "x") { meta { count } } } }`))
    const text = print(GraphqlEditor.withTenant(query, "t\"1").document)
    assert.include(text, `Article(limit: 2, tenant: "t\\"1")`)
    assert.include(text, `Article(tenant: "x")`)
  })
})

describe("GraphQL result display (rule 5)", () => {
  it("a Get result is a grid: _additional.id is uuid, other _additional members are columns", () => {
    const query = Either.getOrThrow(GraphqlEditor.validate(`{ Get { Article { title n: wordCount _additional { distance id score } } } }`))
    const result = GraphqlEditor.toResult(query, {
      data: { Get: { Article: [{ title: "a", n: 1, _additional: { id: "u1", distance: 0.5, score: "0" } }, { title: "b", n: null, _additional: { id: "u2", distance: 0.7, score: "0" } }] } }
    })
    assert.strictEqual(result.kind, "grid")
    if (result.kind !== "grid") return
    assert.deepStrictEqual(result.tables[0]!.columns, ["uuid", "title", "n", "distance", "score"])
    assert.deepStrictEqual(result.tables[0]!.rows[0], { uuid: "u1", title: "a", n: 1, distance: 0.5, score: "0" })
  })
  it("anything else, Aggregate included, is formatted JSON; errors keep partial data", () => {
    const query = Either.getOrThrow(GraphqlEditor.validate(`{ Aggregate { Article { meta { count } } } }`))
    const result = GraphqlEditor.toResult(query, { data: { Aggregate: { Article: [{ meta: { count: 3 } }] } }, errors: [{ message: "boom" }] })
    assert.strictEqual(result.kind, "json")
    if (result.kind !== "json") return
    assert.include(result.json, "\"count\": 3")
    assert.deepStrictEqual(result.errors, [{ message: "boom" }])
  })
})

describe("REST console (rule 6)", () => {
  const parsed = (text: string) => Either.getOrThrow(RestConsole.parse(text))
  it("a path without /v1 receives it", () => {
    assert.deepStrictEqual(parsed("GET /nodes"), { method: "GET", path: "/v1/nodes" })
    assert.deepStrictEqual(parsed("get schema"), { method: "GET", path: "/v1/schema" })
    assert.deepStrictEqual(parsed("GET /v1/meta"), { method: "GET", path: "/v1/meta" })
    assert.deepStrictEqual(parsed("GET /v1"), { method: "GET", path: "/v1" })
    assert.deepStrictEqual(parsed("GET /objects?class=A&limit=2"), { method: "GET", path: "/v1/objects?class=A&limit=2" })
  })
  it("a body goes on the same line or on the lines below", () => {
    assert.deepStrictEqual(parsed(`POST /v1/objects {"class":"A"}`), { method: "POST", path: "/v1/objects", body: `{"class":"A"}` })
    assert.deepStrictEqual(parsed(`POST /objects\n{\n  "class": "A"\n}\n`), { method: "POST", path: "/v1/objects", body: `{\n  "class": "A"\n}` })
  })
  it("refuses URLs, unknown methods, bad JSON and GET bodies", () => {
    for (const bad of ["GET http://evil/v1/meta", "GET //evil/v1", "FETCH /v1/meta", "POST /v1/objects {x", "GET /v1/meta {}", "GET"]) {
      assert.isTrue(Either.isLeft(RestConsole.parse(bad)), bad)
    }
  })
  it("classifies writes and destructive operations", () => {
    assert.deepStrictEqual(RestConsole.classify(parsed("GET /v1/schema")), { isWrite: false })
    assert.deepStrictEqual(RestConsole.classify(parsed(`POST /v1/objects {"class":"A"}`)), { isWrite: true })
    assert.deepStrictEqual(RestConsole.classify(parsed(`POST /graphql {"query":"{ Get { A { x } } }"}`)), { isWrite: false })
    assert.deepStrictEqual(RestConsole.classify(parsed("DELETE /schema/Article")), { isWrite: true, destructive: "drop_table", collection: "Article" })
    assert.deepStrictEqual(
      RestConsole.classify(parsed(`DELETE /v1/batch/objects {"match":{"class":"A","where":{}}}`)),
      { isWrite: true, destructive: "delete_where", collection: "A" }
    )
    assert.deepStrictEqual(RestConsole.classify(parsed("DELETE /v1/objects/A/00000000-0000-0000-0000-000000000001")), { isWrite: true })
  })
})
