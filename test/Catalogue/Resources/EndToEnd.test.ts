/**
 * Resources, templates, prompts, completions and `subscriptions/listen` end to end: the real daemon
 * on a free port serving the real catalogue over the driver, against the Weaviate test instance
 * with the sample data and 60 more collections (so `resources/list` spans two pages). Both eras;
 * every answer validated against the official JSON Schema of its era. The daemon runs on the
 * TestClock, so the 10 s schema poll is driven by `TestClock.adjust`, never waited for.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { Dialog } from "../../../src/Approval/Dialog.ts"
import { FirstAccess } from "../../../src/Approval/FirstAccess.ts"
import { RequestState } from "../../../src/Approval/RequestState.ts"
import * as Daemon from "../../../src/Daemon/Daemon.ts"
import { ConnectionStore } from "../../../src/Driver/ConnectionStore.ts"
import { Driver } from "../../../src/Driver/Driver.ts"
import * as Catalogue from "../../../src/Mcp/Catalogue.ts"
import { CompletionsLive } from "../../../src/Catalogue/Completions/Completions.ts"
import { BoundAddress } from "../../../src/Mcp/HttpTransport.ts"
import { PromptsLive } from "../../../src/Catalogue/Prompts/Prompts.ts"
import { ResourcesLive } from "../../../src/Catalogue/Resources/Resources.ts"
import {
  bearer,
  type Era,
  MODERN,
  modern,
  modernHeaders,
  send,
  validateDef,
  validateMessage
} from "../../Mcp/support/EndpointHarness.ts"
import { openListen, untilSleepingUntil } from "../../support/Listen.ts"
import { loadManyCollections } from "../../support/ManyCollections.ts"
import * as TestDaemon from "../../support/TestDaemon.ts"
import * as TestHome from "../../support/TestHome.ts"
import { loadSampleData } from "../../weaviate/SampleData.ts"
import { TestWeaviate } from "../../weaviate/TestWeaviate.ts"

// ===== Harness =====

class E2E extends Context.Tag("test/CatalogueE2E")<E2E, {
  readonly endpoint: string
  readonly token: string
  readonly local: string
  readonly store: ConnectionStore["Type"]
  readonly driver: Driver["Type"]
  readonly weaviatePort: number
}>() {}

const approvingDialog = Layer.succeed(Dialog, { kind: "exec", interactive: true, confirm: () => Effect.succeed(true) })

const catalogue = Layer.mergeAll(Catalogue.Tools.empty, ResourcesLive, PromptsLive, CompletionsLive).pipe(
  Layer.provide(FirstAccess.layer.pipe(Layer.provide(Layer.merge(RequestState.layer, approvingDialog)))),
  Layer.provide(Driver.layer.pipe(Layer.provideMerge(ConnectionStore.layer)))
)

const BULK = 60

const harness = Layer.unwrapScoped(Effect.gen(function*() {
  const w = yield* TestWeaviate()
  yield* Effect.promise(() => loadSampleData(w, { scale: 0.02 }))
  yield* Effect.promise(() => loadManyCollections(w, BULK))
  const settings = yield* TestDaemon.settings({ rateLimit: 0, authLockout: 0 })
  const token = yield* Deferred.make<string>()
  const daemon = Daemon.layer({ settings, port: 0, catalogue, onDefaultToken: (created) => Deferred.succeed(token, created.token) })
  return Layer.effect(
    E2E,
    Effect.gen(function*() {
      const address = yield* BoundAddress
      // The test's own store and driver on the daemon's home: what the CLI would do next to it.
      const store = yield* ConnectionStore
      const driver = yield* Driver
      const local = yield* Effect.orDie(store.add({ name: "local", host: "127.0.0.1", port: w.port }))
      return E2E.of({ endpoint: `${address.url}/mcp`, token: yield* Deferred.await(token), local: local.id, store, driver, weaviatePort: w.port })
    })
  ).pipe(Layer.provide(daemon), Layer.provide(Driver.layer.pipe(Layer.provideMerge(ConnectionStore.layer))))
})).pipe(Layer.provideMerge(TestHome.layer))

// ===== Requests =====

const postModern = (method: string, params: Record<string, unknown>, meta: Record<string, unknown> = {}) =>
  Effect.flatMap(E2E, (h) =>
    send(h.endpoint, {
      body: modern(method, params, 1, meta),
      headers: {
        ...modernHeaders(method, typeof params.name === "string" ? params.name : typeof params.uri === "string" ? params.uri : undefined),
        ...bearer(h.token)
      }
    }))

const legacySession = (version: "2025-11-25" | "2025-06-18") =>
  Effect.gen(function*() {
    const h = yield* E2E
    const reply = yield* send(h.endpoint, {
      body: { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "legacy", version: "1" } } },
      headers: { "content-type": "application/json", ...bearer(h.token) }
    })
    const session = reply.headers.get("mcp-session-id") ?? ""
    assert.isNotEmpty(session)
    return (method: string, params: Record<string, unknown> = {}) =>
      send(h.endpoint, {
        body: { jsonrpc: "2.0", id: 2, method, params },
        headers: { "content-type": "application/json", "mcp-session-id": session, "mcp-protocol-version": version, ...bearer(h.token) }
      })
  })

/** A call in either era, validated against that era's schema. */
type Caller = (method: string, params: Record<string, unknown>, resultDef?: string) => Effect.Effect<any, never, E2E>

