/**
 * The limits the transport enforces at the socket (local-mcp-endpoint.md, Limits): body 10 MB as a
 * real 413, request headers 16 KB, 64 concurrent connections, idle connections closed; a client
 * that goes away interrupts its request; the default port falls back to a free one.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import * as Layer from "effect/Layer"
import * as NodeHttp from "node:http"
import * as NodeNet from "node:net"
import * as HttpTransport from "../../src/Mcp/HttpTransport.ts"
import * as Lifecycle from "../../src/Mcp/Lifecycle.ts"

const tooLargeBody = { jsonrpc: "2.0", id: null, error: { code: -33005, message: "Payload too large" } }

/** A transport with a handler that echoes the body size, and a hook to observe interruption. */
const start = (
  options: Partial<HttpTransport.ListenOptions> & {
    readonly onInterrupt?: Deferred.Deferred<void>
    readonly onStart?: Deferred.Deferred<void>
  } = {}
) =>
  HttpTransport.make({ port: 0, ...options }).pipe(
    Effect.provide(Layer.succeed(HttpTransport.HttpHandler, HttpTransport.HttpHandler.of({
      tooLarge: () => HttpTransport.json(413, tooLargeBody),
      handle: (request) =>
        request.path === "/hang"
          ? (options.onStart ? Deferred.succeed(options.onStart, undefined) : Effect.void).pipe(
            Effect.zipRight(Effect.never),
            Effect.onInterrupt(() => options.onInterrupt ? Deferred.succeed(options.onInterrupt, undefined) : Effect.void)
          )
          : Effect.succeed(HttpTransport.json(200, { size: Buffer.byteLength(request.body) }))
    }))),
    // The transport's own lifecycle: begun by the transport's finalizer, not by this provide.
    Effect.provideServiceEffect(Lifecycle.Lifecycle, Lifecycle.make)
  )

const post = (url: string, body: string | Uint8Array, headers: Record<string, string> = {}) =>
  Effect.promise(() => fetch(url, { method: "POST", body, headers }).then(async (r) => ({ status: r.status, text: await r.text(), headers: r.headers })))

/** A raw request over a socket; resolves with the status line (or "closed"). */
const rawStatus = (port: number, request: string) =>
  Effect.promise(() =>
    new Promise<string>((resolve) => {
      const socket = NodeNet.connect(port, "127.0.0.1", () => socket.write(request))
      let data = ""
      socket.on("data", (d) => {
        data += d
        const line = data.split("\r\n")[0]
        if (line && data.includes("\r\n")) {
          socket.destroy()
          resolve(line)
        }
      })
      socket.on("error", () => resolve("closed"))
      socket.on("close", () => resolve(data.split("\r\n")[0] || "closed"))
    })
  )

