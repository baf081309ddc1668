/**
 * The README's "mount the endpoint in an HttpRouter" example, kept true: a host program that already
 * serves its own routes adds the MCP endpoint with one route, and closing the host's layer ends open
 * streams with their result (the Lifecycle the daemon provides) before the server closes.
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import * as NodePath from "node:path"
import { Daemon, Home, McpHttpApp } from "../../src/index.ts"
import { openListen } from "../support/Listen.ts"
import * as TestDaemon from "../support/TestDaemon.ts"
import * as TestHome from "../support/TestHome.ts"

/** The host program of the README, in a home of the test's choosing. */
const hostProgram = (dir: string, auth: "off" | "tokens" = "off") =>
  Effect.map(TestDaemon.settings({ auth, rateLimit: 0, authLockout: 0 }), (settings) =>
    HttpRouter.empty.pipe(
      HttpRouter.get("/health", HttpServerResponse.text("ok")),
      HttpRouter.all("/mcp", McpHttpApp.handler),
      HttpServer.serve(),
      Layer.provideMerge(Daemon.layer({ settings, port: 0, transport: McpHttpApp.mounted })),
      Layer.provide(Home.Home.layer(Option.some(dir))),
      Layer.provideMerge(NodeHttpServer.layer(() => NodeHttp.createServer(), { host: "127.0.0.1", port: 0 }))
    ))

const initialize = (endpoint: string) =>
  Effect.promise(() =>
    fetch(endpoint, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "host", version: "1" } } })
    })
  )

describe("McpHttpApp in a host HttpRouter", () => {
  it.scopedLive("one route mounts the endpoint beside the host's own routes; the handshake names the host's port", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir("weaviate-mcp-router-")
      const context = yield* Layer.build(yield* hostProgram(dir))
      const address = Context.get(context, HttpServer.HttpServer).address
      assert.strictEqual(address._tag, "TcpAddress")
      const port = address._tag === "TcpAddress" ? address.port : 0
      const health = yield* Effect.promise(() => fetch(`http://127.0.0.1:${port}/health`).then((r) => r.text()))
      assert.strictEqual(health, "ok")
      const response = yield* initialize(`http://127.0.0.1:${port}/mcp`)
      assert.strictEqual(response.status, 200)
      assert.isString(response.headers.get("mcp-session-id"))
      const handshake = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, "mcp-handshake.json"), "utf8"))
      assert.strictEqual(handshake.port, port)
    }))

  it.scopedLive("closing the host's layer ends an open subscription with its result, then the server", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir("weaviate-mcp-router-")
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(yield* hostProgram(dir), scope)
      const address = Context.get(context, HttpServer.HttpServer).address
      const endpoint = `http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}/mcp`
      const listen = yield* openListen(endpoint, "", { resourcesListChanged: true })
      yield* listen.next((message) => message.method === "notifications/subscriptions/acknowledged")
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      const result = yield* listen.next((message) => message.id === listen.id)
      assert.strictEqual(result.result.resultType, "complete")
      const closed = yield* closing.await.pipe(Effect.timeout("10 seconds"))
      assert.isTrue(Exit.isSuccess(closed))
      assert.isFalse(NodeFs.existsSync(NodePath.join(dir, "mcp-handshake.json")))
    }))

  it.scopedLive("authentication runs from the headers before the body is read, as over node:http: an 8 MB body without a token gets its 401 challenge, unparsed", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir("weaviate-mcp-router-")
      const context = yield* Layer.build(yield* hostProgram(dir, "tokens"))
      const address = Context.get(context, HttpServer.HttpServer).address
      const port = address._tag === "TcpAddress" ? address.port : 0
      // Valid JSON-RPC with a huge member: parsed, it would be a -32602 or a result, never a 401.
      const body = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list", params: { pad: "x".repeat(8 * 1024 * 1024) } })
      const response = yield* Effect.promise(() =>
        fetch(`http://127.0.0.1:${port}/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body }))
      assert.strictEqual(response.status, 401)
      assert.isString(response.headers.get("www-authenticate"))
      const answer = yield* Effect.promise(() => response.json() as Promise<{ id: unknown; error: { code: number } }>)
      assert.strictEqual(answer.error.code, -33009)
      assert.strictEqual(answer.id, null, "the body was not parsed, so its id is unknown")
    }))
})
