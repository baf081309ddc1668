/**
 * The usual `tools/list` (an active token of the store, within its rate, a reply known at once) is
 * answered without running a fiber: the admission and the response are `Exit`s, which the transport
 * writes directly (README "Benchmarks": 128 → 95 µs of CPU per request). The answer is the same as
 * the one a fiber would give; other requests still take the effect path.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Daemon from "../../src/Daemon/Daemon.ts"
import * as HttpTransport from "../../src/Mcp/HttpTransport.ts"
import * as TestDaemon from "../support/TestDaemon.ts"
import * as TestHome from "../support/TestHome.ts"
import { modern, modernHeaders } from "./support/EndpointHarness.ts"

/** The daemon's handler with its defaults (rate limit on), and the first-run token. */
const withHandler = <A, E>(f: (handler: HttpTransport.HttpHandler["Type"], token: string) => Effect.Effect<A, E>, auth?: "off") =>
  Effect.scoped(Effect.gen(function*() {
    const settings = yield* TestDaemon.settings(auth === undefined ? {} : { auth })
    const token = yield* Deferred.make<string>()
    // Without authentication there is no first-run token.
    if (auth === "off") yield* Deferred.succeed(token, "")
    const context = yield* Layer.build(
      Daemon.layer({ settings, port: 0, onDefaultToken: (created) => Deferred.succeed(token, created.token) }).pipe(
        Layer.provide(TestHome.layer)
      )
    )
    const handler = yield* Effect.provide(HttpTransport.HttpHandler, context)
    return yield* f(handler, yield* Deferred.await(token))
  }))

const head = (token: string, body: unknown, method = "tools/list"): HttpTransport.RequestHead & { readonly body: string } => ({
  method: "POST",
  path: "/mcp",
  url: "/mcp",
  headers: { host: "127.0.0.1:1", ...modernHeaders(method), authorization: `Bearer ${token}` },
  remoteAddress: "127.0.0.1",
  localPort: 1,
  body: JSON.stringify(body)
})

/** The admission and the response of a tools/list are `Exit`s, and the response is the tool list. */
const answeredAtOnce = (handler: HttpTransport.HttpHandler["Type"], token: string) =>
  Effect.gen(function*() {
    const request = head(token, modern("tools/list"))
    const admission = handler.admit!(request)
    assert.isTrue(Exit.isExit(admission), "admission decided at once")
    const admitted = yield* admission
    assert.strictEqual(admitted._tag, "Admit")
    const value = (admitted as { readonly value: unknown }).value
    assert.isTrue(Either.isEither(value) && Either.isRight(value))
    const response = handler.handle({ ...request, admitted: value })
    assert.isTrue(Exit.isExit(response), "response known at once")
    const answered = yield* response
    assert.strictEqual(answered.status, 200)
    assert.strictEqual(answered._tag, "Full")
    const body = (answered as { readonly body: unknown }).body
    const text = typeof body === "string" ? body : Buffer.concat((Array.isArray(body) ? body : [body]) as Array<Uint8Array>).toString("utf8")
    const tools = JSON.parse(text).result.tools as Array<{ readonly name: string }>
    assert.include(tools.map((t) => t.name), "execute_query")
  })

describe("answered without a fiber", () => {
  it.live("a tools/list with an active token: the admission and the response are Exits, and the response is the tool list", () =>
    withHandler(answeredAtOnce))

  it.live("a tools/list without authentication (serve --auth off): the admission and the response are Exits too", () =>
    withHandler((handler) => answeredAtOnce(handler, "no-token"), "off"))

  it.live("a wrong token is refused at once with the same 401 as before", () =>
    withHandler((handler) =>
      Effect.gen(function*() {
        const request = head("wmcp_0123456789abcdef_" + "A".repeat(43), modern("tools/list"))
        const admitted = yield* handler.admit!(request)
        const value = (admitted as { readonly value: unknown }).value
        assert.isTrue(Either.isEither(value) && Either.isLeft(value))
        const bodyCap = (admitted as { readonly bodyCap?: { readonly response: HttpTransport.HttpResponse } }).bodyCap
        assert.strictEqual(bodyCap?.response.status, 401)
      })))
})
