/**
 * The driver's schema cache (`CollectionSchema.CacheTtl`, `serve --schema-cache-ms`): a collection read
 * from the schema is reused for the cache time, read again after it (virtual time), and forgotten at
 * once when this driver changes the schema or writes an object that may add properties.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import * as TestServices from "effect/TestServices"
import * as NodeNet from "node:net"
import * as WeaviateHttp from "../../src/Driver/WeaviateHttp.ts"
import { driverLayer } from "../../src/Cli/DriverCli.ts"
import * as CollectionSchema from "../../src/Driver/CollectionSchema.ts"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { Driver } from "../../src/Driver/Driver.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"
import { loadArticles, tempHome } from "./support.ts"

let w: WeaviateTestInstance
beforeAll(async () => {
  w = await startTestWeaviate()
  await loadArticles(w)
})
afterAll(async () => {
  await w.close()
})

/** The driver with a cache time, a fresh home and one connection `local` to the test Weaviate. */
const withDriver = (ttlMs: number) =>
  Effect.provide(
    Layer.effectDiscard(Effect.flatMap(ConnectionStore, (s) => s.add({ name: "local", host: "127.0.0.1", port: w.port }))).pipe(
      Layer.provideMerge(driverLayer(Option.some(tempHome()))),
      Layer.provide(Layer.succeed(CollectionSchema.CacheTtl, ttlMs))
    )
  )

const schemaReads = () => w.requests.filter((r) => r.method === "GET" && r.path.startsWith("/v1/schema")).length
const browse = Effect.flatMap(Driver, (d) => d.browse("local", "Plain", { limit: 1 }))
const columnsOf = Effect.map(browse, (page) => page.columns.map((c) => c.name))

describe("the schema cache", () => {
  it.effect("a collection read from the schema is reused within the cache time: three calls, one schema read", () =>
    Effect.gen(function*() {
      w.clearRequests()
      yield* browse
      yield* browse
      yield* Effect.flatMap(Driver, (d) => d.count("local", "Plain"))
      assert.strictEqual(schemaReads(), 1)
    }).pipe(withDriver(2_000)))

  it.effect("after the cache time the collection is read again", () =>
    Effect.gen(function*() {
      w.clearRequests()
      yield* browse
      yield* TestClock.adjust("1999 millis")
      yield* browse
      assert.strictEqual(schemaReads(), 1)
      yield* TestClock.adjust("2 millis")
      yield* browse
      assert.strictEqual(schemaReads(), 2)
    }).pipe(withDriver(2_000)))

  it.effect("a cache time of 0 reads the collection on every call", () =>
    Effect.gen(function*() {
      w.clearRequests()
      yield* browse
      yield* browse
      assert.strictEqual(schemaReads(), 2)
    }).pipe(withDriver(0)))

  it.effect("a schema change sent through the driver clears the cache: the new column shows on the next call", () =>
    Effect.gen(function*() {
      assert.notInclude(yield* columnsOf, "addedLater")
      const http = yield* Effect.flatMap(Driver, (d) => d.http("local"))
      yield* http.requestOk({ method: "POST", path: "/v1/schema/Plain/properties", body: { json: { name: "addedLater", dataType: ["text"] } } })
      assert.include(yield* columnsOf, "addedLater")
    }).pipe(withDriver(60_000)))

  it.effect("an object write naming only known properties keeps the cache; one naming a new property clears it", () =>
    Effect.gen(function*() {
      yield* browse
      const http = yield* Effect.flatMap(Driver, (d) => d.http("local"))
      w.clearRequests()
      yield* http.requestOk({ method: "POST", path: "/v1/objects", body: { json: { class: "Plain", properties: { title: "known" } } } })
      yield* browse
      assert.strictEqual(schemaReads(), 0)
      // Weaviate's auto-schema adds the property: the next call must see it.
      yield* http.requestOk({ method: "POST", path: "/v1/batch/objects", body: { json: { objects: [{ class: "Plain", properties: { title: "x", autoAdded: "y" } }] } } })
      yield* browse
      assert.strictEqual(schemaReads(), 1)
    }).pipe(withDriver(60_000)))

  it.effect("a change made elsewhere shows once the cache time has passed", () =>
    Effect.gen(function*() {
      yield* browse
      yield* Effect.promise(() =>
        fetch(`${w.url}/v1/schema/Plain/properties`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name: "fromElsewhere", dataType: ["text"] })
        })
      )
      assert.notInclude(yield* columnsOf, "fromElsewhere")
      yield* TestClock.adjust("2 seconds")
      assert.include(yield* columnsOf, "fromElsewhere")
    }).pipe(withDriver(2_000)))

  it.effect("a collection read before is served when its schema read gets no answer in time (a cluster waiting on a dead node), and read again next time", () =>
    Effect.gen(function*() {
      // A loopback proxy in front of the test Weaviate that can stop answering (accepts, never replies).
      let hang = false
      const held: Array<NodeNet.Socket> = []
      const proxy = NodeNet.createServer((client) => {
        const upstream = NodeNet.connect(w.port, "127.0.0.1")
        // Requests sent while hanging (on a new connection or a kept-alive one) get no answer.
        client.on("data", (chunk) => (hang ? void held.push(client) : void upstream.write(chunk)))
        upstream.on("data", (chunk) => void client.write(chunk))
        client.on("error", () => upstream.destroy())
        client.on("close", () => upstream.destroy())
        upstream.on("error", () => client.destroy())
      })
      yield* Effect.acquireRelease(
        Effect.async<void>((resume) => void proxy.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.sync(() => (held.forEach((s) => s.destroy()), proxy.close()))
      )
      const port = (proxy.address() as NodeNet.AddressInfo).port
      const describe = Effect.flatMap(Driver, (d) => d.describe("proxied", "Plain"))
      yield* Effect.flatMap(ConnectionStore, (s) => s.add({ name: "proxied", host: "127.0.0.1", port }))
      const fresh = yield* describe
      hang = true
      yield* TestClock.adjust("2 seconds")
      // The schema read hangs; its time-out (schemaMs, on the TestClock) ends it, and the cached collection serves.
      const pending = yield* Effect.fork(describe)
      for (let i = 0; i < 200 && held.length === 0; i++) yield* TestServices.provideLive(Effect.sleep("5 millis"))
      assert.isAbove(held.length, 0, "the schema read reached the hanging proxy")
      yield* TestClock.adjust("500 millis")
      const stale = yield* Fiber.join(pending)
      assert.deepStrictEqual(stale.columns.map((c) => c.name), fresh.columns.map((c) => c.name))
      // Next time it is read again (and, the server answering again, fresh).
      hang = false
      held.forEach((s) => s.destroy())
      const reads = schemaReads()
      yield* describe
      assert.isAbove(schemaReads(), reads)
    }).pipe(
      Effect.scoped,
      withDriver(2_000),
      Effect.provide(Layer.succeed(WeaviateHttp.Timeouts, { healthMs: 500, schemaMs: 500 }))
    ))
})
