/**
 * The endpoint over real HTTP: the transport table, the error table, the era rules, discovery, the
 * result envelope, cache hints and pagination. Every message the server sends is validated against
 * the official JSON Schema of its era.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as NodeHttp from "node:http"
import {
  example,
  FILLER_TOOLS,
  Harness,
  layer as harnessLayer,
  MODERN,
  modern,
  modernHeaders,
  postModern,
  postRaw,
  send,
  validateDef,
  validateMessage,
  catalogueRequests,
  TRANSPORTS
} from "./support/EndpointHarness.ts"

const SERVER_INFO = "io.modelcontextprotocol/serverInfo"

/** A raw request with a chosen Host header (fetch does not let us set it). */
const rawRequest = (port: number, options: { method: string; path?: string; host: string; headers?: Record<string, string>; body?: string }) =>
  Effect.async<{ status: number; headers: NodeHttp.IncomingHttpHeaders; body: string }>((resume) => {
    const request = NodeHttp.request({
      host: "127.0.0.1",
      port,
      method: options.method,
      path: options.path ?? "/mcp",
      headers: { host: options.host, "content-type": "application/json", ...options.headers }
    }, (response) => {
      let body = ""
      response.setEncoding("utf8")
      response.on("data", (chunk) => (body += chunk))
      response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, headers: response.headers, body })))
    })
    request.end(options.body ?? "")
  })

const expectError = (reply: { status: number; json: any }, status: number, code: number, id: unknown = 1) => {
  assert.strictEqual(reply.status, status, JSON.stringify(reply.json))
  assert.strictEqual(reply.json.error.code, code, JSON.stringify(reply.json))
  assert.deepStrictEqual(reply.json.id, id)
  validateMessage(MODERN, reply.json)
}

