/**
 * One cached value read from Weaviate, served stale while it is read again (stale-while-revalidate),
 * with one read at a time (single flight): callers that find it empty or cleared wait for the same
 * read; a caller that finds it older than `ttlMs` gets it at once, marked stale, and starts a
 * background read unless one is under way. `clear` (after our own writes) drops it: the next caller
 * reads it again and never sees the value from before the write. A read started before a `clear`
 * answers the callers that waited for it but is not kept.
 *
 * The age is measured with Effect's `Clock`, so tests move it with `TestClock`.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"

/** A value as the cache served it. @category models */
export interface Read<A> {
  readonly value: A
  /** older than the cache's time to live: a newer read is under way */
  readonly stale: boolean
  /** how long ago it was read, in milliseconds */
  readonly ageMs: number
}

/** @category models */
export interface StaleCache<A, E> {
  readonly get: Effect.Effect<Read<A>, E>
  /** Drops the value (our own write changed what it holds). */
  readonly clear: () => void
  /** The value held now, fresh or stale, without reading (undefined when empty). */
  readonly peek: () => A | undefined
}

/**
 * A cache of what `load` reads. Reads run in `scope` (the session's), so a caller that gives up does
 * not stop the read the others wait for. With `ttlMs <= 0` every `get` reads (callers at once still
 * share one read).
 *
 * @category constructors
 */
export const make = <A, E>(load: Effect.Effect<A, E>, options: { readonly ttlMs: number; readonly scope: Scope.Scope }): StaleCache<A, E> => {
  let held: { readonly value: A; readonly at: number } | undefined
  let inFlight: Deferred.Deferred<A, E> | undefined
  let generation = 0

  /** The read under way, or a new one forked into the scope. */
  const reading = Effect.suspend(() => {
    if (inFlight !== undefined) return Effect.succeed(inFlight)
    const deferred = Deferred.unsafeMake<A, E>(undefined as never)
    inFlight = deferred
    const started = generation
    const settled = Effect.sync(() => {
      if (inFlight === deferred) inFlight = undefined
    })
    const run = Effect.flatMap(Clock.currentTimeMillis, (at) =>
      Effect.exit(load).pipe(
        Effect.flatMap((exit) =>
          Effect.sync(() => {
            if (Exit.isSuccess(exit) && started === generation) held = { value: exit.value, at }
          }).pipe(Effect.zipRight(settled), Effect.zipRight(Deferred.done(deferred, exit)))
        )
      )).pipe(
        // The scope closed (the session ended) while reading: its waiters end too, rather than wait forever.
        Effect.onInterrupt(() => Effect.zipRight(settled, Deferred.interrupt(deferred)))
      )
    return Effect.as(Effect.forkIn(run, options.scope), deferred)
  })

  const get: Effect.Effect<Read<A>, E> = Effect.flatMap(Clock.currentTimeMillis, (now): Effect.Effect<Read<A>, E> => {
    const current = held
    if (current !== undefined && options.ttlMs > 0) {
      const ageMs = Math.max(0, now - current.at)
      if (ageMs < options.ttlMs) return Effect.succeed({ value: current.value, stale: false, ageMs })
      return Effect.as(reading, { value: current.value, stale: true, ageMs })
    }
    return Effect.flatMap(reading, (deferred) =>
      Effect.map(Deferred.await(deferred), (value) => ({ value, stale: false, ageMs: 0 })))
  })

  return {
    get,
    clear: () => {
      generation++
      held = undefined
      inFlight = undefined
    },
    peek: () => held?.value
  }
}
