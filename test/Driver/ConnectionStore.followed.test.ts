/**
 * The daemon's connection store (`ConnectionStore.layerFollowed`) costs a request no system call: it
 * trusts the list it read until the file is seen to change (a directory watch, or the poll), and
 * looks at the file again only for a connection it does not know yet.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import * as TestServices from "effect/TestServices"
import * as NodeFs from "node:fs"
import { Home } from "../../src/Base/Home.ts"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import * as TestHome from "../support/TestHome.ts"

/** Another process's edit: the file rewritten with a connection renamed (same ids, new name). */
const renameOutside = (file: string, from: string, to: string) => {
  const json = JSON.parse(NodeFs.readFileSync(file, "utf8")) as { connections: Array<{ name: string }> }
  for (const c of json.connections) if (c.name === from) c.name = to
  const temporary = `${file}.outside`
  NodeFs.writeFileSync(temporary, JSON.stringify(json), { mode: 0o600 })
  NodeFs.renameSync(temporary, file)
}

/** Lets the follower's fiber finish the file I/O it started (bounded, real time). */
const settle = (check: Effect.Effect<boolean, unknown>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200; i++) {
      if (yield* check) return true
      yield* TestServices.provideLive(Effect.sleep("10 millis"))
    }
    return false
  })

// No file events: only the look at the file a second after the last one (on the TestClock) can show a change.
const followed = ConnectionStore.layerFollowed({ fsEvents: false }).pipe(Layer.provideMerge(TestHome.layer))

describe("ConnectionStore.layerFollowed", () => {
  it.scoped("a request reads the list it has: a change by another process is looked for at most once a second, not per call", () =>
    Effect.gen(function*() {
      const store = yield* ConnectionStore
      const file = (yield* Home).path("connections")
      yield* store.add({ name: "before", host: "127.0.0.1" })
      assert.deepStrictEqual((yield* store.list).map((c) => c.name), ["before"])
      renameOutside(file, "before", "after")
      // Were the file stat'ed per call, this would already be "after".
      assert.deepStrictEqual((yield* store.list).map((c) => c.name), ["before"])
      yield* TestClock.adjust("999 millis")
      assert.deepStrictEqual((yield* store.list).map((c) => c.name), ["before"], "trusted for a second")
      yield* TestClock.adjust("1 milli")
      assert.isTrue(yield* settle(Effect.map(store.list, (list) => list[0]?.name === "after")), "seen once the second has passed")
    }).pipe(Effect.provide(followed)))

  it.scoped("a connection another process has just added is found by the very next call (a miss looks at the file)", () =>
    Effect.gen(function*() {
      const store = yield* ConnectionStore
      const file = (yield* Home).path("connections")
      const first = yield* store.add({ name: "first", host: "127.0.0.1" })
      assert.strictEqual((yield* store.list).length, 1)
      // The CLI's add, as another process makes it: the file rewritten with one more connection.
      const json = JSON.parse(NodeFs.readFileSync(file, "utf8")) as { connections: Array<Record<string, unknown>> }
      json.connections.push({ ...json.connections[0], id: "0123456789ab", name: "second" })
      NodeFs.writeFileSync(`${file}.outside`, JSON.stringify(json), { mode: 0o600 })
      NodeFs.renameSync(`${file}.outside`, file)
      assert.strictEqual((yield* store.get("second")).id, "0123456789ab")
      assert.strictEqual((yield* store.get(first.id)).name, "first")
    }).pipe(Effect.provide(followed)))

  it.scoped("a save through the store itself is seen at once", () =>
    Effect.gen(function*() {
      const store = yield* ConnectionStore
      const added = yield* store.add({ name: "mine", host: "127.0.0.1" })
      yield* store.update(added.id, { name: "renamed" })
      assert.deepStrictEqual((yield* store.list).map((c) => c.name), ["renamed"])
    }).pipe(Effect.provide(followed)))
})
