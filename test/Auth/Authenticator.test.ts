import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as TestClock from "effect/TestClock"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { Authenticator, bearerToken } from "../../src/Auth/Authenticator.ts"
import { BridgeToken } from "../../src/Auth/BridgeToken.ts"
import { anonymous, TokenPrincipal } from "../../src/Auth/Principal.ts"
import { RateLimiter, type Options as RateOptions } from "../../src/Auth/RateLimiter.ts"
import { TokenStore } from "../../src/Auth/TokenStore.ts"
import { RateLimited, TokenExpired, Unauthenticated } from "../../src/Schema/McpErrors.ts"
import { homeLayer, tempDir } from "./TokenStore.support.ts"

const CHALLENGE_NONE = "Bearer realm=\"weaviate-mcp\""
const CHALLENGE_INVALID = "Bearer realm=\"weaviate-mcp\", error=\"invalid_token\""
const CHALLENGE_EXPIRED = "Bearer realm=\"weaviate-mcp\", error=\"invalid_token\", error_description=\"token expired\""

const LOCAL = "127.0.0.1"

/** Authenticator, store, bridge and limiter on a fresh home, built inside the test (so on its TestClock). */
const setup = (rate: RateOptions = {}) =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    const deps = Layer.mergeAll(TokenStore.layer({ watch: false }), BridgeToken.layer(), RateLimiter.layer(rate)).pipe(
      Layer.provideMerge(homeLayer(dir))
    )
    const context = yield* Layer.build(Authenticator.layerTokens.pipe(Layer.provideMerge(deps)))
    return {
      dir,
      auth: Context.get(context, Authenticator),
      store: Context.get(context, TokenStore),
      bridge: Context.get(context, BridgeToken)
    }
  })

const bearer = (token: string) => ({ authorization: `Bearer ${token}`, remoteAddress: LOCAL })

