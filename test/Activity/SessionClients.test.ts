/**
 * A legacy request names its client only in `initialize`: the observer remembers each legacy
 * session's client, at most `MAX_SESSION_CLIENTS` of them, the oldest forgotten first. The observer
 * layer on a temporary home, its calls driven as the endpoint drives them.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ActivityObserver from "../../src/Activity/ActivityObserver.ts"
import { ActivityLog } from "../../src/Activity/ActivityLog.ts"
import { Clients } from "../../src/Activity/Clients.ts"
import { anonymous } from "../../src/Auth/Principal.ts"
import { CallObserver } from "../../src/Mcp/CallObserver.ts"
import * as HttpTransport from "../../src/Mcp/HttpTransport.ts"
import * as TestHome from "../support/TestHome.ts"

const services = ActivityObserver.layer.pipe(
  Layer.provideMerge(Layer.merge(ActivityLog.layer(), Clients.layer({ instanceId: "test" }))),
  Layer.provideMerge(TestHome.layer)
)

const request = (headers: Readonly<Record<string, string>>): HttpTransport.HttpRequest => ({
  method: "POST",
  path: "/mcp",
  url: "/mcp",
  headers,
  body: "",
  remoteAddress: "127.0.0.1",
  localPort: 1,
  admitted: undefined
})

/** A legacy `initialize` by client `name`, answered with session `session`. */
const initialize = (observer: CallObserver["Type"], name: string, session: string) => {
  const call = observer.begin({
    request: request({}),
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name, version: "1" } },
    meta: undefined
  })!
  call.end(Exit.succeed(HttpTransport.json(200, { jsonrpc: "2.0", id: 1, result: {} }, { "mcp-session-id": session })))
}

/** A legacy `tools/list` in session `session`, by the anonymous principal. */
const listIn = (observer: CallObserver["Type"], session: string) => {
  const call = observer.begin({
    request: request({ "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" }),
    method: "tools/list",
    params: {},
    meta: undefined
  })!
  call.authenticated(anonymous)
  call.end(Exit.succeed(HttpTransport.json(200, { jsonrpc: "2.0", id: 2, result: { tools: [] } })))
}

describe("the observer's legacy session names", () => {
  it.scoped("at most MAX_SESSION_CLIENTS sessions are remembered for their client's name: the oldest is forgotten first", () =>
    Effect.gen(function*() {
      const observer = yield* CallObserver
      const count = ActivityObserver.MAX_SESSION_CLIENTS + 1
      for (let i = 0; i < count; i++) initialize(observer, `client-${i}`, `session-${i}`)
      listIn(observer, "session-0")
      listIn(observer, "session-1")
      listIn(observer, `session-${count - 1}`)
      const clients = yield* Clients
      const names = clients.seen(Date.now()).map((c) => c.name).sort()
      // session-0 was pushed out: its call names no client; the next oldest and the newest still do.
      assert.deepStrictEqual(names, ["client-1", `client-${count - 1}`, "unknown"])
    }).pipe(Effect.provide(services)))
})
