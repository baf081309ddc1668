/**
 * The "In-flight request" state table on the service: who may cancel what, what the caller gets,
 * deadlines on the TestClock, and that the work has really stopped when the caller hears about it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import { HANDLER_DEADLINE, withStatementTimeout } from "../../src/Cancellation/Deadline.ts"
import { InFlight, REVOKED, SHUTTING_DOWN } from "../../src/Cancellation/InFlight.ts"
import { InvalidRequest, RequestCancelled, RequestTimeout } from "../../src/Schema/McpErrors.ts"

/** Work that never ends by itself; says when it started and records how it ended. */
const hanging = Effect.gen(function*() {
  const started = yield* Deferred.make<void>()
  const ended = yield* Deferred.make<"interrupted">()
  const work = Deferred.succeed(started, undefined).pipe(
    Effect.zipRight(Effect.never),
    Effect.onInterrupt(() => Deferred.succeed(ended, "interrupted"))
  )
  return { work, started: Deferred.await(started), ended }
})

/** Starts `work` under `key` in a forked caller and waits until the work runs. */
const start = (inFlight: InFlight["Type"], principalId: string, requestId: string | number, options?: { deadline?: boolean }) =>
  Effect.gen(function*() {
    const h = yield* hanging
    const caller = yield* Effect.fork(inFlight.run({ principalId, requestId }, h.work, options))
    yield* h.started
    return { caller, ended: h.ended }
  })

/** Whether the caller is still waiting after every other fiber had the chance to run. */
const stillRunning = (fiber: Fiber.Fiber<unknown, unknown>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
    return Option.isNone(yield* Fiber.poll(fiber))
  })

/**
 * The JSON-RPC error a failure becomes. Errors that crossed a span carry it as a (cyclic) property,
 * so they are compared by what goes on the wire.
 */
const wire = (error: unknown) => {
  const e = error as { _tag: string; code: number; message: string; data?: unknown }
  return { _tag: e._tag, code: e.code, message: e.message, data: e.data }
}

const failureOf = <A, E>(fiber: Fiber.Fiber<A, E>) =>
  Effect.flatMap(Fiber.await(fiber), (exit) =>
    Exit.isFailure(exit) && exit.cause._tag === "Fail"
      ? Effect.succeed(exit.cause.error)
      : Effect.dieMessage(`expected a failure, got ${String(exit)}`))

