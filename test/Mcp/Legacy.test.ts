/**
 * The legacy era: `initialize` for 2025-11-25 and 2025-06-18, sessions bound to their principal, at
 * most 16 with least-recently-used eviction, `ping`, `logging/setLevel`, results without the modern
 * envelope. Messages are validated against the schema of the session's revision.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import {
  createToken,
  type Era,
  Harness,
  initializeLegacy,
  layer as harnessLayer,
  postLegacy,
  postRaw,
  validateMessage
} from "./support/EndpointHarness.ts"

describe("Legacy era", () => {
  layer(harnessLayer(), { excludeTestServices: true })("sessions", (it) => {
    it.effect("initialize 2025-11-25 and 2025-06-18: protocolVersion, capabilities (subscribe false), serverInfo, instructions, Mcp-Session-Id", () =>
      Effect.gen(function*() {
        for (const version of ["2025-11-25", "2025-06-18"] as const) {
          const { reply, sessionId } = yield* initializeLegacy({ version })
          assert.strictEqual(reply.status, 200)
          validateMessage(version, reply.json, "InitializeResult")
          const result = reply.json.result
          assert.strictEqual(result.protocolVersion, version)
          assert.isFalse(result.capabilities.resources.subscribe)
          assert.strictEqual(result.serverInfo.name, "weaviate-mcp")
          assert.include(result.instructions, "list_connections")
          assert.notProperty(result, "resultType")
          assert.match(sessionId, /^[0-9a-f-]{36}$/)
        }
      }))

    it.effect("initialize with any other protocolVersion: -32022; 2025-03-26 is refused", () =>
      Effect.gen(function*() {
        for (const version of ["2025-03-26", "2024-11-05", "2026-07-28", "garbage"]) {
          const { reply, sessionId } = yield* initializeLegacy({ version })
          assert.strictEqual(reply.status, 400)
          assert.strictEqual(reply.json.error.code, -32022)
          assert.deepStrictEqual(reply.json.error.data, { supported: ["2025-11-25", "2025-06-18"], requested: version })
          assert.strictEqual(sessionId, "")
          validateMessage("2025-11-25", reply.json)
        }
      }))

    it.effect("legacy results carry no resultType, no cache hints, no serverInfo in _meta", () =>
      Effect.gen(function*() {
        for (const version of ["2025-11-25", "2025-06-18"] as const satisfies ReadonlyArray<Era>) {
          const { sessionId } = yield* initializeLegacy({ version })
          const cases: Array<[string, Record<string, unknown>, string]> = [
            ["tools/list", {}, "ListToolsResult"],
            ["tools/call", { name: "echo", arguments: { query: "x" } }, "CallToolResult"],
            ["resources/list", {}, "ListResourcesResult"],
            ["resources/read", { uri: "test://items/4" }, "ReadResourceResult"],
            ["resources/templates/list", {}, "ListResourceTemplatesResult"],
            ["prompts/list", {}, "ListPromptsResult"],
            ["prompts/get", { name: "greet", arguments: { who: "a" } }, "GetPromptResult"],
            ["completion/complete", { ref: { type: "ref/prompt", name: "greet" }, argument: { name: "who", value: "a" } }, "CompleteResult"]
          ]
          for (const [method, params, def] of cases) {
            const reply = yield* postLegacy(sessionId, method, params, { headers: { "mcp-protocol-version": version } })
            assert.strictEqual(reply.status, 200, `${version} ${method} ${reply.text}`)
            validateMessage(version, reply.json, def)
            const result = reply.json.result
            for (const member of ["resultType", "ttlMs", "cacheScope"]) assert.notProperty(result, member, `${method} ${member}`)
            assert.isUndefined(result._meta?.["io.modelcontextprotocol/serverInfo"])
          }
          const call = yield* postLegacy(sessionId, "tools/call", { name: "echo", arguments: {} })
          assert.strictEqual(call.json.result.structuredContent.era, "legacy")
          assert.strictEqual(call.json.result.structuredContent.protocolVersion, version)
        }
      }))

    it.effect("requests after initialize need Mcp-Session-Id: missing -32600, unknown -33001 (404)", () =>
      Effect.gen(function*() {
        const missing = yield* postRaw(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/list" }))
        assert.strictEqual(missing.status, 400)
        assert.strictEqual(missing.json.error.code, -32600)
        const unknown = yield* postLegacy("00000000-0000-0000-0000-000000000000", "tools/list", {}, { id: 5 })
        assert.strictEqual(unknown.status, 404)
        assert.strictEqual(unknown.json.error.code, -33001)
        assert.strictEqual(unknown.json.id, 5)
        validateMessage("2025-11-25", unknown.json)
      }))

    it.effect("a session belongs to the token that created it: another token gets -33001", () =>
      Effect.gen(function*() {
        const { sessionId } = yield* initializeLegacy()
        const other = yield* createToken("readWrite")
        const reply = yield* postLegacy(sessionId, "ping", {}, { token: other.token })
        assert.strictEqual(reply.status, 404)
        assert.strictEqual(reply.json.error.code, -33001)
        assert.strictEqual((yield* postLegacy(sessionId, "ping")).status, 200)
      }))

    it.effect("ping and logging/setLevel answer an empty result; a bad level is -32602", () =>
      Effect.gen(function*() {
        const { sessionId } = yield* initializeLegacy()
        const ping = yield* postLegacy(sessionId, "ping")
        assert.deepStrictEqual(ping.json.result, {})
        validateMessage("2025-11-25", ping.json)
        const level = yield* postLegacy(sessionId, "logging/setLevel", { level: "warning" })
        assert.deepStrictEqual(level.json.result, {})
        const bad = yield* postLegacy(sessionId, "logging/setLevel", { level: "loud" })
        assert.strictEqual(bad.json.error.code, -32602)
      }))

    it.effect("notifications/initialized is accepted (202)", () =>
      Effect.gen(function*() {
        const { sessionId } = yield* initializeLegacy()
        const { endpoint, token } = yield* Harness
        const reply = yield* Effect.promise(() =>
          fetch(endpoint, {
            method: "POST",
            headers: { "content-type": "application/json", "mcp-session-id": sessionId, authorization: `Bearer ${token}` },
            body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })
          }).then((r) => r.status)
        )
        assert.strictEqual(reply, 202)
      }))

    it.effect("at most 16 sessions: the 17th evicts the least recently used", () =>
      Effect.gen(function*() {
        const ids: Array<string> = []
        for (let i = 0; i < 16; i++) ids.push((yield* initializeLegacy()).sessionId)
        // Use the first one: the second is now the least recently used.
        assert.strictEqual((yield* postLegacy(ids[0]!, "ping")).status, 200)
        const seventeenth = (yield* initializeLegacy()).sessionId
        assert.strictEqual((yield* postLegacy(ids[1]!, "ping")).json.error.code, -33001)
        assert.strictEqual((yield* postLegacy(ids[0]!, "ping")).status, 200)
        assert.strictEqual((yield* postLegacy(seventeenth, "ping")).status, 200)
        for (const id of ids.slice(2)) assert.strictEqual((yield* postLegacy(id, "ping")).status, 200)
      }))

    it.effect("input_required is never sent to a legacy client", () =>
      Effect.gen(function*() {
        const { sessionId } = yield* initializeLegacy()
        const reply = yield* postLegacy(sessionId, "tools/call", { name: "ask", arguments: {} })
        assert.strictEqual(reply.json.error.code, -32603)
      }))
  })
})
