/**
 * A call ends with the fiber that answers it: the observer logs every call once, and a call whose
 * fiber ends without an answer (its event stream never ran, or it was interrupted) is `cancelled`,
 * with its client no longer counted in flight. The observer layer on a temporary home.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as ActivityObserver from "../../src/Activity/ActivityObserver.ts"
import * as Line from "../../src/Activity/ActivityLine.ts"
import { ActivityLog } from "../../src/Activity/ActivityLog.ts"
import { Clients } from "../../src/Activity/Clients.ts"
import { Home } from "../../src/Base/Home.ts"
import { anonymous } from "../../src/Auth/Principal.ts"
import { CallObserver } from "../../src/Mcp/CallObserver.ts"
import * as HttpTransport from "../../src/Mcp/HttpTransport.ts"
import * as TestHome from "../support/TestHome.ts"

const services = ActivityObserver.layer.pipe(
  Layer.provideMerge(Layer.merge(ActivityLog.layer(), Clients.layer({ instanceId: "test" }))),
  Layer.provideMerge(TestHome.layer)
)

const request = (): HttpTransport.HttpRequest => ({
  method: "POST",
  path: "/mcp",
  url: "/mcp",
  headers: { "mcp-protocol-version": "2026-07-28" },
  body: "",
  remoteAddress: "127.0.0.1",
  localPort: 1,
  admitted: undefined
})

/** One observed `tools/call` whose response is `response` (run on the fiber that runs the result). */
const observed = (id: number, response: Effect.Effect<HttpTransport.HttpResponse>) =>
  Effect.map(CallObserver, (observer) => {
    const call = observer.begin({
      request: request(),
      method: "tools/call",
      params: { name: "execute_query", arguments: { connection_id: `c${id}` } },
      meta: { "io.modelcontextprotocol/clientInfo": { name: "probe", version: "1" } }
    })!
    call.authenticated(anonymous)
    return call.end(response)
  })

/** The call lines of the log once it holds `count` (the log is flushed first). */
const callLines = (count: number) =>
  Effect.gen(function*() {
    yield* Effect.flatMap(ActivityLog, (log) => log.flush)
    const home = yield* Home
    const text = NodeFs.readFileSync(NodePath.join(home.dir, "activity.log"), "utf8")
    const calls = text.split("\n").filter((l) => l.length > 0).map((l) => Line.parse(l)!)
      .filter((e): e is Extract<Line.Entry, { type: "call" }> => e.type === "call")
    assert.strictEqual(calls.length, count, text)
    return calls
  })

const inFlight = Effect.map(Clients, (clients) => clients.seen(Date.now()).map((c) => [c.name, c.inFlight]))

describe("a call ends with the fiber that answers it", () => {
  it.scoped("an event stream that never ran ends its call as cancelled, and its client is no longer in flight", () =>
    Effect.gen(function*() {
      const never = Effect.suspend(() =>
        Effect.succeed<HttpTransport.HttpResponse>({ _tag: "Stream", status: 200, headers: {}, body: Stream.make("data: {}\n\n") })
      )
      // The fiber gets the stream and ends without running it (as when its client is gone first).
      const end = yield* observed(1, never)
      const response = yield* Fiber.join(yield* Effect.fork(end))
      assert.strictEqual(response._tag, "Stream")
      const calls = yield* callLines(1)
      assert.deepStrictEqual(calls.map((c) => [c.connection, c.outcome]), [["c1", "cancelled"]])
      assert.deepStrictEqual(yield* inFlight, [["probe", 0]])
    }).pipe(Effect.provide(services)))

  it.scoped("calls answered one after another on one fiber are each logged once, with their own outcome", () =>
    Effect.gen(function*() {
      const answer = (body: unknown) => Effect.suspend(() => Effect.succeed(HttpTransport.json(200, body)))
      yield* Effect.fork(Effect.gen(function*() {
        yield* Effect.flatten(observed(1, answer({ jsonrpc: "2.0", id: 1, result: { content: [], isError: false } })))
        yield* Effect.flatten(observed(2, answer({ jsonrpc: "2.0", id: 2, error: { code: -32602, message: "bad" } })))
        yield* Effect.flatten(observed(3, answer({ jsonrpc: "2.0", id: 3, result: { content: [], isError: true } })))
      })).pipe(Effect.flatMap(Fiber.join))
      const calls = yield* callLines(3)
      assert.deepStrictEqual(calls.map((c) => [c.connection, c.outcome, c.code]), [
        ["c1", "ok", null],
        ["c2", "error", -32602],
        ["c3", "tool_error", null]
      ])
      assert.deepStrictEqual(yield* inFlight, [["probe", 0]])
    }).pipe(Effect.provide(services)))

  it.scoped("an interrupted call is cancelled", () =>
    Effect.gen(function*() {
      const end = yield* observed(1, Effect.never)
      const fiber = yield* Effect.fork(end)
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(fiber)
      const calls = yield* callLines(1)
      assert.deepStrictEqual(calls.map((c) => [c.connection, c.outcome]), [["c1", "cancelled"]])
      assert.deepStrictEqual(yield* inFlight, [["probe", 0]])
    }).pipe(Effect.provide(services)))
})