describe("InFlight", () => {
  it.scoped("notifications/cancelled from the same principal finishes the request with -33002", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      const { caller, ended } = yield* start(inFlight, "token-a", 7)
      assert.isTrue(yield* inFlight.cancel({ principalId: "token-a", requestId: 7 }, "user pressed stop"))
      const error = yield* failureOf(caller)
      assert.instanceOf(error, RequestCancelled)
      assert.strictEqual((error as RequestCancelled).code, -33002)
      assert.strictEqual(error.message, "Request cancelled: user pressed stop")
      assert.strictEqual(yield* Deferred.await(ended), "interrupted")
      assert.strictEqual(yield* inFlight.size, 0)
    }))

  it.scoped("a cancellation without a reason says only that the request was cancelled", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      const { caller } = yield* start(inFlight, "token-a", "abc")
      assert.isTrue(yield* inFlight.cancel({ principalId: "token-a", requestId: "abc" }))
      assert.deepStrictEqual(wire(yield* failureOf(caller)), wire(new RequestCancelled({ message: "Request cancelled" })))
    }))

  it.scoped("a notification from another principal never touches the request (no effect, returns false)", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      const { caller } = yield* start(inFlight, "token-a", 1)
      assert.isFalse(yield* inFlight.cancel({ principalId: "token-b", requestId: 1 }))
      assert.isTrue(yield* stillRunning(caller))
      assert.strictEqual(yield* inFlight.size, 1)
    }))

  it.scoped("a notification for an id that is not in flight has no effect", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      const { caller } = yield* start(inFlight, "token-a", 1)
      assert.isFalse(yield* inFlight.cancel({ principalId: "token-a", requestId: 2 }))
      assert.isFalse(yield* inFlight.cancel({ principalId: "token-a", requestId: "1" }), "the string id \"1\" is not the number 1")
      assert.isTrue(yield* stillRunning(caller))
    }))

  it.scoped("a finished request can no longer be cancelled and its id can be used again", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      assert.strictEqual(yield* inFlight.run({ principalId: "token-a", requestId: 1 }, Effect.succeed("first")), "first")
      assert.isFalse(yield* inFlight.cancel({ principalId: "token-a", requestId: 1 }))
      assert.strictEqual(yield* inFlight.run({ principalId: "token-a", requestId: 1 }, Effect.succeed("second")), "second")
      assert.strictEqual(yield* inFlight.size, 0)
    }))

  it.scoped("a duplicate in-flight id of the same principal is refused with -32600 and the running call goes on", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      const release = yield* Deferred.make<string>()
      const started = yield* Deferred.make<void>()
      const first = yield* Effect.fork(
        inFlight.run({ principalId: "token-a", requestId: 5 }, Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(release)))
      )
      yield* Deferred.await(started)
      const ranDuplicate = yield* Ref.make(false)
      const error = yield* Effect.flip(inFlight.run({ principalId: "token-a", requestId: 5 }, Ref.set(ranDuplicate, true)))
      assert.instanceOf(error, InvalidRequest)
      assert.strictEqual((error as InvalidRequest).code, -32600)
      assert.deepStrictEqual(error.data, { requestId: 5 })
      assert.isFalse(yield* Ref.get(ranDuplicate), "the duplicate never runs")
      assert.isTrue(yield* stillRunning(first), "the running call is not replaced")
      // The same id from another principal is a different request.
      assert.strictEqual(yield* inFlight.run({ principalId: "token-b", requestId: 5 }, Effect.succeed("b")), "b")
      yield* Deferred.succeed(release, "first finished")
      assert.strictEqual(yield* Fiber.join(first), "first finished")
    }))

  it.scoped("revoking a token cancels exactly its in-flight requests: three of token A, not the one of token B", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      const a = yield* Effect.forEach([1, 2, 3], (id) => start(inFlight, "token-a", id))
      const b = yield* start(inFlight, "token-b", 1)
      assert.strictEqual(yield* inFlight.size, 4)
      assert.strictEqual(yield* inFlight.cancelPrincipal("token-a"), 3)
      for (const { caller, ended } of a) {
        assert.deepStrictEqual(wire(yield* failureOf(caller)), wire(new RequestCancelled({ message: `Request cancelled: ${REVOKED}` })))
        assert.strictEqual(yield* Deferred.await(ended), "interrupted")
      }
      assert.isTrue(yield* stillRunning(b.caller))
      assert.strictEqual(yield* inFlight.size, 1)
      assert.strictEqual(yield* inFlight.cancelPrincipal("token-a"), 0)
    }))

  it.scoped("shutdown (cancelAll) cancels everything with -33002", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      const running = [
        yield* start(inFlight, "token-a", 1),
        yield* start(inFlight, "token-b", 1),
        yield* start(inFlight, "anonymous", "x", { deadline: false })
      ]
      assert.strictEqual(yield* inFlight.cancelAll, 3)
      for (const { caller } of running) {
        assert.deepStrictEqual(wire(yield* failureOf(caller)), wire(new RequestCancelled({ message: `Request cancelled: ${SHUTTING_DOWN}` })))
      }
      assert.strictEqual(yield* inFlight.size, 0)
    }))

  it.effect("closing the layer answers every request still in flight with -33002", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const inFlight = yield* Scope.extend(InFlight.make, scope)
      const { caller, ended } = yield* start(inFlight, "token-a", 1)
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(wire(yield* failureOf(caller)), wire(new RequestCancelled({ message: `Request cancelled: ${SHUTTING_DOWN}` })))
      assert.strictEqual(yield* Deferred.await(ended), "interrupted")
      const late = yield* Effect.flip(inFlight.run({ principalId: "token-a", requestId: 2 }, Effect.succeed(1)))
      assert.deepStrictEqual(wire(late), wire(new RequestCancelled({ message: "Request cancelled" })), "nothing new starts after shutdown")
    }))

  it.scoped("the 330-second handler deadline: still running at 329 s, -33003 at 330 s", () =>
    Effect.gen(function*() {
      assert.strictEqual(Duration.toSeconds(HANDLER_DEADLINE), 330)
      const inFlight = yield* InFlight.make
      const { caller, ended } = yield* start(inFlight, "token-a", 1)
      yield* TestClock.adjust("329 seconds")
      assert.isTrue(yield* stillRunning(caller))
      yield* TestClock.adjust("1 second")
      const error = yield* failureOf(caller)
      assert.instanceOf(error, RequestTimeout)
      assert.strictEqual((error as RequestTimeout).code, -33003)
      assert.strictEqual(error.message, "Request timed out: the 330-second handler deadline was reached")
      assert.strictEqual(yield* Deferred.await(ended), "interrupted", "the timed-out work is stopped")
      assert.strictEqual(yield* inFlight.size, 0)
    }))

  it.scoped("deadline: false (subscriptions/listen) is exempt from the handler deadline", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      const { caller } = yield* start(inFlight, "token-a", "listen", { deadline: false })
      yield* TestClock.adjust("3 hours")
      assert.isTrue(yield* stillRunning(caller))
      assert.isTrue(yield* inFlight.cancel({ principalId: "token-a", requestId: "listen" }))
      assert.instanceOf(yield* failureOf(caller), RequestCancelled)
    }))

  it.scoped("a statement's own time-out (timeout_seconds) finishes the request with -33003", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      const h = yield* hanging
      const caller = yield* Effect.fork(inFlight.run({ principalId: "token-a", requestId: 1 }, withStatementTimeout(5)(h.work)))
      yield* h.started
      yield* TestClock.adjust("4 seconds")
      assert.isTrue(yield* stillRunning(caller))
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(wire(yield* failureOf(caller)), wire(new RequestTimeout({ message: "Statement timed out after 5 s (timeout_seconds)" })))
      assert.strictEqual(yield* Deferred.await(h.ended), "interrupted")
    }))

  class Greeting extends Context.Tag("test/Greeting")<Greeting, string>() {}

  it.scoped("the work starts with the services given in `context`, over the caller's, and they stay the work's", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      const seen = yield* inFlight.run({ principalId: "p", requestId: 1 }, Effect.map(Greeting, (greeting) => `work sees ${greeting}`), {
        context: Context.make(Greeting, "the request's")
      })
      assert.strictEqual(seen, "work sees the request's")
      // The caller's own service of the same tag is overridden for the work only.
      const overridden = yield* Effect.provideService(
        Effect.zip(inFlight.run({ principalId: "p", requestId: 2 }, Greeting, { context: Context.make(Greeting, "the request's") }), Greeting),
        Greeting,
        "the caller's"
      )
      assert.deepStrictEqual(overridden, ["the request's", "the caller's"])
    }))

  it.scoped("the work's own failures and results reach the caller unchanged", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      assert.strictEqual(yield* Effect.flip(inFlight.run({ principalId: "p", requestId: 1 }, Effect.fail("tool failed" as const))), "tool failed")
      const defect = yield* Effect.exit(inFlight.run({ principalId: "p", requestId: 2 }, Effect.dieMessage("boom")))
      assert.isTrue(Exit.isFailure(defect) && defect.cause._tag === "Die")
      assert.strictEqual(yield* inFlight.size, 0)
    }))

  /** Work whose finalizer takes several scheduler turns, so an answer that did not wait for it would come first. */
  const slowFinalizer = (finalized: Ref.Ref<boolean>, started: Deferred.Deferred<void>) =>
    Deferred.succeed(started, undefined).pipe(
      Effect.zipRight(Effect.never),
      Effect.ensuring(Effect.zipRight(Effect.repeatN(Effect.yieldNow(), 20), Ref.set(finalized, true)))
    )

  it.scoped("the work's finalizers have run before the caller gets -33002", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      const finalized = yield* Ref.make(false)
      const started = yield* Deferred.make<void>()
      const caller = yield* Effect.fork(
        inFlight.run({ principalId: "p", requestId: 1 }, slowFinalizer(finalized, started)).pipe(
          Effect.catchTag("RequestCancelled", () => Ref.get(finalized))
        )
      )
      yield* Deferred.await(started)
      yield* Effect.fork(inFlight.cancel({ principalId: "p", requestId: 1 }))
      assert.isTrue(yield* Fiber.join(caller), "finalized when the caller was answered")
    }))

  it.scoped("the work's finalizers have run before the caller gets -33003", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      const finalized = yield* Ref.make(false)
      const started = yield* Deferred.make<void>()
      const caller = yield* Effect.fork(
        inFlight.run({ principalId: "p", requestId: 1 }, slowFinalizer(finalized, started)).pipe(
          Effect.catchTag("RequestTimeout", () => Ref.get(finalized))
        )
      )
      yield* Deferred.await(started)
      yield* TestClock.adjust("330 seconds")
      assert.isTrue(yield* Fiber.join(caller), "finalized when the caller was answered")
    }))

  it.scoped("interrupting the caller (client gone) interrupts the work, which has stopped when the interruption returns", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      const finalized = yield* Ref.make(false)
      const started = yield* Deferred.make<void>()
      const caller = yield* Effect.fork(inFlight.run({ principalId: "p", requestId: 1 }, slowFinalizer(finalized, started)))
      yield* Deferred.await(started)
      const exit = yield* Fiber.interrupt(caller)
      assert.isTrue(Exit.isInterrupted(exit), "the caller gets no answer: it is interrupted")
      assert.isTrue(yield* Ref.get(finalized))
      assert.strictEqual(yield* inFlight.size, 0)
      assert.isFalse(yield* inFlight.cancel({ principalId: "p", requestId: 1 }))
    }))

  it.scoped("work started from an uninterruptible caller can still be cancelled", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      const h = yield* hanging
      const caller = yield* Effect.fork(Effect.uninterruptible(inFlight.run({ principalId: "p", requestId: 1 }, h.work)))
      yield* h.started
      assert.isTrue(yield* inFlight.cancel({ principalId: "p", requestId: 1 }))
      assert.instanceOf(yield* failureOf(caller), RequestCancelled)
    }))

  it.scoped("one fiber per call: the work runs on the caller's own fiber", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      const caller = yield* Effect.fiberId
      const work = yield* inFlight.run({ principalId: "p", requestId: 1 }, Effect.fiberId)
      assert.deepStrictEqual(work, caller)
    }))

  /**
   * A call in flight whose caller answers a stopped run, then waits for `goOn` before it ends (as a
   * transport writes its answer); started, with its work running.
   */
  const answeringCall = Effect.gen(function*() {
    const inFlight = yield* InFlight.make
    const h = yield* hanging
    const proceed = yield* Deferred.make<void>()
    const caller = yield* Effect.fork(Effect.gen(function*() {
      const error = yield* Effect.flip(inFlight.run({ principalId: "p", requestId: 1 }, h.work))
      yield* Deferred.await(proceed)
      return error
    }))
    yield* h.started
    return { inFlight, caller, ended: h.ended, goOn: Deferred.succeed(proceed, undefined) }
  })

  it.scoped("a stop is taken back once the work has stopped: the caller is not interrupted and goes on to answer", () =>
    Effect.gen(function*() {
      const { caller, goOn, inFlight } = yield* answeringCall
      assert.isTrue(yield* inFlight.cancel({ principalId: "p", requestId: 1 }))
      // The caller waits (interruptibly) after the run: a stop left standing would end it here.
      assert.isTrue(yield* stillRunning(caller))
      yield* goOn
      assert.instanceOf(yield* Fiber.join(caller), RequestCancelled)
    }))

  it.scoped("a stop returns once the work has stopped, not when its caller ends", () =>
    Effect.gen(function*() {
      const { caller, ended, goOn, inFlight } = yield* answeringCall
      assert.strictEqual(yield* inFlight.cancelPrincipal("p"), 1)
      assert.isTrue(Option.isSome(yield* Deferred.poll(ended)), "the work had stopped when the stop returned")
      assert.isTrue(yield* stillRunning(caller), "the caller had not ended")
      yield* goOn
      assert.instanceOf(yield* Fiber.join(caller), RequestCancelled)
    }))

  it.scoped("the caller's own interruption stays when a stop comes too: it ends interrupted, with no answer", () =>
    Effect.gen(function*() {
      const { caller, ended, goOn, inFlight } = yield* answeringCall
      // The client goes away and the request is cancelled in the same turn.
      yield* Fiber.interruptFork(caller)
      assert.isTrue(yield* inFlight.cancel({ principalId: "p", requestId: 1 }))
      yield* goOn
      const exit = yield* Fiber.await(caller)
      assert.isTrue(Exit.isInterrupted(exit), `expected the caller interrupted, got ${String(exit)}`)
      assert.strictEqual(yield* Deferred.await(ended), "interrupted")
      assert.strictEqual(yield* inFlight.size, 0)
    }))

  it.scoped("work that interrupts itself is answered as a cancellation (-33002), and its caller goes on", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      const error = yield* Effect.flip(inFlight.run({ principalId: "p", requestId: 1 }, Effect.interrupt))
      assert.instanceOf(error, RequestCancelled)
      assert.strictEqual(yield* inFlight.size, 0)
    }))

  it.scoped("one fiber per call: the statement's time-out runs the statement on the call's own fiber (no timed race)", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      const ids = yield* inFlight.run(
        { principalId: "p", requestId: 1 },
        Effect.gen(function*() {
          const outer = (yield* Effect.fiberId)
          const inner = yield* withStatementTimeout(5)(Effect.fiberId)
          return [outer, inner] as const
        })
      )
      assert.deepStrictEqual(ids[1], ids[0])
    }))

  it.scoped("the shared deadline timer stays exact after 10,000 finished calls: a new call ends at 330 s, not before", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight.make
      for (let i = 0; i < 10_000; i++) yield* inFlight.run({ principalId: "p", requestId: i }, Effect.void)
      yield* TestClock.adjust("100 seconds")
      const { caller } = yield* start(inFlight, "p", "late")
      yield* TestClock.adjust("329 seconds")
      assert.isTrue(yield* stillRunning(caller))
      yield* TestClock.adjust("1 second")
      assert.instanceOf(yield* failureOf(caller), RequestTimeout)
    }))

  it.effect("outside a call, a statement's time-out still bounds the statement (a timed race)", () =>
    Effect.gen(function*() {
      const h = yield* hanging
      const fiber = yield* Effect.fork(withStatementTimeout(2)(h.work))
      yield* h.started
      yield* TestClock.adjust("2 seconds")
      assert.deepStrictEqual(wire(yield* failureOf(fiber)), wire(new RequestTimeout({ message: "Statement timed out after 2 s (timeout_seconds)" })))
    }))

  it.scoped("the layer provides the service", () =>
    Effect.gen(function*() {
      const inFlight = yield* InFlight
      assert.strictEqual(yield* inFlight.run({ principalId: "p", requestId: 1 }, Effect.succeed(1)), 1)
    }).pipe(Effect.provide(InFlight.layer)))
})
