import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as TestServices from "effect/TestServices"
import { APPROVE_STATEMENT } from "../../../src/Approval/ApprovalPayload.ts"
import { ConnectionStore } from "../../../src/Driver/ConnectionStore.ts"
import { Driver } from "../../../src/Driver/Driver.ts"
import { type Outcome, type ResourceContents, Resources } from "../../../src/Mcp/Catalogue.ts"
import type { Principal } from "../../../src/Auth/Principal.ts"
import { untilSleepingUntil } from "../../support/Listen.ts"
import { SAMPLE_SCHEMA, sampleId } from "../../weaviate/SampleData.ts"
import { startWeaviate } from "../../weaviate/WeaviateServer.ts"
import { as, type Catalogue, codeOf, requestContext, startCatalogue, token } from "./support.ts"

let cat: Catalogue
beforeAll(async () => {
  cat = await startCatalogue()
})
afterAll(async () => {
  await cat.dispose()
})

const run = <A, E>(principal: Principal, effect: Effect.Effect<A, E, any>, context = requestContext()) =>
  cat.runtime.runPromise(effect.pipe(as(principal, context)) as Effect.Effect<A, E, never>)
const list = (principal: Principal) => run(principal, Effect.flatMap(Resources, (r) => r.list))
const readOutcome = (principal: Principal, uri: string, context = requestContext()) =>
  run(principal, Effect.flatMap(Resources, (r) => r.read(uri)), context)
const read = async (principal: Principal, uri: string) => {
  const outcome = await readOutcome(principal, uri)
  if (outcome._tag !== "Complete") throw new Error(`expected complete, got ${outcome._tag}`)
  return outcome.value
}
const readJson = async (principal: Principal, uri: string) => {
  const value = await read(principal, uri)
  return { ...value, json: JSON.parse(value.contents[0]!.text as string) as any }
}
const readCode = (principal: Principal, uri: string) =>
  codeOf(run(principal, Effect.either(Effect.flatMap(Resources, (r) => r.read(uri)))))

const conn = (id: string) => `weaviate://connections/${id}`
// sorted by name, as the driver lists them (Weaviate itself answers in no fixed order)
const sampleTables = SAMPLE_SCHEMA.map((c) => c["class"] as string).sort()

describe("resources/list", () => {
  it("holds weaviate://connections, then meta, schema and one entry per table for every visible connection", async () => {
    const uris = (await list(token())).map((r) => r.uri)
    assert.strictEqual(uris[0], "weaviate://connections")
    for (const id of [cat.ids.local, cat.ids.readonly]) {
      assert.include(uris, `${conn(id)}/meta`)
      assert.include(uris, `${conn(id)}/schema`)
      for (const table of sampleTables) assert.include(uris, `${conn(id)}/tables/${table}`)
    }
  })
  it("a blocked connection is invisible in the list", async () => {
    const uris = (await list(token())).map((r) => r.uri)
    assert.isFalse(uris.some((u) => u.includes(cat.ids.blocked)))
  })
  it("a connection that is down contributes its meta and schema entries but no tables", async () => {
    const uris = (await list(token())).map((r) => r.uri)
    assert.deepStrictEqual(uris.filter((u) => u.includes(cat.ids.down)), [`${conn(cat.ids.down)}/meta`, `${conn(cat.ids.down)}/schema`])
  })
  it("an allowlisted token sees only its connections", async () => {
    const uris = (await list(token({ connections: [cat.ids.readonly] }))).map((r) => r.uri)
    assert.isTrue(uris.slice(1).every((u) => u.startsWith(conn(cat.ids.readonly))))
    assert.include(uris, `${conn(cat.ids.readonly)}/tables/Article`)
  })
  it("every entry is a JSON resource with a name and a title", async () => {
    for (const entry of await list(token())) {
      assert.strictEqual(entry.mimeType, "application/json")
      assert.isTrue(entry.name.length > 0 && (entry.title ?? "").length > 0)
    }
  })
})

