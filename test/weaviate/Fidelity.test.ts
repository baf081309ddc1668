/**
 * Differential fidelity: the same corpus of requests goes, in the same order, to the real Weaviate
 * and to the compatible instance, and each answer must agree in status code, error body shape and
 * message (query results: in the ids they hold). The corpus covers every route and error the driver
 * uses, every filter operator, paging past QUERY_MAXIMUM_RESULTS, auth failures, class-scoped edits
 * and GraphQL errors. What the compatible instance deliberately does not model is compared less
 * strictly, each with its reason (`loose` below); docs/testing.md ("Differential fidelity") lists them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startRealWeaviate } from "./RealWeaviate.ts"
import { currentTarget } from "./Target.ts"
import { startWeaviate, type WeaviateTestInstance } from "./WeaviateServer.ts"

const MAX_RESULTS = 100
const KEY = "fidelity-key"
/** the keyed servers' QUERY_MAXIMUM_RESULTS: below the default GraphQL limit of 100 */
const SMALL_MAX_RESULTS = 25

interface Server {
  readonly url: string
  readonly close: () => Promise<unknown>
}

interface Step {
  readonly name: string
  readonly method: string
  readonly path: string
  readonly body?: unknown
  readonly headers?: Record<string, string>
  /** the server with API keys (auth steps) */
  readonly keyed?: boolean
  /**
   * How much must agree: `exact` status, body shape and messages (the default); `ids` status and the
   * ids of the objects a GraphQL Get returns (sorted unless the query sorts); `shape` status and body
   * shape (the real server's "Did you mean" suggestions come in no fixed order); `status` the status
   * only, with the reason the rest is not modelled.
   */
  readonly compare?: "exact" | "ids" | "shape" | { readonly status: string }
}

