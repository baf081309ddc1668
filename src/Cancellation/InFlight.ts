/**
 * The in-flight request registry: every request's work is registered under (principal, JSON-RPC id),
 * so that it can be cancelled by that principal's `notifications/cancelled`, by the revocation of its
 * token, or by shutdown (the "In-flight request" state table).
 *
 * - A cancelled request (its work interrupted by `cancel`, `cancelPrincipal`, `cancelAll` or the
 *   closing of the layer) answers its caller with `RequestCancelled` (-33002).
 * - A caller that is itself interrupted (the client went away) gets no answer: its interruption is
 *   passed on to the work, which stops (and with it the HTTP request to Weaviate).
 * - The 330-second handler deadline applies unless `deadline: false` (`subscriptions/listen`).
 * - A second request with an id that is still in flight for the same principal is refused with
 *   `InvalidRequest` (-32600); the running call is left alone.
 *
 * In every case the work's finalizers have run before the caller gets its answer.
 *
 * One fiber per request, whatever ends it: the work runs on the caller's own fiber. Cancellation,
 * revocation, pause and shutdown interrupt that fiber with their reason; the deadlines are entries of
 * one shared timer fiber (`Deadline.makeTimers`) that do the same; a caller that goes away interrupts
 * it too. A stop's interruption is taken back once the work has stopped, and the caller turns the
 * reason into its answer. (Before: a work fiber of its own per call; before that, a FiberMap fork, a
 * timed race for the handler deadline, one for the statement's time-out and one for shutdown: seven
 * fibers per tool call.)
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Equal from "effect/Equal"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as HashSet from "effect/HashSet"
import * as Layer from "effect/Layer"
import { InvalidRequest, RequestCancelled, type RequestTimeout, type ServiceUnavailable } from "../Schema/McpErrors.ts"
import { CallBounds, HANDLER_DEADLINE, handlerDeadlineReached, makeTimers } from "./Deadline.ts"

/** @category models */
export interface RequestKey {
  readonly principalId: string
  readonly requestId: string | number
}

/** @category models */
export interface RunOptions<P = never> {
  /** `false` exempts the request from the handler deadline (`subscriptions/listen`). Default `true`. */
  readonly deadline?: boolean | undefined
  /** Services the work runs with, besides the caller's (the request's own: its principal, its context). */
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

/** A request in flight: the fiber it runs on, why it was stopped (the first reason wins), who waits for it. */
interface Call {
  readonly principalId: string
  readonly fiber: Fiber.RuntimeFiber<unknown, unknown>
  stoppedBy: (() => StopReason) | undefined
  /** Stoppers waiting until the work has stopped (its finalizers have run). */
  waiting: Array<() => void> | undefined
}

const HANDLER_DEADLINE_MS = Duration.toMillis(HANDLER_DEADLINE)

/**
 * @category services
 */
export class InFlight extends Context.Tag("weaviate-mcp/InFlight")<InFlight, {
  /**
   * Runs `effect` registered under `key`, on the caller's fiber, under the 330-second handler deadline
   * unless `deadline: false`. Refuses a duplicate in-flight id of the same principal with
   * `InvalidRequest`; a stopped run fails with its reason (`RequestCancelled`, `RequestTimeout`,
   * `ServiceUnavailable`) and the caller goes on; interrupting the caller interrupts the work.
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
    // Every stop interrupts with this id, so a stop is told apart from the caller's own interruption.
    const stopper = FiberId.unsafeMake()
    let closed = false

    /** Records why (unless a reason came first) and interrupts the work. */
    const stopNow = (call: Call, reason: () => StopReason) => {
      call.stoppedBy ??= reason
      call.fiber.unsafeInterruptAsFork(stopper)
    }

    /**
     * Stops the calls `select` picks and waits until their work has stopped (its finalizers have run);
     * how many. They are picked and interrupted in one synchronous step: a call that ended in between
     * would have its caller interrupted after its answer.
     */
    const stop = (select: () => ReadonlyArray<Call>, reason: () => StopReason) =>
      Effect.async<number>((resume) => {
        const selected = select()
        let running = selected.length
        if (running === 0) return resume(Effect.succeed(0))
        const stopped = () => {
          if (--running === 0) resume(Effect.succeed(selected.length))
        }
        for (const call of selected) {
          ;(call.waiting ??= []).push(stopped)
          stopNow(call, reason)
        }
      })