const callerFor = (era: Era): Effect.Effect<Caller, never, E2E> =>
  era === MODERN
    ? Effect.succeed((method, params, resultDef) =>
      Effect.map(postModern(method, params), (reply) => {
        validateMessage(MODERN, reply.json, resultDef)
        return reply.json
      }))
    : Effect.map(legacySession(era as "2025-11-25" | "2025-06-18"), (post): Caller => (method, params, resultDef) =>
      Effect.map(post(method, params), (reply) => {
        validateMessage(era, reply.json, resultDef)
        return reply.json
      }))

// ===== Tests =====

describe("catalogue end to end", () => {
  layer(harness, { timeout: 60_000 })("over real HTTP", (it) => {
    for (const era of [MODERN, "2025-11-25", "2025-06-18"] as const) {
      it.effect(`${era}: resources/list pages 50 items at a time through nextCursor and holds every table`, () =>
        Effect.gen(function*() {
          const h = yield* E2E
          const call = yield* callerFor(era)
          const first = yield* call("resources/list", {}, "ListResourcesResult")
          assert.strictEqual(first.result.resources.length, 50)
          assert.isString(first.result.nextCursor)
          const second = yield* call("resources/list", { cursor: first.result.nextCursor }, "ListResourcesResult")
          assert.notProperty(second.result, "nextCursor")
          const uris: Array<string> = [...first.result.resources, ...second.result.resources].map((r: { uri: string }) => r.uri)
          // connections + meta + schema + 4 sample tables + 60 bulk tables
          assert.strictEqual(uris.length, 3 + 4 + BULK)
          assert.strictEqual(new Set(uris).size, uris.length)
          assert.include(uris, `weaviate://connections/${h.local}/tables/Bulk059`)
          assert.include(uris, `weaviate://connections/${h.local}/tables/Article`)
        }))

      it.effect(`${era}: resources/templates/list, resources/read with its TTL, unknown URI -32602`, () =>
        Effect.gen(function*() {
          const h = yield* E2E
          const call = yield* callerFor(era)
          const templates = yield* call("resources/templates/list", {}, "ListResourceTemplatesResult")
          // The contract's four, the row of a tenant, and the daemon's query history.
          assert.strictEqual(templates.result.resourceTemplates.length, 6)
          const uri = `weaviate://connections/${h.local}/tables/Product`
          const read = yield* call("resources/read", { uri }, "ReadResourceResult")
          const content = read.result.contents[0]
          assert.strictEqual(content.uri, uri)
          assert.strictEqual(content.mimeType, "application/json")
          assert.include(JSON.parse(content.text).columns.map((c: { name: string }) => c.name), "sku")
          if (era === MODERN) {
            assert.strictEqual(read.result.ttlMs, 60_000)
            assert.strictEqual(read.result.cacheScope, "private")
          }
          const unknown = yield* call("resources/read", { uri: `weaviate://connections/${h.local}/tables/Nope` })
          assert.strictEqual(unknown.error.code, -32602)
        }))

      it.effect(`${era}: prompts/list, prompts/get rendered from the live schema, completion/complete`, () =>
        Effect.gen(function*() {
          const h = yield* E2E
          const call = yield* callerFor(era)
          const prompts = yield* call("prompts/list", {}, "ListPromptsResult")
          // The six of the contract, aggregate_table, the two collection prompts and summarize_query_history (the daemon has a history).
          assert.strictEqual(prompts.result.prompts.length, 10)
          const got = yield* call("prompts/get", { name: "explain_table", arguments: { connection_id: h.local, table: "Bulk007" } }, "GetPromptResult")
          const text = got.result.messages[0].content.text as string
          assert.include(text, "### Bulk007")
          assert.include(text, "- rank: int")
          const completed = yield* call("completion/complete", {
            ref: { type: "ref/resource", uri: "weaviate://connections/{connection_id}/tables/{table}" },
            argument: { name: "table", value: "bulk05" },
            context: { arguments: { connection_id: h.local } }
          }, "CompleteResult")
          assert.deepStrictEqual(completed.result.completion.values, Array.from({ length: 10 }, (_, i) => `Bulk05${i}`))
          const connection = yield* call("completion/complete", {
            ref: { type: "ref/prompt", name: "explain_schema" },
            argument: { name: "connection_id", value: "LOC" }
          }, "CompleteResult")
          assert.include(connection.result.completion.values, h.local)
        }))
    }

    it.effect("modern: the first read by an elicitation client answers input_required (InputRequiredResult)", () =>
      Effect.gen(function*() {
        const h = yield* E2E
        // A connection of its own: the token's earlier reads granted access to `local`.
        const fresh = yield* Effect.orDie(h.store.add({ name: `fresh-${Date.now()}`, host: "127.0.0.1", port: h.weaviatePort }))
        const uri = `weaviate://connections/${fresh.id}/schema`
        const reply = yield* postModern("resources/read", { uri }, { "io.modelcontextprotocol/clientCapabilities": { elicitation: {} } })
        validateMessage(MODERN, reply.json, "InputRequiredResult")
        assert.strictEqual(reply.json.result.resultType, "input_required")
        assert.property(reply.json.result.inputRequests, "approve_statement")
      }))

    it.scoped("modern: a subscriptions/listen stream sees list_changed and a schema change made through the REST console", () =>
      Effect.gen(function*() {
        const h = yield* E2E
        const uri = `weaviate://connections/${h.local}/schema`
        const stream = yield* openListen(h.endpoint, h.token, { resourcesListChanged: true, resourceSubscriptions: [uri] })
        const ack = yield* stream.next((m) => m.method === "notifications/subscriptions/acknowledged")
        validateDef(MODERN, "SubscriptionsAcknowledgedNotification", ack)
        assert.deepStrictEqual(ack.params.notifications, { resourcesListChanged: true, resourceSubscriptions: [uri] })

        // The watch took its first look at the schema and sleeps until the next poll.
        const now = yield* Clock.currentTimeMillis
        yield* untilSleepingUntil(now + 10_000)
        const created = yield* h.driver.rest(h.local, `POST /v1/schema {"class":"Subscribed","properties":[{"name":"note","dataType":["text"]}]}`)
        assert.isTrue(created.ok)
        yield* TestClock.adjust("10 seconds")
        const updated = yield* stream.next((m) => m.method === "notifications/resources/updated")
        validateDef(MODERN, "ResourceUpdatedNotification", updated)
        assert.strictEqual(updated.params.uri, uri)
        assert.strictEqual(updated.params._meta["io.modelcontextprotocol/subscriptionId"], stream.id)

        // Another process saves a connection: the daemon notices within its 1 s file check.
        yield* Effect.orDie(h.store.add({ name: `added-${now}`, host: "127.0.0.1", port: h.weaviatePort }))
        yield* TestClock.adjust("1 second")
        const changed = yield* stream.next((m) => m.method === "notifications/resources/list_changed")
        validateDef(MODERN, "ResourceListChangedNotification", changed)
      }))
  })
})

