/**
 * `subscriptions/listen` in process: the acknowledgement is emitted only once every watch has
 * started, so a change made right after the client saw it is delivered; a URI that cannot be watched
 * fails the request before any acknowledgement.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Catalogue from "../../src/Mcp/Catalogue.ts"
import { anonymous, CurrentPrincipal } from "../../src/Auth/Principal.ts"
import * as Subscriptions from "../../src/Mcp/Subscriptions.ts"
import { InvalidParams } from "../../src/Schema/McpErrors.ts"
import * as RequestContexts from "../support/RequestContexts.ts"

const context = RequestContexts.toolCall(undefined, { method: "subscriptions/listen", requestId: "s" })

/**
 * A catalogue whose watches subscribe, then wait for `baseline` (standing for a baseline read) before
 * they count as started; `started` completes once both are subscribed.
 */
const resources = (signals: {
  readonly listChanged: PubSub.PubSub<void>
  readonly updated: PubSub.PubSub<string>
  readonly baseline: Deferred.Deferred<void>
  readonly started: Latch
}): Catalogue.Resources["Type"] => {
  const start = <A>(subscribe: Effect.Effect<A, never, Scope.Scope>) =>
    Effect.tap(subscribe, () => Effect.zipRight(signals.started.arrive, Deferred.await(signals.baseline)))
  return {
    list: Effect.succeed([]),
    templates: [],
    read: () => Effect.fail(new InvalidParams({ message: "no" })),
    listChanged: Effect.map(start(PubSub.subscribe(signals.listChanged)), Stream.fromQueue),
    watch: (uri) =>
      uri === "test://bad"
        ? Effect.fail(new InvalidParams({ message: `Unknown resource: ${uri}` }))
        : Effect.map(start(PubSub.subscribe(signals.updated)), (updates) =>
          Stream.fromQueue(updates).pipe(Stream.filter((changed) => changed === uri), Stream.as(undefined as void)))
  }
}

/** Completes once `count` arrivals have been counted. */
interface Latch {
  readonly arrive: Effect.Effect<void>
  readonly all: Effect.Effect<void>
}

const latch = (count: number) =>
  Effect.gen(function*() {
    const arrived = yield* Ref.make(0)
    const done = yield* Deferred.make<void>()
    return {
      arrive: Effect.flatMap(Ref.updateAndGet(arrived, (n) => n + 1), (n) => n === count ? Deferred.succeed(done, undefined) : Effect.void),
      all: Deferred.await(done)
    } satisfies Latch
  })

const signals = Effect.gen(function*() {
  return {
    listChanged: yield* PubSub.unbounded<void>(),
    updated: yield* PubSub.unbounded<string>(),
    baseline: yield* Deferred.make<void>(),
    started: yield* latch(2)
  }
})

const pullOf = (requested: Subscriptions.Requested, catalogue: Catalogue.Resources["Type"]) =>
  Stream.toPull(Subscriptions.frames({ subscriptionId: "s", agreed: Subscriptions.agree(requested), resources: catalogue }).pipe(
    Stream.provideService(Catalogue.RequestContext, context),
    Stream.provideService(CurrentPrincipal, anonymous)
  ))

const messageOf = (frame: string) => JSON.parse(frame.slice("data: ".length))

describe("Subscriptions", () => {
  it.scoped("the acknowledgement waits until every watch has started (subscribed and holding its baseline)", () =>
    Effect.gen(function*() {
      const s = yield* signals
      const pull = yield* pullOf({ resourcesListChanged: true, resourceSubscriptions: ["test://a"] }, resources(s))
      const first = yield* Effect.fork(pull)
      // Both watches are subscribed and reading their baseline: the acknowledgement cannot exist yet.
      yield* s.started.all
      assert.isTrue(Option.isNone(yield* Fiber.poll(first)))
      yield* Deferred.succeed(s.baseline, undefined)
      const ack = Chunk.toArray(yield* Fiber.join(first))
      assert.strictEqual(ack.length, 1)
      assert.strictEqual(messageOf(ack[0]!).method, "notifications/subscriptions/acknowledged")
    }))

  it.scoped("a change published the moment the acknowledgement is seen is delivered", () =>
    Effect.gen(function*() {
      const s = yield* signals
      yield* Deferred.succeed(s.baseline, undefined)
      const pull = yield* pullOf({ resourcesListChanged: true, resourceSubscriptions: ["test://a"] }, resources(s))
      assert.strictEqual(messageOf(Chunk.unsafeHead(yield* pull)).method, "notifications/subscriptions/acknowledged")
      // Exactly one change of each kind, published the moment the acknowledgement was seen.
      yield* PubSub.publish(s.listChanged, undefined)
      yield* PubSub.publish(s.updated, "test://a")
      const seen: Array<string> = []
      // Bounded on the TestClock: a missed change would leave the pull waiting until the time-out.
      const collect = Effect.gen(function*() {
        while (seen.length < 2) seen.push(...Chunk.toArray(yield* pull).map((frame) => messageOf(frame).method))
      }).pipe(Effect.timeout("1 second"), Effect.exit, Effect.fork)
      const fiber = yield* collect
      yield* TestClock.adjust("1 second")
      assert.isTrue(Exit.isSuccess(yield* Fiber.join(fiber)), `seen: ${JSON.stringify(seen)}`)
      assert.sameMembers(seen, ["notifications/resources/list_changed", "notifications/resources/updated"])
    }))

  it.scoped("a URI that cannot be watched fails the request with its error: the subscription is never acknowledged", () =>
    Effect.gen(function*() {
      const s = yield* signals
      yield* Deferred.succeed(s.baseline, undefined)
      const pull = yield* pullOf({ resourcesListChanged: true, resourceSubscriptions: ["test://a", "test://bad"] }, resources(s))
      const end = yield* Effect.flip(pull)
      assert.isTrue(Option.isSome(end) && end.value._tag === "InvalidParams")
    }))

  it.scoped("at most MAX_QUEUED_FRAMES frames wait for a client that does not read: its sources wait too", () =>
    Effect.gen(function*() {
      let produced = 0
      // A watch that would report a change on every pull, as fast as it is pulled (bounded, in case the
      // bound is gone).
      const busy: Catalogue.Resources["Type"] = {
        list: Effect.succeed([]),
        templates: [],
        read: () => Effect.fail(new InvalidParams({ message: "no" })),
        listChanged: Effect.succeed(Stream.empty),
        watch: () => Effect.succeed(Stream.repeatEffect(Effect.sync(() => void produced++)).pipe(Stream.take(100_000)))
      }
      const pull = yield* pullOf({ resourceSubscriptions: ["test://a"] }, busy)
      assert.strictEqual(messageOf(Chunk.unsafeHead(yield* pull)).method, "notifications/subscriptions/acknowledged")
      // The client reads nothing more: the source's fiber runs until it must wait.
      for (let i = 0; i < 100; i++) yield* Effect.yieldNow()
      assert.isAtMost(produced, Subscriptions.MAX_QUEUED_FRAMES + 1)
      // Reading again lets it go on.
      const next = Chunk.toArray(yield* pull)
      assert.isAtLeast(next.length, 1)
      assert.strictEqual(messageOf(next[0]!).method, "notifications/resources/updated")
      for (let i = 0; i < 100; i++) yield* Effect.yieldNow()
      assert.isAbove(produced, Subscriptions.MAX_QUEUED_FRAMES + 1)
    }))
})
