import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as TestClock from "effect/TestClock"
import { type Binding, canonicalJson, digest, RequestState, RequestStateError } from "../../src/Approval/RequestState.js"

const binding: Binding = {
  principalId: "tok_alice",
  method: "tools/call",
  purpose: "write",
  params: { name: "insert_rows", arguments: { connection_id: "c1", table: "Article", rows: [{ title: "x" }] } }
}

const reasonOf = <A>(result: Either.Either<A, RequestStateError>) => {
  assert.isTrue(Either.isLeft(result))
  return Either.isLeft(result) ? result.left.reason : undefined
}

const withService = <A, E>(f: (service: RequestState.Service) => Effect.Effect<A, E>, options: RequestState.Options = {}) =>
  Effect.flatMap(RequestState.make(options), f)

describe("RequestState", () => {
  it.effect("a state issued for a call is accepted once for the same principal, method and arguments", () =>
    withService((service) =>
      Effect.gen(function*() {
        const state = yield* service.issue(binding)
        const claims = yield* service.consume(state, binding)
        assert.strictEqual(claims.principalId, "tok_alice")
        assert.strictEqual(claims.method, "tools/call")
        assert.strictEqual(claims.purpose, "write")
      })
    ))

  it.effect("decision 8: a replayed state is refused with -32602, a write never runs twice", () =>
    withService((service) =>
      Effect.gen(function*() {
        const state = yield* service.issue(binding)
        yield* service.consume(state, binding)
        const replay = yield* Effect.either(service.consume(state, binding))
        assert.strictEqual(reasonOf(replay), "replayed")
        const error = Either.isLeft(replay) ? replay.left.toInvalidParams() : undefined
        assert.strictEqual(error?.code, -32602)
        assert.match(error?.message ?? "", /already been used/)
      })
    ))

  it.effect("concurrent uses of one state: exactly one succeeds", () =>
    withService((service) =>
      Effect.gen(function*() {
        const state = yield* service.issue(binding)
        const results = yield* Effect.all(
          Array.from({ length: 20 }, () => Effect.either(service.consume(state, binding))),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter(Either.isRight).length, 1)
      })
    ))

  it.effect("lifetime: valid at 4:59, expired at 5:00 (TestClock)", () =>
    withService((service) =>
      Effect.gen(function*() {
        const early = yield* service.issue(binding)
        const late = yield* service.issue(binding)
        yield* TestClock.adjust("299 seconds")
        yield* service.consume(early, binding)
        yield* TestClock.adjust("1 second")
        assert.strictEqual(reasonOf(yield* Effect.either(service.consume(late, binding))), "expired")
      })
    ))

  it.effect("an altered state is refused (payload or signature changed)", () =>
    withService((service) =>
      Effect.gen(function*() {
        const state = yield* service.issue(binding)
        const [payload, signature] = state.split(".") as [string, string]
        const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
        const forged = Buffer.from(JSON.stringify({ ...claims, t: claims.t + 1 })).toString("base64url")
        assert.strictEqual(reasonOf(yield* Effect.either(service.consume(`${forged}.${signature}`, binding))), "signature")
        const flipped = signature.slice(0, -2) + (signature.endsWith("AA") ? "BB" : "AA")
        assert.strictEqual(reasonOf(yield* Effect.either(service.consume(`${payload}.${flipped}`, binding))), "signature")
        assert.strictEqual(reasonOf(yield* Effect.either(service.consume("not a state", binding))), "malformed")
        assert.strictEqual(reasonOf(yield* Effect.either(service.consume(`${payload}.`, binding))), "malformed")
        // The untouched state is still good: refusals spend nothing.
        yield* service.consume(state, binding)
      })
    ))

  it.effect("a state from another daemon (another secret) is refused", () =>
    Effect.gen(function*() {
      const other = yield* RequestState.make()
      const ours = yield* RequestState.make()
      const state = yield* other.issue(binding)
      assert.strictEqual(reasonOf(yield* Effect.either(ours.consume(state, binding))), "signature")
    }))

  it.effect("another principal, another method, changed arguments, another purpose are refused", () =>
    withService((service) =>
      Effect.gen(function*() {
        const state = yield* service.issue(binding)
        const refuse = (b: Binding) => Effect.map(Effect.either(service.consume(state, b)), reasonOf)
        assert.strictEqual(yield* refuse({ ...binding, principalId: "tok_bob" }), "principal")
        assert.strictEqual(yield* refuse({ ...binding, method: "prompts/get" }), "method")
        assert.strictEqual(
          yield* refuse({ ...binding, params: { name: "insert_rows", arguments: { connection_id: "c1", table: "Other", rows: [{ title: "x" }] } } }),
          "params"
        )
        assert.strictEqual(yield* refuse({ ...binding, params: { name: "delete_rows", arguments: {} } }), "params")
        assert.strictEqual(yield* refuse({ ...binding, purpose: "firstAccess" }), "purpose")
      })
    ))

  it.effect("the digest ignores key order but not values", () =>
    withService((service) =>
      Effect.gen(function*() {
        const state = yield* service.issue({ ...binding, params: { name: "t", arguments: { a: 1, b: { c: [1, { d: 2, e: 3 }] } } } })
        yield* service.consume(state, { ...binding, params: { arguments: { b: { c: [1, { e: 3, d: 2 }] }, a: 1 }, name: "t" } })
        assert.strictEqual(canonicalJson({ b: 1, a: [{ y: 1, x: 2 }] }), "{\"a\":[{\"x\":2,\"y\":1}],\"b\":1}")
        assert.notStrictEqual(digest({ a: 1 }), digest({ a: 2 }))
      })
    ))

  it.effect("refusal messages never reveal the secret", () =>
    withService(
      (service) =>
        Effect.gen(function*() {
          const state = yield* service.issue(binding)
          const secretHex = Buffer.alloc(32, 7).toString("hex")
          const secretB64 = Buffer.alloc(32, 7).toString("base64url")
          for (const b of [{ ...binding, principalId: "x" }, { ...binding, params: {} }]) {
            const result = yield* Effect.either(service.consume(state + "x", b))
            const text = Either.isLeft(result) ? JSON.stringify(result.left.toInvalidParams()) + result.left.message : ""
            assert.notInclude(text, secretHex)
            assert.notInclude(text, secretB64)
          }
        }),
      { secret: Buffer.alloc(32, 7) }
    ))

  it.effect("the consumed-nonce set is bounded: pruned on expiry, fails closed when full", () =>
    withService(
      (service) =>
        Effect.gen(function*() {
          const spend = Effect.flatMap(service.issue(binding), (s) => service.consume(s, binding))
          yield* spend
          yield* spend
          assert.strictEqual(reasonOf(yield* Effect.either(spend)), "capacity")
          yield* TestClock.adjust("5 minutes")
          // Both remembered nonces have expired and are pruned; room again.
          yield* spend
        }),
      { maxConsumed: 2 }
    ))
})
