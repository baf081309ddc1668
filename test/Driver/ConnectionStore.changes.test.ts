/**
 * `ConnectionStore.changes` listens for saves before it reads its first list: a save made right after
 * that list was taken is emitted at once, never lost and never left to the 1 s file check (which
 * does not run here: the TestClock stands still).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestServices from "effect/TestServices"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import * as TestHome from "../support/TestHome.ts"

describe("ConnectionStore.changes", () => {
  it.scoped("a save made right after the first list was taken is emitted at once", () =>
    Effect.gen(function*() {
      const store = yield* ConnectionStore
      const pull = yield* Stream.toPull(store.changes)
      assert.deepStrictEqual(Chunk.toArray(yield* pull).map((list) => list.length), [0])
      const added = yield* store.add({ name: "right-after", host: "127.0.0.1" })
      // Pulled on the TestClock (the file check never fires), waited for in real time (bounded).
      const fiber = yield* Effect.fork(pull)
      const next = yield* Fiber.join(fiber).pipe(
        Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error("the save was not emitted") }),
        TestServices.provideLive
      )
      assert.deepStrictEqual(Chunk.toArray(next).map((list) => list.map((c) => c.id)), [[added.id]])
    }).pipe(Effect.provide(ConnectionStore.layer.pipe(Layer.provide(TestHome.layer)))))
})
