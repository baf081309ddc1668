/**
 * `subscriptions/listen` in process: the catalogue's watches are in place before the acknowledgement
 * is emitted, so a change made right after the client saw it is delivered; a watch that fails ends
 * the subscription with its error after the acknowledgement.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Catalogue from "../../src/Mcp/Catalogue.ts"
import { anonymous, CurrentPrincipal } from "../../src/Mcp/Principal.ts"
import * as Subscriptions from "../../src/Mcp/Subscriptions.ts"
import { InvalidParams } from "../../src/Schema/McpErrors.ts"

const context = Catalogue.RequestContext.of({
  era: "modern",
  protocolVersion: "2026-07-28",
  method: "subscriptions/listen",
  requestId: "s",
  clientCapabilities: {},
  clientInfo: Option.none(),
  requestState: Option.none(),
  inputResponses: Option.none(),
  progress: () => Effect.void
})

const resources = (listChanged: PubSub.PubSub<void>, updated: PubSub.PubSub<string>): Catalogue.Resources["Type"] => ({
  list: Effect.succeed([]),
  templates: [],
  read: () => Effect.fail(new InvalidParams({ message: "no" })),
  listChanged: Stream.fromPubSub(listChanged),
  watch: (uri) =>
    uri === "test://bad"
      ? Stream.fail(new InvalidParams({ message: `Unknown resource: ${uri}` }))
      : Stream.fromPubSub(updated).pipe(Stream.filter((changed) => changed === uri), Stream.as(undefined as void))
})

const messageOf = (frame: string) => JSON.parse(frame.slice("data: ".length))

describe("Subscriptions", () => {
  it.scoped("the watches are in place before the acknowledgement: a change published right after it is delivered", () =>
    Effect.gen(function*() {
      const listChanged = yield* PubSub.unbounded<void>()
      const updated = yield* PubSub.unbounded<string>()
      const frames = Subscriptions.frames({
        subscriptionId: "s",
        agreed: Subscriptions.agree({ resourcesListChanged: true, resourceSubscriptions: ["test://a"] }),
        resources: resources(listChanged, updated)
      })
      const pull = yield* Stream.toPull(frames.pipe(
        Stream.provideService(Catalogue.RequestContext, context),
        Stream.provideService(CurrentPrincipal, anonymous)
      ))
      const ack = Chunk.toArray(yield* pull)
      assert.strictEqual(ack.length, 1)
      assert.strictEqual(messageOf(ack[0]!).method, "notifications/subscriptions/acknowledged")
      // Exactly one change of each kind, published the moment the acknowledgement was seen.
      yield* PubSub.publish(listChanged, undefined)
      yield* PubSub.publish(updated, "test://a")
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

  it.scoped("a watch that cannot start ends the subscription with its error, after the acknowledgement", () =>
    Effect.gen(function*() {
      const frames = Subscriptions.frames({
        subscriptionId: "s",
        agreed: Subscriptions.agree({ resourceSubscriptions: ["test://bad"] }),
        resources: resources(yield* PubSub.unbounded<void>(), yield* PubSub.unbounded<string>())
      })
      const pull = yield* Stream.toPull(frames.pipe(
        Stream.provideService(Catalogue.RequestContext, context),
        Stream.provideService(CurrentPrincipal, anonymous)
      ))
      assert.strictEqual(messageOf(Chunk.unsafeHead(yield* pull)).method, "notifications/subscriptions/acknowledged")
      const end = yield* Effect.flip(pull)
      assert.isTrue(Option.isSome(end) && end.value._tag === "InvalidParams")
    }))
})
