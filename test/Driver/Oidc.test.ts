/**
 * OIDC sign-in against the real Weaviate 1.39 started with `AUTHENTICATION_OIDC_*` pointing at a real
 * OpenID provider (`oidc-provider`) on 127.0.0.1.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import * as Redaction from "../../src/Base/Redaction.ts"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { Driver } from "../../src/Driver/Driver.ts"
import { type OidcProvider, SERVICE_CLIENT_ID, SERVICE_SECRET, startOidcProvider, USERS } from "../weaviate/OidcProvider.ts"
import { type RealWeaviate, startRealWeaviate } from "../weaviate/RealWeaviate.ts"
import { type DriverRuntime, failureOf, makeRuntime, tempHome } from "./support.ts"

let provider: OidcProvider
let weaviate: RealWeaviate
let runtime: DriverRuntime
let home: string

const add = (input: Record<string, unknown>) => runtime.runPromise(Effect.flatMap(ConnectionStore, (s) => s.add(input as never)))

const where = () => ({ host: "127.0.0.1", port: weaviate.port })

/** A read of data: the Article rows through GraphQL. */
const readTitles = (id: string) =>
  Effect.flatMap(Driver, (d) =>
    Effect.map(d.graphql(id, "{ Get { Article { title } } }"), (r) => {
      const grid = r as unknown as { tables: Array<{ rows: Array<{ title: string }> }> }
      return grid.tables[0]!.rows.map((row) => row.title).sort()
    }))

const identity = (id: string) => Effect.flatMap(Driver, (d) => Effect.map(d.http(id), (h) => h.identity()))

const asUser = async (path: string, init: RequestInit = {}) => {
  const { access_token } = await provider.passwordGrant("alice", USERS["alice"]!)
  const response = await fetch(`${weaviate.url}${path}`, {
    ...init,
    headers: { "content-type": "application/json", authorization: `Bearer ${access_token}` }
  })
  if (response.status >= 300) throw new Error(`${path}: ${response.status} ${await response.text()}`)
  return response
}

beforeAll(async () => {
  provider = await startOidcProvider()
  weaviate = await startRealWeaviate({ anonymousAccess: false, env: provider.weaviateEnv })
  home = tempHome()
  runtime = makeRuntime(home)
  await asUser("/v1/schema", { method: "POST", body: JSON.stringify({ class: "Article", vectorizer: "none", properties: [{ name: "title", dataType: ["text"] }] }) })
  await asUser("/v1/objects", { method: "POST", body: JSON.stringify({ class: "Article", properties: { title: "Signed in" } }) })
}, 120_000)

afterAll(async () => {
  await runtime?.dispose()
  await weaviate?.stop()
  await provider?.stop()
})

describe("each OIDC method connects and reads", () => {
  it("oidcClientCredentials: the client id given, the issuer from Weaviate's discovery", async () => {
    const c = await add({ name: "cc", ...where(), authMethod: "oidcClientCredentials", oidcClientId: SERVICE_CLIENT_ID, oidcClientSecret: SERVICE_SECRET })
    assert.deepStrictEqual(await runtime.runPromise(readTitles(c.id)), ["Signed in"])
    const who = await runtime.runPromise(identity(c.id))
    assert.strictEqual(who?.subject, SERVICE_CLIENT_ID)
    assert.strictEqual(who?.issuer, provider.issuer)
    assert.isNumber(who?.expiresAt)
    // The secret joined the process-wide redaction when it was used.
    assert.strictEqual(Redaction.global.redact(`key ${SERVICE_SECRET}`), "key [redacted]")
  })

  it("oidcPassword: the issuer and the client id both from Weaviate's discovery", async () => {
    const c = await add({ name: "pw", ...where(), authMethod: "oidcPassword", oidcUsername: "alice", oidcPassword: USERS["alice"] })
    assert.deepStrictEqual(await runtime.runPromise(readTitles(c.id)), ["Signed in"])
    const who = await runtime.runPromise(identity(c.id))
    assert.strictEqual(who?.subject, "alice")
    assert.strictEqual(who?.clientId, "weaviate")
    assert.isTrue(who?.renewable)
  })

  it("oidcToken: an access token and a refresh token obtained elsewhere", async () => {
    const tokens = await provider.passwordGrant("alice", USERS["alice"]!)
    const c = await add({ name: "tok", ...where(), authMethod: "oidcToken", oidcAccessToken: tokens.access_token, oidcRefreshToken: tokens.refresh_token })
    assert.deepStrictEqual(await runtime.runPromise(readTitles(c.id)), ["Signed in"])
    const who = await runtime.runPromise(identity(c.id))
    assert.strictEqual(who?.subject, "alice")
  })

  it("flags override Weaviate's discovery: an issuer that is not the provider fails naming it", async () => {
    const c = await add({
      name: "wrong-issuer",
      ...where(),
      authMethod: "oidcClientCredentials",
      oidcIssuer: "http://127.0.0.1:9",
      oidcClientId: SERVICE_CLIENT_ID,
      oidcClientSecret: SERVICE_SECRET
    })
    const error = await failureOf(runtime, readTitles(c.id))
    assert.match(error.message, /^Connection failed: the identity provider http:\/\/127\.0\.0\.1:9 cannot be reached \(connection refused\)/)
  })

  it("a wrong client secret is refused by the provider, whose answer is named", async () => {
    const c = await add({ name: "bad-secret", ...where(), authMethod: "oidcClientCredentials", oidcClientId: SERVICE_CLIENT_ID, oidcClientSecret: "not-the-secret" })
    const error = await failureOf(runtime, readTitles(c.id))
    assert.match(error.message, new RegExp(`^Authentication failed: the identity provider ${provider.issuer.replace(/[.]/g, "\\.")} refused the client credentials \\(HTTP 401, invalid_client`))
    assert.notInclude(error.message, "not-the-secret")
  })

  it("a wrong password is refused by the provider, whose answer is named, and never shown", async () => {
    const c = await add({ name: "bad-password", ...where(), authMethod: "oidcPassword", oidcUsername: "alice", oidcPassword: "wrong-password-123" })
    const error = await failureOf(runtime, readTitles(c.id))
    assert.match(error.message, /refused the username and password \(HTTP 400, invalid_grant: grant request is invalid\)/)
    assert.notInclude(error.message, "wrong-password-123")
  })
})

