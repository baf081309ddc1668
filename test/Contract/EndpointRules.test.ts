/**
 * Rules of `local-mcp-endpoint.md` that the audit in `docs/contract-coverage.md` found without a test
 * that would fail if the rule broke. Each test is named after its rule and talks real HTTP to the real
 * daemon (the endpoint harness); every message the server sends is validated against the official
 * JSON Schema of its era.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Daemon from "../../src/Daemon/Daemon.ts"
import * as Catalogue from "../../src/Mcp/Catalogue.ts"
import { BoundAddress } from "../../src/Mcp/HttpTransport.ts"
import * as McpErrors from "../../src/Schema/McpErrors.ts"
import {
  bearer,
  createToken,
  Harness,
  initializeLegacy,
  layer as harnessLayer,
  layerIn as harnessLayerIn,
  MODERN,
  modern,
  modernHeaders,
  parseFrames,
  postLegacy,
  postModern,
  send,
  validateMessage,
  catalogueRequests,
  TRANSPORTS
} from "../Mcp/support/EndpointHarness.ts"
import * as TestDaemon from "../support/TestDaemon.ts"
import * as TestHome from "../support/TestHome.ts"

const SERVER_INFO = "io.modelcontextprotocol/serverInfo"
const PACKAGE_VERSION: string = JSON.parse(NodeFs.readFileSync(NodePath.resolve(import.meta.dirname, "../../package.json"), "utf8")).version

/** A request of each method of the methods table that needs a scope, with the schema of its result. */
const toolsMethods = catalogueRequests.filter(([method]) => method.startsWith("tools/"))
const resourcesMethods = catalogueRequests.filter(([method]) => !method.startsWith("tools/"))

const expectScopeRefusal = (reply: { status: number; json: any; headers: Headers }, method: string, requiredScopes: ReadonlyArray<string>) => {
  assert.strictEqual(reply.status, 403, `${method}: ${JSON.stringify(reply.json)}`)
  assert.strictEqual(reply.json.error.code, -33007, method)
  assert.deepStrictEqual(reply.json.error.data.requiredScopes, requiredScopes, method)
  assert.include(reply.headers.get("www-authenticate") ?? "", "error=\"insufficient_scope\"", method)
  validateMessage(MODERN, reply.json)
}

/** Opens `subscriptions/listen` and reads its first frame, then closes the stream. */
const listenFirstFrame = (endpoint: string, token: string) =>
  Effect.promise(async () => {
    const controller = new AbortController()
    try {
      const response = await fetch(endpoint, {
        method: "POST",
        headers: { ...modernHeaders("subscriptions/listen"), ...bearer(token) },
        body: JSON.stringify(modern("subscriptions/listen", { notifications: {} }, "listen")),
        signal: controller.signal
      })
      if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
        return { status: response.status, frame: JSON.parse(await response.text()) }
      }
      const reader = response.body!.getReader()
      const decoder = new TextDecoder()
      let buffer = ""
      // Bounded: the acknowledgement is the first frame; 100 reads is far more than it takes.
      for (let i = 0; i < 100 && !buffer.includes("\n\n"); i++) {
        const read = await reader.read()
        if (read.done) break
        buffer += decoder.decode(read.value, { stream: true })
      }
      return { status: response.status, frame: parseFrames(buffer.slice(0, buffer.indexOf("\n\n") + 2))[0] }
    } finally {
      controller.abort()
    }
  })

