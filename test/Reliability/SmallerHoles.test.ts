/**
 * Smaller holes, over real HTTP against the daemon (on the TestClock): the lockout only refuses
 * guesses, the `Authorization` header is parsed exactly, two `Host` headers are refused, and every
 * error sent to an allowed `Origin` carries the CORS headers.
 */
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as NodeNet from "node:net"
import { bearerToken } from "../../src/Auth/Authenticator.ts"
import * as H from "../Mcp/support/EndpointHarness.ts"

const wrongToken = "wmcp_0000000000000000_" + "x".repeat(43)

/** Writes a raw request and reads until the server closes (bounded by the test's time-out). */
const raw = (port: number, request: string) =>
  Effect.async<string>((resume) => {
    let text = ""
    const socket = NodeNet.connect(port, "127.0.0.1", () => socket.write(request))
    socket.on("data", (chunk) => {
      text += chunk.toString("utf8")
      // One complete response is enough.
      if (/\r\n\r\n/.test(text) && /content-length: (\d+)/i.test(text)) {
        const length = Number(/content-length: (\d+)/i.exec(text)![1])
        if (Buffer.byteLength(text.slice(text.indexOf("\r\n\r\n") + 4)) >= length) socket.destroy()
      }
    })
    socket.on("error", () => {})
    socket.on("close", () => resume(Effect.succeed(text)))
    return Effect.sync(() => socket.destroy())
  })

layer(H.layer({ authLockout: 3, rateLimit: 0 }))("smaller holes", (it) => {
  it.effect("during a lockout a request with no token still gets its 401 challenge, and an expired token its -33008", () =>
    Effect.gen(function*() {
      const harness = yield* H.Harness
      const expiring = yield* harness.tokenStore.create({ name: "expiring", access: "readOnly", expiresAt: 1_000 })
      yield* TestClock.adjust("2 seconds")
      for (let i = 0; i < 3; i++) assert.strictEqual((yield* H.postModern("tools/list", {}, { token: wrongToken })).status, 401)
      const locked = yield* H.postModern("tools/list", {}, { token: wrongToken })
      assert.strictEqual(locked.status, 429)
      assert.strictEqual(locked.json.error.code, -33010)

      const noToken = yield* H.postModern("tools/list", {}, { token: "" })
      assert.strictEqual(noToken.status, 401)
      assert.strictEqual(noToken.json.error.code, -33009)
      assert.strictEqual(noToken.headers.get("www-authenticate"), "Bearer realm=\"weaviate-mcp\"")

      const expired = yield* H.postModern("tools/list", {}, { token: expiring.token })
      assert.strictEqual(expired.json.error.code, -33008)
      assert.include(expired.headers.get("www-authenticate") ?? "", "token expired")
      yield* TestClock.adjust("2 minutes")
    }))

  it.effect("Authorization is parsed exactly per RFC 6750: anything around the bearer token means none was sent, and is no guess", () =>
    Effect.gen(function*() {
      const harness = yield* H.Harness
      assert.deepStrictEqual(bearerToken(`Bearer ${harness.token}`), Option.some(harness.token))
      assert.deepStrictEqual(bearerToken(`bearer ${harness.token}`), Option.some(harness.token))
      for (const header of [`Basic x Bearer ${harness.token}`, `Bearer ${harness.token} extra`, `Basic ${harness.token}`, "Bearer", "Bearer  ", `Bearer\t${harness.token}`, `Token ${harness.token}`]) {
        assert.isTrue(Option.isNone(bearerToken(header)), header)
      }
      // Over HTTP: the plain challenge, never the lockout, however often.
      for (let i = 0; i < 5; i++) {
        for (const authorization of [`Basic x Bearer ${harness.token}`, `Bearer ${harness.token} extra`, `Basic ${harness.token}`]) {
          const reply = yield* H.send(harness.endpoint, { body: H.modern("tools/list"), headers: { ...H.modernHeaders("tools/list"), authorization } })
          assert.strictEqual(reply.status, 401, authorization)
          assert.strictEqual(reply.json.error.code, -33009)
          assert.strictEqual(reply.headers.get("www-authenticate"), "Bearer realm=\"weaviate-mcp\"")
        }
      }
    }))

  it.effect("a request with two Host headers is refused with 400", () =>
    Effect.gen(function*() {
      const { port, token } = yield* H.Harness
      const body = JSON.stringify(H.modern("tools/list"))
      const head = (hosts: string) =>
        `POST /mcp HTTP/1.1\r\n${hosts}Content-Type: application/json\r\nMCP-Protocol-Version: ${H.MODERN}\r\nMcp-Method: tools/list\r\nAuthorization: Bearer ${token}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
      const two = yield* raw(port, head(`Host: 127.0.0.1:${port}\r\nHost: evil.example\r\n`))
      assert.match(two, /^HTTP\/1\.1 400/)
      // Refused by the transport, still readable by a browser client of an allowed origin.
      const withOrigin = yield* raw(port, head(`Host: 127.0.0.1:${port}\r\nHost: evil.example\r\nOrigin: https://claude.ai\r\n`))
      assert.match(withOrigin, /^HTTP\/1\.1 400/)
      assert.match(withOrigin, /access-control-allow-origin: https:\/\/claude\.ai/i)
      const one = yield* raw(port, head(`Host: 127.0.0.1:${port}\r\n`))
      assert.match(one, /^HTTP\/1\.1 200/)
    }))

  it.effect("a 413 sent to an allowed Origin carries the CORS headers", () =>
    Effect.gen(function*() {
      const { port } = yield* H.Harness
      const reply = yield* raw(port, `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: https://claude.ai\r\nContent-Type: application/json\r\nContent-Length: ${10 * 1024 * 1024 + 1}\r\n\r\n`)
      assert.match(reply, /^HTTP\/1\.1 413/)
      assert.match(reply, /access-control-allow-origin: https:\/\/claude\.ai/i)
      assert.match(reply, /access-control-expose-headers: /i)
    }))

  it.effect("a 401 answered from the headers (large body, no valid token) to an allowed Origin carries the CORS headers", () =>
    Effect.gen(function*() {
      const harness = yield* H.Harness
      const reply = yield* H.send(harness.endpoint, {
        raw: `{"pad":"${"x".repeat(200 * 1024)}"}`,
        headers: { "content-type": "application/json", origin: "https://claude.ai" }
      })
      assert.strictEqual(reply.status, 401)
      assert.strictEqual(reply.json.error.code, -33009)
      assert.strictEqual(reply.headers.get("access-control-allow-origin"), "https://claude.ai")
      assert.include(reply.headers.get("access-control-expose-headers") ?? "", "www-authenticate")
    }))
})