    const stopWhere = (predicate: (call: Call) => boolean, reason: () => StopReason) => stop(() => [...calls.values()].filter(predicate), reason)

    const cancelAll = stopWhere(() => true, () => cancelledBy(SHUTTING_DOWN))
    yield* Effect.addFinalizer(() => Effect.zipRight(Effect.sync(() => (closed = true)), cancelAll))

    /** Whether every interruption the fiber has received came from a stop (none from its own caller). */
    const onlyStopped = (fiber: Fiber.RuntimeFiber<unknown, unknown>) => {
      const interruptors = Cause.interruptors(fiber.getFiberRef(FiberRef.interruptedCause))
      return HashSet.size(interruptors) > 0 && HashSet.every(interruptors, (id) => Equal.equals(id, stopper))
    }

    /**
     * The work runs on the caller's fiber, in an interruptible region, so that a stop is an
     * interruption of that fiber. A stop's interruption is then taken back (`FiberRef.interruptedCause`)
     * and the caller goes on with the reason as its failure; an interruption from anyone else stays.
     * (Before, the work ran on a fiber of its own. Measured in process against that, a tool call costs
     * 0.87-0.97x the CPU, half the collector's pauses, and 0.84-0.89 MB is promoted to the old
     * generation per scavenge instead of 1.29-1.56: its commit message.)
     * The registration is uninterruptible through `uninterruptibleMask(() => …)`, not
     * `uninterruptible(…)`: the same flags, but with the latter 0.5 MB of each scavenge's survivors was
     * promoted in sequential `list_connections` calls (32 KB with the mask; its commit message).
     */
    const run = <A, E, R, P = never>(
      key: RequestKey,
      effect: Effect.Effect<A, E, R>,
      options?: RunOptions<P>
    ): Effect.Effect<A, E | StopReason | InvalidRequest, Exclude<R, P>> =>
      Effect.uninterruptibleMask(() => Effect.withFiberRuntime<A, E | StopReason | InvalidRequest, Exclude<R, P>>((caller) => {
        if (closed) return Effect.fail(cancelledBy(undefined))
        const mapKey = keyOf(key)
        // Checked and registered in one synchronous step, so no other request can slip in between.
        if (calls.has(mapKey)) return Effect.fail(duplicate(key))
        const call: Call = { principalId: key.principalId, fiber: caller, stoppedBy: undefined, waiting: undefined }
        calls.set(mapKey, call)
        const cancelDeadline = options?.deadline === false ? undefined : timers.schedule(HANDLER_DEADLINE_MS, () => stopNow(call, handlerDeadlineReached))
        const bounds = CallBounds.of({ bound: (delayMs, error) => timers.schedule(delayMs, () => stopNow(call, error)) })
        const services = options?.context === undefined ? Context.make(CallBounds, bounds) : Context.add(options.context, CallBounds, bounds)
        const work = Effect.interruptible(Effect.provide(effect, services)) as Effect.Effect<A, E, Exclude<R, P>>
        return Effect.flatMap(Effect.exit(work), (exit): Effect.Effect<A, E | StopReason> => {
          cancelDeadline?.()
          // A duplicate is refused while the call is registered, so the entry is still this call's.
          calls.delete(mapKey)
          if (call.waiting !== undefined) for (const stopped of call.waiting) stopped()
          // Only stops interrupted the caller: their interruption is taken back (even one that came too
          // late to interrupt anything: the work's outcome then stands).
          const stopped = call.stoppedBy !== undefined && onlyStopped(caller)
          const outcome: Effect.Effect<A, E | StopReason> = Exit.isSuccess(exit) || !Cause.isInterruptedOnly(exit.cause)
            ? exit
            : stopped
            ? Effect.fail(call.stoppedBy!())
            // The work interrupted itself: answered as a cancellation. The caller's own interruption stays.
            : Cause.isEmpty(caller.getFiberRef(FiberRef.interruptedCause))
            ? Effect.fail(cancelledBy(undefined))
            : exit
          return stopped ? Effect.zipRight(FiberRef.set(FiberRef.interruptedCause, Cause.empty), outcome) : outcome
        })
      }))

    return InFlight.of({
      run,
      cancel: (key: RequestKey, reason?: string) =>
        Effect.map(stop(() => {
          const call = calls.get(keyOf(key))
          return call === undefined ? [] : [call]
        }, () => cancelledBy(reason ?? "")), (stopped) => stopped > 0),
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