describe("the daemon's own catalogue", () => {
  const served = Layer.unwrapScoped(Effect.gen(function*() {
    const token = yield* Deferred.make<string>()
    const settings = yield* TestDaemon.settings({ rateLimit: 0, authLockout: 0, approvals: "deny" })
    return Layer.effect(
      E2E,
      Effect.gen(function*() {
        const address = yield* BoundAddress
        return E2E.of({
          endpoint: `${address.url}/mcp`,
          token: yield* Deferred.await(token),
          local: "",
          store: yield* ConnectionStore,
          driver: yield* Driver,
          weaviatePort: 0
        })
      })
    ).pipe(
      Layer.provide(Daemon.layer({ settings, port: 0, onDefaultToken: (created) => Deferred.succeed(token, created.token) })),
      Layer.provide(Driver.layer.pipe(Layer.provideMerge(ConnectionStore.layer)))
    )
  })).pipe(Layer.provideMerge(TestHome.layer))

  layer(served, { excludeTestServices: true })("serve", (it) => {
    it.effect("serves the resources, prompts and completions by default", () =>
      Effect.gen(function*() {
        const templates = yield* postModern("resources/templates/list", {})
        validateMessage(MODERN, templates.json, "ListResourceTemplatesResult")
        assert.strictEqual(templates.json.result.resourceTemplates.length, 6)
        const resources = yield* postModern("resources/list", {})
        validateMessage(MODERN, resources.json, "ListResourcesResult")
        assert.deepStrictEqual(resources.json.result.resources.map((r: { uri: string }) => r.uri), ["weaviate://connections"])
        const prompts = yield* postModern("prompts/list", {})
        assert.strictEqual(prompts.json.result.prompts.length, 10)
        const unknown = yield* postModern("prompts/get", { name: "explain_schema", arguments: { connection_id: "nope" } })
        assert.strictEqual(unknown.json.error.code, -32602)
      }))
  })
})