describe("tokens are renewed", () => {
  it("before they expire: a read near the end of the token's life renews it first (virtual time)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const c = yield* Effect.promise(() => add({ name: "renew", ...where(), authMethod: "oidcPassword", oidcUsername: "alice", oidcPassword: USERS["alice"] }))
      const before = { password: provider.grants["password"] ?? 0, refresh: provider.grants["refresh_token"] ?? 0 }
      // The driver's services, but this fiber's clock: the TestClock.
      const services = (yield* Effect.promise(() => runtime.runtime())).context
      const read = Effect.provide(readTitles(c.id), services)
      assert.deepStrictEqual(yield* read, ["Signed in"])
      const first = (yield* Effect.provide(identity(c.id), services))!.expiresAt!
      assert.strictEqual(provider.grants["password"], before.password + 1)
      // 9 minutes into a 10-minute token: still used as it is.
      yield* TestClock.adjust("9 minutes")
      assert.deepStrictEqual(yield* read, ["Signed in"])
      assert.strictEqual(provider.grants["refresh_token"] ?? 0, before.refresh)
      // Less than 30 s left: the next read renews it with the refresh token first.
      yield* TestClock.adjust("45 seconds")
      assert.deepStrictEqual(yield* read, ["Signed in"])
      assert.strictEqual(provider.grants["refresh_token"], before.refresh + 1)
      assert.strictEqual(provider.grants["password"], before.password + 1)
      assert.isAbove((yield* Effect.provide(identity(c.id), services))!.expiresAt!, first)
    }).pipe(Effect.provide(TestContext.TestContext), Effect.runPromise))
})

/** Waits for the wall clock to pass a moment: the real Weaviate checks `exp` against its own clock. */
const wallClockPast = (epochMs: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, epochMs - Date.now())))

const countArticles = async () => {
  const response = await asUser("/v1/graphql", { method: "POST", body: JSON.stringify({ query: "{ Aggregate { Article { meta { count } } } }" }) })
  const body = await response.json() as { data: { Aggregate: { Article: Array<{ meta: { count: number } }> } } }
  return body.data.Aggregate.Article[0]!.meta.count
}