describe("resources/templates/list", () => {
  it("the four templates of the contract and the row of a tenant, as RFC 6570 URI templates", async () => {
    const templates = await cat.runtime.runPromise(Effect.map(Resources, (r) => r.templates.map((t) => t.uriTemplate)))
    assert.deepStrictEqual(templates, [
      "weaviate://connections/{connection_id}/meta",
      "weaviate://connections/{connection_id}/schema",
      "weaviate://connections/{connection_id}/tables/{table}",
      "weaviate://connections/{connection_id}/tables/{table}/rows/{uuid}",
      "weaviate://connections/{connection_id}/tables/{table}/tenants/{tenant}/rows/{uuid}"
    ])
  })
})

describe("resources/read: every URI shape with its TTL", () => {
  it("weaviate://connections: 30000 ms, the visible connections without keys", async () => {
    const { ttlMs, json, contents } = await readJson(token(), "weaviate://connections")
    assert.strictEqual(ttlMs, 30_000)
    assert.strictEqual(contents[0]!.mimeType, "application/json")
    assert.strictEqual(contents[0]!.uri, "weaviate://connections")
    const names = json.connections.map((c: { name: string }) => c.name)
    assert.deepStrictEqual(names, ["local", "readonly", "down"])
    assert.strictEqual(json.connections[1].permission, "read")
    assert.notProperty(json.connections[0], "apiKey")
  })
  it("…/meta: 300000 ms, the health of the server", async () => {
    const { ttlMs, json } = await readJson(token(), `${conn(cat.ids.local)}/meta`)
    assert.strictEqual(ttlMs, 300_000)
    assert.isTrue(json.reachable)
    assert.isString(json.health.version)
    assert.strictEqual(json.connection.id, cat.ids.local)
  })
  it("…/meta of a connection that is down says it is unreachable", async () => {
    const { json } = await readJson(token(), `${conn(cat.ids.down)}/meta`)
    assert.isFalse(json.reachable)
    assert.match(json.error, /^Connection failed/)
  })
  it("…/schema: 300000 ms, every collection with its properties", async () => {
    const { ttlMs, json } = await readJson(token(), `${conn(cat.ids.local)}/schema`)
    assert.strictEqual(ttlMs, 300_000)
    assert.deepStrictEqual(json.collections.map((c: { name: string }) => c.name), sampleTables)
    const article = json.collections.find((c: { name: string }) => c.name === "Article")
    assert.include(article.properties.map((p: { name: string }) => p.name), "wordCount")
    assert.strictEqual(article.vectorizer, "text2vec-transformers")
    assert.strictEqual(article.uri, `${conn(cat.ids.local)}/tables/Article`)
  })
  it("…/schema of a connection that is down is an internal error (-32603)", async () => {
    assert.strictEqual(await readCode(token(), `${conn(cat.ids.down)}/schema`), -32603)
  })
  it("…/tables/{table}: 60000 ms, columns with operators, row count and sample rows", async () => {
    const { ttlMs, json } = await readJson(token(), `${conn(cat.ids.local)}/tables/Product`)
    assert.strictEqual(ttlMs, 60_000)
    assert.deepStrictEqual(json.columns.map((c: { name: string }) => c.name), ["uuid", "name", "sku", "category", "price", "stock", "colors", "location", "vector"])
    const price = json.columns.find((c: { name: string }) => c.name === "price")
    assert.include(price.operators, "greater than")
    assert.strictEqual(json.rowCount, 75)
    assert.strictEqual(json.sampleRows.length, 10)
    assert.notProperty(json.sampleRows[0], "vector")
  })
  it("…/tables/{table} of a multi-tenant collection has no rows, with a note", async () => {
    const { json } = await readJson(token(), `${conn(cat.ids.local)}/tables/Ticket`)
    assert.isTrue(json.multiTenancy)
    assert.notProperty(json, "rowCount")
    assert.match(json.note, /per tenant/)
  })
  it("…/rows/{uuid}: 5000 ms, the object with its vector", async () => {
    const uuid = sampleId(3, 1)
    const { ttlMs, json } = await readJson(token(), `${conn(cat.ids.local)}/tables/Product/rows/${uuid}`)
    assert.strictEqual(ttlMs, 5_000)
    assert.strictEqual(json.row.uuid, uuid)
    assert.strictEqual(json.row.sku, "SKU-000001")
    assert.strictEqual(json.row.vector.length, 8)
  })
  it("percent-encoded segments are decoded: tables/Pro%64uct and an upper-case uuid", async () => {
    const uuid = sampleId(3, 2)
    const { json } = await readJson(token(), `${conn(cat.ids.local)}/tables/Pro%64uct/rows/${uuid.toUpperCase()}`)
    assert.strictEqual(json.table, "Product")
    assert.strictEqual(json.row.uuid, uuid)
  })
  it("a readOnly connection can be read", async () => {
    const { json } = await readJson(token(), `${conn(cat.ids.readonly)}/tables/Author`)
    assert.strictEqual(json.name, "Author")
  })
})

