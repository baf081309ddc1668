/**
 * Authentication and scopes over HTTP: every challenge header and code, scope filtering of
 * `tools/list`, -33007 with `data.requiredScopes`, 429 with `Retry-After`, the anonymous principal,
 * and revocation picked up by a running server (cancelling the token's in-flight requests and ending
 * its legacy sessions).
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import type { AccessLevel, Scope } from "../../src/Schema/Policy.ts"
import { TokenStore } from "../../src/Mcp/TokenStore.ts"
import {
  armSlow,
  FILLER_TOOLS,
  Harness,
  initializeLegacy,
  layer as harnessLayer,
  MODERN,
  postLegacy,
  postModern,
  validateMessage
} from "./support/EndpointHarness.ts"

const CHALLENGE_NONE = "Bearer realm=\"weaviate-mcp\""
const CHALLENGE_INVALID = "Bearer realm=\"weaviate-mcp\", error=\"invalid_token\""
const CHALLENGE_EXPIRED = "Bearer realm=\"weaviate-mcp\", error=\"invalid_token\", error_description=\"token expired\""

/** Creates a token through another TokenStore instance on the same home (as `tokens create` would). */
const createToken = (access: AccessLevel, options: { scopes?: ReadonlyArray<Scope>; expiresAt?: number } = {}) =>
  Effect.gen(function*() {
    const store = yield* TokenStore
    return yield* store.create({ name: `t-${access}-${Math.random().toString(36).slice(2, 8)}`, access, ...options })
  }).pipe(Effect.provide(TokenStore.layerOneShot), Effect.orDie)

const revokeToken = (id: string) =>
  Effect.flatMap(TokenStore, (store) => store.revoke(id)).pipe(Effect.provide(TokenStore.layerOneShot), Effect.orDie)

/** Waits (bounded) until the running daemon has picked up the store's change. */
const until = <A, R>(probe: Effect.Effect<A, never, R>, done: (a: A) => boolean) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 100; attempt++) {
      const value = yield* probe
      if (done(value)) return value
      // Real time: the daemon watches tokens.json on its own clock.
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
    }
    return yield* Effect.dieMessage("the daemon did not pick up the change within 5 s")
  })

const expectChallenge = (reply: { status: number; json: any; headers: Headers }, status: number, code: number, challenge: string) => {
  assert.strictEqual(reply.status, status, JSON.stringify(reply.json))
  assert.strictEqual(reply.json.error.code, code)
  assert.strictEqual(reply.json.id, 1)
  assert.strictEqual(reply.headers.get("www-authenticate"), challenge)
  validateMessage(MODERN, reply.json)
}

