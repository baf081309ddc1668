import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as TestClock from "effect/TestClock"
import * as NodeCrypto from "node:crypto"
import { type Binding, canonicalJson, digest, MAX_CONSUMED, RequestState, RequestStateError } from "../../src/Approval/RequestState.js"

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

  it.effect("by default at most MAX_CONSUMED nonces are remembered: the next state is refused (capacity) until the oldest expire", () =>
    withService((service) =>
      Effect.gen(function*() {
        const spend = Effect.flatMap(service.issue(binding), (s) => service.consume(s, binding))
        for (let i = 0; i < MAX_CONSUMED; i++) yield* spend
        assert.strictEqual(reasonOf(yield* Effect.either(spend)), "capacity")
        yield* TestClock.adjust("5 minutes")
        yield* spend
      })
    ))
})

describe("RequestState guards", () => {
  const secret = Buffer.alloc(32, 9)
  /** A state signed with the service's own (test) secret: what only the daemon itself could issue. */
  const signed = (claims: unknown) => {
    const payload = JSON.stringify(claims)
    const signature = NodeCrypto.createHmac("sha256", secret).update(payload, "utf8").digest("base64url")
    return `${Buffer.from(payload, "utf8").toString("base64url")}.${signature}`
  }
  const claimsFor = (b: Binding, t: number) => ({ v: 1, u: b.purpose, p: b.principalId, m: b.method, d: digest(b.params), t, n: "nonce" })
  const withSecret = <A, E>(f: (service: RequestState.Service) => Effect.Effect<A, E>) => withService(f, { secret })
  const refusal = (service: RequestState.Service, state: string, b: Binding = binding) =>
    Effect.map(Effect.either(service.consume(state, b)), reasonOf)

  it("the digest covers every element of an array argument: [1,2] and [12] differ", () => {
    assert.strictEqual(canonicalJson([1, 2]), "[1,2]")
    assert.notStrictEqual(digest({ ids: [1, 2] }), digest({ ids: [12] }))
    assert.notStrictEqual(digest({ rows: ["a", "b"] }), digest({ rows: ["ab"] }))
    assert.strictEqual(canonicalJson({ b: [1, [2, 3]], a: {} }), "{\"a\":{},\"b\":[1,[2,3]]}")
  })

  it.effect("changing one element of a multi-element array argument invalidates the approval", () =>
    withService((service) =>
      Effect.gen(function*() {
        const params = (ids: ReadonlyArray<number>) => ({ name: "delete_rows", arguments: { ids } })
        const state = yield* service.issue({ ...binding, params: params([1, 2, 3]) })
        assert.strictEqual(yield* refusal(service, state, { ...binding, params: params([1, 2, 4]) }), "params")
        assert.strictEqual(yield* refusal(service, state, { ...binding, params: params([12, 3]) }), "params")
        yield* service.consume(state, { ...binding, params: params([1, 2, 3]) })
      })
    ))

  it("null arguments are digested: null is neither a missing member nor the text \"null\"", () => {
    assert.strictEqual(canonicalJson(null), "null")
    assert.strictEqual(canonicalJson({ a: null }), "{\"a\":null}")
    assert.strictEqual(canonicalJson([null, undefined]), "[null,null]")
    assert.notStrictEqual(digest({ a: null }), digest({}))
    assert.notStrictEqual(digest({ a: null }), digest({ a: "null" }))
    assert.notStrictEqual(digest(null), digest({}))
    // What JSON.stringify leaves out is left out of the digest too: undefined members and functions.
    assert.strictEqual(canonicalJson({ a: 1, b: undefined, f: () => 1 }), "{\"a\":1}")
    assert.strictEqual(canonicalJson(undefined), "null")
    assert.strictEqual(canonicalJson([undefined, () => 1, null]), JSON.stringify([undefined, () => 1, null]))
  })

  it.effect("a null argument changed after approval invalidates it", () =>
    withService((service) =>
      Effect.gen(function*() {
        const params = (note: unknown) => ({ name: "update_rows", arguments: { note } })
        const state = yield* service.issue({ ...binding, params: params(null) })
        assert.strictEqual(yield* refusal(service, state, { ...binding, params: params("null") }), "params")
        assert.strictEqual(yield* refusal(service, state, { ...binding, params: { name: "update_rows", arguments: {} } }), "params")
        yield* service.consume(state, { ...binding, params: params(null) })
      })
    ))

  it.effect("a state dated in the future is refused as expired; one dated now is accepted", () =>
    withSecret((service) =>
      Effect.gen(function*() {
        yield* TestClock.adjust("1 minute")
        const now = 60_000
        assert.strictEqual(yield* refusal(service, signed(claimsFor(binding, now + 1))), "expired")
        assert.strictEqual(yield* refusal(service, signed(claimsFor(binding, now + 3_600_000))), "expired")
        const claims = yield* service.consume(signed(claimsFor(binding, now)), binding)
        assert.strictEqual(claims.issuedAt, now)
        assert.strictEqual(claims.nonce, "nonce")
        assert.strictEqual(claims.digest, digest(binding.params))
      })
    ))

  it.effect("a state whose claims are not the state format is malformed, even when correctly signed", () =>
    withSecret((service) =>
      Effect.gen(function*() {
        const good = claimsFor(binding, 0)
        assert.strictEqual(yield* refusal(service, signed({ ...good, v: 2 })), "malformed")
        assert.strictEqual(yield* refusal(service, signed({ ...good, t: "0" })), "malformed")
        assert.strictEqual(yield* refusal(service, signed({ ...good, u: "read" })), "malformed")
        assert.strictEqual(yield* refusal(service, signed("just text")), "malformed")
        const { n: _n, ...noNonce } = good
        assert.strictEqual(yield* refusal(service, signed(noNonce)), "malformed")
        yield* service.consume(signed(good), binding)
      })
    ))

  it.effect("a state is exactly two base64url parts: extra parts or other characters are malformed", () =>
    withSecret((service) =>
      Effect.gen(function*() {
        const state = signed(claimsFor(binding, 0))
        const [payload, signature] = state.split(".") as [string, string]
        // Node's base64url decoder skips these characters, so only the format check stops them.
        assert.strictEqual(yield* refusal(service, `${payload}=.${signature}`), "malformed")
        assert.strictEqual(yield* refusal(service, `=${payload}.${signature}`), "malformed")
        assert.strictEqual(yield* refusal(service, `${payload}.${signature}=`), "malformed")
        assert.strictEqual(yield* refusal(service, `${payload}.=${signature}`), "malformed")
        assert.strictEqual(yield* refusal(service, `${payload}.${signature}.${signature}`), "malformed")
        assert.strictEqual(yield* refusal(service, `.${signature}`), "malformed")
        assert.strictEqual(yield* refusal(service, ""), "malformed")
        // A truncated signature is a wrong signature, not a crash.
        assert.strictEqual(yield* refusal(service, `${payload}.${signature.slice(0, 20)}`), "signature")
        yield* service.consume(state, binding)
      })
    ))

  it.effect("a signed digest of another length never matches the call's arguments", () =>
    withSecret((service) =>
      Effect.gen(function*() {
        assert.strictEqual(yield* refusal(service, signed({ ...claimsFor(binding, 0), d: "" })), "params")
        assert.strictEqual(yield* refusal(service, signed({ ...claimsFor(binding, 0), d: digest(binding.params).slice(0, 10) })), "params")
        assert.strictEqual(yield* refusal(service, signed({ ...claimsFor(binding, 0), d: digest(binding.params) + "A" })), "params")
      })
    ))

  it.effect("every refusal is -32602 with its own message and the reason in data", () =>
    withSecret((service) =>
      Effect.gen(function*() {
        const expected: Record<string, RegExp> = {
          malformed: /not a state issued by this server/,
          signature: /altered or was issued by another server instance/,
          purpose: /answers another question/,
          principal: /issued to another principal/,
          method: /issued for another method/,
          params: /name or arguments changed since the approval was requested/,
          expired: /has expired \(states live 5 minutes\); call again without requestState/,
          replayed: /already been used; a state is valid for one call only/,
          capacity: /too many approvals in flight; call again without requestState/
        }
        const messages = new Set<string>()
        for (const [reason, pattern] of Object.entries(expected)) {
          const error = new RequestStateError({ reason: reason as RequestStateError["reason"] })
          const invalid = error.toInvalidParams()
          assert.match(error.message, pattern)
          assert.match(error.message, /^Invalid requestState: /)
          assert.strictEqual(error._tag, "RequestStateError")
          assert.strictEqual(invalid.code, -32602)
          assert.strictEqual(invalid.message, error.message)
          assert.deepStrictEqual(invalid.data, { field: "requestState", reason })
          messages.add(error.message)
        }
        assert.strictEqual(messages.size, Object.keys(expected).length)
        // And the service refuses with those errors, not only their reasons.
        const result = yield* Effect.either(service.consume(signed({ ...claimsFor(binding, 0), u: "firstAccess" }), binding))
        assert.isTrue(Either.isLeft(result) && result.left.message === new RequestStateError({ reason: "purpose" }).message)
      })
    ))

  it.effect("the lifetime option sets how long a state lives (layerWith)", () =>
    Effect.gen(function*() {
      const service = yield* RequestState
      const early = yield* service.issue(binding)
      const late = yield* service.issue(binding)
      yield* TestClock.adjust("59 seconds")
      yield* service.consume(early, binding)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(reasonOf(yield* Effect.either(service.consume(late, binding))), "expired")
    }).pipe(Effect.provide(RequestState.layerWith({ lifetime: "1 minute" }))))
})