describe("resources/read: unknown URIs are -32602", () => {
  const cases: ReadonlyArray<readonly [string, () => string]> = [
    ["another scheme", () => `http://connections/${cat.ids.local}/meta`],
    ["another authority", () => `weaviate://connection/${cat.ids.local}/meta`],
    ["a bad shape", () => `${conn(cat.ids.local)}/nothing`],
    ["a trailing slash", () => `${conn(cat.ids.local)}/meta/`],
    ["an extra segment", () => `${conn(cat.ids.local)}/tables/Product/rows`],
    ["a query", () => `${conn(cat.ids.local)}/schema?x=1`],
    ["a bad percent escape", () => `${conn(cat.ids.local)}/tables/Pro%zzuct`],
    ["an unknown connection", () => `${conn("nope")}/schema`],
    ["a connection named instead of its id", () => `${conn("local")}/schema`],
    ["an unknown table", () => `${conn(cat.ids.local)}/tables/Nope`],
    ["an unknown row", () => `${conn(cat.ids.local)}/tables/Product/rows/${sampleId(3, 99_999)}`],
    ["a malformed uuid", () => `${conn(cat.ids.local)}/tables/Product/rows/not-a-uuid`],
    ["a row of a multi-tenant table (no tenant in the URI)", () => `${conn(cat.ids.local)}/tables/Ticket/rows/${sampleId(4, 1)}`]
  ]
  for (const [name, uri] of cases) {
    it(name, async () => {
      assert.strictEqual(await readCode(token(), uri()), -32602)
    })
  }
})

describe("resources/read honours allowlists and AI policy", () => {
  it("a blocked connection is -33007", async () => {
    assert.strictEqual(await readCode(token(), `${conn(cat.ids.blocked)}/schema`), -33007)
    assert.strictEqual(await readCode(token(), `${conn(cat.ids.blocked)}/tables/Article`), -33007)
  })
  it("a connection outside the token's allowlist is -33007", async () => {
    assert.strictEqual(await readCode(token({ connections: [cat.ids.readonly] }), `${conn(cat.ids.local)}/meta`), -33007)
  })
  it("weaviate://connections lists only the allowlisted connections", async () => {
    const { json } = await readJson(token({ connections: [cat.ids.readonly, cat.ids.blocked] }), "weaviate://connections")
    assert.deepStrictEqual(json.connections.map((c: { id: string }) => c.id), [cat.ids.readonly])
  })
})

describe("resources/read: first access", () => {
  it("the first read of a connection by a token with an elicitation client answers input_required; the accepted repeat completes", async () => {
    const principal = token()
    const uri = `${conn(cat.ids.local)}/schema`
    const first = await readOutcome(principal, uri, requestContext({ elicitation: true }))
    assert.strictEqual(first._tag, "InputRequired")
    if (first._tag !== "InputRequired") return
    assert.property(first.inputRequests, APPROVE_STATEMENT)
    const repeat: Outcome<ResourceContents> = await readOutcome(principal, uri, requestContext({
      elicitation: true,
      requestState: first.requestState,
      inputResponses: { [APPROVE_STATEMENT]: { action: "accept", content: { approved: true } } }
    }))
    assert.strictEqual(repeat._tag, "Complete")
    // Remembered: the next read (any URI of that connection) completes at once.
    assert.strictEqual((await readOutcome(principal, `${conn(cat.ids.local)}/meta`, requestContext({ elicitation: true })))._tag, "Complete")
  })
  it("without elicitation the user is asked once on the local dialog", async () => {
    const principal = token()
    const before = cat.asked.length
    await read(principal, `${conn(cat.ids.local)}/meta`)
    await read(principal, `${conn(cat.ids.local)}/schema`)
    assert.strictEqual(cat.asked.length, before + 1)
    assert.strictEqual(cat.asked[before]!.connectionName, "local")
  })
  it("a legacy client is asked on the dialog even when it declared elicitation (input_required is modern only)", async () => {
    const before = cat.asked.length
    const outcome = await readOutcome(token(), `${conn(cat.ids.local)}/meta`, requestContext({ era: "legacy", elicitation: true }))
    assert.strictEqual(outcome._tag, "Complete")
    assert.strictEqual(cat.asked.length, before + 1)
  })
  it("weaviate://connections touches no connection: no first access", async () => {
    const outcome = await readOutcome(token(), "weaviate://connections", requestContext({ elicitation: true }))
    assert.strictEqual(outcome._tag, "Complete")
  })
})