describe("Endpoint authentication", () => {
  layer(harnessLayer(), { excludeTestServices: true })("tokens", (it) => {
    it.effect("no token: 401 -33009 with WWW-Authenticate: Bearer realm=\"weaviate-mcp\"", () =>
      Effect.gen(function*() {
        expectChallenge(yield* postModern("tools/list", {}, { token: "" }), 401, -33009, CHALLENGE_NONE)
        expectChallenge(yield* postModern("server/discover", {}, { token: "" }), 401, -33009, CHALLENGE_NONE)
      }))

    it.effect("unknown token: 401 -33009 with error=\"invalid_token\"", () =>
      Effect.gen(function*() {
        expectChallenge(yield* postModern("tools/list", {}, { token: "wmcp_0123456789abcdef_nope" }), 401, -33009, CHALLENGE_INVALID)
      }))

    it.effect("expired token: 401 -33008 with error_description=\"token expired\"", () =>
      Effect.gen(function*() {
        const { token } = yield* createToken("readOnly", { expiresAt: Date.now() + 100 })
        const reply = yield* until(postModern("tools/list", {}, { token }), (r) => r.status === 401 && r.json.error.code === -33008)
        expectChallenge(reply, 401, -33008, CHALLENGE_EXPIRED)
      }))

    it.effect("tools/list shows only the tools the token may call", () =>
      Effect.gen(function*() {
        const readOnly = yield* createToken("readOnly")
        const fullAccess = yield* createToken("fullAccess")
        const names = (token: string) =>
          Effect.gen(function*() {
            const all: Array<string> = []
            let cursor: string | undefined
            for (let page = 0; page < 5; page++) {
              const reply = yield* postModern("tools/list", cursor === undefined ? {} : { cursor }, { token })
              if (reply.status !== 200) return undefined
              all.push(...reply.json.result.tools.map((tool: { name: string }) => tool.name))
              cursor = reply.json.result.nextCursor
              if (cursor === undefined) break
            }
            return all
          })
        const readOnlyNames = (yield* until(names(readOnly.token), (n) => n !== undefined))!
        assert.notInclude(readOnlyNames, "write")
        assert.notInclude(readOnlyNames, "admin_only")
        assert.include(readOnlyNames, "echo")
        assert.strictEqual(readOnlyNames.length, FILLER_TOOLS + 6)
        const fullNames = (yield* until(names(fullAccess.token), (n) => n !== undefined))!
        assert.include(fullNames, "write")
        assert.include(fullNames, "admin_only")
      }))

    it.effect("a tool beyond the token's scopes: 403 -33007, insufficient_scope, data.requiredScopes", () =>
      Effect.gen(function*() {
        const readOnly = yield* createToken("readOnly")
        const reply = yield* until(postModern("tools/call", { name: "write", arguments: {} }, { token: readOnly.token }), (r) => r.status !== 401)
        assert.strictEqual(reply.status, 403)
        assert.strictEqual(reply.json.error.code, -33007)
        assert.deepStrictEqual(reply.json.error.data.requiredScopes, ["tools:read", "tools:write"])
        assert.include(reply.headers.get("www-authenticate") ?? "", "error=\"insufficient_scope\"")
        validateMessage(MODERN, reply.json)
        const { token } = yield* Harness
        const admin = yield* postModern("tools/call", { name: "admin_only", arguments: {} }, { token })
        assert.strictEqual(admin.status, 403)
        assert.deepStrictEqual(admin.json.error.data.requiredScopes, ["tools:read", "tools:write", "admin"])
      }))

    it.effect("a method beyond the token's scopes: 403 -33007 (the methods table)", () =>
      Effect.gen(function*() {
        const toolsOnly = yield* createToken("readOnly", { scopes: ["tools:read"] })
        const reply = yield* until(postModern("resources/list", {}, { token: toolsOnly.token }), (r) => r.status !== 401)
        assert.strictEqual(reply.status, 403)
        assert.deepStrictEqual(reply.json.error.data.requiredScopes, ["resources:read"])
        const resourcesOnly = yield* createToken("readOnly", { scopes: ["resources:read"] })
        const tools = yield* until(postModern("tools/list", {}, { token: resourcesOnly.token }), (r) => r.status !== 401)
        assert.strictEqual(tools.status, 403)
        assert.deepStrictEqual(tools.json.error.data.requiredScopes, ["tools:read"])
        // server/discover needs no scope.
        assert.strictEqual((yield* postModern("server/discover", {}, { token: resourcesOnly.token })).status, 200)
      }))

    it.effect("revocation is picked up by the running server: in-flight requests -33002, legacy sessions ended, then 401", () =>
      Effect.gen(function*() {
        const created = yield* createToken("readWrite")
        yield* until(postModern("tools/list", {}, { token: created.token }), (r) => r.status === 200)
        const { sessionId } = yield* initializeLegacy({ token: created.token })
        assert.strictEqual((yield* postLegacy(sessionId, "ping", {}, { token: created.token })).status, 200)
        const started = yield* armSlow
        const call = yield* Effect.fork(postModern("tools/call", { name: "slow", arguments: {} }, { token: created.token, id: "slow-1" }))
        assert.strictEqual(yield* Deferred.await(started), "slow-1")
        yield* revokeToken(created.info.id)
        const reply = yield* Fiber.join(call)
        assert.strictEqual(reply.status, 200)
        assert.strictEqual(reply.json.error.code, -33002)
        assert.strictEqual(reply.json.id, "slow-1")
        validateMessage(MODERN, reply.json)
        const { signals } = yield* Harness
        assert.isAtLeast(yield* Ref.get(signals.slowInterrupted), 1)
        const after = yield* postModern("tools/list", {}, { token: created.token })
        expectChallenge(after, 401, -33009, CHALLENGE_INVALID)
        // A new token of the same user cannot use the ended session either.
        const other = yield* createToken("readWrite")
        const reused = yield* until(postLegacy(sessionId, "ping", {}, { token: other.token }), (r) => r.status !== 401)
        assert.strictEqual(reused.status, 404)
        assert.strictEqual(reused.json.error.code, -33001)
      }))

    it.effect("notifications/cancelled from the same token cancels with -33002; from another token has no effect", () =>
      Effect.gen(function*() {
        const { endpoint, token } = yield* Harness
        const other = yield* createToken("readWrite")
        yield* until(postModern("tools/list", {}, { token: other.token }), (r) => r.status === 200)
        const started = yield* armSlow
        const call = yield* Effect.fork(postModern("tools/call", { name: "slow", arguments: {} }, { id: 42 }))
        yield* Deferred.await(started)
        const cancel = (by: string) =>
          Effect.promise(() =>
            fetch(endpoint, {
              method: "POST",
              headers: { "content-type": "application/json", authorization: `Bearer ${by}` },
              body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 42, reason: "user pressed stop" } })
            }).then((r) => r.status)
          )
        assert.strictEqual(yield* cancel(other.token), 202)
        assert.isNull(yield* Fiber.poll(call).pipe(Effect.map((o) => (o._tag === "Some" ? "done" : null))))
        assert.strictEqual(yield* cancel(token), 202)
        const reply = yield* Fiber.join(call)
        assert.strictEqual(reply.json.error.code, -33002)
        assert.strictEqual(reply.json.id, 42)
        validateMessage(MODERN, reply.json)
      }))
  })

  layer(harnessLayer({ rateLimit: 1 }), { excludeTestServices: true })("rate limits", (it) => {
    it.effect("over the rate: 429 -33010 with Retry-After", () =>
      Effect.gen(function*() {
        const replies = []
        for (let i = 0; i < 4; i++) replies.push(yield* postModern("server/discover"))
        const limited = replies.find((reply) => reply.status === 429)
        assert.isDefined(limited)
        assert.strictEqual(limited!.json.error.code, -33010)
        assert.match(limited!.headers.get("retry-after") ?? "", /^[1-9][0-9]*$/)
        validateMessage(MODERN, limited!.json)
      }))
  })

  layer(harnessLayer({ auth: "off" }), { excludeTestServices: true })("auth off", (it) => {
    it.effect("the anonymous loopback principal needs no token and has readWrite scopes", () =>
      Effect.gen(function*() {
        const reply = yield* postModern("tools/call", { name: "echo", arguments: {} }, { token: "" })
        assert.strictEqual(reply.status, 200)
        assert.strictEqual(reply.json.result.structuredContent.principal, "anonymous")
        assert.strictEqual((yield* postModern("tools/call", { name: "write", arguments: {} }, { token: "" })).status, 200)
        assert.strictEqual((yield* postModern("tools/call", { name: "admin_only", arguments: {} }, { token: "" })).status, 403)
      }))
  })
})
