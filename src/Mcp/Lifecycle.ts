/**
 * The lifecycle of whatever serves the endpoint: when it begins to shut down. A transport begins the
 * shutdown (the `node:http` transport in its finalizer, before its grace period; the `HttpRouter`
 * adapter's layer when the host closes it) and the endpoint reads it: requests that arrive during
 * shutdown are answered 503, calls still running race it, subscriptions end with their result.
 *
 * A client that goes away is not part of it: both transports interrupt the request's fiber when its
 * client closes the connection before the response ended, and interruption is cancellation.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * @category services
 */
export class Lifecycle extends Context.Tag("weaviate-mcp/Lifecycle")<Lifecycle, {
  /** Whether shutdown has begun (for requests that arrive during the grace period). */
  readonly isShuttingDown: () => boolean
  /** Completes when shutdown begins: answer what you can, quickly. */
  readonly shutdown: Effect.Effect<void>
  /** Begins the shutdown; idempotent. */
  readonly beginShutdown: Effect.Effect<void>
}>() {}

/** @category constructors */
export const make: Effect.Effect<Lifecycle["Type"]> = Effect.map(Deferred.make<void>(), (signal) => {
  let shuttingDown = false
  return Lifecycle.of({
    isShuttingDown: () => shuttingDown,
    shutdown: Deferred.await(signal),
    beginShutdown: Effect.suspend(() => {
      shuttingDown = true
      return Deferred.succeed(signal, undefined)
    })
  })
})

/**
 * A lifecycle that begins its shutdown, at the latest, when the layer's scope closes.
 *
 * @category layers
 */
export const layer: Layer.Layer<Lifecycle> = Layer.scoped(
  Lifecycle,
  Effect.tap(make, (lifecycle) => Effect.addFinalizer(() => lifecycle.beginShutdown))
)
