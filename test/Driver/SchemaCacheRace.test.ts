/**
 * Our own schema writes and the collection cache (`CollectionSchema.makeCache`): a read of a collection
 * that started before the write and ends after it answers its caller, but is not kept; the next call
 * reads the collection again and sees the change. The HTTP is a stand-in whose schema read the test
 * holds open until the write is done, so the order is certain.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as CollectionSchema from "../../src/Driver/CollectionSchema.ts"
import type * as WeaviateHttp from "../../src/Driver/WeaviateHttp.ts"

const classOf = (properties: ReadonlyArray<string>) => ({
  class: "Ticket",
  vectorizer: "none",
  properties: properties.map((name) => ({ name, dataType: ["text"] }))
})

/** A stand-in HTTP: each schema read waits for `gate` (when set) and answers the current properties. */
const standIn = (state: { properties: Array<string>; gate: Deferred.Deferred<void> | undefined; reads: number }) =>
  ({
    request: (request: WeaviateHttp.Request) =>
      Effect.gen(function*() {
        state.reads++
        const answer = classOf(state.properties)
        if (state.gate !== undefined) yield* Deferred.await(state.gate)
        return { status: request.path === "/v1/schema/Ticket" ? 200 : 404, contentType: "application/json", text: JSON.stringify(answer), json: answer }
      })
  }) as unknown as WeaviateHttp.WeaviateHttp

describe("our own schema writes and the collection cache", () => {
  it.effect("a read that started before our write is not kept: the next call reads the collection again and sees the new property", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      const state = { properties: ["title"], gate: gate as Deferred.Deferred<void> | undefined, reads: 0 }
      const http = standIn(state)
      const cache = CollectionSchema.makeCache(60_000)
      const before = yield* Effect.fork(cache.get(http, "Ticket"))
      // Bounded: the forked read reaches the stand-in within a few turns.
      for (let turn = 0; turn < 1_000 && state.reads === 0; turn++) yield* Effect.yieldNow()
      assert.strictEqual(state.reads, 1)
      // The write lands while the read is still on its way.
      state.properties = ["title", "priority"]
      cache.afterRequest({ method: "POST", path: "/v1/schema/Ticket/properties" })
      yield* Deferred.succeed(gate, undefined)
      const old = yield* Fiber.join(before)
      assert.deepStrictEqual(old.properties.map((p) => p.name), ["title"])
      state.gate = undefined
      const next = yield* cache.get(http, "Ticket")
      assert.deepStrictEqual(next.properties.map((p) => p.name), ["title", "priority"])
      assert.strictEqual(state.reads, 2)
    }))

  it.effect("a collection read after our write is kept as usual: a second call does not read it again", () =>
    Effect.gen(function*() {
      const state = { properties: ["title"], gate: undefined, reads: 0 }
      const http = standIn(state)
      const cache = CollectionSchema.makeCache(60_000)
      cache.afterRequest({ method: "PUT", path: "/v1/schema/Ticket" })
      yield* cache.get(http, "Ticket")
      yield* cache.get(http, "Ticket")
      assert.strictEqual(state.reads, 1)
    }))
})
