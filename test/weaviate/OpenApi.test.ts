/**
 * REST responses validated against the response schemas of Weaviate's own OpenAPI (Swagger 2.0)
 * document, test/fixtures/reference/weaviate/openapi.json; `#/definitions/...` refs are resolved by
 * registering the definitions as one Ajv schema.
 */
import * as fs from "node:fs"
import { Ajv } from "ajv"
import addFormatsImport from "ajv-formats"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startWeaviate, type WeaviateTestInstance } from "./WeaviateServer.ts"
import { referencePath } from "../support/Reference.ts"

const SPEC_FILE = referencePath("weaviate", "openapi.json")
const spec = JSON.parse(fs.readFileSync(SPEC_FILE, "utf8")) as {
  definitions: Record<string, unknown>
  paths: Record<string, Record<string, { responses: Record<string, { schema?: unknown }> }>>
}

const addFormats = ((addFormatsImport as unknown as { default?: typeof addFormatsImport }).default ?? addFormatsImport) as unknown as (a: Ajv) => Ajv
const ajv = new Ajv({ strict: false, allErrors: true })
addFormats(ajv)
// go-openapi strfmt "url" is whatever url.Parse accepts, e.g. Weaviate's own "http://[::]:8080"
ajv.addFormat("url", (s: string) => URL.canParse(s))
const collectFormats = (v: unknown, out: Set<string>): Set<string> => {
  if (Array.isArray(v)) for (const x of v) collectFormats(x, out)
  else if (v !== null && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) {
      if (k === "format" && typeof x === "string") out.add(x)
      else collectFormats(x, out)
    }
  }
  return out
}
// Swagger-only formats (int64, url, object, ...) carry no constraint for JSON Schema
for (const f of collectFormats(spec, new Set())) if (ajv.formats[f] === undefined) ajv.addFormat(f, true)

const responseSchema = (specPath: string, method: string, status: number): unknown => {
  const schema = spec.paths[specPath]?.[method]?.responses[String(status)]?.schema
  if (schema === undefined) throw new Error(`openapi.json has no schema for ${method.toUpperCase()} ${specPath} ${status}`)
  const rewrite = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(rewrite)
      : v !== null && typeof v === "object"
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, k === "$ref" && typeof x === "string" ? `openapi${x}` : rewrite(x)]))
        : v
  return rewrite(schema)
}

/**
 * Swagger 2.0 cannot say "nullable array", but Go marshals a nil slice as `null`, and Weaviate does
 * emit such nulls (stopwords.additions/removals, deprecations without class, shards in minimal
 * node output; behaviour.md §b, §h). Arrays in the definitions therefore also accept null.
 */
const nullableArrays = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(nullableArrays)
    : v !== null && typeof v === "object"
      ? Object.fromEntries(
          Object.entries(v).map(([k, x]) => [k, k === "type" && x === "array" ? ["array", "null"] : nullableArrays(x)])
        )
      : v

ajv.addSchema({ $id: "openapi", definitions: nullableArrays(spec.definitions) })

let w: WeaviateTestInstance
const ID = "00000000-0000-4000-8000-000000000001"

const call = async (method: string, p: string, body?: unknown) => {
  const r = await fetch(w.url + p, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { "content-type": "application/json" } })
  })
  return { status: r.status, json: JSON.parse(await r.text()) as unknown }
}

beforeAll(async () => {
  w = await startWeaviate()
})
afterAll(async () => {
  await w.close()
})

describe("REST responses match openapi.json", () => {
  const rows: ReadonlyArray<readonly [string, string, string, string, unknown, number]> = [
    ["POST /schema", "/schema", "post", "/v1/schema", {
      class: "Article",
      vectorizer: "text2vec-transformers",
      multiTenancyConfig: { enabled: false },
      properties: [
        { name: "title", dataType: ["text"] },
        { name: "tags", dataType: ["text[]"] },
        { name: "meta", dataType: ["object"], nestedProperties: [{ name: "source", dataType: ["text"] }] }
      ]
    }, 200],
    ["GET /schema", "/schema", "get", "/v1/schema", undefined, 200],
    ["GET /schema/{className}", "/schema/{className}", "get", "/v1/schema/Article", undefined, 200],
    ["POST /objects", "/objects", "post", "/v1/objects", { class: "Article", id: ID, properties: { title: "Hello", tags: ["a"], meta: { source: "web" } } }, 200],
    ["POST /objects duplicate (ErrorResponse)", "/objects", "post", "/v1/objects", { class: "Article", id: ID, properties: {} }, 422],
    ["GET /objects/{className}/{id}", "/objects/{className}/{id}", "get", `/v1/objects/Article/${ID}?include=vector`, undefined, 200],
    ["PUT /objects/{className}/{id}", "/objects/{className}/{id}", "put", `/v1/objects/Article/${ID}`, { class: "Article", id: ID, properties: { title: "Hi" } }, 200],
    ["GET /objects", "/objects", "get", "/v1/objects?class=Article&include=vector", undefined, 200],
    ["POST /batch/objects", "/batch/objects", "post", "/v1/batch/objects", {
      objects: [{ class: "Article", properties: { title: "batched" } }, { class: "Article", properties: { title: 5 } }]
    }, 200],
    ["DELETE /batch/objects", "/batch/objects", "delete", "/v1/batch/objects", {
      match: { class: "Article", where: { path: ["title"], operator: "Equal", valueText: "batched" } },
      output: "verbose"
    }, 200],
    ["POST /graphql data", "/graphql", "post", "/v1/graphql", { query: "{ Get { Article { title _additional { id } } } }" }, 200],
    ["POST /graphql errors", "/graphql", "post", "/v1/graphql", { query: "{ Get { Article(offset: 99999) { title } } }" }, 200],
    ["GET /meta", "/meta", "get", "/v1/meta", undefined, 200],
    ["GET /nodes", "/nodes", "get", "/v1/nodes?output=verbose", undefined, 200],
    ["POST /schema tenants class", "/schema", "post", "/v1/schema", { class: "Ticket", multiTenancyConfig: { enabled: true }, properties: [{ name: "s", dataType: ["text"] }] }, 200],
    ["POST /schema/{className}/tenants", "/schema/{className}/tenants", "post", "/v1/schema/Ticket/tenants", [{ name: "t1" }], 200],
    ["GET /schema/{className}/tenants", "/schema/{className}/tenants", "get", "/v1/schema/Ticket/tenants", undefined, 200],
    ["GET /objects/{className}/{id} tenant error (ErrorResponse)", "/objects/{className}/{id}", "get", `/v1/objects/Ticket/${ID}`, undefined, 422]
  ]
  it.each(rows)("%s", async (_name, specPath, method, url, body, status) => {
    const r = await call(method.toUpperCase(), url, body)
    expect(r.status).toBe(status)
    const validate = ajv.compile(responseSchema(specPath, method, status) as object)
    const ok = validate(r.json)
    expect(validate.errors ?? []).toEqual([])
    expect(ok).toBe(true)
  })
})