// ===== Notifications (TestClock) =====

/** Joins a fiber running on the TestClock, bounded in real time: a missed notification fails the test. */
const joinWithin = <A, E>(fiber: Fiber.Fiber<A, E>) =>
  TestServices.provideLive(Effect.timeoutFail(Fiber.join(fiber), { duration: "5 seconds", onTimeout: () => new Error("no notification") }))

describe("listChanged and watch", () => {
  it.scoped("listChanged: a connection added through ConnectionStore once the watch has started is reported at once", () =>
    Effect.gen(function*() {
      const resources = yield* Resources
      const store = yield* ConnectionStore
      const changes = yield* resources.listChanged
      // One add, no clock adjustment: the save itself is the signal, not the 1 s file check.
      yield* store.add({ name: `added-${Date.now()}`, host: "127.0.0.1", port: cat.w.port, aiPolicy: "blocked" })
      yield* joinWithin(yield* Effect.fork(changes.pipe(Stream.take(1), Stream.runDrain)))
    }).pipe(Effect.provide(cat.context)))

  it.scoped("listChanged skips the list it starts with: nothing is emitted while nothing changes", () =>
    Effect.gen(function*() {
      const resources = yield* Resources
      const fiber = yield* (yield* resources.listChanged).pipe(Stream.take(1), Stream.runDrain, Effect.fork)
      const start = yield* Clock.currentTimeMillis
      for (let second = 1; second <= 3; second++) {
        yield* untilSleepingUntil(start + second * 1_000)
        yield* TestClock.adjust("1 second")
      }
      yield* untilSleepingUntil(start + 4_000)
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(cat.context)))

  it.scoped("watch: a schema change made once the watch has started is reported at the next poll, 10 s later", () =>
    Effect.gen(function*() {
      const resources = yield* Resources
      const driver = yield* Driver
      const principal = token()
      const start = yield* Clock.currentTimeMillis
      const changes = yield* resources.watch(`${conn(cat.ids.local)}/schema`).pipe(as(principal))
      const created = yield* driver.rest(cat.ids.local, `POST /v1/schema {"class":"Watched${start}","vectorizer":"none","properties":[{"name":"note","dataType":["text"]}]}`)
      assert.isTrue(created.ok)
      const fiber = yield* changes.pipe(Stream.take(1), Stream.runDrain, as(principal), Effect.fork)
      yield* untilSleepingUntil(start + 10_000)
      yield* TestClock.adjust("9 seconds")
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)), "no notification before 10 s")
      yield* TestClock.adjust("1 second")
      yield* joinWithin(fiber)
    }).pipe(Effect.provide(cat.context)))

  it.scoped("watch stays silent while the schema does not change", () =>
    Effect.gen(function*() {
      const resources = yield* Resources
      const principal = token()
      const changes = yield* resources.watch(`${conn(cat.ids.readonly)}/schema`).pipe(as(principal))
      const fiber = yield* changes.pipe(Stream.take(1), Stream.runDrain, as(principal), Effect.fork)
      const start = yield* Clock.currentTimeMillis
      for (let poll = 1; poll <= 3; poll++) {
        yield* untilSleepingUntil(start + poll * 10_000)
        yield* TestClock.adjust("10 seconds")
      }
      yield* untilSleepingUntil(start + 40_000)
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(cat.context)))

  it.scoped("watch: a schema whose baseline could not be read is reported at the first poll that reads it", () =>
    Effect.gen(function*() {
      const resources = yield* Resources
      const principal = token()
      const start = yield* Clock.currentTimeMillis
      // The client may have read the schema before the server went away: what it holds is unknown.
      cat.w.setFault({ kind: "drop" }, { pathPrefix: "/v1/schema" })
      const changes = yield* resources.watch(`${conn(cat.ids.readonly)}/schema`).pipe(
        as(principal),
        Effect.ensuring(Effect.sync(() => cat.w.setFault({ kind: "none" })))
      )
      const fiber = yield* changes.pipe(Stream.take(1), Stream.runDrain, as(principal), Effect.fork)
      yield* untilSleepingUntil(start + 10_000)
      yield* TestClock.adjust("10 seconds")
      yield* joinWithin(fiber)
    }).pipe(Effect.provide(cat.context)))

  it.scoped("a watched connection that is blocked afterwards ends the subscription with -33007 at the next poll", () =>
    Effect.gen(function*() {
      const resources = yield* Resources
      const store = yield* ConnectionStore
      const principal = token()
      const watched = yield* store.add({ name: `watched-${Date.now()}`, host: "127.0.0.1", port: cat.w.port })
      const changes = yield* resources.watch(`${conn(watched.id)}/schema`).pipe(as(principal))
      const fiber = yield* changes.pipe(Stream.runDrain, as(principal), Effect.either, Effect.fork)
      const now = yield* Clock.currentTimeMillis
      yield* untilSleepingUntil(now + 10_000)
      yield* store.update(watched.id, { aiPolicy: "blocked" })
      yield* TestClock.adjust("10 seconds")
      const result = yield* Fiber.join(fiber)
      assert.isTrue(Either.isLeft(result))
      if (Either.isLeft(result)) assert.strictEqual(result.left.code, -33007)
    }).pipe(Effect.provide(cat.context)))

  it.scoped("watch fails to start for unknown, unsubscribable and forbidden URIs", () =>
    Effect.gen(function*() {
      const resources = yield* Resources
      const code = (uri: string, principal = token()) =>
        resources.watch(uri).pipe(as(principal), Effect.either, Effect.map((r) => Either.isLeft(r) ? r.left.code : 0))
      assert.strictEqual(yield* code(`${conn("nope")}/schema`), -32602)
      assert.strictEqual(yield* code(`${conn(cat.ids.local)}/tables/Article`), -32602)
      assert.strictEqual(yield* code("https://example.com/schema"), -32602)
      assert.strictEqual(yield* code(`${conn(cat.ids.blocked)}/schema`), -33007)
      assert.strictEqual(yield* code(`${conn(cat.ids.local)}/schema`, token({ connections: [cat.ids.readonly] })), -33007)
    }).pipe(Effect.provide(cat.context)))
})

describe("redaction", () => {
  it("a server that echoes the rejected API key: the -32603 message never holds it", async () => {
    const secret = "wrong-key-0123456789abcdef"
    const echoing = await startWeaviate({ apiKeys: ["right-key-0123456789"], echoApiKeyInErrors: true })
    try {
      const id = await cat.runtime.runPromise(Effect.flatMap(ConnectionStore, (store) =>
        store.add({ name: `echo-${Date.now()}`, host: "127.0.0.1", port: echoing.port, authMethod: "apiKey", apiKey: secret })).pipe(Effect.map((c) => c.id), Effect.orDie))
      const result = await run(token(), Effect.either(Effect.flatMap(Resources, (r) => r.read(`${conn(id)}/schema`))))
      assert.isTrue(Either.isLeft(result))
      if (Either.isLeft(result)) {
        assert.strictEqual(result.left.code, -32603)
        assert.match(result.left.message, /^Authentication failed/)
        assert.notInclude(JSON.stringify(result.left), secret)
      }
      const meta = await readJson(token(), `${conn(id)}/meta`)
      assert.notInclude(meta.contents[0]!.text as string, secret)
    } finally {
      await echoing.close()
    }
  })
})
