/**
 * Deadlines that end a request with `RequestTimeout` (-33003): the 330-second handler deadline, and a
 * statement's own `timeout_seconds` (README "Decisions" 7: it ends the call like the handler deadline; the tool
 * error `timeout` is kept for a time-out that Weaviate itself reports).
 *
 * Both read time from Effect's `Clock`, so `TestClock` drives them. The timed-out work is interrupted
 * and its finalizers (an aborted HTTP request to Weaviate included) run before the failure is seen.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import { RequestTimeout } from "../Schema/McpErrors.ts"

/** @category constants */
export const HANDLER_DEADLINE: Duration.Duration = Duration.seconds(330)

/**
 * The handler deadline every request except `subscriptions/listen` runs under.
 *
 * @category combinators
 */
export const withHandlerDeadline = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | RequestTimeout, R> =>
  Effect.timeoutFail(effect, {
    duration: HANDLER_DEADLINE,
    onTimeout: () =>
      new RequestTimeout({
        message: `Request timed out: the ${Duration.toSeconds(HANDLER_DEADLINE)}-second handler deadline was reached`
      })
  })

/**
 * A statement's own time-out (`timeout_seconds` of a tool).
 *
 * @category combinators
 */
export const withStatementTimeout = (seconds: number) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | RequestTimeout, R> =>
  Effect.timeoutFail(effect, {
    duration: Duration.seconds(seconds),
    onTimeout: () => new RequestTimeout({ message: `Statement timed out after ${seconds} s (timeout_seconds)` })
  })
