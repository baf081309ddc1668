import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as TestClock from "effect/TestClock"
import { BridgeToken } from "../../src/Auth/BridgeToken.ts"
import { defaultScopes } from "../../src/Schema/Policy.ts"

const HOUR = 3_600_000
const GRACE = 300_000

describe("BridgeToken", () => {
  it.scoped("the bridge is a readWrite principal; its token expires at rotation plus grace", () =>
    Effect.gen(function*() {
      const bridge = yield* BridgeToken.make()
      const credential = yield* SubscriptionRef.get(bridge.current)
      assert.match(credential.token, /^wmcp_bridge_[A-Za-z0-9_-]{43}$/)
      assert.strictEqual(credential.rotatesAt, HOUR)
      assert.strictEqual(credential.expiresAt, HOUR + GRACE)
      const principal = yield* bridge.verify(credential.token)
      assert.isTrue(Option.isSome(principal))
      const p = Option.getOrThrow(principal)
      assert.strictEqual(p.id, "bridge")
      assert.strictEqual(p.access, "readWrite")
      assert.deepStrictEqual(p.scopes, defaultScopes.readWrite)
      assert.deepStrictEqual(p.connections, Option.none())
      assert.deepStrictEqual(p.expiresAt, Option.some(HOUR + GRACE))
      assert.isTrue(Option.isNone(yield* bridge.verify(credential.token + "x")))
    }))

  it.scoped("rotates hourly, publishes each rotation, and keeps the previous token for the grace period", () =>
    Effect.gen(function*() {
      const bridge = yield* BridgeToken.make()
      const first = yield* SubscriptionRef.get(bridge.current)
      const seen = yield* bridge.changes.pipe(Stream.take(3), Stream.runCollect, Effect.fork)
      yield* TestClock.adjust("1 hour")
      const second = yield* SubscriptionRef.get(bridge.current)
      assert.notStrictEqual(second.token, first.token)
      assert.strictEqual(second.rotatesAt, 2 * HOUR)
      assert.strictEqual(second.expiresAt, 2 * HOUR + GRACE)
      // The previous token is still accepted, with its own expiry (the caller checks it).
      yield* TestClock.adjust("4 minutes")
      const old = Option.getOrThrow(yield* bridge.verify(first.token))
      assert.deepStrictEqual(old.expiresAt, Option.some(HOUR + GRACE))
      assert.isTrue(Option.isSome(yield* bridge.verify(second.token)))
      yield* TestClock.adjust("56 minutes")
      const third = yield* SubscriptionRef.get(bridge.current)
      assert.notStrictEqual(third.token, second.token)
      // Two rotations later the first token is gone.
      assert.isTrue(Option.isNone(yield* bridge.verify(first.token)))
      assert.isTrue(Option.isSome(yield* bridge.verify(second.token)))
      const published = Chunk.toReadonlyArray(yield* Fiber.join(seen)).map((c) => c.token)
      assert.deepStrictEqual(published, [first.token, second.token, third.token])
    }))

  it.scoped("an early rotation keeps the replaced token for the grace period only", () =>
    Effect.gen(function*() {
      const bridge = yield* BridgeToken.make({ rotateEvery: "1 hour", grace: "1 minute" })
      const first = yield* SubscriptionRef.get(bridge.current)
      yield* TestClock.adjust("10 minutes")
      const second = yield* bridge.rotate
      assert.strictEqual(second.rotatesAt, 70 * 60_000)
      const old = Option.getOrThrow(yield* bridge.verify(first.token))
      assert.deepStrictEqual(old.expiresAt, Option.some(11 * 60_000))
    }))
})
