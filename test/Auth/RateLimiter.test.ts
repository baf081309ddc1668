import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { MAX_TRACKED, RateLimiter } from "../../src/Auth/RateLimiter.ts"
import { RateLimited } from "../../src/Schema/McpErrors.ts"

/** Consumes `n` requests and returns how many passed. */
const consumeMany = (limiter: RateLimiter["Type"], principal: string, n: number) =>
  Effect.gen(function*() {
    let passed = 0
    for (let i = 0; i < n; i++) {
      const result = yield* Effect.either(limiter.consume(principal))
      if (result._tag === "Right") passed++
    }
    return passed
  })

const failMany = (limiter: RateLimiter["Type"], address: string, n: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < n; i++) yield* limiter.recordAuthFailure(address)
  })

describe("RateLimiter", () => {
  describe("per-principal rate", () => {
    it.effect("defaults: bursts of 100, then 50 per second, answered 429 -33010 with Retry-After", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.make()
        assert.strictEqual(yield* consumeMany(limiter, "p1", 100), 100)
        const error = yield* Effect.flip(limiter.consume("p1"))
        assert.instanceOf(error, RateLimited)
        assert.strictEqual(error.code, -33010)
        assert.strictEqual(error.httpStatus, 429)
        assert.deepStrictEqual(error.headers, { "retry-after": "1" })
        assert.deepStrictEqual(error.data, { reason: "rate", retryAfter: 1 })
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* consumeMany(limiter, "p1", 60), 50)
        yield* TestClock.adjust("10 seconds")
        assert.strictEqual(yield* consumeMany(limiter, "p1", 150), 100, "the bucket never holds more than the burst")
      }))

    it.effect("principals have separate buckets", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.make({ requestsPerSecond: 1, burst: 2 })
        assert.strictEqual(yield* consumeMany(limiter, "a", 5), 2)
        assert.strictEqual(yield* consumeMany(limiter, "b", 5), 2)
      }))

    it.effect("Retry-After is whole seconds, rounded up, at least 1", () =>
      Effect.gen(function*() {
        const slow = yield* RateLimiter.make({ requestsPerSecond: 0.25, burst: 1 })
        yield* slow.consume("p")
        const error = yield* Effect.flip(slow.consume("p"))
        assert.deepStrictEqual(error.headers, { "retry-after": "4" })
        yield* TestClock.adjust("2500 millis")
        const later = yield* Effect.flip(slow.consume("p"))
        assert.deepStrictEqual(later.headers, { "retry-after": "2" })
        yield* TestClock.adjust("1500 millis")
        yield* slow.consume("p")
        const fast = yield* RateLimiter.make({ requestsPerSecond: 1000, burst: 1 })
        yield* fast.consume("p")
        assert.deepStrictEqual((yield* Effect.flip(fast.consume("p"))).headers, { "retry-after": "1" })
      }))

    it.effect("a rate of 0 turns the limit off", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.make({ requestsPerSecond: 0 })
        assert.strictEqual(yield* consumeMany(limiter, "p", 5_000), 5_000)
        assert.strictEqual((yield* limiter.size).principals, 0)
      }))

    it.effect("memory is bounded: idle buckets are swept and the table never exceeds maxEntries", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.make({ requestsPerSecond: 10, burst: 10, maxEntries: 50 })
        for (let i = 0; i < 500; i++) yield* limiter.consume(`p${i}`)
        assert.isAtMost((yield* limiter.size).principals, 50)
        yield* TestClock.adjust("1 second")
        yield* limiter.consume("fresh")
        // The next new principal finds a full table; refilled (idle) buckets go first.
        for (let i = 0; i < 60; i++) yield* limiter.consume(`q${i}`)
        assert.isAtMost((yield* limiter.size).principals, 50)
      }))
  })

  describe("default bound", () => {
    it.effect("by default at most MAX_TRACKED principals are tracked; past it the least recently used is forgotten and starts again with a full bucket", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.make({ requestsPerSecond: 1, burst: 2 })
        for (let i = 0; i < MAX_TRACKED + 500; i++) yield* limiter.consume(`p${i}`)
        assert.strictEqual((yield* limiter.size).principals, MAX_TRACKED)
        // p0 was forgotten: its bucket is full again (two requests pass, the third is limited).
        yield* limiter.consume("p0")
        yield* limiter.consume("p0")
        assert.strictEqual(((yield* Effect.flip(limiter.consume("p0"))).data as { reason: string }).reason, "rate")
      }))
  })

  describe("authentication-failure lockout", () => {
    it.effect("defaults: 10 failures per minute lock the address out with Retry-After until the window passes", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.make()
        yield* failMany(limiter, "127.0.0.1", 9)
        yield* limiter.checkLockout("127.0.0.1")
        yield* limiter.recordAuthFailure("127.0.0.1")
        const error = yield* Effect.flip(limiter.checkLockout("127.0.0.1"))
        assert.strictEqual(error.code, -33010)
        assert.strictEqual(error.httpStatus, 429)
        assert.deepStrictEqual(error.headers, { "retry-after": "60" })
        assert.deepStrictEqual(error.data, { reason: "lockout", retryAfter: 60 })
        yield* TestClock.adjust("45 seconds")
        // Attempts during the lockout are not counted: the announced Retry-After holds.
        yield* failMany(limiter, "127.0.0.1", 20)
        assert.deepStrictEqual((yield* Effect.flip(limiter.checkLockout("127.0.0.1"))).headers, { "retry-after": "15" })
        yield* TestClock.adjust("14999 millis")
        assert.deepStrictEqual((yield* Effect.flip(limiter.checkLockout("127.0.0.1"))).headers, { "retry-after": "1" })
        yield* TestClock.adjust("1 millis")
        yield* limiter.checkLockout("127.0.0.1")
      }))

    it.effect("the window slides: failures older than a minute do not count", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.make({ authFailuresPerMinute: 3 })
        yield* limiter.recordAuthFailure("a")
        yield* TestClock.adjust("50 seconds")
        yield* failMany(limiter, "a", 2)
        const error = yield* Effect.flip(limiter.checkLockout("a"))
        assert.deepStrictEqual(error.headers, { "retry-after": "10" })
        yield* TestClock.adjust("10 seconds")
        yield* limiter.checkLockout("a")
        yield* limiter.recordAuthFailure("a")
        assert.deepStrictEqual((yield* Effect.flip(limiter.checkLockout("a"))).headers, { "retry-after": "50" })
      }))

    it.effect("lockouts are per address", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.make({ authFailuresPerMinute: 2 })
        yield* failMany(limiter, "10.0.0.1", 2)
        assert.strictEqual((yield* Effect.flip(limiter.checkLockout("10.0.0.1"))).code, -33010)
        yield* limiter.checkLockout("::1")
      }))

    it.effect("lockouts and request rates are counted separately", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.make({ requestsPerSecond: 1, burst: 1, authFailuresPerMinute: 1 })
        yield* limiter.consume("127.0.0.1")
        assert.deepStrictEqual((yield* Effect.flip(limiter.consume("127.0.0.1"))).data, { reason: "rate", retryAfter: 1 })
        yield* limiter.checkLockout("127.0.0.1")
        yield* limiter.recordAuthFailure("127.0.0.1")
        assert.deepStrictEqual((yield* Effect.flip(limiter.checkLockout("127.0.0.1"))).data, { reason: "lockout", retryAfter: 60 })
        yield* TestClock.adjust("1 second")
        yield* limiter.consume("127.0.0.1")
      }))

    it.effect("0 turns the lockout off", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.make({ authFailuresPerMinute: 0 })
        yield* failMany(limiter, "a", 1_000)
        yield* limiter.checkLockout("a")
        assert.strictEqual((yield* limiter.size).addresses, 0)
      }))

    it.effect("by default at most MAX_TRACKED addresses are tracked: a flood of failures from new addresses keeps the table at the bound, the newest counted", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.make()
        for (let i = 0; i < MAX_TRACKED + 500; i++) yield* limiter.recordAuthFailure(`addr-${i}`)
        assert.strictEqual((yield* limiter.size).addresses, MAX_TRACKED)
        // The newest address's failures still count towards its lockout.
        yield* failMany(limiter, `addr-${MAX_TRACKED + 499}`, 9)
        assert.strictEqual(((yield* Effect.flip(limiter.checkLockout(`addr-${MAX_TRACKED + 499}`))).data as { reason: string }).reason, "lockout")
      }))

    it.effect("memory is bounded for addresses too", () =>
      Effect.gen(function*() {
        const limiter = yield* RateLimiter.make({ maxEntries: 20 })
        for (let i = 0; i < 200; i++) yield* limiter.recordAuthFailure(`10.0.0.${i}`)
        assert.isAtMost((yield* limiter.size).addresses, 20)
        yield* TestClock.adjust("61 seconds")
        yield* limiter.recordAuthFailure("fresh-1")
        for (let i = 0; i < 20; i++) yield* limiter.recordAuthFailure(`10.1.0.${i}`)
        assert.isAtMost((yield* limiter.size).addresses, 20)
      }))
  })
})