describe("a token Weaviate no longer accepts", () => {
  it("a token that expires within seconds is renewed after Weaviate's 401 and the read is sent once more", () =>
    Effect.gen(function*() {
      // Our clock stands still (TestClock), so only Weaviate's 401 tells that the 1-second token expired.
      yield* TestClock.setTime(Date.now())
      provider.accessTokenTtl = 1
      const c = yield* Effect.promise(() => add({ name: "short", ...where(), authMethod: "oidcPassword", oidcUsername: "alice", oidcPassword: USERS["alice"] }))
      const services = (yield* Effect.promise(() => runtime.runtime())).context
      const read = Effect.provide(readTitles(c.id), services)
      const signedInAt = Date.now()
      assert.deepStrictEqual(yield* read, ["Signed in"])
      const refreshes = provider.grants["refresh_token"] ?? 0
      yield* Effect.promise(() => wallClockPast(Math.ceil(signedInAt / 1000) * 1000 + 2_000))
      provider.accessTokenTtl = 600
      assert.deepStrictEqual(yield* read, ["Signed in"])
      assert.strictEqual(provider.grants["refresh_token"], refreshes + 1)
      // Calls keep working on the renewed token.
      assert.deepStrictEqual(yield* read, ["Signed in"])
      assert.strictEqual(provider.grants["refresh_token"], refreshes + 1)
    }).pipe(Effect.ensuring(Effect.sync(() => (provider.accessTokenTtl = 600))), Effect.provide(TestContext.TestContext), Effect.runPromise))

  it("a 401 renews once and sends the read once more, no more: a provider Weaviate does not trust fails after one renewal", async () => {
    // Another provider: its tokens are well formed, but Weaviate trusts only the first one's.
    const stranger = await startOidcProvider()
    try {
      const c = await add({
        name: "untrusted",
        ...where(),
        authMethod: "oidcClientCredentials",
        oidcIssuer: stranger.issuer,
        oidcClientId: SERVICE_CLIENT_ID,
        oidcClientSecret: SERVICE_SECRET
      })
      const error = await failureOf(runtime, readTitles(c.id))
      assert.match(error.message, /^Authentication failed: Weaviate rejected the OIDC token \(HTTP 401/)
      // The first sign-in and one renewal after the 401.
      assert.strictEqual(stranger.grants["client_credentials"], 2)
    } finally {
      await stranger.stop()
    }
  })

  it("a write whose token Weaviate refuses (401) is never sent twice", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      provider.accessTokenTtl = 1
      const c = yield* Effect.promise(() => add({ name: "short-write", ...where(), authMethod: "oidcPassword", oidcUsername: "alice", oidcPassword: USERS["alice"] }))
      const services = (yield* Effect.promise(() => runtime.runtime())).context
      const signedInAt = Date.now()
      const http = yield* Effect.provide(Effect.flatMap(Driver, (d) => d.http(c.id)), services)
      assert.deepStrictEqual(yield* Effect.provide(readTitles(c.id), services), ["Signed in"])
      provider.accessTokenTtl = 600
      yield* Effect.promise(() => wallClockPast(Math.ceil(signedInAt / 1000) * 1000 + 2_000))
      const before = yield* Effect.promise(countArticles)
      const grants = { ...provider.grants }
      const write = yield* Effect.flip(http.request({ method: "POST", path: "/v1/objects", body: { json: { class: "Article", properties: { title: "Twice?" } } } }))
      assert.strictEqual(write._tag, "AuthenticationFailed")
      assert.match(write.message, /^Authentication failed: Weaviate rejected the OIDC token \(HTTP 401/)
      // No renewal was made to send it again, and nothing was written.
      assert.deepStrictEqual(provider.grants, grants)
      assert.strictEqual(yield* Effect.promise(countArticles), before)
    }).pipe(Effect.ensuring(Effect.sync(() => (provider.accessTokenTtl = 600))), Effect.provide(TestContext.TestContext), Effect.runPromise))

  it("a revoked refresh token asks the user to sign in again", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const tokens = yield* Effect.promise(() => provider.passwordGrant("alice", USERS["alice"]!))
      const c = yield* Effect.promise(() => add({ name: "revoked", ...where(), authMethod: "oidcToken", oidcAccessToken: tokens.access_token, oidcRefreshToken: tokens.refresh_token }))
      const services = (yield* Effect.promise(() => runtime.runtime())).context
      const read = Effect.provide(readTitles(c.id), services)
      assert.deepStrictEqual(yield* read, ["Signed in"])
      yield* Effect.promise(() => provider.revoke(tokens.refresh_token))
      // Past the access token's expiry (its exp claim): the refresh token is needed, and refused.
      yield* TestClock.adjust("11 minutes")
      const error = yield* Effect.flip(read)
      assert.match(error.message, /^Authentication failed: the identity provider http:\/\/127\.0\.0\.1:\d+ refused the refresh token \(HTTP 400, invalid_grant: grant request is invalid\); sign in again and save the new tokens: weaviate-mcp connections update revoked --oidc-access-token-stdin/)
      assert.notInclude(error.message, tokens.refresh_token)
      assert.notInclude(error.message, tokens.access_token)
    }).pipe(Effect.provide(TestContext.TestContext), Effect.runPromise))
})