describe("Authenticator", () => {
  describe("decided at once", () => {
    it.scoped("an active token of the store within its rate is answered as an Exit (no fiber per request); the same principal as the effect", () =>
      Effect.gen(function*() {
        const { auth, store } = yield* setup({ requestsPerSecond: 1, burst: 1 })
        const { token, info } = yield* store.create({ name: "ci", access: "readOnly" })
        const first = auth.authenticate(bearer(token))
        assert.isTrue(Exit.isExit(first), "an Exit, read without a fiber")
        const principal = yield* first
        assert.strictEqual(principal.id, info.id)
        // Over its rate: refused at once too, with the same error as the effect would give.
        const refused = auth.authenticate(bearer(token))
        assert.isTrue(Exit.isExit(refused))
        const error = yield* Effect.flip(refused)
        assert.strictEqual(error._tag, "RateLimited")
      }))
  })

  describe("challenges", () => {
    it.scoped("no token: 401 -33009 with Bearer realm=\"weaviate-mcp\"", () =>
      Effect.gen(function*() {
        const { auth } = yield* setup()
        for (const authorization of [undefined, "", "Basic dXNlcjpwYXNz", "Bearer", "Bearer   "]) {
          const error = yield* Effect.flip(auth.authenticate({ authorization, remoteAddress: LOCAL }))
          assert.instanceOf(error, Unauthenticated, String(authorization))
          assert.strictEqual(error.code, -33009)
          assert.strictEqual(error.httpStatus, 401)
          assert.deepStrictEqual(error.headers, { "www-authenticate": CHALLENGE_NONE })
        }
      }))

    it.scoped("unknown or malformed token: 401 -33009 with error=\"invalid_token\"", () =>
      Effect.gen(function*() {
        const { auth, store } = yield* setup()
        const { token } = yield* store.create({ name: "ci", access: "readOnly" })
        for (const presented of ["nope", `wmcp_0123456789abcdef_${token.slice(-43)}`, token.slice(0, -2) + "zz"]) {
          const error = yield* Effect.flip(auth.authenticate(bearer(presented)))
          assert.instanceOf(error, Unauthenticated)
          assert.strictEqual(error.code, -33009)
          assert.strictEqual(error.httpStatus, 401)
          assert.deepStrictEqual(error.headers, { "www-authenticate": CHALLENGE_INVALID })
        }
      }))

    it.scoped("revoked token: 401 -33009 with error=\"invalid_token\"", () =>
      Effect.gen(function*() {
        const { auth, store } = yield* setup()
        const { token, info } = yield* store.create({ name: "ci", access: "readOnly" })
        yield* auth.authenticate(bearer(token))
        yield* store.revoke(info.id)
        const error = yield* Effect.flip(auth.authenticate(bearer(token)))
        assert.instanceOf(error, Unauthenticated)
        assert.strictEqual(error.code, -33009)
        assert.deepStrictEqual(error.headers, { "www-authenticate": CHALLENGE_INVALID })
      }))

    it.scoped("expiry with TestClock: valid at T-1s, 401 -33008 with error_description=\"token expired\" at T", () =>
      Effect.gen(function*() {
        const { auth, store } = yield* setup()
        const { token } = yield* store.create({ name: "short", access: "readOnly", expiresAt: 3_600_000 })
        yield* TestClock.adjust("3599 seconds")
        yield* auth.authenticate(bearer(token))
        yield* TestClock.adjust("1 second")
        const error = yield* Effect.flip(auth.authenticate(bearer(token)))
        assert.instanceOf(error, TokenExpired)
        assert.strictEqual(error.code, -33008)
        assert.strictEqual(error.httpStatus, 401)
        assert.deepStrictEqual(error.headers, { "www-authenticate": CHALLENGE_EXPIRED })
      }))

    it("the Bearer scheme is case-insensitive", () => {
      assert.deepStrictEqual(bearerToken("bearer abc"), Option.some("abc"))
      assert.deepStrictEqual(bearerToken("BEARER  abc "), Option.some("abc"))
      assert.deepStrictEqual(bearerToken("Token abc"), Option.none())
      assert.deepStrictEqual(bearerToken("Bearer a b"), Option.none())
    })
  })

  describe("principals", () => {
    it.scoped("a valid token authenticates as its token principal", () =>
      Effect.gen(function*() {
        const { auth, store } = yield* setup()
        const { token, info } = yield* store.create({ name: "ci", access: "fullAccess", connections: ["c1"], expiresAt: 86_400_000 })
        const principal = yield* auth.authenticate(bearer(token))
        assert.deepStrictEqual(
          principal,
          new TokenPrincipal({
            id: info.id,
            name: "ci",
            access: "fullAccess",
            scopes: ["tools:read", "resources:read", "history:read", "tools:write", "admin"],
            connections: Option.some(["c1"]),
            expiresAt: Option.some(86_400_000),
            source: "store"
          })
        )
      }))

    it.scoped("the handshake file's bridge token is accepted, never stored in tokens.json, and expires after its grace", () =>
      Effect.gen(function*() {
        const { auth, bridge, dir, store } = yield* setup()
        yield* store.create({ name: "other", access: "readOnly" })
        const first = yield* SubscriptionRef.get(bridge.current)
        const principal = yield* auth.authenticate(bearer(first.token))
        assert.strictEqual(principal.id, "bridge")
        assert.strictEqual(principal.access, "readWrite")
        const file = yield* Effect.promise(() => NodeFs.readFile(NodePath.join(dir, "tokens.json"), "utf8"))
        assert.notInclude(file, first.token)
        assert.notInclude(file, first.token.slice("wmcp_bridge_".length))
        yield* TestClock.adjust("1 hour")
        // Rotated: the previous token still works during the grace period, then reports expiry.
        yield* TestClock.adjust("299 seconds")
        assert.strictEqual((yield* auth.authenticate(bearer(first.token))).id, "bridge")
        yield* TestClock.adjust("1 second")
        const error = yield* Effect.flip(auth.authenticate(bearer(first.token)))
        assert.instanceOf(error, TokenExpired)
        const second = yield* SubscriptionRef.get(bridge.current)
        assert.strictEqual((yield* auth.authenticate(bearer(second.token))).id, "bridge")
      }))

    it.scoped("auth off: every request is the anonymous loopback principal", () =>
      Effect.gen(function*() {
        const auth = yield* Authenticator.pipe(Effect.provide(Authenticator.layerAnonymous.pipe(Layer.provide(RateLimiter.layer()))))
        assert.strictEqual(yield* auth.authenticate({ authorization: undefined, remoteAddress: LOCAL }), anonymous)
        assert.strictEqual(yield* auth.authenticate(bearer("whatever")), anonymous)
      }))
  })

  describe("rate limits and lockouts", () => {
    it.scoped("failed authentications lock the address out: -33010, 429, Retry-After, until the window passes", () =>
      Effect.gen(function*() {
        const { auth, store } = yield* setup({ authFailuresPerMinute: 10 })
        const { token } = yield* store.create({ name: "ok", access: "readOnly" })
        for (let i = 0; i < 10; i++) {
          const error = yield* Effect.flip(auth.authenticate(bearer(`bad-${i}`)))
          assert.strictEqual(error.code, -33009, `attempt ${i + 1}`)
        }
        const locked = yield* Effect.flip(auth.authenticate(bearer("bad-11")))
        assert.instanceOf(locked, RateLimited)
        assert.strictEqual(locked.httpStatus, 429)
        assert.deepStrictEqual(locked.headers, { "retry-after": "60" })
        // Without a token, from the locked address: no guess, so its challenge as always.
        const missing = yield* Effect.flip(auth.authenticate({ authorization: undefined, remoteAddress: LOCAL }))
        assert.strictEqual(missing.code, -33009)
        // Another address is not locked out.
        const elsewhere = yield* Effect.flip(auth.authenticate({ ...bearer("bad"), remoteAddress: "::1" }))
        assert.strictEqual(elsewhere.code, -33009)
        // A valid token still passes: every local client shares the loopback address.
        yield* auth.authenticate(bearer(token))
        yield* TestClock.adjust("60 seconds")
        const after = yield* Effect.flip(auth.authenticate(bearer("bad-after")))
        assert.strictEqual(after.code, -33009)
      }))

    it.scoped("missing tokens do not count towards the lockout", () =>
      Effect.gen(function*() {
        const { auth } = yield* setup({ authFailuresPerMinute: 2 })
        for (let i = 0; i < 20; i++) {
          const error = yield* Effect.flip(auth.authenticate({ authorization: undefined, remoteAddress: LOCAL }))
          assert.strictEqual(error.code, -33009)
        }
      }))

    it.scoped("revoked tokens count towards the lockout; an expired token does not and is answered -33008 during it", () =>
      Effect.gen(function*() {
        const { auth, store } = yield* setup({ authFailuresPerMinute: 2 })
        const expiring = yield* store.create({ name: "e", access: "readOnly", expiresAt: 1_000 })
        const revoked = yield* store.create({ name: "r", access: "readOnly" })
        yield* store.revoke(revoked.info.id)
        yield* TestClock.adjust("1 second")
        assert.strictEqual((yield* Effect.flip(auth.authenticate(bearer(expiring.token)))).code, -33008)
        assert.strictEqual((yield* Effect.flip(auth.authenticate(bearer(revoked.token)))).code, -33009)
        assert.strictEqual((yield* Effect.flip(auth.authenticate(bearer(revoked.token)))).code, -33009)
        assert.strictEqual((yield* Effect.flip(auth.authenticate(bearer(revoked.token)))).code, -33010)
        assert.strictEqual((yield* Effect.flip(auth.authenticate(bearer(expiring.token)))).code, -33008)
      }))

    it.scoped("the per-principal rate applies after authentication, separately from the lockout", () =>
      Effect.gen(function*() {
        const { auth, store } = yield* setup({ requestsPerSecond: 2, burst: 2, authFailuresPerMinute: 1 })
        const a = yield* store.create({ name: "a", access: "readOnly" })
        const b = yield* store.create({ name: "b", access: "readOnly" })
        yield* auth.authenticate(bearer(a.token))
        yield* auth.authenticate(bearer(a.token))
        const limited = yield* Effect.flip(auth.authenticate(bearer(a.token)))
        assert.instanceOf(limited, RateLimited)
        assert.deepStrictEqual(limited.data, { reason: "rate", retryAfter: 1 })
        assert.deepStrictEqual(limited.headers, { "retry-after": "1" })
        // The other principal, from the same address, is unaffected: no lockout was counted.
        yield* auth.authenticate(bearer(b.token))
        yield* TestClock.adjust("500 millis")
        yield* auth.authenticate(bearer(a.token))
      }))
  })
})
