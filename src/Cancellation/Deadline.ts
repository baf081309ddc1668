/**
 * Deadlines that end a request with `RequestTimeout` (-33003): the 330-second handler deadline, and a
 * statement's own `timeout_seconds` (docs/design.md "Decisions" 7: it ends the call like the handler deadline; the tool
 * error `timeout` is kept for a time-out that Weaviate itself reports).
 *
 * A deadline is an entry in `Timers`, not a fiber of its own: one timer fiber per daemon sleeps until
 * the earliest entry and, when it is due, stops the call with the time-out as its reason (see
 * `InFlight`). A request therefore runs on its own fiber whatever bounds it (a timed race forks two
 * fibers per bound; a tool call had three such races).
 *
 * Time is read from Effect's `Clock`, so `TestClock` drives every deadline. The timed-out work is
 * interrupted and its finalizers (an aborted HTTP request to Weaviate included) run before the failure
 * is seen.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { RequestTimeout } from "../Schema/McpErrors.ts"

/** @category constants */
export const HANDLER_DEADLINE: Duration.Duration = Duration.seconds(330)

/** @category errors */
export const handlerDeadlineReached = () =>
  new RequestTimeout({ message: `Request timed out: the ${Duration.toSeconds(HANDLER_DEADLINE)}-second handler deadline was reached` })

/** @category errors */
export const statementTimedOut = (seconds: number) => new RequestTimeout({ message: `Statement timed out after ${seconds} s (timeout_seconds)` })

// ===== Timers =====

/**
 * Timers on Effect's `Clock` served by one fiber.
 *
 * @category models
 */
export interface Timers {
  /** Calls `fire` once `delayMs` have passed on the clock, unless the returned cancel ran first. */
  readonly schedule: (delayMs: number, fire: () => void) => () => void
}

interface Entry {
  readonly due: number
  readonly fire: () => void
}

/**
 * The timer fiber lives as long as the scope. It sleeps until the earliest entry; an entry earlier
 * than that wakes it (rare: most deadlines of a daemon have the same length, so each new one is the
 * latest); a cancelled entry is removed at once, so only live deadlines are kept.
 *
 * @category constructors
 */
export const makeTimers: Effect.Effect<Timers, never, Scope.Scope> = Effect.gen(function*() {
  const clock = yield* Effect.clock
  // Sorted by due time; equal times keep their order.
  const entries: Array<Entry> = []
  let sleepingUntil = Number.POSITIVE_INFINITY
  let wake = Deferred.unsafeMake<void>(FiberId.none)

  const fireDue = () => {
    const now = clock.unsafeCurrentTimeMillis()
    while (entries.length > 0 && entries[0]!.due <= now) entries.shift()!.fire()
    return now
  }

  yield* Effect.forkScoped(Effect.forever(Effect.suspend(() => {
    const now = fireDue()
    const signal = wake = Deferred.unsafeMake<void>(FiberId.none)
    sleepingUntil = entries.length === 0 ? Number.POSITIVE_INFINITY : entries[0]!.due
    return Number.isFinite(sleepingUntil)
      ? Effect.raceFirst(Effect.sleep(sleepingUntil - now), Deferred.await(signal))
      : Deferred.await(signal)
  })))

  const schedule = (delayMs: number, fire: () => void) => {
    const entry: Entry = { due: clock.unsafeCurrentTimeMillis() + delayMs, fire }
    let at = entries.length
    while (at > 0 && entries[at - 1]!.due > entry.due) at--
    entries.splice(at, 0, entry)
    if (entry.due < sleepingUntil) Deferred.unsafeDone(wake, Exit.void)
    return () => {
      const index = entries.indexOf(entry)
      if (index >= 0) entries.splice(index, 1)
    }
  }
  return { schedule }
})

// ===== A call's own bounds =====

/**
 * What a call can be bounded by: provided by `InFlight.run` to the work it runs, read by
 * `withStatementTimeout`.
 *
 * @category services
 */
export class CallBounds extends Context.Tag("weaviate-mcp/CallBounds")<CallBounds, {
  /** Stops the call with `error` after `delayMs`, unless the returned cancel ran first. */
  readonly bound: (delayMs: number, error: () => RequestTimeout) => () => void
}>() {}

/**
 * A statement's own time-out (`timeout_seconds` of a tool). Inside a call (`InFlight.run`) it is one
 * timer entry that ends the call with -33003; elsewhere (a library program running a tool on its own)
 * it is a timed race.
 *
 * @category combinators
 */
export const withStatementTimeout = (seconds: number) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | RequestTimeout, R> =>
  Effect.flatMap(Effect.serviceOption(CallBounds), (bounds) => {
    if (Option.isNone(bounds)) {
      return Effect.timeoutFail(effect, { duration: Duration.seconds(seconds), onTimeout: () => statementTimedOut(seconds) })
    }
    const cancel = bounds.value.bound(seconds * 1000, () => statementTimedOut(seconds))
    return Effect.ensuring(effect, Effect.sync(cancel))
  })