describe("HTTP transport limits", () => {
  it("the defaults are the contract's limits", () => {
    const { now, ...limits } = HttpTransport.defaultLimits
    assert.deepStrictEqual(
      { ...limits, shutdownGraceMs: 0 },
      { maxBodyBytes: 10 * 1024 * 1024, maxHeaderBytes: 16 * 1024, maxConnections: 64, idleTimeoutMs: 30_000, headersTimeoutMs: 10_000, shutdownGraceMs: 0, recycleGraceMs: 1_000 }
    )
    assert.isNumber(now())
  })

  it.scopedLive("binds 127.0.0.1 only", () =>
    Effect.gen(function*() {
      const address = yield* start()
      assert.strictEqual(address.host, "127.0.0.1")
      assert.strictEqual(address.url, `http://127.0.0.1:${address.port}`)
    }))

  it.scopedLive("a body over 10 MB with Content-Length gets a real 413 with -33005, not a reset", () =>
    Effect.gen(function*() {
      const address = yield* start()
      const r = yield* post(`${address.url}/mcp`, new Uint8Array(10 * 1024 * 1024 + 1))
      assert.strictEqual(r.status, 413)
      assert.deepStrictEqual(JSON.parse(r.text), tooLargeBody)
    }))

  it.scopedLive("a chunked body that grows over the cap gets a real 413 too", () =>
    Effect.gen(function*() {
      const address = yield* start({ limits: { maxBodyBytes: 1000 } })
      const status = yield* Effect.promise(() =>
        new Promise<number>((resolve, reject) => {
          const req = NodeHttp.request(`${address.url}/mcp`, { method: "POST", headers: { "transfer-encoding": "chunked" } }, (res) => {
            res.resume()
            resolve(res.statusCode ?? 0)
          })
          req.on("error", reject)
          for (let i = 0; i < 5; i++) req.write("x".repeat(400))
          req.end()
        })
      )
      assert.strictEqual(status, 413)
    }))

  it.scopedLive("a body at the cap is accepted", () =>
    Effect.gen(function*() {
      const address = yield* start({ limits: { maxBodyBytes: 1000 } })
      const r = yield* post(`${address.url}/mcp`, "x".repeat(1000))
      assert.strictEqual(r.status, 200)
      assert.deepStrictEqual(JSON.parse(r.text), { size: 1000 })
    }))

  it.scopedLive("request headers over 16 KB are refused with 431", () =>
    Effect.gen(function*() {
      const address = yield* start()
      const status = yield* rawStatus(address.port, `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"a".repeat(17 * 1024)}\r\nContent-Length: 0\r\n\r\n`)
      assert.include(status, "431")
      const ok = yield* rawStatus(address.port, `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"a".repeat(15 * 1024)}\r\nContent-Length: 0\r\n\r\n`)
      assert.include(ok, "200")
    }))

  it.scopedLive("at most 64 connections: at the limit a never-used connection past the recycling grace is recycled for the 65th, which is answered", () =>
    Effect.gen(function*() {
      let clock = 0
      const address = yield* start({ limits: { now: () => clock } })
      const open = (n: number) =>
        Effect.promise(() =>
          Promise.all(Array.from({ length: n }, () =>
            new Promise<NodeNet.Socket>((resolve) => {
              const s = NodeNet.connect(address.port, "127.0.0.1", () => resolve(s))
              s.on("error", () => {})
            })))
        )
      const sockets = yield* Effect.acquireRelease(open(64), (all) => Effect.sync(() => all.forEach((s) => s.destroy())))
      assert.strictEqual(sockets.length, 64)
      clock += HttpTransport.defaultLimits.recycleGraceMs
      const status = yield* rawStatus(address.port, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
      assert.include(status, "200")
      assert.strictEqual(sockets.filter((s) => s.destroyed || s.readyState !== "open").length, 1, "exactly one idle connection gave its slot")
    }))

  it.scopedLive("an idle connection is closed after the idle time-out", () =>
    Effect.gen(function*() {
      const address = yield* start({ limits: { idleTimeoutMs: 200 } })
      const closed = yield* Effect.promise(() =>
        new Promise<boolean>((resolve) => {
          const s = NodeNet.connect(address.port, "127.0.0.1")
          const guard = setTimeout(() => resolve(false), 5000)
          s.on("close", () => {
            clearTimeout(guard)
            resolve(true)
          })
          s.on("error", () => {})
        })
      )
      assert.isTrue(closed)
    }))

  it.scopedLive("a keep-alive connection idle after its response is closed after the idle time-out", () =>
    Effect.gen(function*() {
      const address = yield* start({ limits: { idleTimeoutMs: 200 } })
      const closed = yield* Effect.promise(() =>
        new Promise<boolean>((resolve) => {
          const s = NodeNet.connect(address.port, "127.0.0.1", () => s.write("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}"))
          const guard = setTimeout(() => resolve(false), 5000)
          s.on("data", () => {})
          s.on("close", () => {
            clearTimeout(guard)
            resolve(true)
          })
          s.on("error", () => {})
        })
      )
      assert.isTrue(closed)
    }))

  it.scopedLive("a client that goes away interrupts its request", () =>
    Effect.gen(function*() {
      const interrupted = yield* Deferred.make<void>()
      const running = yield* Deferred.make<void>()
      const address = yield* start({ onInterrupt: interrupted, onStart: running })
      const controller = new AbortController()
      const pending = fetch(`${address.url}/hang`, { method: "POST", body: "{}", signal: controller.signal }).catch(() => "aborted")
      yield* Deferred.await(running)
      controller.abort()
      yield* Deferred.await(interrupted).pipe(Effect.timeout("5 seconds"))
      assert.strictEqual(yield* Effect.promise(() => pending), "aborted")
    }))

  it.effect("shutdown with open requests completes after the grace period (300 ms), well within 1 second", () =>
    Effect.gen(function*() {
      assert.isAtMost(HttpTransport.defaultLimits.shutdownGraceMs, 500)
      const interrupted = yield* Deferred.make<void>()
      const running = yield* Deferred.make<void>()
      const scope = yield* Scope.make()
      const address = yield* start({ onInterrupt: interrupted, onStart: running }).pipe(Scope.extend(scope))
      const pending = fetch(`${address.url}/hang`, { method: "POST", body: "{}" }).then((r) => r.status, () => "reset")
      yield* Deferred.await(running)
      const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
      yield* TestClock.adjust(HttpTransport.defaultLimits.shutdownGraceMs - 1)
      yield* Effect.yieldNow()
      assert.isTrue((yield* Fiber.poll(closing))._tag === "None", "still giving handlers their grace")
      yield* TestClock.adjust(1)
      yield* Fiber.join(closing)
      yield* Deferred.await(interrupted)
      assert.strictEqual(yield* Effect.promise(() => pending), "reset", "the open request was cut")
    }))

  it.scopedLive("the preferred port falls back to a free one when taken; an insisted port fails", () =>
    Effect.gen(function*() {
      const taken = yield* start()
      const fallback = yield* start({ port: { preferred: taken.port } })
      assert.notStrictEqual(fallback.port, taken.port)
      const error = yield* Effect.flip(start({ port: taken.port }))
      assert.strictEqual(error.reason, "EADDRINUSE")
      assert.include(error.message, "--port 0")
    }))
})