describe("Contract: local MCP endpoint", () => {
  describe.each(TRANSPORTS)("over $name", ({ transport }) => {
  layer(harnessLayer({}, transport), { excludeTestServices: true })("methods table, versioning, events", (it) => {
    it.effect("Methods: tools/list and tools/call need tools:read; the resource, prompt and completion methods need resources:read", () =>
      Effect.gen(function*() {
        const toolsOnly = yield* createToken("readOnly", { scopes: ["tools:read"] })
        const resourcesOnly = yield* createToken("readOnly", { scopes: ["resources:read"] })
        for (const [method, params, def] of toolsMethods) {
          const allowed = yield* postModern(method, params, { token: toolsOnly.token })
          assert.strictEqual(allowed.status, 200, `${method}: ${allowed.text}`)
          validateMessage(MODERN, allowed.json, def)
          expectScopeRefusal(yield* postModern(method, params, { token: resourcesOnly.token }), method, ["tools:read"])
        }
        for (const [method, params, def] of resourcesMethods) {
          const allowed = yield* postModern(method, params, { token: resourcesOnly.token })
          assert.strictEqual(allowed.status, 200, `${method}: ${allowed.text}`)
          validateMessage(MODERN, allowed.json, def)
          expectScopeRefusal(yield* postModern(method, params, { token: toolsOnly.token }), method, ["resources:read"])
        }
      }))

    it.effect("Methods: server/discover, subscriptions/listen, initialize, ping and logging/setLevel need no scope", () =>
      Effect.gen(function*() {
        const { endpoint } = yield* Harness
        // Each of the two single-scope tokens lacks the scope of the other half of the table.
        for (const scopes of [["tools:read"], ["resources:read"]] as const) {
          const { token } = yield* createToken("readOnly", { scopes: [...scopes] })
          const discover = yield* postModern("server/discover", {}, { token })
          assert.strictEqual(discover.status, 200, discover.text)
          validateMessage(MODERN, discover.json, "DiscoverResult")
          const listen = yield* listenFirstFrame(endpoint, token)
          assert.strictEqual(listen.status, 200, JSON.stringify(listen.frame))
          assert.strictEqual(listen.frame.method, "notifications/subscriptions/acknowledged")
          validateMessage(MODERN, listen.frame)
          const { reply, sessionId } = yield* initializeLegacy({ token })
          assert.strictEqual(reply.status, 200, reply.text)
          validateMessage("2025-11-25", reply.json, "InitializeResult")
          for (const [method, params] of [["ping", {}], ["logging/setLevel", { level: "info" }]] as const) {
            const answer = yield* postLegacy(sessionId, method, params, { token })
            assert.strictEqual(answer.status, 200, `${method}: ${answer.text}`)
            assert.deepStrictEqual(answer.json.result, {})
            validateMessage("2025-11-25", answer.json)
          }
        }
      }))

    it.effect("Versioning 6: the server's own version is reported in serverInfo.version (discovery, every modern result, legacy initialize)", () =>
      Effect.gen(function*() {
        const discover = (yield* postModern("server/discover")).json
        validateMessage(MODERN, discover, "DiscoverResult")
        assert.strictEqual(discover.result.serverInfo.version, PACKAGE_VERSION)
        assert.strictEqual(discover.result._meta[SERVER_INFO].version, PACKAGE_VERSION)
        const listed = (yield* postModern("tools/list")).json
        validateMessage(MODERN, listed, "ListToolsResult")
        assert.strictEqual(listed.result._meta[SERVER_INFO].version, PACKAGE_VERSION)
        for (const version of ["2025-11-25", "2025-06-18"] as const) {
          const { reply } = yield* initializeLegacy({ version })
          validateMessage(version, reply.json, "InitializeResult")
          assert.strictEqual(reply.json.result.serverInfo.version, PACKAGE_VERSION)
        }
      }))

    it.effect("Modern era has no Mcp-Session-Id: no modern answer carries one", () =>
      Effect.gen(function*() {
        for (const [method, params] of [["server/discover", {}], ["tools/list", {}], ["tools/call", { name: "echo", arguments: {} }], ["resources/read", { uri: "test://items/2" }]] as const) {
          const reply = yield* postModern(method, params)
          assert.strictEqual(reply.status, 200, `${method}: ${reply.text}`)
          validateMessage(MODERN, reply.json)
          assert.isNull(reply.headers.get("mcp-session-id"), method)
        }
        // The legacy handshake is where a session id comes from: the contrast shows the header is read.
        assert.isNotNull((yield* initializeLegacy()).reply.headers.get("mcp-session-id"))
      }))

    it.effect("Modern era has no ping and no initialize, even with a legacy session id beside a modern _meta", () =>
      Effect.gen(function*() {
        const { sessionId } = yield* initializeLegacy()
        for (const method of ["ping", "initialize"]) {
          const reply = yield* postModern(method, { protocolVersion: "2025-11-25" }, { headers: { "mcp-session-id": sessionId } })
          assert.strictEqual(reply.status, 404, `${method}: ${reply.text}`)
          assert.strictEqual(reply.json.error.code, -32601)
          validateMessage(MODERN, reply.json)
        }
      }))

    it.effect("Versioning 5: a legacy client in a session cannot call server/discover or subscriptions/listen (-32601, 404)", () =>
      Effect.gen(function*() {
        const { sessionId } = yield* initializeLegacy()
        for (const method of ["server/discover", "subscriptions/listen"]) {
          const reply = yield* postLegacy(sessionId, method, { notifications: {} }, { id: 11 })
          assert.strictEqual(reply.status, 404, `${method}: ${reply.text}`)
          assert.strictEqual(reply.json.error.code, -32601)
          assert.strictEqual(reply.json.id, 11)
          validateMessage("2025-11-25", reply.json)
        }
      }))

    it.effect("Events: notifications are delivered only on the stream of a request that asked for them (no progress token → one plain JSON response)", () =>
      Effect.gen(function*() {
        const reply = yield* postModern("tools/call", { name: "progress", arguments: {} }, { id: "quiet" })
        assert.strictEqual(reply.status, 200)
        assert.match(reply.headers.get("content-type") ?? "", /^application\/json/)
        assert.strictEqual(reply.json.id, "quiet")
        assert.notProperty(reply.json, "method")
        validateMessage(MODERN, reply.json, "CallToolResult")
        assert.strictEqual(reply.json.result.content[0].text, "finished")
        assert.notInclude(reply.text, "notifications/progress")
      }))

    it.effect("Cache hints 4: a call that carries inputResponses (without requestState) is never cached", () =>
      Effect.gen(function*() {
        const plain = (yield* postModern("resources/read", { uri: "test://items/3" })).json
        assert.strictEqual(plain.result.ttlMs, 60000)
        const continued = (yield* postModern("resources/read", { uri: "test://items/3", inputResponses: {} })).json
        validateMessage(MODERN, continued, "ReadResourceResult")
        assert.strictEqual(continued.result.ttlMs, 0)
      }))
  })
  })

  describe("error table", () => {
    const table: ReadonlyArray<[new(args: { message: string }) => McpErrors.McpError, number, number]> = [
      [McpErrors.ParseError, -32700, 400],
      [McpErrors.InvalidRequest, -32600, 400],
      [McpErrors.MethodNotFound, -32601, 404],
      [McpErrors.InvalidParams, -32602, 400],
      [McpErrors.InternalError, -32603, 500],
      [McpErrors.HeaderMismatch, -32020, 400],
      [McpErrors.MissingCapability, -32021, 400],
      [McpErrors.UnsupportedVersion, -32022, 400],
      [McpErrors.ServiceUnavailable, -33000, 503],
      [McpErrors.SessionNotFound, -33001, 404],
      [McpErrors.RequestCancelled, -33002, 200],
      [McpErrors.RequestTimeout, -33003, 200],
      [McpErrors.PayloadTooLarge, -33005, 413],
      [McpErrors.ServerDisabled, -33006, 503],
      [McpErrors.Forbidden, -33007, 403],
      [McpErrors.TokenExpired, -33008, 401],
      [McpErrors.Unauthenticated, -33009, 401],
      [McpErrors.RateLimited, -33010, 429]
    ]

    it("Protocol errors: every code of the table has the table's HTTP status, and there is no other code", () => {
      for (const [ErrorClass, code, status] of table) {
        const error = new ErrorClass({ message: "x" })
        assert.strictEqual(error.code, code, ErrorClass.name)
        assert.strictEqual(error.httpStatus, status, `${ErrorClass.name} (${code})`)
        assert.deepStrictEqual(McpErrors.toJsonRpcError(error), { code, message: "x" })
      }
      assert.strictEqual(McpErrors.McpError.members.length, table.length)
    })

    it("Protocol errors: the -32000 block is unused; the service's own codes are -33000 and above in magnitude", () => {
      for (const member of McpErrors.McpError.members) {
        const code = new (member as unknown as new(args: { message: string }) => McpErrors.McpError)({ message: "x" }).code
        const official = [-32700, -32600, -32601, -32602, -32603, -32020, -32021, -32022]
        assert.isTrue(official.includes(code) || (code <= -33000 && code > -34000), `${member.identifier}: ${code}`)
        assert.isFalse(code <= -32000 && code >= -32019, `${member.identifier} uses the -32000 block`)
      }
    })
  })

  // A daemon built inside the block's TestContext, so its clock is the TestClock: authentication off,
  // an empty catalogue and an hourly token-store poll, so that a simulated day wakes few timers.
  const onTestClock = Layer.unwrapEffect(Effect.map(TestDaemon.settings({ auth: "off", rateLimit: 0, authLockout: 0 }), (settings) =>
    Daemon.layer({ settings, port: 0, catalogue: Catalogue.empty, tokenStore: { pollInterval: "1 hour" } }))).pipe(Layer.provideMerge(TestHome.layer))

  layer(onTestClock)("legacy sessions on the TestClock", (it) => {
    it.effect("Legacy session: sessions live until the server stops (a day later the session still answers)", () =>
      Effect.gen(function*() {
        const { url } = yield* BoundAddress
        const post = (body: unknown, sessionId?: string) =>
          send(`${url}/mcp`, { body, headers: { "content-type": "application/json", ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId }) } })
        const init = yield* post({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } })
        const sessionId = init.headers.get("mcp-session-id") ?? ""
        assert.notStrictEqual(sessionId, "")
        assert.strictEqual((yield* post({ jsonrpc: "2.0", id: 1, method: "ping" }, sessionId)).status, 200)
        yield* TestClock.adjust("25 hours")
        const later = yield* post({ jsonrpc: "2.0", id: "later", method: "ping" }, sessionId)
        assert.strictEqual(later.status, 200, later.text)
        assert.deepStrictEqual(later.json.result, {})
        validateMessage("2025-11-25", later.json)
      }))
  })

  it.scopedLive("Legacy session: server stops → ended (a restarted daemon on the same home answers the old id with -33001)", () =>
    Effect.gen(function*() {
      const home = TestHome.at(yield* TestHome.tempDir())
      // Authentication off: the anonymous principal is the same before and after the restart, so only
      // the daemon's life can have ended the session.
      const start = Effect.gen(function*() {
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(harnessLayerIn({ auth: "off" }).pipe(Layer.provide(home)), scope)
        return { scope, run: <A, E>(effect: Effect.Effect<A, E, Harness>) => Effect.provide(effect, context) }
      })
      const first = yield* start
      const { sessionId } = yield* first.run(initializeLegacy())
      assert.strictEqual((yield* first.run(postLegacy(sessionId, "ping"))).status, 200)
      yield* Scope.close(first.scope, Exit.void)
      const second = yield* start
      yield* Effect.gen(function*() {
        const reply = yield* second.run(postLegacy(sessionId, "ping", {}, { id: 2 }))
        assert.strictEqual(reply.status, 404, reply.text)
        assert.strictEqual(reply.json.error.code, -33001)
        assert.strictEqual(reply.json.id, 2)
        validateMessage("2025-11-25", reply.json)
        assert.strictEqual((yield* second.run(initializeLegacy())).reply.status, 200)
      }).pipe(Effect.ensuring(Scope.close(second.scope, Exit.void)))
    }), 30_000)
})
