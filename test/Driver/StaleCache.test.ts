/**
 * `StaleCache`: stale-while-revalidate with one read at a time, on virtual time (TestClock). Callers at
 * once share one read; a value past its time to live is served at once, marked stale, while one
 * background read runs; `clear` makes the next caller wait for a new read and never see the old value;
 * a failed background read keeps the stale value.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import * as StaleCache from "../../src/Driver/StaleCache.ts"

/** A load that counts its runs and waits for the test to release each one with a value (or a failure). */
const gatedLoad = Effect.gen(function*() {
  let runs = 0
  const gates: Array<Deferred.Deferred<number, string>> = []
  const load = Effect.suspend(() => {
    runs++
    const gate = Deferred.unsafeMake<number, string>(undefined as never)
    gates.push(gate)
    return Deferred.await(gate)
  })
  /** Releases the n-th run (1-based) once it started. */
  const release = (n: number, value: number | { readonly fail: string }) =>
    Effect.gen(function*() {
      for (let i = 0; i < 1_000 && gates.length < n; i++) yield* Effect.yieldNow()
      const gate = gates[n - 1]
      if (gate === undefined) return yield* Effect.dieMessage(`run ${n} never started`)
      yield* typeof value === "number" ? Deferred.succeed(gate, value) : Deferred.fail(gate, value.fail)
    })
  return { load, release, runs: () => runs }
})

const settle = Effect.repeatN(Effect.yieldNow(), 50)

describe("StaleCache", () => {
  it.scoped("callers at once share one read (single flight)", () =>
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const l = yield* gatedLoad
      const cache = StaleCache.make(l.load, { ttlMs: 1_000, scope })
      const callers = yield* Effect.forEach(Array.from({ length: 5 }), () => Effect.fork(cache.get))
      yield* l.release(1, 42)
      const reads = yield* Effect.forEach(callers, Fiber.join)
      expect(reads.map((r) => r.value)).toEqual([42, 42, 42, 42, 42])
      expect(reads.every((r) => !r.stale)).toBe(true)
      expect(l.runs()).toBe(1)
    }))

  it.scoped("a value past its time to live is served at once, marked stale, while one background read runs", () =>
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const l = yield* gatedLoad
      const cache = StaleCache.make(l.load, { ttlMs: 1_000, scope })
      const first = yield* Effect.fork(cache.get)
      yield* l.release(1, 1)
      yield* Fiber.join(first)
      yield* TestClock.adjust(999)
      expect(yield* cache.get).toEqual({ value: 1, stale: false, ageMs: 999 })
      expect(l.runs()).toBe(1)
      yield* TestClock.adjust(2)
      // Three callers after the time to live: each served the old value at once; one read between them.
      const stale = yield* Effect.all([cache.get, cache.get, cache.get])
      expect(stale).toEqual([1, 1, 1].map((value) => ({ value, stale: true, ageMs: 1_001 })))
      yield* settle
      expect(l.runs()).toBe(2)
      yield* l.release(2, 2)
      yield* settle
      expect(yield* cache.get).toMatchObject({ value: 2, stale: false })
    }))

  it.scoped("clear drops the value: the next caller waits for a new read, and a read started before the clear is not kept", () =>
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const l = yield* gatedLoad
      const cache = StaleCache.make(l.load, { ttlMs: 1_000, scope })
      const before = yield* Effect.fork(cache.get)
      yield* settle
      expect(l.runs()).toBe(1)
      cache.clear()
      const after = yield* Effect.fork(cache.get)
      yield* l.release(1, 1)
      expect((yield* Fiber.join(before)).value).toBe(1)
      yield* settle
      expect(l.runs()).toBe(2)
      yield* l.release(2, 2)
      expect((yield* Fiber.join(after)).value).toBe(2)
      expect(cache.peek()).toBe(2)
      cache.clear()
      expect(cache.peek()).toBeUndefined()
    }))

  it.scoped("a failed background read keeps serving the stale value, and the next caller tries again", () =>
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const l = yield* gatedLoad
      const cache = StaleCache.make(l.load, { ttlMs: 1_000, scope })
      const first = yield* Effect.fork(cache.get)
      yield* l.release(1, 1)
      yield* Fiber.join(first)
      yield* TestClock.adjust(5_000)
      expect((yield* cache.get).stale).toBe(true)
      yield* l.release(2, { fail: "down" })
      yield* settle
      expect(yield* cache.get).toMatchObject({ value: 1, stale: true })
      yield* settle
      expect(l.runs()).toBe(3)
    }))

  it.scoped("an empty cache whose read fails fails its callers, and keeps nothing", () =>
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const l = yield* gatedLoad
      const cache = StaleCache.make(l.load, { ttlMs: 1_000, scope })
      const caller = yield* Effect.fork(Effect.either(cache.get))
      yield* l.release(1, { fail: "down" })
      expect((yield* Fiber.join(caller))._tag).toBe("Left")
      expect(cache.peek()).toBeUndefined()
    }))

  it.effect("a caller that gives up does not stop the read the others wait for (it runs in the session's scope)", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const l = yield* gatedLoad
      const cache = StaleCache.make(l.load, { ttlMs: 1_000, scope })
      const quitter = yield* Effect.fork(cache.get)
      const waiter = yield* Effect.fork(cache.get)
      yield* settle
      yield* Fiber.interrupt(quitter)
      yield* l.release(1, 7)
      expect((yield* Fiber.join(waiter)).value).toBe(7)
      expect(l.runs()).toBe(1)
      yield* Scope.close(scope, Exit.void)
    }))

  it.scoped("with a time to live of 0 every get reads again", () =>
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      let runs = 0
      const cache = StaleCache.make(Effect.sync(() => ++runs), { ttlMs: 0, scope })
      expect((yield* cache.get).value).toBe(1)
      expect((yield* cache.get).value).toBe(2)
    }))

  it.effect("the scope closing while a read runs (the session ended) ends its waiters instead of leaving them waiting", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const l = yield* gatedLoad
      const cache = StaleCache.make(l.load, { ttlMs: 1_000, scope })
      const waiter = yield* Effect.fork(cache.get)
      yield* settle
      expect(l.runs()).toBe(1)
      yield* Scope.close(scope, Exit.void)
      const exit = yield* Fiber.await(waiter)
      expect(Exit.isInterrupted(exit)).toBe(true)
    }))
})
