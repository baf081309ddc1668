/**
 * The in-flight request registry: every request runs in its own fiber, registered under
 * (principal, JSON-RPC id), so that it can be cancelled by that principal's `notifications/cancelled`,
 * by the revocation of its token, or by shutdown (the "In-flight request" state table).
 *
 * - A cancelled request (its fiber interrupted by `cancel`, `cancelPrincipal`, `cancelAll` or the
 *   closing of the layer) answers its caller with `RequestCancelled` (-33002).
 * - A caller that is itself interrupted (the client went away) gets no answer: its interruption is
 *   passed on to the work, which stops (and with it the HTTP request to Weaviate).
 * - The 330-second handler deadline applies unless `deadline: false` (`subscriptions/listen`).
 * - A second request with an id that is still in flight for the same principal is refused with
 *   `InvalidRequest` (-32600); the running call is left alone.
 *
 * In every case the work's finalizers have run before the caller gets its answer.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberMap from "effect/FiberMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { InvalidRequest, RequestCancelled, type RequestTimeout } from "../Schema/McpErrors.ts"
import { withHandlerDeadline } from "./Deadline.ts"

/** @category models */
export interface RequestKey {
  readonly principalId: string
  readonly requestId: string | number
}

/** @category models */
export interface RunOptions {
  /** `false` exempts the request from the handler deadline (`subscriptions/listen`). Default `true`. */
  readonly deadline?: boolean | undefined
}

/** Structural equality for the FiberMap: the same principal and the same id (`1` and `"1"` differ). */
class Key extends Data.Class<RequestKey> {}

const toKey = (key: RequestKey) => new Key({ principalId: key.principalId, requestId: key.requestId })

/** Client-supplied reasons are echoed back to that client, but not at any length. */
const MAX_REASON_LENGTH = 200

const cancelledBy = (reason: string | undefined) =>
  new RequestCancelled({
    message: reason === undefined || reason === ""
      ? "Request cancelled"
      : `Request cancelled: ${reason.length > MAX_REASON_LENGTH ? `${reason.slice(0, MAX_REASON_LENGTH)}…` : reason}`
  })

const duplicate = (key: RequestKey) =>
  new InvalidRequest({
    message: `Invalid request: a request with id ${JSON.stringify(key.requestId)} is already in flight`,
    data: { requestId: key.requestId }
  })

/** @category reasons */
export const REVOKED = "the access token was revoked"
/** @category reasons */
export const SHUTTING_DOWN = "the server is shutting down"

type WorkFiber = Fiber.RuntimeFiber<unknown, unknown>

/**
 * @category services
 */
export class InFlight extends Context.Tag("weaviate-mcp/InFlight")<InFlight, {
  /**
   * Runs `effect` registered under `key`, under the 330-second handler deadline unless
   * `deadline: false`. Refuses a duplicate in-flight id of the same principal with `InvalidRequest`;
   * a cancelled run fails with `RequestCancelled`; interrupting the caller interrupts the work.
   */
  readonly run: <A, E, R>(
    key: RequestKey,
    effect: Effect.Effect<A, E, R>,
    options?: RunOptions
  ) => Effect.Effect<A, E | RequestCancelled | RequestTimeout | InvalidRequest, R>
  /** `notifications/cancelled`: only that principal's request with that id; whether one was cancelled. */
  readonly cancel: (key: RequestKey, reason?: string) => Effect.Effect<boolean>
  /** Token revoked: cancels all of that principal's in-flight requests; how many. */
  readonly cancelPrincipal: (principalId: string) => Effect.Effect<number>
  /** Shutdown: cancels everything; how many. */
  readonly cancelAll: Effect.Effect<number>
  /** Cancels everything with a reason of its own (AI access paused); how many. */
  readonly cancelAllBecause: (reason: string) => Effect.Effect<number>
  /** Requests in flight. */
  readonly size: Effect.Effect<number>
}>() {
  static readonly make = Effect.gen(function*() {
    const map = yield* FiberMap.make<Key>()
    /** Why a fiber was cancelled, read when its caller turns the interruption into `RequestCancelled`. */
    const reasons = new WeakMap<WorkFiber, string>()

    /** Interrupts the fibers and waits until they have stopped (their finalizers have run). */
    const interrupt = (fibers: ReadonlyArray<WorkFiber>, reason: string) =>
      Effect.suspend(() => {
        // The first reason wins: a request cancelled by its client and then by shutdown says so.
        for (const fiber of fibers) if (!reasons.has(fiber)) reasons.set(fiber, reason)
        return Effect.as(Fiber.interruptAll(fibers), fibers.length)
      })

    const cancelWhere = (predicate: (key: Key) => boolean, reason: string) =>
      Effect.suspend(() =>
        interrupt(Array.from(map).flatMap(([key, fiber]) => predicate(key) ? [fiber] : []), reason)
      )

    const cancelAll = cancelWhere(() => true, SHUTTING_DOWN).pipe(Effect.withSpan("InFlight.cancelAll"))
    // Runs before the FiberMap's own finalizer, so that callers learn why they were cancelled.
    yield* Effect.addFinalizer(() => cancelAll)

    const run = <A, E, R>(
      key: RequestKey,
      effect: Effect.Effect<A, E, R>,
      options?: RunOptions
    ): Effect.Effect<A, E | RequestCancelled | RequestTimeout | InvalidRequest, R> => {
      const work = Effect.interruptible(options?.deadline === false ? effect : withHandlerDeadline(effect))
      // The fork runtime is captured outside the mask: the work must not inherit an uninterruptible region.
      return Effect.flatMap(FiberMap.runtime(map)<R>(), (fork) =>
        Effect.uninterruptibleMask((restore) =>
          Effect.suspend((): Effect.Effect<A, E | RequestCancelled | RequestTimeout | InvalidRequest> => {
            const mapKey = toKey(key)
            // Checked and forked in one synchronous step, so no other request can slip in between
            // (`onlyIfMissing` keeps the map from ever replacing a running call regardless).
            if (FiberMap.unsafeHas(map, mapKey)) return Effect.fail(duplicate(key))
            const fiber: Fiber.RuntimeFiber<A, E | RequestTimeout> = fork(mapKey, work, { onlyIfMissing: true })
            return restore(Fiber.await(fiber)).pipe(
              // The work runs detached from the caller: pass the caller's interruption on to it.
              Effect.onInterrupt(() => Fiber.interrupt(fiber)),
              Effect.flatMap((exit): Effect.Effect<A, E | RequestTimeout | RequestCancelled> =>
                Exit.isSuccess(exit)
                  ? Effect.succeed(exit.value)
                  : Cause.isInterruptedOnly(exit.cause)
                  ? Effect.fail(cancelledBy(reasons.get(fiber)))
                  : Effect.failCause(exit.cause)
              )
            )
          })
        ))
    }

    return InFlight.of({
      run,
      cancel: Effect.fn("InFlight.cancel")(function*(key: RequestKey, reason?: string) {
        const fiber = FiberMap.unsafeGet(map, toKey(key))
        if (Option.isNone(fiber)) return false
        yield* interrupt([fiber.value], reason ?? "")
        return true
      }),
      cancelPrincipal: Effect.fn("InFlight.cancelPrincipal")(function*(principalId: string) {
        return yield* cancelWhere((key) => key.principalId === principalId, REVOKED)
      }),
      cancelAll,
      cancelAllBecause: (reason) => cancelWhere(() => true, reason),
      size: FiberMap.size(map)
    })
  })

  /** Scoped: closing it cancels everything still in flight. */
  static readonly layer: Layer.Layer<InFlight> = Layer.scoped(InFlight, InFlight.make)
}
