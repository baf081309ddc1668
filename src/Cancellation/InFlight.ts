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
 * One work fiber per request, whatever ends it: cancellation, revocation, pause and shutdown interrupt
 * it with their reason, the deadlines are entries of one shared timer fiber (`Deadline.makeTimers`)
 * that do the same, and a caller that goes away interrupts it. The caller turns the reason into its
 * answer. (Before, the work ran under a FiberMap fork, a timed race for the handler deadline, one for
 * the statement's time-out and one for shutdown: seven fibers per tool call.)
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import { InvalidRequest, RequestCancelled, type RequestTimeout, type ServiceUnavailable } from "../Schema/McpErrors.ts"
import { asCall, HANDLER_DEADLINE, handlerDeadlineReached, makeTimers } from "./Deadline.ts"

/** @category models */
export interface RequestKey {
  readonly principalId: string
  readonly requestId: string | number
}

/** @category models */
export interface RunOptions<P = never> {
  /** `false` exempts the request from the handler deadline (`subscriptions/listen`). Default `true`. */
  readonly deadline?: boolean | undefined
  /**
   * Services the work starts with, besides the caller's (the request's own: its principal, its
   * context). The work fiber is made with them, where `Effect.provide` around the work would run
   * about twenty more steps per request and copy the fiber's references twice.
   */
  readonly context?: Context.Context<P> | undefined
}

/** What a stopped request answers: the reason it was stopped for. @category models */
export type StopReason = RequestCancelled | RequestTimeout | ServiceUnavailable

/** The same principal and the same id (`1` and `"1"` differ). */
const keyOf = (key: RequestKey) => `${key.principalId}\u0000${typeof key.requestId}\u0000${key.requestId}`

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

/** A request in flight: its work fiber, and why it was stopped (the first reason wins). */
interface Call {
  readonly principalId: string
  readonly fiber: Fiber.RuntimeFiber<unknown, unknown>
  stoppedBy: (() => StopReason) | undefined
}

const HANDLER_DEADLINE_MS = Duration.toMillis(HANDLER_DEADLINE)

/**
 * @category services
 */
export class InFlight extends Context.Tag("weaviate-mcp/InFlight")<InFlight, {
  /**
   * Runs `effect` registered under `key`, under the 330-second handler deadline unless
   * `deadline: false`. Refuses a duplicate in-flight id of the same principal with `InvalidRequest`;
   * a stopped run fails with its reason (`RequestCancelled`, `RequestTimeout`, `ServiceUnavailable`);
   * interrupting the caller interrupts the work.
   */
  readonly run: <A, E, R, P = never>(
    key: RequestKey,
    effect: Effect.Effect<A, E, R>,
    options?: RunOptions<P>
  ) => Effect.Effect<A, E | StopReason | InvalidRequest, Exclude<R, P>>
  /** `notifications/cancelled`: only that principal's request with that id; whether one was cancelled. */
  readonly cancel: (key: RequestKey, reason?: string) => Effect.Effect<boolean>
  /** Token revoked: cancels all of that principal's in-flight requests; how many. */
  readonly cancelPrincipal: (principalId: string) => Effect.Effect<number>
  /** Shutdown: cancels everything; how many. */
  readonly cancelAll: Effect.Effect<number>
  /** Cancels everything with a reason of its own (AI access paused); how many. */
  readonly cancelAllBecause: (reason: string) => Effect.Effect<number>
  /** Stops everything with an answer of its own (the endpoint's shutdown: 503 `-33000`); how many. */
  readonly stopAll: (reason: () => StopReason) => Effect.Effect<number>
  /** Requests in flight. */
  readonly size: Effect.Effect<number>
}>() {
  static readonly make = Effect.gen(function*() {
    const calls = new Map<string, Call>()
    const timers = yield* makeTimers
    let closed = false

    /** Records why (unless a reason came first) and interrupts the work. */
    const stopNow = (call: Call, reason: () => StopReason) => {
      call.stoppedBy ??= reason
      call.fiber.unsafeInterruptAsFork(call.fiber.id())
    }

    /** Stops the calls and waits until their work has stopped (its finalizers have run). */
    const stop = (selected: ReadonlyArray<Call>, reason: () => StopReason) =>
      Effect.suspend(() => {
        for (const call of selected) call.stoppedBy ??= reason
        return Effect.as(Fiber.interruptAll(selected.map((call) => call.fiber)), selected.length)
      })

    const stopWhere = (predicate: (call: Call) => boolean, reason: () => StopReason) =>
      Effect.suspend(() => stop([...calls.values()].filter(predicate), reason))

    const cancelAll = stopWhere(() => true, () => cancelledBy(SHUTTING_DOWN))
    yield* Effect.addFinalizer(() => Effect.zipRight(Effect.sync(() => (closed = true)), cancelAll))

    const run = <A, E, R, P = never>(
      key: RequestKey,
      effect: Effect.Effect<A, E, R>,
      options?: RunOptions<P>
    ): Effect.Effect<A, E | StopReason | InvalidRequest, Exclude<R, P>> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.withFiberRuntime<A, E | StopReason | InvalidRequest, Exclude<R, P>>((caller, status) => {
          if (closed) return Effect.fail(cancelledBy(undefined))
          const mapKey = keyOf(key)
          // Checked and registered in one synchronous step, so no other request can slip in between.
          if (calls.has(mapKey)) return Effect.fail(duplicate(key))
          let call: Call | undefined
          const bounds = { bound: (delayMs: number, error: () => RequestTimeout) => timers.schedule(delayMs, () => stopNow(call!, error)) }
          // The work runs detached from the caller (a fiber of its own, interruptible), with the caller's
          // services (and the request's own) and fiber refs (its clock, logger, span), like a fork.
          const context = options?.context === undefined ? caller.currentContext : Context.merge(caller.currentContext, options.context)
          const runtime = Runtime.make({ context: context as Context.Context<R>, fiberRefs: caller.getFiberRefs(), runtimeFlags: status.runtimeFlags })
          const fiber = Runtime.runFork(runtime)(Effect.interruptible(asCall(effect, bounds)))
          call = { principalId: key.principalId, fiber, stoppedBy: undefined }
          calls.set(mapKey, call)
          const cancelDeadline = options?.deadline === false ? undefined : timers.schedule(HANDLER_DEADLINE_MS, () => stopNow(call!, handlerDeadlineReached))
          fiber.addObserver(() => {
            cancelDeadline?.()
            if (calls.get(mapKey) === call) calls.delete(mapKey)
          })
          // The work's end, awaited; a caller that goes away passes its interruption on to the work
          // (and waits until the work has stopped).
          const ended = Effect.async<Exit.Exit<A, E>>((resume) => {
            fiber.addObserver((exit) => resume(Effect.succeed(exit)))
            return Fiber.interrupt(fiber)
          })
          return restore(ended).pipe(
            Effect.flatMap((exit): Effect.Effect<A, E | StopReason> =>
              Exit.isSuccess(exit)
                ? Effect.succeed(exit.value)
                : Cause.isInterruptedOnly(exit.cause)
                ? Effect.fail(call!.stoppedBy?.() ?? cancelledBy(undefined))
                : Effect.failCause(exit.cause)
            )
          )
        })
      )

    return InFlight.of({
      run,
      cancel: (key: RequestKey, reason?: string) =>
        Effect.suspend(() => {
          const call = calls.get(keyOf(key))
          return call === undefined ? Effect.succeed(false) : Effect.as(stop([call], () => cancelledBy(reason ?? "")), true)
        }),
      cancelPrincipal: (principalId: string) => stopWhere((call) => call.principalId === principalId, () => cancelledBy(REVOKED)),
      cancelAll,
      cancelAllBecause: (reason) => stopWhere(() => true, () => cancelledBy(reason)),
      stopAll: (reason) => stopWhere(() => true, reason),
      size: Effect.sync(() => calls.size)
    })
  })

  /** Scoped: closing it cancels everything still in flight. */
  static readonly layer: Layer.Layer<InFlight> = Layer.scoped(InFlight, InFlight.make)
}
