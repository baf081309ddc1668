/**
 * `daemon-state.json` (Clients): written at start, then at most once a second while something changed,
 * and not at all while nothing does. Time is the TestClock's; the writes are real files, so a test
 * waits for the write a wake-up started (bounded: 200 looks, each after a real 5 ms), and a check that
 * nothing was written gives the writer fiber 50 real ms to do what it must not.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Clients, MAX_CLIENTS, STATE_FILE } from "../../src/Activity/Clients.ts"
import * as TestHome from "../support/TestHome.ts"

const caller = { name: "client", version: "1", principal: "p", principalName: "default", principalSource: "store", era: "modern" } as const

/** Each write renames a new file into place: its inode names the write. */
const inode = (dir: string) => {
  try {
    return NodeFs.statSync(NodePath.join(dir, STATE_FILE)).ino
  } catch {
    return undefined
  }
}

const settle = (dir: string, from: number | undefined) =>
  Effect.promise(async () => {
    for (let i = 0; i < 200 && inode(dir) === from; i++) await new Promise((resolve) => setTimeout(resolve, 5))
    return inode(dir)
  })

/** Lets the writer fiber run after the clock moved, and gives real I/O a moment to finish. */
const quiet = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))

describe("Clients: daemon-state.json", () => {
  it.scoped("the facts described at start are written once by writeNow, and not again when the writer wakes", () =>
    Effect.gen(function*() {
      const dir = TestHome.tempDirSync()
      const clients = yield* Clients.make({ instanceId: "i" }).pipe(Effect.provide(TestHome.at(dir)))
      clients.describe({ approvals: "deny" })
      clients.describe({ paused: false })
      yield* clients.writeNow
      const written = inode(dir)
      assert.isDefined(written)
      yield* TestClock.adjust(Duration.seconds(5))
      yield* quiet
      assert.strictEqual(inode(dir), written)
    }))

  it.scoped("describing the facts it already has is no change: nothing is written", () =>
    Effect.gen(function*() {
      const dir = TestHome.tempDirSync()
      const clients = yield* Clients.make({ instanceId: "i" }).pipe(Effect.provide(TestHome.at(dir)))
      clients.describe({ approvals: "deny", paused: true })
      yield* clients.writeNow
      const written = inode(dir)
      clients.describe({ approvals: "deny" })
      clients.describe({ paused: true })
      yield* TestClock.adjust(Duration.seconds(5))
      yield* quiet
      assert.strictEqual(inode(dir), written)
    }))

  it.scoped("a call is written a second later, once for every change within that second; then nothing while nothing changes", () =>
    Effect.gen(function*() {
      const dir = TestHome.tempDirSync()
      const clients = yield* Clients.make({ instanceId: "i" }).pipe(Effect.provide(TestHome.at(dir)))
      yield* clients.writeNow
      const atStart = inode(dir)
      const end = clients.begin(caller)
      end()
      clients.begin(caller)()
      yield* TestClock.adjust(Duration.millis(999))
      yield* quiet
      assert.strictEqual(inode(dir), atStart)
      yield* TestClock.adjust(Duration.millis(1))
      const afterCalls = yield* settle(dir, atStart)
      assert.notStrictEqual(afterCalls, atStart)
      const state = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, STATE_FILE), "utf8")) as { clients: Array<{ name: string; inFlight: number }> }
      assert.deepStrictEqual(state.clients.map((c) => [c.name, c.inFlight]), [["client", 0]])
      yield* TestClock.adjust(Duration.seconds(10))
      yield* quiet
      assert.strictEqual(inode(dir), afterCalls)
    }))
})

describe("Clients: memory bound", () => {
  it.scoped("at most MAX_CLIENTS clients are remembered: made-up client names push out the oldest idle ones, never one with a call in flight", () =>
    Effect.gen(function*() {
      const dir = TestHome.tempDirSync()
      const clients = yield* Clients.make({ instanceId: "i" }).pipe(Effect.provide(TestHome.at(dir)))
      // The first client keeps a call in flight through the flood.
      const endBusy = clients.begin({ ...caller, name: "busy" })
      for (let i = 0; i < MAX_CLIENTS * 3; i++) clients.begin({ ...caller, name: `made-up-${i}` })()
      const seen = clients.seen(Date.now())
      assert.strictEqual(seen.length, MAX_CLIENTS)
      const names = new Set(seen.map((c) => c.name))
      assert.isTrue(names.has("busy"))
      // The newest are kept, the oldest idle ones went first.
      assert.isTrue(names.has(`made-up-${MAX_CLIENTS * 3 - 1}`))
      assert.isFalse(names.has("made-up-0"))
      // A forgotten client is listed again at its next call.
      clients.begin({ ...caller, name: "made-up-0" })()
      assert.isTrue(clients.seen(Date.now()).some((c) => c.name === "made-up-0"))
      endBusy()
    }))

  it.scoped("when every remembered client has a call in flight, a new client's call goes on unlisted", () =>
    Effect.gen(function*() {
      const dir = TestHome.tempDirSync()
      const clients = yield* Clients.make({ instanceId: "i" }).pipe(Effect.provide(TestHome.at(dir)))
      const ends = Array.from({ length: MAX_CLIENTS }, (_, i) => clients.begin({ ...caller, name: `busy-${i}` }))
      const endExtra = clients.begin({ ...caller, name: "extra" })
      endExtra()
      const seen = clients.seen(Date.now())
      assert.strictEqual(seen.length, MAX_CLIENTS)
      assert.isFalse(seen.some((c) => c.name === "extra"))
      assert.isTrue(seen.every((c) => c.inFlight === 1))
      for (const end of ends) end()
    }))
})
