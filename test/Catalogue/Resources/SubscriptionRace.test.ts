/**
 * `subscriptions/listen` is acknowledged only once every watch has started: a change made the moment
 * the client sees the acknowledgement is reported. The real daemon serves the real resources over
 * the driver, on the TestClock; the watches' first reads are made slow (a slow disk for the saved
 * connections, a slow server for the schema), so an acknowledgement sent before they finish would
 * let the change slip into the baseline and never be reported.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { Dialog } from "../../../src/Approval/Dialog.ts"
import { FirstAccess } from "../../../src/Approval/FirstAccess.ts"
import { RequestState } from "../../../src/Approval/RequestState.ts"
import * as Daemon from "../../../src/Daemon/Daemon.ts"
import { ConnectionStore } from "../../../src/Driver/ConnectionStore.ts"
import { Driver } from "../../../src/Driver/Driver.ts"
import * as Catalogue from "../../../src/Mcp/Catalogue.ts"
import { BoundAddress } from "../../../src/Mcp/HttpTransport.ts"
import { ResourcesLive } from "../../../src/Catalogue/Resources/Resources.ts"
import { MODERN, validateDef } from "../../Mcp/support/EndpointHarness.ts"
import { openListen, untilSleepingUntil } from "../../support/Listen.ts"
import * as TestDaemon from "../../support/TestDaemon.ts"
import * as TestHome from "../../support/TestHome.ts"
import { TestWeaviate } from "../../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../../weaviate/WeaviateServer.ts"

/** How late a watch's first read answers (real time): far longer than saving a connection or a class takes. */
const SLOW_MS = 300

class Race extends Context.Tag("test/SubscriptionRace")<Race, {
  readonly endpoint: string
  readonly token: string
  readonly local: string
  /** The daemon's own store (a save through it is signalled at once). */
  readonly store: ConnectionStore["Type"]
  /** A driver of the test's own, as the CLI would use next to the daemon. */
  readonly driver: Driver["Type"]
  readonly weaviate: WeaviateTestInstance
}>() {}

const approvingDialog = Layer.succeed(Dialog, { kind: "exec", interactive: true, confirm: () => Effect.succeed(true) })

const harness = Layer.unwrapScoped(Effect.gen(function*() {
  const weaviate = yield* TestWeaviate()
  const store = yield* ConnectionStore.make()
  const local = yield* Effect.orDie(store.add({ name: "local", host: "127.0.0.1", port: weaviate.port }))
  // A slow disk: the daemon's watch of the saved connections starts reading late.
  const slowDisk = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, SLOW_MS)))
  const daemonStore = Layer.succeed(ConnectionStore, ConnectionStore.of({ ...store, changes: Stream.unwrap(Effect.as(slowDisk, store.changes)) }))
  const catalogue = Layer.mergeAll(Catalogue.Tools.empty, ResourcesLive, Catalogue.Prompts.empty, Catalogue.Completions.empty).pipe(
    Layer.provide(FirstAccess.layer.pipe(Layer.provide(Layer.merge(RequestState.layer, approvingDialog)))),
    Layer.provide(Driver.layer.pipe(Layer.provideMerge(daemonStore)))
  )
  const settings = yield* TestDaemon.settings({ rateLimit: 0, authLockout: 0 })
  const token = yield* Deferred.make<string>()
  const daemon = Daemon.layer({ settings, port: 0, catalogue, onDefaultToken: (created) => Deferred.succeed(token, created.token) })
  return Layer.effect(
    Race,
    Effect.gen(function*() {
      const address = yield* BoundAddress
      return Race.of({
        endpoint: `${address.url}/mcp`,
        token: yield* Deferred.await(token),
        local: local.id,
        store,
        driver: yield* Driver,
        weaviate
      })
    })
  ).pipe(Layer.provide(daemon), Layer.provide(Driver.layer.pipe(Layer.provide(Layer.succeed(ConnectionStore, store)))))
})).pipe(Layer.provideMerge(TestHome.layer))

const acknowledged = (message: any) => message.method === "notifications/subscriptions/acknowledged"

describe("subscriptions/listen: a change right after the acknowledgement", () => {
  layer(harness, { timeout: 60_000 })("over real HTTP with the real catalogue", (it) => {
    it.scoped("a connection saved the moment the acknowledgement arrives is reported as list_changed", () =>
      Effect.gen(function*() {
        const h = yield* Race
        const stream = yield* openListen(h.endpoint, h.token, { resourcesListChanged: true })
        yield* stream.next(acknowledged)
        yield* Effect.orDie(h.store.add({ name: `added-${Date.now()}`, host: "127.0.0.1", port: h.weaviate.port }))
        // No clock adjustment: the save is the signal (the 1 s file check does not run on the TestClock).
        const changed = yield* stream.next((m) => m.method === "notifications/resources/list_changed", "5 seconds")
        validateDef(MODERN, "ResourceListChangedNotification", changed)
      }))

    it.scoped("a schema change made the moment the acknowledgement arrives is reported as resources/updated at the next 10 s poll", () =>
      Effect.gen(function*() {
        const h = yield* Race
        const uri = `weaviate://connections/${h.local}/schema`
        const now = yield* Clock.currentTimeMillis
        // A slow server: the watch's baseline read of the schema answers late.
        h.weaviate.setFault({ kind: "delay", ms: SLOW_MS }, { pathPrefix: "/v1/schema" })
        const stream = yield* openListen(h.endpoint, h.token, { resourceSubscriptions: [uri] }).pipe(
          Effect.tap((stream) => stream.next(acknowledged)),
          Effect.ensuring(Effect.sync(() => h.weaviate.setFault({ kind: "none" })))
        )
        const created = yield* h.driver.rest(h.local, `POST /v1/schema {"class":"Raced${now}","properties":[{"name":"note","dataType":["text"]}]}`)
        assert.isTrue(created.ok)
        yield* untilSleepingUntil(now + 10_000)
        yield* TestClock.adjust("10 seconds")
        const updated = yield* stream.next((m) => m.method === "notifications/resources/updated", "5 seconds")
        validateDef(MODERN, "ResourceUpdatedNotification", updated)
        assert.strictEqual(updated.params.uri, uri)
      }))
  })
})