const id = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`
const MISSING = id(0xfff)

const FID_SCHEMA = {
  class: "Fid",
  vectorizer: "none",
  invertedIndexConfig: { indexNullState: true, indexPropertyLength: true, indexTimestamps: true },
  properties: [
    { name: "title", dataType: ["text"] },
    { name: "sku", dataType: ["text"], tokenization: "field" },
    { name: "n", dataType: ["int"] },
    { name: "price", dataType: ["number"] },
    { name: "published", dataType: ["date"] },
    { name: "flag", dataType: ["boolean"] },
    { name: "tags", dataType: ["text[]"] },
    { name: "nums", dataType: ["int[]"] },
    { name: "loc", dataType: ["geoCoordinates"] }
  ]
}
const words = ["alpha", "beta", "gamma", "delta", "epsilon"]
const FID_OBJECTS = Array.from({ length: 40 }, (_, i) => {
  const properties: Record<string, unknown> = {
    title: `${words[i % 5]} ${words[(i * 3) % 5]} item${i}`,
    sku: `SKU-${String(i).padStart(3, "0")}`,
    n: i,
    price: i * 1.5,
    published: `2024-01-${String(1 + (i % 28)).padStart(2, "0")}T00:00:00Z`,
    flag: i % 3 === 0,
    tags: i % 4 === 0 ? [] : [words[i % 5], words[(i + 1) % 5]],
    nums: [i, i + 1],
    loc: { latitude: 50 + i / 10, longitude: 10 + i / 10 }
  }
  if (i % 7 === 0) delete properties["title"] // nulls for IsNull
  return { class: "Fid", id: id(i + 1), properties, vector: [i / 40, 1 - i / 40, 0.5] }
})

const gql = (name: string, query: string, compare: Step["compare"] = "exact"): Step => ({
  name,
  method: "POST",
  path: "/v1/graphql",
  body: { query },
  compare
})
const where = (clause: string) => `{ Get { Fid(where: ${clause}, limit: 100) { _additional { id } } } }`
const filter = (name: string, clause: string) => gql(`filter ${name}`, where(clause), "ids")

const corpus: ReadonlyArray<Step> = [
  // ----- schema -----
  { name: "create a collection", method: "POST", path: "/v1/schema", body: FID_SCHEMA, compare: { status: "the echoed class carries server defaults (sharding, index config) the instance does not model" } },
  { name: "create a collection without indexNullState", method: "POST", path: "/v1/schema", body: { class: "NoNull", vectorizer: "none", properties: [{ name: "title", dataType: ["text"] }] }, compare: { status: "server defaults in the echo" } },
  { name: "create a vectorized collection", method: "POST", path: "/v1/schema", body: { class: "Vec", vectorizer: "text2vec-transformers", properties: [{ name: "body", dataType: ["text"] }] }, compare: { status: "server defaults in the echo" } },
  { name: "create a multi-tenant collection", method: "POST", path: "/v1/schema", body: { class: "Mt", multiTenancyConfig: { enabled: true }, properties: [{ name: "s", dataType: ["text"] }] }, compare: { status: "server defaults in the echo" } },
  { name: "create a collection that exists", method: "POST", path: "/v1/schema", body: { class: "Fid" } },
  { name: "create a collection with an unknown data type", method: "POST", path: "/v1/schema", body: { class: "Bad", properties: [{ name: "x", dataType: ["strin"] }] } },
  { name: "create a collection with an unknown vectorizer", method: "POST", path: "/v1/schema", body: { class: "Bad2", vectorizer: "text2vec-nope" } },
  { name: "read an unknown collection", method: "GET", path: "/v1/schema/Nope" },
  { name: "add tenants", method: "POST", path: "/v1/schema/Mt/tenants", body: [{ name: "t1" }, { name: "t2" }] },
  { name: "tenants of a collection without multi-tenancy", method: "GET", path: "/v1/schema/Fid/tenants" },
  { name: "tenants of an unknown collection", method: "GET", path: "/v1/schema/Nope/tenants" },
  // ----- writes -----
  { name: "batch import", method: "POST", path: "/v1/batch/objects", body: { objects: FID_OBJECTS }, compare: { status: "each object is echoed with server timestamps" } },
  { name: "batch with a bad object among good ones", method: "POST", path: "/v1/batch/objects", body: { objects: [{ class: "Fid", id: id(500), properties: { n: "not a number" } }] } },
  { name: "batch into an unknown collection", method: "POST", path: "/v1/batch/objects", body: { objects: [{ class: "Nope", id: id(501), properties: {} }] } },
  { name: "vectorized insert", method: "POST", path: "/v1/objects", body: { class: "Vec", id: id(600), properties: { body: "rivers and mountains" } }, compare: { status: "the echo carries timestamps and the vector" } },
  { name: "vectorized insert 2", method: "POST", path: "/v1/objects", body: { class: "Vec", id: id(601), properties: { body: "oceans and deserts" } }, compare: { status: "the echo carries timestamps and the vector" } },
  { name: "insert without a class", method: "POST", path: "/v1/objects", body: { properties: { n: 1 } } },
  { name: "insert with an unknown property", method: "POST", path: "/v1/objects", body: { class: "Fid", id: id(700), properties: { nope: 1 } }, compare: { status: "auto-schema adds the property on a real server; the instance refuses (AUTOSCHEMA is not modelled)" } },
  { name: "insert with a wrong type", method: "POST", path: "/v1/objects", body: { class: "Fid", id: id(701), properties: { n: "x" } } },
  { name: "insert with an existing id", method: "POST", path: "/v1/objects", body: { class: "Fid", id: id(1), properties: { n: 1 } } },
  { name: "insert into a tenant collection without a tenant", method: "POST", path: "/v1/objects", body: { class: "Mt", id: id(800), properties: { s: "x" } } },
  { name: "insert into an unknown tenant", method: "POST", path: "/v1/objects", body: { class: "Mt", id: id(801), tenant: "nope", properties: { s: "x" } } },
  { name: "patch a row (class-scoped)", method: "PATCH", path: `/v1/objects/Fid/${id(2)}`, body: { class: "Fid", properties: { n: 1002 } } },
  { name: "patch a missing row", method: "PATCH", path: `/v1/objects/Fid/${MISSING}`, body: { class: "Fid", properties: { n: 1 } } },
  { name: "patch with a wrong type", method: "PATCH", path: `/v1/objects/Fid/${id(3)}`, body: { class: "Fid", properties: { n: "x" } } },
  { name: "patch with another class in the body", method: "PATCH", path: `/v1/objects/Fid/${id(3)}`, body: { class: "NoNull", properties: { title: "x" } } },
  { name: "patch in an unknown collection", method: "PATCH", path: `/v1/objects/Nope/${id(3)}`, body: { class: "Nope", properties: {} } },
  { name: "replace a row (class-scoped)", method: "PUT", path: `/v1/objects/Fid/${id(4)}`, body: { class: "Fid", id: id(4), properties: { n: 1004, title: "replaced" } }, compare: { status: "the echo carries timestamps" } },
  { name: "replace with a mismatching id", method: "PUT", path: `/v1/objects/Fid/${id(4)}`, body: { class: "Fid", id: id(5), properties: { n: 1 } } },
  { name: "delete a row (class-scoped)", method: "DELETE", path: `/v1/objects/Fid/${id(6)}` },
  { name: "delete it again", method: "DELETE", path: `/v1/objects/Fid/${id(6)}` },
  { name: "delete in an unknown collection", method: "DELETE", path: `/v1/objects/Nope/${id(6)}` },
  // ----- reads -----
  { name: "read a missing row", method: "GET", path: `/v1/objects/Fid/${MISSING}` },
  { name: "read a row with a malformed uuid", method: "GET", path: "/v1/objects/Fid/not-a-uuid" },
  { name: "list past QUERY_MAXIMUM_RESULTS", method: "GET", path: `/v1/objects?class=Fid&offset=95&limit=10` },
  { name: "list with a limit over QUERY_MAXIMUM_RESULTS", method: "GET", path: `/v1/objects?class=Fid&limit=${MAX_RESULTS + 1}` },
  { name: "list a class auto-schema made", method: "GET", path: "/v1/objects?class=Nope", compare: { status: "the real server adds `vectorWeights: null` to every listed object, which its own openapi.json does not allow; the instance follows openapi.json" } },
  // ----- filters: every operator the driver sends -----
  filter("Equal int", `{ path: ["n"], operator: Equal, valueInt: 7 }`),
  filter("NotEqual int", `{ path: ["n"], operator: NotEqual, valueInt: 7 }`),
  filter("GreaterThan number", `{ path: ["price"], operator: GreaterThan, valueNumber: 30 }`),
  filter("GreaterThanEqual int", `{ path: ["n"], operator: GreaterThanEqual, valueInt: 30 }`),
  filter("LessThan date", `{ path: ["published"], operator: LessThan, valueDate: "2024-01-05T00:00:00Z" }`),
  filter("LessThanEqual int", `{ path: ["n"], operator: LessThanEqual, valueInt: 3 }`),
  filter("Equal boolean", `{ path: ["flag"], operator: Equal, valueBoolean: true }`),
  filter("Equal text (word tokens)", `{ path: ["title"], operator: Equal, valueText: "alpha" }`),
  filter("Equal text (field tokenization)", `{ path: ["sku"], operator: Equal, valueText: "SKU-007" }`),
  filter("Like prefix", `{ path: ["title"], operator: Like, valueText: "alp*" }`),
  filter("Like suffix", `{ path: ["sku"], operator: Like, valueText: "*07" }`),
  filter("Like infix", `{ path: ["title"], operator: Like, valueText: "*amm*" }`),
  filter("Like on id", `{ path: ["id"], operator: Like, valueText: "00000000-0000-4000-8000-00000000000*" }`),
  filter("Like on id, infix", `{ path: ["id"], operator: Like, valueText: "*00000000001*" }`),
  filter("Like on an int", `{ path: ["n"], operator: Like, valueText: "1*" }`),
  filter("IsNull true", `{ path: ["title"], operator: IsNull, valueBoolean: true }`),
  filter("IsNull false", `{ path: ["title"], operator: IsNull, valueBoolean: false }`),
  gql("filter IsNull without indexNullState", `{ Get { NoNull(where: { path: ["title"], operator: IsNull, valueBoolean: true }) { title } } }`),
  filter("ContainsAny", `{ path: ["tags"], operator: ContainsAny, valueText: ["alpha", "gamma"] }`),
  filter("ContainsAll", `{ path: ["tags"], operator: ContainsAll, valueText: ["alpha", "beta"] }`),
  filter("ContainsNone", `{ path: ["tags"], operator: ContainsNone, valueText: ["alpha"] }`),
  filter("ContainsAny int[]", `{ path: ["nums"], operator: ContainsAny, valueInt: [3, 30] }`),
  filter("Equal on id", `{ path: ["id"], operator: Equal, valueText: "${id(9)}" }`),
  filter("Equal on _id", `{ path: ["_id"], operator: Equal, valueText: "${id(9)}" }`),
  filter("WithinGeoRange", `{ path: ["loc"], operator: WithinGeoRange, valueGeoRange: { geoCoordinates: { latitude: 50, longitude: 10 }, distance: { max: 20000 } } }`),
  filter("property length", `{ path: ["len(title)"], operator: GreaterThan, valueInt: 19 }`),
  {
    ...filter("creation time as milliseconds", `{ path: ["_creationTimeUnix"], operator: GreaterThan, valueText: "946684800000" }`),
    compare: { status: "Weaviate 1.39 compares a timestamp given as valueText as text (\"1795…\" < \"9466…\" matches nothing); the instance compares numbers. The driver never filters on timestamps" }
  },
  filter("And", `{ operator: And, operands: [{ path: ["n"], operator: GreaterThan, valueInt: 5 }, { path: ["n"], operator: LessThan, valueInt: 9 }] }`),
  filter("Or", `{ operator: Or, operands: [{ path: ["n"], operator: Equal, valueInt: 5 }, { path: ["n"], operator: Equal, valueInt: 9 }] }`),
  filter("Not", `{ operator: Not, operands: [{ path: ["n"], operator: GreaterThan, valueInt: 2 }] }`),
  filter("wrong value type", `{ path: ["n"], operator: Equal, valueText: "x" }`),
  filter("unknown property", `{ path: ["nope"], operator: Equal, valueInt: 1 }`),
  // ----- GraphQL: paging, sorting, search, errors -----
  gql("sorted page", `{ Get { Fid(limit: 5, offset: 3, sort: [{ path: ["n"], order: desc }]) { n _additional { id } } } }`, "ids"),
  gql("Get past QUERY_MAXIMUM_RESULTS", `{ Get { Fid(limit: 10, offset: 95) { n } } }`),
  gql("bm25 past QUERY_MAXIMUM_RESULTS", `{ Get { Fid(bm25: { query: "gamma" }, limit: 10, offset: 95) { n } } }`),
  gql("hybrid past QUERY_MAXIMUM_RESULTS", `{ Get { Vec(hybrid: { query: "oceans" }, limit: 10, offset: 95) { body } } }`),
  gql("Get with a limit over QUERY_MAXIMUM_RESULTS", `{ Get { Fid(limit: ${MAX_RESULTS + 1}) { n } } }`),
  gql("cursor paging", `{ Get { Fid(limit: 5, after: "${id(10)}") { _additional { id } } } }`, "ids"),
  gql("cursor with a filter", `{ Get { Fid(limit: 5, after: "${id(10)}", where: { path: ["n"], operator: Equal, valueInt: 1 }) { n } } }`),
  gql("count", `{ Aggregate { Fid { meta { count } } } }`),
  gql("count with a filter", `{ Aggregate { Fid(where: { path: ["n"], operator: LessThan, valueInt: 10 }) { meta { count } } } }`),
  gql("count of a tenant collection without a tenant", `{ Aggregate { Mt { meta { count } } } }`),
  gql("nearVector", `{ Get { Fid(nearVector: { vector: [0, 1, 0.5] }, limit: 3) { _additional { id } } } }`, "ids"),
  gql("nearVector with the wrong dimensions", `{ Get { Fid(nearVector: { vector: [0, 1] }, limit: 3) { n } } }`),
  gql("nearText on a vectorized collection", `{ Get { Vec(nearText: { concepts: ["rivers mountains"] }, limit: 2) { _additional { id } } } }`, "ids"),
  gql("nearText without a vectorizer", `{ Get { Fid(nearText: { concepts: ["alpha"] }) { n } } }`, "shape"),
  gql("bm25", `{ Get { Fid(bm25: { query: "gamma" }, limit: 40) { _additional { id } } } }`, "ids"),
  gql("hybrid", `{ Get { Vec(hybrid: { query: "oceans" }, limit: 2) { _additional { id } } } }`, "ids"),
  gql("syntax error", `{ Get { Fid(limit: ) { n } } }`),
  gql("unknown class", `{ Get { Nope { n } } }`),
  gql("unknown field", `{ Get { Fid { nope } } }`),
  gql("tenant query without a tenant", `{ Get { Mt { s } } }`),
  { name: "GraphQL without a query", method: "POST", path: "/v1/graphql", body: {} },
  { name: "GraphQL with a body that is not JSON", method: "POST", path: "/v1/graphql", body: "{", headers: { "content-type": "application/json" } },
  // ----- meta and nodes -----
  { name: "meta", method: "GET", path: "/v1/meta", compare: { status: "the real module list (every generative module) and hostname are not modelled" } },
  { name: "nodes", method: "GET", path: "/v1/nodes", compare: { status: "shard statistics, git hash and node name are not modelled" } },
  // ----- auth (a server with API keys, anonymous access off) -----
  { name: "no key", method: "GET", path: "/v1/schema", keyed: true },
  { name: "a wrong key", method: "GET", path: "/v1/schema", keyed: true, headers: { authorization: "Bearer wrong" } },
  { name: "a malformed authorization header", method: "GET", path: "/v1/schema", keyed: true, headers: { authorization: "Basic abc" } },
  { name: "GraphQL without a key", method: "POST", path: "/v1/graphql", keyed: true, body: { query: "{ Get { X { y } } }" } },
  { name: "the right key", method: "GET", path: "/v1/schema", keyed: true, headers: { authorization: `Bearer ${KEY}` } },
  { name: "readiness needs no key", method: "GET", path: "/v1/.well-known/ready", keyed: true },
  { name: "meta without a key", method: "GET", path: "/v1/meta", keyed: true },
  // ----- default limits over a small QUERY_MAXIMUM_RESULTS (25, on the keyed servers) -----
  { name: "create a collection (keyed)", method: "POST", path: "/v1/schema", keyed: true, headers: { authorization: `Bearer ${KEY}` }, body: { class: "Small", vectorizer: "none" }, compare: { status: "server defaults in the echo" } },
  { name: "Get without a limit uses the default 100, over QUERY_MAXIMUM_RESULTS", method: "POST", path: "/v1/graphql", keyed: true, headers: { authorization: `Bearer ${KEY}` }, body: { query: "{ Get { Small { _additional { id } } } }" } },
  { name: "the REST list without a limit uses the default 10", method: "GET", path: "/v1/objects?class=Small", keyed: true, headers: { authorization: `Bearer ${KEY}` }, compare: "shape" }
]

interface Answer {
  readonly status: number
  readonly text: string
}

const send = async (server: Server, step: Step): Promise<Answer> => {
  const headers: Record<string, string> = { ...step.headers }
  let body: string | undefined
  if (step.body !== undefined) {
    body = typeof step.body === "string" ? step.body : JSON.stringify(step.body)
    headers["content-type"] ??= "application/json"
  }
  const r = await fetch(`${server.url}${step.path}`, { method: step.method, headers, ...(body !== undefined ? { body } : {}) })
  return { status: r.status, text: await r.text() }
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** The skeleton of a body: object keys and value types, arrays by their first element. */
const shape = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.length === 0 ? [] : [shape(v[0])]
  if (v !== null && typeof v === "object") {
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, shape((v as Record<string, unknown>)[k])]))
  }
  return v === null ? "null" : typeof v
}

/** Every `message` in a body, in order (error bodies, GraphQL errors, batch results); shard names are random. */
const messages = (v: unknown, out: Array<string> = []): Array<string> => {
  if (Array.isArray(v)) for (const x of v) messages(x, out)
  else if (v !== null && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) {
      if (k === "message" && typeof x === "string") out.push(x.replace(/\b([a-z0-9]+)_[A-Za-z0-9]{12}\b/g, "$1_<shard>"))
      else messages(x, out)
    }
  }
  return out
}

/** A GraphQL Get's object ids (sorted unless the query sorts or ranks) and its errors' messages. */
const ids = (body: unknown, ordered: boolean) => {
  const get = (body as { data?: { Get?: Record<string, Array<{ _additional?: { id?: string } }>> } }).data?.Get
  const rows = get === undefined ? null : Object.values(get)[0]?.map((r) => r._additional?.id) ?? null
  return { rows: rows === null || ordered ? rows : [...rows].sort(), errors: messages((body as { errors?: unknown }).errors) }
}

/** Ranked or sorted queries keep their order; the rest are sets. */
const ordered = (step: Step) => /sort:|nearVector|nearText|hybrid|bm25|after:/.test(JSON.stringify(step.body ?? ""))

const realAvailable = currentTarget().kind === "real"

describe.skipIf(!realAvailable)(`the compatible instance answers like the real Weaviate ${currentTarget().version}`, () => {
  let real: Server
  let realKeyed: Server
  let compatible: WeaviateTestInstance
  let compatibleKeyed: WeaviateTestInstance
  beforeAll(async () => {
    const [r, rk] = await Promise.all([
      startRealWeaviate({ maxResults: MAX_RESULTS }),
      startRealWeaviate({ apiKeys: [KEY], maxResults: SMALL_MAX_RESULTS })
    ])
    real = { url: r.url, close: r.stop }
    realKeyed = { url: rk.url, close: rk.stop }
    compatible = await startWeaviate({ maxResults: MAX_RESULTS })
    compatibleKeyed = await startWeaviate({ apiKeys: [KEY], maxResults: SMALL_MAX_RESULTS })
  }, 120_000)
  afterAll(async () => {
    await Promise.all([real?.close(), realKeyed?.close(), compatible?.close(), compatibleKeyed?.close()])
  })

  it.each(corpus.map((step) => [step.name, step] as const))("%s", async (_, step) => {
    const [a, b] = step.keyed === true
      ? await Promise.all([send(realKeyed, step), send(compatibleKeyed, step)])
      : [await send(real, step), await send(compatible, step)]
    const context = `${step.method} ${step.path}\nreal:       ${a.text.slice(0, 600)}\ncompatible: ${b.text.slice(0, 600)}`
    expect(b.status, context).toBe(a.status)
    const compare = step.compare ?? "exact"
    if (typeof compare === "object") return
    const [ja, jb] = [parse(a.text), parse(b.text)]
    if (compare === "ids") {
      expect(ids(jb, ordered(step)), context).toEqual(ids(ja, ordered(step)))
      return
    }
    expect(shape(jb), context).toEqual(shape(ja))
    if (compare === "shape") return
    expect(messages(jb), context).toEqual(messages(ja))
  })
})