describe.each(TRANSPORTS)("Endpoint over $name", ({ transport }) => {
  layer(harnessLayer({}, transport), { excludeTestServices: true })("transport rules", (it) => {
    it.effect("GET /mcp and DELETE /mcp: 405 with Allow: POST, OPTIONS", () =>
      Effect.gen(function*() {
        const { endpoint } = yield* Harness
        for (const method of ["GET", "DELETE"]) {
          const reply = yield* send(endpoint, { method })
          assert.strictEqual(reply.status, 405)
          assert.strictEqual(reply.headers.get("allow"), "POST, OPTIONS")
        }
      }))

    it.effect("OPTIONS /mcp: 204 CORS preflight for an allowed origin", () =>
      Effect.gen(function*() {
        const { endpoint } = yield* Harness
        for (const origin of ["https://claude.ai", "https://app.cursor.com"]) {
          const reply = yield* send(endpoint, {
            method: "OPTIONS",
            headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "mcp-param-query" }
          })
          assert.strictEqual(reply.status, 204)
          assert.strictEqual(reply.headers.get("access-control-allow-origin"), origin)
          assert.include(reply.headers.get("access-control-allow-methods") ?? "", "POST")
          assert.include(reply.headers.get("access-control-allow-headers") ?? "", "mcp-protocol-version")
          assert.include(reply.headers.get("access-control-allow-headers") ?? "", "mcp-param-query")
        }
        const plain = yield* send(endpoint, { method: "OPTIONS" })
        assert.strictEqual(plain.status, 204)
        assert.strictEqual(plain.headers.get("allow"), "POST, OPTIONS")
      }))

    it.effect("any other path: 404", () =>
      Effect.gen(function*() {
        const { url } = yield* Harness
        for (const path of ["/", "/mcp/", "/other", "/mcpx"]) {
          assert.strictEqual((yield* send(`${url}${path}`, { body: modern("server/discover") })).status, 404, path)
        }
      }))

    it.effect("Host not naming a loopback host or naming another port: 403 forbidden_host", () =>
      Effect.gen(function*() {
        const { port, token } = yield* Harness
        for (const host of ["evil.example", `evil.example:${port}`, `localhost:${port + 1}`, "localhost", `10.0.0.1:${port}`, `[::2]:${port}`]) {
          const reply = yield* rawRequest(port, {
            method: "POST",
            host,
            headers: { ...modernHeaders("server/discover"), authorization: `Bearer ${token}` },
            body: JSON.stringify(modern("server/discover", {}, 7))
          })
          assert.strictEqual(reply.status, 403, host)
          const body = JSON.parse(reply.body)
          assert.strictEqual(body.error.data.code, "forbidden_host")
          assert.strictEqual(body.id, 7)
          validateMessage(MODERN, body)
        }
        for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `LOCALHOST:${port}`]) {
          const reply = yield* rawRequest(port, {
            method: "POST",
            host,
            headers: { ...modernHeaders("server/discover"), authorization: `Bearer ${token}` },
            body: JSON.stringify(modern("server/discover"))
          })
          assert.strictEqual(reply.status, 200, host)
        }
      }))

    it.effect("Origin present and not allowed: 403 forbidden_origin; loopback pages included", () =>
      Effect.gen(function*() {
        for (const origin of ["https://evil.example", "http://localhost:3000", "null", "https://claude.ai.evil.example"]) {
          const reply = yield* postModern("server/discover", {}, { headers: { origin } })
          assert.strictEqual(reply.status, 403, origin)
          assert.strictEqual(reply.json.error.data.code, "forbidden_origin")
          validateMessage(MODERN, reply.json)
        }
      }))

    it.effect("Origin allowed: processed, with CORS headers on the answer; Origin absent: accepted", () =>
      Effect.gen(function*() {
        const allowed = yield* postModern("server/discover", {}, { headers: { origin: "https://claude.ai" } })
        assert.strictEqual(allowed.status, 200)
        assert.strictEqual(allowed.headers.get("access-control-allow-origin"), "https://claude.ai")
        const absent = yield* postModern("server/discover")
        assert.strictEqual(absent.status, 200)
        assert.isNull(absent.headers.get("access-control-allow-origin"))
      }))

    it.effect("body above 10 MB: 413 -33005 as a real response", () =>
      Effect.gen(function*() {
        const big = JSON.stringify(modern("tools/call", { name: "echo", arguments: { query: "x".repeat(10 * 1024 * 1024 + 10) } }))
        const reply = yield* postRaw(big, modernHeaders("tools/call", "echo"))
        expectError(reply, 413, -33005, null)
      }))

    it.effect("notification other than notifications/cancelled: 202, dropped", () =>
      Effect.gen(function*() {
        for (const method of ["notifications/initialized", "notifications/progress", "notifications/whatever"]) {
          const reply = yield* postRaw(JSON.stringify({ jsonrpc: "2.0", method, params: {} }))
          assert.strictEqual(reply.status, 202)
          assert.strictEqual(reply.text, "")
        }
      }))

    it.effect("notifications/cancelled: 202 even when it matches nothing", () =>
      Effect.gen(function*() {
        const reply = yield* postRaw(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "nothing" } }))
        assert.strictEqual(reply.status, 202)
      }))

    it.effect("unknown method: HTTP 404 with -32601", () =>
      Effect.gen(function*() {
        expectError(yield* postModern("tools/destroy"), 404, -32601)
      }))

    it.effect("modern-only method sent by a legacy client: same as unknown method", () =>
      Effect.gen(function*() {
        for (const method of ["server/discover", "subscriptions/listen"]) {
          const reply = yield* postRaw(JSON.stringify({ jsonrpc: "2.0", id: 3, method, params: {} }))
          expectError(reply, 404, -32601, 3)
        }
      }))

    it.effect("legacy-only method sent by a modern client: -32601", () =>
      Effect.gen(function*() {
        for (const method of ["initialize", "ping", "logging/setLevel"]) {
          expectError(yield* postModern(method, { protocolVersion: "2025-11-25", level: "info" }), 404, -32601)
        }
      }))
  })

  layer(harnessLayer({}, transport), { excludeTestServices: true })("error table", (it) => {
    it.effect("-32700 (400): the body is not JSON; id null", () =>
      Effect.gen(function*() {
        for (const body of ["", "{", "not json", "{\"jsonrpc\":\"2.0\",\"id\":1,"]) {
          expectError(yield* postRaw(body), 400, -32700, null)
        }
      }))

    it.effect("-32600 (400): bad envelope, with the id echoed when readable", () =>
      Effect.gen(function*() {
        expectError(yield* postRaw(JSON.stringify({ jsonrpc: "1.0", id: 5, method: "tools/list" })), 400, -32600, 5)
        expectError(yield* postRaw(JSON.stringify({ jsonrpc: "2.0", id: "s", method: 42 })), 400, -32600, "s")
        expectError(yield* postRaw(JSON.stringify({ jsonrpc: "2.0", id: 0, method: "tools/list", params: [1] })), 400, -32600, 0)
        expectError(yield* postRaw(JSON.stringify({ jsonrpc: "2.0", id: { x: 1 }, method: "tools/list" })), 400, -32600, null)
        expectError(yield* postRaw(JSON.stringify("just a string")), 400, -32600, null)
      }))

    it.effect("-32600 (400): batches are refused", () =>
      Effect.gen(function*() {
        expectError(yield* postRaw(JSON.stringify([modern("server/discover", {}, 1), modern("server/discover", {}, 2)])), 400, -32600, null)
      }))

    it.effect("-32600 (400): a JSON-RPC response sent to the server", () =>
      Effect.gen(function*() {
        expectError(yield* postRaw(JSON.stringify({ jsonrpc: "2.0", id: 9, result: {} })), 400, -32600, 9)
        expectError(yield* postRaw(JSON.stringify({ jsonrpc: "2.0", id: 10, error: { code: 1, message: "x" } })), 400, -32600, 10)
      }))

    it.effect("ids are kept verbatim: strings, numbers, 0", () =>
      Effect.gen(function*() {
        for (const id of [0, 1, -7, 2 ** 40, "0", "", "id with spaces", "ü"]) {
          const reply = yield* postModern("server/discover", {}, { id })
          assert.strictEqual(reply.status, 200)
          assert.deepStrictEqual(reply.json.id, id)
          validateMessage(MODERN, reply.json, "DiscoverResult")
        }
      }))

    it.effect("-32602 (400): unknown tool, unknown prompt, unknown resource URI, bad params", () =>
      Effect.gen(function*() {
        expectError(yield* postModern("tools/call", { name: "nope", arguments: {} }), 400, -32602)
        expectError(yield* postModern("prompts/get", { name: "nope" }), 400, -32602)
        expectError(yield* postModern("resources/read", { uri: "test://unknown" }), 400, -32602)
        expectError(yield* postModern("tools/call", { arguments: {} }), 400, -32602)
        expectError(yield* postModern("tools/call", { name: "fails", arguments: {} }), 400, -32602)
      }))

    it.effect("-32603 (500): a handler defect, without leaking its message", () =>
      Effect.gen(function*() {
        const reply = yield* postModern("tools/call", { name: "defect", arguments: {} })
        expectError(reply, 500, -32603)
        assert.notInclude(reply.text, "shouldnotleak")
      }))
  })

  layer(harnessLayer({}, transport), { excludeTestServices: true })("eras", (it) => {
    it.effect("modern: _meta protocol version missing or empty gives -32602", () =>
      Effect.gen(function*() {
        const { endpoint, token } = yield* Harness
        for (const version of [undefined, ""]) {
          const meta: Record<string, unknown> = { "io.modelcontextprotocol/clientCapabilities": {} }
          if (version !== undefined) meta["io.modelcontextprotocol/protocolVersion"] = version
          const reply = yield* send(endpoint, {
            body: { jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: meta } },
            headers: { ...modernHeaders("tools/list"), authorization: `Bearer ${token}` }
          })
          expectError(reply, 400, -32602)
        }
      }))

    it.effect("modern: unsupported version gives -32022 with data {supported, requested}", () =>
      Effect.gen(function*() {
        for (const version of ["2099-01-01", "2025-11-25", "2025-03-26"]) {
          const reply = yield* postModern("tools/list", {}, {
            meta: { "io.modelcontextprotocol/protocolVersion": version },
            headers: { "mcp-protocol-version": version }
          })
          expectError(reply, 400, -32022)
          assert.deepStrictEqual(reply.json.error.data, { supported: [MODERN, "2025-11-25", "2025-06-18"], requested: version })
          validateDef(MODERN, "UnsupportedProtocolVersionError", reply.json)
        }
      }))

    it.effect("modern: clientCapabilities missing or not an object gives -32602", () =>
      Effect.gen(function*() {
        for (const capabilities of [undefined, null, 1, "x", []]) {
          const reply = yield* postModern("tools/list", {}, { meta: { "io.modelcontextprotocol/clientCapabilities": capabilities } })
          expectError(reply, 400, -32602)
        }
        const empty = yield* postModern("tools/list", {}, { meta: { "io.modelcontextprotocol/clientCapabilities": {} } })
        assert.strictEqual(empty.status, 200)
      }))

    it.effect("modern: clientInfo is optional and, when given, names the client", () =>
      Effect.gen(function*() {
        const named = yield* postModern("tools/call", { name: "echo", arguments: {} })
        assert.strictEqual(named.json.result.structuredContent.clientName, "endpoint-test")
        const anonymous = yield* postModern("tools/call", { name: "echo", arguments: {} }, { meta: { "io.modelcontextprotocol/clientInfo": undefined } })
        assert.strictEqual(anonymous.status, 200)
        assert.isNull(anonymous.json.result.structuredContent.clientName)
      }))

    it.effect("a request whose MCP-Protocol-Version header names 2026-07-28 is modern even without _meta", () =>
      Effect.gen(function*() {
        const reply = yield* postRaw(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover" }), { "mcp-protocol-version": MODERN, "mcp-method": "server/discover" })
        expectError(reply, 400, -32602)
      }))

    it.effect("a request without the _meta version is legacy", () =>
      Effect.gen(function*() {
        const reply = yield* postRaw(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }))
        // Legacy without a session.
        expectError(reply, 400, -32600)
      }))
  })

  layer(harnessLayer({}, transport), { excludeTestServices: true })("discovery and results", (it) => {
    it.effect("server/discover: live supportedVersions, capabilities table, instructions, cache hints, serverInfo", () =>
      Effect.gen(function*() {
        const reply = yield* postModern("server/discover")
        assert.strictEqual(reply.status, 200)
        validateMessage(MODERN, reply.json, "DiscoverResult")
        const result = reply.json.result
        assert.deepStrictEqual(result.supportedVersions, [MODERN, "2025-11-25", "2025-06-18"])
        assert.deepStrictEqual(result.capabilities, {
          tools: { listChanged: false },
          resources: { subscribe: true, listChanged: true },
          prompts: { listChanged: false },
          completions: {},
          extensions: {}
        })
        assert.include(result.instructions, "list_connections")
        assert.include(result.instructions, "describe_table")
        assert.include(result.instructions, "policy")
        assert.strictEqual(result.resultType, "complete")
        assert.strictEqual(result.ttlMs, 3600000)
        assert.strictEqual(result.cacheScope, "public")
        const info = result._meta[SERVER_INFO]
        assert.strictEqual(info.name, "weaviate-mcp")
        assert.isString(info.version)
        assert.isString(info.title)
        assert.strictEqual(info.websiteUrl, "https://www.npmjs.com/package/weaviate-mcp")
        assert.isString(info.instanceId)
        // The shape matches the upstream example's members.
        for (const key of Object.keys(example("DiscoverResult"))) assert.property(result, key)
      }))

    it.effect("server/discover names the handshake file's instanceId", () =>
      Effect.gen(function*() {
        const { home } = yield* Harness
        const handshake = JSON.parse(yield* Effect.promise(() => import("node:fs/promises").then((fs) => fs.readFile(`${home}/mcp-handshake.json`, "utf8"))))
        const reply = yield* postModern("server/discover")
        assert.strictEqual(reply.json.result._meta[SERVER_INFO].instanceId, handshake.instanceId)
        assert.strictEqual(reply.json.result.serverInfo.instanceId, handshake.instanceId)
      }))

    it.effect("modern results carry resultType and _meta serverInfo {name, version}", () =>
      Effect.gen(function*() {
        const cases = catalogueRequests
        for (const [method, params, def] of cases) {
          const reply = yield* postModern(method, params)
          assert.strictEqual(reply.status, 200, method)
          validateMessage(MODERN, reply.json, def)
          assert.strictEqual(reply.json.result.resultType, "complete")
          assert.deepStrictEqual(reply.json.result._meta[SERVER_INFO], { name: "weaviate-mcp", version: reply.json.result._meta[SERVER_INFO].version })
        }
      }))

    it.effect("cache hints exactly per the table, stripped from every other method", () =>
      Effect.gen(function*() {
        const expected: Record<string, [number, string] | undefined> = {
          "tools/list": [300000, "private"],
          "resources/list": [30000, "private"],
          "resources/templates/list": [3600000, "public"],
          "prompts/list": [3600000, "public"],
          "tools/call": undefined,
          "prompts/get": undefined,
          "completion/complete": undefined
        }
        const params: Record<string, Record<string, unknown>> = {
          "tools/call": { name: "echo", arguments: {} },
          "prompts/get": { name: "greet", arguments: {} },
          "completion/complete": { ref: { type: "ref/prompt", name: "greet" }, argument: { name: "who", value: "" } }
        }
        for (const [method, hint] of Object.entries(expected)) {
          const result = (yield* postModern(method, params[method] ?? {})).json.result
          if (hint === undefined) {
            assert.notProperty(result, "ttlMs", method)
            assert.notProperty(result, "cacheScope", method)
          } else {
            assert.strictEqual(result.ttlMs, hint[0], method)
            assert.strictEqual(result.cacheScope, hint[1], method)
          }
        }
      }))

    it.effect("resources/read: the URI's ttlMs between 5000 and 300000, private; never on a call carrying requestState", () =>
      Effect.gen(function*() {
        const read = (yield* postModern("resources/read", { uri: "test://items/3" })).json.result
        assert.strictEqual(read.ttlMs, 60000)
        assert.strictEqual(read.cacheScope, "private")
        const clamped = (yield* postModern("resources/read", { uri: "test://items/1" })).json.result
        assert.strictEqual(clamped.ttlMs, 5000)
        const continued = yield* postModern("resources/read", { uri: "test://ask", requestState: "read-state", inputResponses: {} })
        validateMessage(MODERN, continued.json, "ReadResourceResult")
        assert.strictEqual(continued.json.result.ttlMs, 0)
      }))

    it.effect("input_required from tools/call and resources/read (modern)", () =>
      Effect.gen(function*() {
        const call = yield* postModern("tools/call", { name: "ask", arguments: {} })
        validateMessage(MODERN, call.json, "InputRequiredResult")
        assert.strictEqual(call.json.result.resultType, "input_required")
        assert.strictEqual(call.json.result.requestState, "state-1")
        assert.notProperty(call.json.result, "ttlMs")
        const again = yield* postModern("tools/call", { name: "ask", arguments: {}, requestState: "state-1", inputResponses: { approve_statement: { action: "accept", content: { approved: true } } } })
        assert.strictEqual(again.json.result.resultType, "complete")
        const read = yield* postModern("resources/read", { uri: "test://ask" })
        validateMessage(MODERN, read.json, "InputRequiredResult")
        assert.strictEqual(read.json.result.resultType, "input_required")
      }))

    it.effect("W3C trace context passes through unchanged", () =>
      Effect.gen(function*() {
        const trace = {
          traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
          tracestate: "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
          baggage: "userId=alice,isProduction=false"
        }
        const reply = yield* postModern("tools/call", { name: "echo", arguments: {} }, { meta: trace })
        validateMessage(MODERN, reply.json, "CallToolResult")
        for (const [key, value] of Object.entries(trace)) assert.strictEqual(reply.json.result._meta[key], value)
      }))

    it.effect("pagination: 50 items per page with an opaque nextCursor, for the four list methods", () =>
      Effect.gen(function*() {
        const seen: Array<string> = []
        let cursor: string | undefined
        let pages = 0
        do {
          const reply = yield* postModern("tools/list", cursor === undefined ? {} : { cursor })
          validateMessage(MODERN, reply.json, "ListToolsResult")
          const result = reply.json.result
          assert.isAtMost(result.tools.length, 50)
          seen.push(...result.tools.map((tool: { name: string }) => tool.name))
          cursor = result.nextCursor
          pages++
        } while (cursor !== undefined && pages < 10)
        // The readWrite token sees every tool but admin_only.
        assert.strictEqual(seen.length, FILLER_TOOLS + 7)
        assert.strictEqual(new Set(seen).size, seen.length)
        assert.strictEqual(pages, 3)
        const resources = (yield* postModern("resources/list")).json.result
        assert.strictEqual(resources.resources.length, 50)
        const next = (yield* postModern("resources/list", { cursor: resources.nextCursor })).json.result
        assert.strictEqual(next.resources.length, 10)
        assert.notProperty(next, "nextCursor")
        assert.notProperty((yield* postModern("prompts/list")).json.result, "nextCursor")
        assert.notProperty((yield* postModern("resources/templates/list")).json.result, "nextCursor")
      }))

    it.effect("a cursor used with another method, forged or altered gives -32602", () =>
      Effect.gen(function*() {
        const cursor = (yield* postModern("tools/list")).json.result.nextCursor as string
        expectError(yield* postModern("resources/list", { cursor }), 400, -32602)
        expectError(yield* postModern("prompts/list", { cursor }), 400, -32602)
        const [offset, signature] = cursor.split(".")
        expectError(yield* postModern("tools/list", { cursor: `${offset}0.${signature}` }), 400, -32602)
        // Another last character (a fixed "A" left the cursor unchanged when it already ended in "A").
        const altered = signature!.endsWith("A") ? "B" : "A"
        expectError(yield* postModern("tools/list", { cursor: `${offset}.${signature!.slice(0, -1)}${altered}` }), 400, -32602)
        expectError(yield* postModern("tools/list", { cursor: "1.abc" }), 400, -32602)
        expectError(yield* postModern("tools/list", { cursor: "" }), 400, -32602)
      }))

    it.effect("completion values are capped at 100 with hasMore", () =>
      Effect.gen(function*() {
        const reply = yield* postModern("completion/complete", { ref: { type: "ref/prompt", name: "greet" }, argument: { name: "who", value: "v" } })
        validateMessage(MODERN, reply.json, "CompleteResult")
        assert.strictEqual(reply.json.result.completion.values.length, 100)
        assert.isTrue(reply.json.result.completion.hasMore)
      }))
  })
})
