/**
 * Effects whose outcome is already known. In Effect 3 `Effect.succeed`, `Effect.void` and `Exit`s are
 * `Exit`s: their value can be read without running a fiber. The request path uses that to answer the
 * usual request synchronously; anything not decided yet runs as before. They stay because they pay:
 * without them a `tools/list` costs about 30% more CPU (the figure is in `HttpTransport.respond`).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

/**
 * Whether an effect is already a successful `Exit`.
 *
 * @category guards
 */
export const succeeded = <A, E, R>(effect: Effect.Effect<A, E, R>): effect is Exit.Success<A, E> =>
  Exit.isExit(effect) && Exit.isSuccess(effect as Exit.Exit<A, E>)

/**
 * `Effect.map` that stays an `Exit` when `self` has already succeeded.
 *
 * @category combinators
 */
export const map = <A, B, E, R>(self: Effect.Effect<A, E, R>, f: (a: A) => B): Effect.Effect<B, E, R> =>
  succeeded(self) ? Exit.succeed(f(self.value)) : Effect.map(self, f)
