/**
 * Two limits, counted separately:
 *
 * - **Per-principal request rate**: a token bucket per principal id, refilled at `requestsPerSecond`
 *   and holding up to `burst` requests (defaults 50/s, bursts of 100; `0` turns it off).
 * - **Authentication-failure lockout per client address**: after `authFailuresPerMinute` failed
 *   authentications (default 10; `0` turns it off) within a sliding minute, the address is locked out
 *   until the oldest of those failures leaves the window. Attempts refused during the lockout are not
 *   counted, so the `Retry-After` it announces holds.
 *
 * Both answer `RateLimited` (-33010, HTTP 429) with `Retry-After` in whole seconds (at least 1).
 * Time comes from `Clock`. Memory is bounded (`MAX_TRACKED` principals and as many addresses): when a
 * table is full, idle entries (a full bucket, failures out of the window) go first, then the least
 * recently used. A forgotten principal starts again with a full bucket; a forgotten address with no
 * failures counted.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { RateLimited } from "../Schema/McpErrors.ts"

/** @category constants */
export const DEFAULT_REQUESTS_PER_SECOND = 50
/** @category constants */
export const DEFAULT_AUTH_FAILURES_PER_MINUTE = 10

/** @category models */
export interface Options {
  /** Requests per second per principal; `0` disables. Default 50. */
  readonly requestsPerSecond?: number | undefined
  /** Bucket size; default twice the rate (100 at the default rate). */
  readonly burst?: number | undefined
  /** Failed authentications per minute per client address before the lockout; `0` disables. Default 10. */
  readonly authFailuresPerMinute?: number | undefined
  /** Most principals and addresses tracked at once. Default `MAX_TRACKED` (10,000) each. */
  readonly maxEntries?: number | undefined
}

/** Most principals (rate buckets) and most client addresses (failed authentications) tracked at once, each. @category constants */
export const MAX_TRACKED = 10_000

const LOCKOUT_WINDOW_MS = 60_000

/** The 429 answer; `retryAfterSeconds` is rounded up and at least 1. @category errors */
export const rateLimited = (reason: "rate" | "lockout", retryAfterMs: number): RateLimited => {
  const retryAfter = Math.max(1, Math.ceil(retryAfterMs / 1000))
  return new RateLimited({
    message: reason === "rate"
      ? `Rate limit exceeded; retry after ${retryAfter} s`
      : `Too many failed authentications from this address; retry after ${retryAfter} s`,
    data: { reason, retryAfter },
    headers: { "retry-after": String(retryAfter) }
  })
}

interface Bucket {
  tokens: number
  updatedAt: number
}

/** Re-inserting keeps a Map in least-recently-used order, so the first key is the one to evict. */
const touch = <K, V>(map: Map<K, V>, key: K, value: V) => {
  map.delete(key)
  map.set(key, value)
}

/**
 * @category services
 */
