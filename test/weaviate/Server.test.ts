/**
 * The test instance's own switches and data model: TLS with a generated CA, API-key rotation,
 * fault injection, request recording, API-key echo, multi-tenancy, references, data types,
 * auto-schema, vector search, default limits, the sample data set and the Effect helpers.
 */
import * as https from "node:https"
import { it as effectIt } from "@effect/vitest"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadSampleData, SAMPLE_COUNTS, sampleId } from "./SampleData.ts"
import { startWeaviate, WeaviateInstance, WeaviateTest, layer, type WeaviateTestInstance } from "./WeaviateServer.ts"

const call = async (w: WeaviateTestInstance, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const r = await fetch(w.url + path, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await r.text()
  return { status: r.status, text, json: (text === "" ? undefined : JSON.parse(text)) as any }
}
const gql = async (w: WeaviateTestInstance, query: string, headers: Record<string, string> = {}) =>
  (await call(w, "POST", "/v1/graphql", { query }, headers)).json

const httpsGet = (url: string, options: https.RequestOptions): Promise<string> =>
  new Promise((resolve) => {
    const req = https.get(url, options, (res) => {
      res.resume()
      res.on("end", () => resolve(`status ${res.statusCode}`))
    })
    req.on("error", (e: NodeJS.ErrnoException) => resolve(`error ${e.code}`))
  })

describe("HTTPS with a CA generated at start", () => {
  let w: WeaviateTestInstance
  beforeAll(async () => {
    w = await startWeaviate({ tls: true })
  })
  afterAll(async () => {
    await w.close()
  })

  it("serves https on 127.0.0.1 and exposes the CA", () => {
    expect(w.url).toBe(`https://127.0.0.1:${w.port}`)
    expect(w.caPem).toMatch(/^-----BEGIN CERTIFICATE-----\n/)
  })
  it("verify CA: the certificate chains to the exposed CA (by IP)", async () => {
    expect(await httpsGet(`${w.url}/v1/meta`, { ca: w.caPem! })).toBe("status 200")
  })
  it("verify identity: the certificate names localhost", async () => {
    expect(await httpsGet(`https://localhost:${w.port}/v1/meta`, { ca: w.caPem!, lookup: (_h, _o, cb) => cb(null, [{ address: "127.0.0.1", family: 4 }]) })).toBe(
      "status 200"
    )
  })
  it("verify identity: another host name is refused", async () => {
    expect(await httpsGet(`${w.url}/v1/meta`, { ca: w.caPem!, servername: "example.com" })).toBe("error ERR_TLS_CERT_ALTNAME_INVALID")
  })
  it("without the CA the certificate is refused as untrusted", async () => {
    expect(await httpsGet(`${w.url}/v1/meta`, {})).toBe("error UNABLE_TO_VERIFY_LEAF_SIGNATURE")
  })
  it("skip-verify accepts it", async () => {
    expect(await httpsGet(`${w.url}/v1/meta`, { rejectUnauthorized: false })).toBe("status 200")
  })
})

describe("API keys", () => {
  it("rotating keys at run time revokes the old key", async () => {
    const w = await startWeaviate({ apiKeys: ["k1"] })
    try {
      expect((await call(w, "GET", "/v1/meta", undefined, { authorization: "Bearer k1" })).status).toBe(200)
      w.setApiKeys(["k2"])
      const old = await call(w, "GET", "/v1/meta", undefined, { authorization: "Bearer k1" })
      expect([old.status, old.json.message]).toEqual([401, "unauthorized: invalid api key"])
      expect((await call(w, "GET", "/v1/meta", undefined, { authorization: "Bearer k2" })).status).toBe(200)
    } finally {
      await w.close()
    }
  })

  it("anonymous access can be kept on next to API keys; a wrong key still fails", async () => {
    const w = await startWeaviate({ apiKeys: ["k1"], anonymousAccess: true })
    try {
      expect((await call(w, "GET", "/v1/meta")).status).toBe(200)
      expect((await call(w, "GET", "/v1/meta", undefined, { authorization: "Bearer nope" })).status).toBe(401)
    } finally {
      await w.close()
    }
  })

  it("echoApiKeyInErrors puts the sent key into error messages", async () => {
    const w = await startWeaviate({ apiKeys: ["s3cret"], echoApiKeyInErrors: true })
    try {
      const wrong = await call(w, "GET", "/v1/meta", undefined, { authorization: "Bearer leaked-key" })
      expect(wrong.json.message).toContain("leaked-key")
      const auth = { authorization: "Bearer s3cret" }
      const rest = await call(w, "GET", "/v1/objects?class=A&offset=99999", undefined, auth)
      expect(rest.json.error[0].message).toContain("s3cret")
      await call(w, "POST", "/v1/objects", { class: "A", properties: { x: "y" } }, auth)
      const graphql = await gql(w, "{ Get { A(limit: 0) { x } } }", auth)
      expect(graphql.errors[0].message).toContain("s3cret")
      expect((await call(w, "GET", "/v1/meta", undefined, auth)).text).not.toContain("s3cret")
    } finally {
      await w.close()
    }
  })
})

describe("faults and request recording", () => {
  let w: WeaviateTestInstance
  beforeAll(async () => {
    w = await startWeaviate()
  })
  afterAll(async () => {
    await w.close()
  })

  it("records method, path, query, headers and body", async () => {
    w.clearRequests()
    await call(w, "POST", "/v1/schema?x=1", { class: "Rec" }, { "x-test": "yes" })
    const r = await w.waitForRequest((q) => q.path === "/v1/schema" && q.completed)
    expect(r).toMatchObject({ method: "POST", query: { x: "1" }, body: JSON.stringify({ class: "Rec" }), aborted: false, completed: true })
    expect(r.headers["x-test"]).toBe("yes")
    w.clearRequests()
    expect(w.requests).toEqual([])
  })

  it("delay holds the response for the given time", async () => {
    w.setFault({ kind: "delay", ms: 150 })
    try {
      const started = performance.now()
      expect((await call(w, "GET", "/v1/meta")).status).toBe(200)
      expect(performance.now() - started).toBeGreaterThanOrEqual(140)
    } finally {
      w.setFault({ kind: "none" })
    }
  })

  it("a client time-out during a delay is recorded as an abort", async () => {
    w.setFault({ kind: "delay", ms: 5_000 }, { pathPrefix: "/v1/schema" })
    try {
      await expect(fetch(`${w.url}/v1/schema?delayed=1`, { signal: AbortSignal.timeout(50) })).rejects.toThrow()
      const r = await w.waitForRequest((q) => q.query["delayed"] === "1" && q.aborted)
      expect(r.completed).toBe(false)
    } finally {
      w.setFault({ kind: "none" })
    }
  })

  it("hang never answers until the client aborts, and only on the given path prefix", async () => {
    w.setFault({ kind: "hang" }, { pathPrefix: "/v1/graphql" })
    try {
      expect((await call(w, "GET", "/v1/meta")).status).toBe(200)
      const controller = new AbortController()
      const pending = fetch(`${w.url}/v1/graphql`, { method: "POST", body: "{}", signal: controller.signal })
      await w.waitForRequest((q) => q.path === "/v1/graphql" && !q.aborted)
      controller.abort()
      await expect(pending).rejects.toThrow()
      const r = await w.waitForRequest((q) => q.path === "/v1/graphql" && q.aborted)
      expect(r).toMatchObject({ aborted: true, completed: false })
    } finally {
      w.setFault({ kind: "none" })
    }
  })

  it("drop destroys the connection without a response", async () => {
    w.setFault({ kind: "drop" }, { pathPrefix: "/v1/nodes" })
    try {
      await expect(fetch(`${w.url}/v1/nodes`)).rejects.toThrow()
      const r = await w.waitForRequest((q) => q.path === "/v1/nodes")
      expect(r.completed).toBe(false)
    } finally {
      w.setFault({ kind: "none" })
    }
  })

  it("truncate sends the status and headers, then cuts the body short", async () => {
    w.setFault({ kind: "truncate" }, { pathPrefix: "/v1/meta" })
    try {
      const r = await fetch(`${w.url}/v1/meta`)
      expect(r.status).toBe(200)
      await expect(r.text()).rejects.toThrow()
      expect((await call(w, "GET", "/v1/schema")).status).toBe(200)
    } finally {
      w.setFault({ kind: "none" })
    }
  })

  it("waitForRequest gives up after its time-out", async () => {
    await expect(w.waitForRequest((q) => q.path === "/never", 20)).rejects.toThrow("no matching request recorded within 20 ms")
  })
})

describe("data model", () => {
  let w: WeaviateTestInstance
  beforeAll(async () => {
    // 100, the default GraphQL limit: below it a Get without a limit fails, as on the real server
    w = await startWeaviate({ maxResults: 100 })
    await call(w, "POST", "/v1/schema", { class: "Author", properties: [{ name: "name", dataType: ["text"] }] })
    await call(w, "POST", "/v1/schema", {
      class: "Note",
      vectorizer: "text2vec-transformers",
      properties: [
        { name: "text", dataType: ["text"] },
        { name: "ints", dataType: ["int[]"] },
        { name: "flags", dataType: ["boolean[]"] },
        { name: "ratio", dataType: ["number"] },
        { name: "ref", dataType: ["uuid"] },
        { name: "when", dataType: ["date"] },
        { name: "meta", dataType: ["object"], nestedProperties: [{ name: "k", dataType: ["text"] }, { name: "n", dataType: ["int"] }] },
        { name: "writtenBy", dataType: ["Author"] }
      ]
    })
    await call(w, "POST", "/v1/schema", { class: "Ticket", multiTenancyConfig: { enabled: true }, properties: [{ name: "s", dataType: ["text"] }] })
    await call(w, "POST", "/v1/schema/Ticket/tenants", [{ name: "acme" }, { name: "globex" }])
  })
  afterAll(async () => {
    await w.close()
  })

  const AUTHOR = "00000000-0000-4000-8000-00000000a001"
  const NOTE = "00000000-0000-4000-8000-00000000b001"

  it("stores arrays, objects, uuid, date, number and references, and returns beacons with hrefs", async () => {
    await call(w, "POST", "/v1/objects", { class: "Author", id: AUTHOR, properties: { name: "Ursula" } })
    const props = {
      text: "cats and dogs",
      ints: [1, 2, 3],
      flags: [true, false],
      ratio: 0.5,
      ref: "0000000A-0000-4000-8000-000000000001",
      when: "2024-05-01T10:00:00+02:00",
      meta: { k: "v", n: 2 },
      writtenBy: [{ beacon: `weaviate://localhost/Author/${AUTHOR}` }]
    }
    expect((await call(w, "POST", "/v1/objects", { class: "Note", id: NOTE, properties: props })).status).toBe(200)
    const got = (await call(w, "GET", `/v1/objects/Note/${NOTE}`)).json
    expect(got.properties).toEqual({
      ...props,
      ref: "0000000a-0000-4000-8000-000000000001",
      writtenBy: [{ beacon: `weaviate://localhost/Author/${AUTHOR}`, href: `/v1/objects/Author/${AUTHOR}` }]
    })
    expect(got.vector).toBeUndefined()
  })

  it("resolves references in GraphQL and filters through them", async () => {
    const r = await gql(
      w,
      `{ Get { Note(where: {path: ["writtenBy", "Author", "name"], operator: Equal, valueText: "ursula"}) { text meta { k n } writtenBy { ... on Author { name _additional { id } } } } } }`
    )
    expect(r.data.Get.Note).toEqual([{ text: "cats and dogs", meta: { k: "v", n: 2 }, writtenBy: [{ name: "Ursula", _additional: { id: AUTHOR } }] }])
  })

  it("nearText uses the text2vec-transformers vectorizer and ranks by distance", async () => {
    await call(w, "POST", "/v1/objects", { class: "Note", properties: { text: "stock market report" } })
    const r = await gql(w, `{ Get { Note(nearText: {concepts: ["dogs and cats"]}) { text _additional { distance certainty } } } }`)
    const hits = r.data.Get.Note
    expect(hits[0].text).toBe("cats and dogs")
    expect(hits[0]._additional.distance).toBeLessThan(hits[1]._additional.distance)
  })

  it("nearVector with an explicit vector and a distance threshold", async () => {
    const obj = (await call(w, "GET", `/v1/objects/Note/${NOTE}?include=vector`)).json
    const r = await gql(w, `{ Get { Note(nearVector: {vector: ${JSON.stringify(obj.vector)}, distance: 0.01}) { _additional { id distance } } } }`)
    expect(r.data.Get.Note).toEqual([{ _additional: { id: NOTE, distance: 0 } }])
  })

  it("multi-tenancy: tenant-scoped writes and reads, and the real errors", async () => {
    expect((await call(w, "POST", "/v1/objects", { class: "Ticket", tenant: "acme", properties: { s: "a" } })).status).toBe(200)
    const missing = await call(w, "POST", "/v1/objects", { class: "Ticket", properties: { s: "a" } })
    expect([missing.status, missing.json.error[0].message]).toEqual([422, "determine shard: class Ticket has multi-tenancy enabled, but request was without tenant"])
    const unknown = await gql(w, `{ Get { Ticket(tenant: "zzz") { s } } }`)
    expect(unknown.errors[0].message).toBe(`explorer: list class: search: object search at index ticket: tenant not found: "zzz"`)
    const acme = await gql(w, `{ Aggregate { Ticket(tenant: "acme") { meta { count } } } }`)
    const globex = await gql(w, `{ Aggregate { Ticket(tenant: "globex") { meta { count } } } }`)
    expect([acme.data.Aggregate.Ticket[0].meta.count, globex.data.Aggregate.Ticket[0].meta.count]).toEqual([1, 0])
    const notMt = await gql(w, `{ Get { Note(tenant: "acme") { text } } }`)
    expect(notMt.errors[0].message).toMatch(/^Unknown argument "tenant" on field "Note" of type "GetObjectsObj"\./)
  })

  it("auto-schema creates unknown classes and infers property types", async () => {
    await call(w, "POST", "/v1/objects", {
      class: "auto",
      properties: { t: "x", d: "2024-01-01T00:00:00Z", n: 1, b: true, arr: ["a"], o: { k: "v" } }
    })
    const cls = (await call(w, "GET", "/v1/schema/Auto")).json
    const types = Object.fromEntries(cls.properties.map((p: { name: string; dataType: Array<string> }) => [p.name, p.dataType[0]]))
    expect(types).toEqual({ t: "text", d: "date", n: "number", b: "boolean", arr: "text[]", o: "object" })
    expect(cls.vectorConfig.default.vectorizer).toEqual({ none: {} })
    expect(cls.properties[0].description).toMatch(/^This property was generated by Weaviate's auto-schema feature on /)
  })

  it("QUERY_MAXIMUM_RESULTS is configurable", async () => {
    const r = await call(w, "GET", "/v1/objects?class=Note&offset=95&limit=10")
    expect(r.json.error[0].message).toContain("provided offset '95' and limit '10' exceeds the configured value for QUERY_MAXIMUM_RESULTS '100'")
  })

  it("reset drops every class", async () => {
    const other = await startWeaviate()
    try {
      await call(other, "POST", "/v1/objects", { class: "X", properties: { a: "b" } })
      other.reset()
      expect((await call(other, "GET", "/v1/schema")).json).toEqual({ classes: [] })
    } finally {
      await other.close()
    }
  })
})

describe("sample data set and default limits", () => {
  let w: WeaviateTestInstance
  beforeAll(async () => {
    w = await startWeaviate()
    await loadSampleData(w)
  })
  afterAll(async () => {
    await w.close()
  })

  it("loads every collection with its row count", async () => {
    const r = await gql(w, `{ Aggregate { Author { meta { count } } Article { meta { count } } Product { meta { count } } Ticket(tenant: "globex") { meta { count } } } }`)
    expect(r.data.Aggregate).toEqual({
      Author: [{ meta: { count: SAMPLE_COUNTS.Author } }],
      Article: [{ meta: { count: SAMPLE_COUNTS.Article } }],
      Product: [{ meta: { count: SAMPLE_COUNTS.Product } }],
      Ticket: [{ meta: { count: SAMPLE_COUNTS.Ticket.globex } }]
    })
  })

  it("REST lists 10 objects by default, in UUID order", async () => {
    const r = (await call(w, "GET", "/v1/objects?class=Article")).json
    expect(r.objects.map((o: { id: string }) => o.id)).toEqual(Array.from({ length: 10 }, (_, i) => sampleId(2, i)))
    expect(r.totalResults).toBe(10)
  })

  it("GraphQL returns 100 objects without limit, and 10 with only an offset", async () => {
    expect((await gql(w, `{ Get { Article { title } } }`)).data.Get.Article).toHaveLength(100)
    expect((await gql(w, `{ Get { Article(offset: 5) { title } } }`)).data.Get.Article).toHaveLength(10)
  })

  it("IsNull works on the collection that indexes null state", async () => {
    const r = await gql(w, `{ Aggregate { Article(where: {path: ["body"], operator: IsNull, valueBoolean: true}) { meta { count } } } }`)
    expect(r.data.Aggregate.Article[0].meta.count).toBe(SAMPLE_COUNTS.Article / 10)
  })
})

describe("Effect helpers", () => {
  effectIt.scoped("WeaviateTest acquires a started instance and closes it with the scope", () =>
    Effect.gen(function* () {
      const w = yield* WeaviateTest()
      const meta = yield* Effect.promise(() => call(w, "GET", "/v1/meta"))
      expect(meta.json.version).toBe("1.39.0")
    })
  )

  effectIt.scoped("layer provides the instance as WeaviateInstance", () =>
    Effect.gen(function* () {
      const w = yield* WeaviateInstance
      const live = yield* Effect.promise(() => call(w, "GET", "/v1/.well-known/live"))
      expect(live.status).toBe(200)
    }).pipe(Effect.provide(layer()))
  )
})
