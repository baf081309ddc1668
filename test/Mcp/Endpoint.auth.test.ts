/**
 * Authentication and scopes over HTTP: every challenge header and code, scope filtering of
 * `tools/list`, -33007 with `data.requiredScopes`, 429 with `Retry-After`, the anonymous principal,
 * and revocation picked up by a running server (cancelling the token's in-flight requests and ending
 * its legacy sessions).
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/TestClock"
import {
  armSlow,
  createToken,
  FILLER_TOOLS,
  Harness,
  initializeLegacy,
  layer as harnessLayer,
  MODERN,
  postLegacy,
  postModern,
  revokeToken,
  validateMessage
} from "./support/EndpointHarness.ts"

const CHALLENGE_NONE = "Bearer realm=\"weaviate-mcp\""
const CHALLENGE_INVALID = "Bearer realm=\"weaviate-mcp\", error=\"invalid_token\""
const CHALLENGE_EXPIRED = "Bearer realm=\"weaviate-mcp\", error=\"invalid_token\", error_description=\"token expired\""

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
        const readOnlyNames = (yield* names(readOnly.token))!
        assert.notInclude(readOnlyNames, "write")
        assert.notInclude(readOnlyNames, "admin_only")
        assert.include(readOnlyNames, "echo")
        assert.strictEqual(readOnlyNames.length, FILLER_TOOLS + 6)
        const fullNames = (yield* names(fullAccess.token))!
        assert.include(fullNames, "write")
        assert.include(fullNames, "admin_only")
      }))

    it.effect("a tool beyond the token's scopes: 403 -33007, insufficient_scope, data.requiredScopes", () =>
      Effect.gen(function*() {
        const readOnly = yield* createToken("readOnly")
        const reply = yield* postModern("tools/call", { name: "write", arguments: {} }, { token: readOnly.token })
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
        const reply = yield* postModern("resources/list", {}, { token: toolsOnly.token })
        assert.strictEqual(reply.status, 403)
        assert.deepStrictEqual(reply.json.error.data.requiredScopes, ["resources:read"])
        const resourcesOnly = yield* createToken("readOnly", { scopes: ["resources:read"] })
        const tools = yield* postModern("tools/list", {}, { token: resourcesOnly.token })
        assert.strictEqual(tools.status, 403)
        assert.deepStrictEqual(tools.json.error.data.requiredScopes, ["tools:read"])
        // server/discover needs no scope.
        assert.strictEqual((yield* postModern("server/discover", {}, { token: resourcesOnly.token })).status, 200)
      }))

    it.effect("revocation is picked up by the running server: in-flight requests -33002, legacy sessions ended, then 401", () =>
      Effect.gen(function*() {
        const created = yield* createToken("readWrite")
        assert.strictEqual((yield* postModern("tools/list", {}, { token: created.token })).status, 200)
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
        const reused = yield* postLegacy(sessionId, "ping", {}, { token: other.token })
        assert.strictEqual(reused.status, 404)
        assert.strictEqual(reused.json.error.code, -33001)
      }))

    it.effect("notifications/cancelled from the same token cancels with -33002; from another token has no effect", () =>
      Effect.gen(function*() {
        const { endpoint, token } = yield* Harness
        const other = yield* createToken("readWrite")
        assert.strictEqual((yield* postModern("tools/list", {}, { token: other.token })).status, 200)
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

  // The daemon is built inside the block's TestContext: its authenticator reads the TestClock.
  layer(harnessLayer())("token expiry on the TestClock", (it) => {
    it.effect("expired token: 401 -33008 with error_description=\"token expired\"; valid up to 1 ms before expiresAt", () =>
      Effect.gen(function*() {
        const { tokenStore } = yield* Harness
        const now = yield* Clock.currentTimeMillis
        const { token } = yield* tokenStore.create({ name: "expiring", access: "readOnly", expiresAt: now + 60_000 }).pipe(Effect.orDie)
        assert.strictEqual((yield* postModern("tools/list", {}, { token })).status, 200)
        yield* TestClock.adjust("59999 millis")
        assert.strictEqual((yield* postModern("tools/list", {}, { token })).status, 200)
        yield* TestClock.adjust("1 millis")
        expectChallenge(yield* postModern("tools/list", {}, { token }), 401, -33008, CHALLENGE_EXPIRED)
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