export class RateLimiter extends Context.Tag("weaviate-mcp/RateLimiter")<RateLimiter, {
  /** Takes one request from the principal's bucket, or fails with `RateLimited`. */
  readonly consume: (principalId: string) => Effect.Effect<void, RateLimited>
  /** Fails with `RateLimited` while the address is locked out. */
  readonly checkLockout: (address: string) => Effect.Effect<void, RateLimited>
  /** Counts one failed authentication from the address (ignored while it is locked out). */
  readonly recordAuthFailure: (address: string) => Effect.Effect<void>
  /** How many principals and addresses are tracked (memory bound checks). */
  readonly size: Effect.Effect<{ readonly principals: number; readonly addresses: number }>
}>() {
  /**
   * The clock is the one of the fiber that builds the limiter (the live clock in the daemon, a test's
   * `TestClock` in a test that builds it): `consume` reads it without a fiber, so that a request whose
   * authentication is decided at once needs none (see `Authenticator`).
   */
  static readonly make = (options: Options = {}) =>
    Effect.map(Effect.clock, (clock) => {
      const rate = options.requestsPerSecond ?? DEFAULT_REQUESTS_PER_SECOND
      const burst = Math.max(1, options.burst ?? rate * 2)
      const lockoutAfter = options.authFailuresPerMinute ?? DEFAULT_AUTH_FAILURES_PER_MINUTE
      const maxEntries = Math.max(1, options.maxEntries ?? MAX_TRACKED)
      const buckets = new Map<string, Bucket>()
      const failures = new Map<string, Array<number>>()

      const refill = (bucket: Bucket, now: number) => {
        bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.updatedAt) * rate) / 1000)
        bucket.updatedAt = now
      }

      const recent = (times: ReadonlyArray<number>, now: number) => times.filter((t) => t > now - LOCKOUT_WINDOW_MS)

      // Both tables are kept in least-recently-used order (`touch`), which is also the order of their
      // last use: the idle entries are at the front. Making room drops idle entries from the front and
      // stops at the first one in use, then drops the least recently used if the table is still full:
      // no scan of the table per new principal or address.
      const sweepBuckets = (now: number) => {
        for (const [key, bucket] of buckets) {
          refill(bucket, now)
          if (bucket.tokens < burst) break
          buckets.delete(key)
        }
        if (buckets.size >= maxEntries) buckets.delete(buckets.keys().next().value!)
      }

      const sweepFailures = (now: number) => {
        for (const [key, times] of failures) {
          if (times[times.length - 1]! > now - LOCKOUT_WINDOW_MS) break
          failures.delete(key)
        }
        if (failures.size >= maxEntries) failures.delete(failures.keys().next().value!)
      }

      /** Milliseconds until the address may try again, if it is locked out. */
      const lockedFor = (address: string, now: number): Option.Option<number> => {
        if (lockoutAfter <= 0) return Option.none()
        const times = failures.get(address)
        if (times === undefined) return Option.none()
        const inWindow = recent(times, now)
        if (inWindow.length < lockoutAfter) return Option.none()
        // Locked until the oldest of the last `lockoutAfter` failures leaves the window.
        return Option.some(inWindow[inWindow.length - lockoutAfter]! + LOCKOUT_WINDOW_MS - now)
      }

      // Every authenticated request takes from its bucket: synchronous, and its outcome an `Exit`
      // (`Effect.void` or `Exit.fail`), so the caller can read it without running a fiber.
      const consume = (principalId: string): Effect.Effect<void, RateLimited> => {
        if (rate <= 0) return Effect.void
        const now = clock.unsafeCurrentTimeMillis()
        let bucket = buckets.get(principalId)
        if (bucket === undefined) {
          if (buckets.size >= maxEntries) sweepBuckets(now)
          bucket = { tokens: burst, updatedAt: now }
        }
        refill(bucket, now)
        touch(buckets, principalId, bucket)
        if (bucket.tokens >= 1) {
          bucket.tokens -= 1
          return Effect.void
        }
        // `Exit.fail`, not `Effect.fail`: the latter attaches the current span to an error object, which
        // needs a fiber.
        return Exit.fail(rateLimited("rate", ((1 - bucket.tokens) * 1000) / rate))
      }

      const checkLockout = Effect.fn("RateLimiter.checkLockout")(function*(address: string) {
        const now = yield* Clock.currentTimeMillis
        const locked = lockedFor(address, now)
        if (Option.isSome(locked)) return yield* rateLimited("lockout", locked.value)
      })

      const recordAuthFailure = Effect.fn("RateLimiter.recordAuthFailure")(function*(address: string) {
        if (lockoutAfter <= 0) return
        const now = yield* Clock.currentTimeMillis
        if (Option.isSome(lockedFor(address, now))) return
        const existing = failures.get(address)
        if (existing === undefined && failures.size >= maxEntries) sweepFailures(now)
        // Only the last `lockoutAfter` failures decide a lockout: keep no more.
        const inWindow = recent(existing ?? [], now)
        const times = inWindow.slice(Math.max(0, inWindow.length - (lockoutAfter - 1)))
        times.push(now)
        touch(failures, address, times)
      })

      return RateLimiter.of({
        consume,
        checkLockout,
        recordAuthFailure,
        size: Effect.sync(() => ({ principals: buckets.size, addresses: failures.size }))
      })
    })

  /** @category layers */
  static readonly layer = (options: Options = {}) => Layer.effect(RateLimiter, RateLimiter.make(options))
}