describe("a token given without a refresh token", () => {
  it("is used until it expires, then asks the user to sign in again", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const tokens = yield* Effect.promise(() => provider.passwordGrant("alice", USERS["alice"]!))
      const c = yield* Effect.promise(() => add({ name: "no-refresh", ...where(), authMethod: "oidcToken", oidcAccessToken: tokens.access_token }))
      const services = (yield* Effect.promise(() => runtime.runtime())).context
      const read = Effect.provide(readTitles(c.id), services)
      assert.deepStrictEqual(yield* read, ["Signed in"])
      assert.isFalse((yield* Effect.provide(identity(c.id), services))!.renewable)
      const grants = { ...provider.grants }
      yield* TestClock.adjust("11 minutes")
      const error = yield* Effect.flip(read)
      assert.strictEqual(error.message, "Authentication failed: the OIDC access token has expired or is no longer accepted, and no refresh token was given to renew it; " +
        "sign in again and save the new tokens: weaviate-mcp connections update no-refresh --oidc-access-token-stdin (and --oidc-refresh-token-stdin)")
      // The provider was not asked for anything.
      assert.deepStrictEqual(provider.grants, grants)
    }).pipe(Effect.provide(TestContext.TestContext), Effect.runPromise))
})

describe("a provider that rotates refresh tokens", () => {
  it("the new refresh token is saved at once, so a new start renews with it and not with the spent one", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      provider.rotateRefreshTokens = true
      const tokens = yield* Effect.promise(() => provider.passwordGrant("alice", USERS["alice"]!))
      const c = yield* Effect.promise(() => add({ name: "rotating", ...where(), authMethod: "oidcToken", oidcAccessToken: tokens.access_token, oidcRefreshToken: tokens.refresh_token }))
      const services = (yield* Effect.promise(() => runtime.runtime())).context
      assert.deepStrictEqual(yield* Effect.provide(readTitles(c.id), services), ["Signed in"])
      yield* TestClock.adjust("11 minutes")
      const refreshes = provider.grants["refresh_token"] ?? 0
      assert.deepStrictEqual(yield* Effect.provide(readTitles(c.id), services), ["Signed in"])
      assert.strictEqual(provider.grants["refresh_token"], refreshes + 1)
      const saved = yield* Effect.provide(Effect.flatMap(ConnectionStore, (s) => s.get(c.id)), services)
      assert.notStrictEqual(Redacted.value(saved.oidcRefreshToken!), tokens.refresh_token)
      // A new start on the same home, past the saved access token's life: it renews with the saved refresh token.
      const restarted = makeRuntime(home)
      try {
        const next = (yield* Effect.promise(() => restarted.runtime())).context
        yield* TestClock.adjust("11 minutes")
        assert.deepStrictEqual(yield* Effect.provide(readTitles(c.id), next), ["Signed in"])
        assert.strictEqual(provider.grants["refresh_token"], refreshes + 2)
      } finally {
        yield* Effect.promise(() => restarted.dispose())
      }
    }).pipe(Effect.ensuring(Effect.sync(() => (provider.rotateRefreshTokens = false))), Effect.provide(TestContext.TestContext), Effect.runPromise))
})

// Last: the provider is stopped for good.
describe("the identity provider stopped", () => {
  it("gives a clear error naming the provider, both for a new sign-in and for a renewal", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.now())
      const c = yield* Effect.promise(() => add({ name: "before-stop", ...where(), authMethod: "oidcClientCredentials", oidcClientId: SERVICE_CLIENT_ID, oidcClientSecret: SERVICE_SECRET }))
      const services = (yield* Effect.promise(() => runtime.runtime())).context
      const read = Effect.provide(readTitles(c.id), services)
      assert.deepStrictEqual(yield* read, ["Signed in"])
      yield* Effect.promise(() => provider.stop())
      const fresh = yield* Effect.promise(() => add({ name: "after-stop", ...where(), authMethod: "oidcPassword", oidcUsername: "alice", oidcPassword: USERS["alice"] }))
      const expected = new RegExp(`^Connection failed: the identity provider ${provider.issuer.replace(/[.]/g, "\\.")} cannot be reached \\(connection refused\\)`)
      assert.match((yield* Effect.flip(Effect.provide(readTitles(fresh.id), services))).message, expected)
      // The signed-in connection keeps its token while it is valid, and fails clearly when it must renew it.
      assert.deepStrictEqual(yield* read, ["Signed in"])
      yield* TestClock.adjust("10 minutes")
      assert.match((yield* Effect.flip(read)).message, expected)
    }).pipe(Effect.provide(TestContext.TestContext), Effect.runPromise))
})

