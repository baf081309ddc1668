/**
 * The "In-flight request" state table over real HTTP: the real daemon on 127.0.0.1, serving a test
 * catalogue whose tools either call the driver against a hanging Weaviate-compatible instance (so the
 * test can see the database request aborted) or wait until they are stopped.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as TestClock from "effect/TestClock"
import { withStatementTimeout } from "../../src/Cancellation/Deadline.ts"
import * as Daemon from "../../src/Daemon/Daemon.ts"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { Driver } from "../../src/Driver/Driver.ts"
import * as Catalogue from "../../src/Mcp/Catalogue.ts"
import { BoundAddress } from "../../src/Mcp/HttpTransport.ts"
import { TokenStore } from "../../src/Auth/TokenStore.ts"
import * as TestDaemon from "../support/TestDaemon.ts"
import * as TestHome from "../support/TestHome.ts"
import { type RecordedRequest, WeaviateInstance, type WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"
import * as TestWeaviate from "../weaviate/TestWeaviate.ts"
import { validateDef } from "../support/McpSchemas.ts"
import type * as HttpTransport from "../../src/Mcp/HttpTransport.ts"
import { TRANSPORTS } from "../Mcp/support/EndpointHarness.ts"

// ===== Official schema =====

const assertValid = (definition: string, value: unknown) => validateDef("2026-07-28", definition, value)

// ===== Test catalogue =====

/** What the tools tell the test: which request started, which was stopped. */
class Probe extends Context.Tag("test/Probe")<Probe, {
  readonly started: Queue.Queue<string | number>
  readonly stopped: Queue.Queue<string | number>
}>() {}

const text = (value: string): Catalogue.CallToolResult => ({ content: [{ type: "text", text: value }] })

/**
 * `health` calls the driver (GET /v1/meta) on the connection `weaviate`; `wait` runs until it is
 * stopped, under its own `timeout_seconds` when given.
 */
const testCatalogue = (w: WeaviateTestInstance, probe: Probe["Type"]) =>
  Layer.mergeAll(
    Layer.effect(
      Catalogue.Tools,
      Effect.gen(function*() {
        const driver = yield* Driver
        yield* Effect.orDie(Effect.flatMap(ConnectionStore, (store) => store.add({ name: "weaviate", host: "127.0.0.1", port: w.port } as never)))
        const object = (properties: Record<string, unknown>) => ({ type: "object", properties })
        return Catalogue.Tools.of({
          all: [
            {
              descriptor: { name: "health", description: "Checks the connection", inputSchema: object({}) },
              scopes: [],
              call: () =>
                driver.health("weaviate").pipe(
                  Effect.map((health) => Catalogue.complete(text(health.version))),
                  Effect.catchAll((error) => Effect.succeed(Catalogue.complete({ ...text(error.message), isError: true })))
                )
            },
            {
              descriptor: { name: "wait", description: "Waits until stopped", inputSchema: object({ timeout_seconds: { type: "number" } }) },
              scopes: [],
              call: (args) =>
                Effect.gen(function*() {
                  const { requestId } = yield* Catalogue.RequestContext
                  const waiting = Queue.offer(probe.started, requestId).pipe(
                    Effect.zipRight(Effect.never),
                    Effect.onInterrupt(() => Queue.offer(probe.stopped, requestId))
                  )
                  return yield* typeof args.timeout_seconds === "number" ? withStatementTimeout(args.timeout_seconds)(waiting) : waiting
                })
            }
          ]
        })
      })
    ).pipe(Layer.provide(Driver.layer.pipe(Layer.provideMerge(ConnectionStore.layer)))),
    Catalogue.Resources.empty,
    Catalogue.Prompts.empty,
    Catalogue.Completions.empty
  )

// ===== The daemon =====

class Endpoint extends Context.Tag("test/Endpoint")<Endpoint, {
  readonly url: string
  /** Bearer tokens of two principals (empty with authentication off). */
  readonly tokenA: string
  readonly tokenB: string
  /** A token for the revocation test alone, so that revoking it leaves the other tests alone. */
  readonly tokenR: string
  readonly tokenRId: string
}>() {}

/** Tokens are created before the daemon starts, so that it knows them from its first read of the file. */
const daemonLayer = (auth: "tokens" | "off", transport?: HttpTransport.Transport) =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const w = yield* WeaviateInstance
    const probe = Probe.of({ started: yield* Queue.unbounded<string | number>(), stopped: yield* Queue.unbounded<string | number>() })
    const store = yield* TokenStore
    const a = yield* Effect.orDie(store.create({ name: "token-a", access: "readOnly" }))
    const b = yield* Effect.orDie(store.create({ name: "token-b", access: "readOnly" }))
    const r = yield* Effect.orDie(store.create({ name: "token-revoked", access: "readOnly" }))
    const settings = yield* TestDaemon.settings({ auth })
    const endpoint = Layer.effect(
      Endpoint,
      Effect.map(BoundAddress, (address) =>
        Endpoint.of({
          url: `${address.url}/mcp`,
          tokenA: auth === "tokens" ? a.token : "",
          tokenB: auth === "tokens" ? b.token : "",
          tokenR: auth === "tokens" ? r.token : "",
          tokenRId: r.info.id
        }))
    )
    return Layer.merge(
      endpoint.pipe(Layer.provide(Daemon.layer({ settings, port: 0, catalogue: testCatalogue(w, probe), ...(transport === undefined ? {} : { transport }) }))),
      Layer.succeed(Probe, probe)
    )
  })).pipe(
    Layer.provideMerge(Layer.mergeAll(TokenStore.layerOneShot, TestWeaviate.layer())),
    Layer.provideMerge(TestHome.layer)
  )

// ===== Client =====

const VERSION = "2026-07-28"

const callBody = (id: string | number, name: string, args: Record<string, unknown> = {}, progressToken?: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: {
    name,
    arguments: args,
    _meta: {
      "io.modelcontextprotocol/protocolVersion": VERSION,
      "io.modelcontextprotocol/clientCapabilities": {},
      ...(progressToken === undefined ? {} : { progressToken })
    }
  }
})

const authorization = (token: string): Record<string, string> => token === "" ? {} : { authorization: `Bearer ${token}` }

interface Answer {
  readonly status: number
  readonly body: { readonly id?: unknown; readonly result?: unknown; readonly error?: { readonly code: number; readonly message: string } }
}

/** Starts a `tools/call`; the answer settles when the daemon responds. */
const call = (url: string, token: string, id: string | number, name: string, options: { readonly args?: Record<string, unknown>; readonly signal?: AbortSignal } = {}) =>
  fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "mcp-protocol-version": VERSION,
      "mcp-method": "tools/call",
      "mcp-name": name,
      ...authorization(token)
    },
    body: JSON.stringify(callBody(id, name, options.args)),
    ...(options.signal === undefined ? {} : { signal: options.signal })
  }).then(async (response): Promise<Answer> => ({ status: response.status, body: (await response.json()) as Answer["body"] }))

/** Starts a `tools/call` with a progress token: the answer is an event stream whose last frame is the response. */
const streamedCall = (url: string, token: string, id: string | number, name: string, signal?: AbortSignal) =>
  fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": VERSION,
      "mcp-method": "tools/call",
      "mcp-name": name,
      ...authorization(token)
    },
    body: JSON.stringify(callBody(id, name, {}, `progress-${id}`)),
    ...(signal === undefined ? {} : { signal })
  })

const cancelled = (url: string, token: string, requestId: string | number, reason?: string) => {
  const body = { jsonrpc: "2.0", method: "notifications/cancelled", params: reason === undefined ? { requestId } : { requestId, reason } }
  assertValid("CancelledNotification", body)
  return Effect.promise(() =>
    fetch(url, { method: "POST", headers: { "content-type": "application/json", ...authorization(token) }, body: JSON.stringify(body) })
      .then(async (response) => ({ status: response.status, text: await response.text() }))
  )
}

/** A pending answer, with a flag that tells whether it has arrived. */
const pending = (answer: Promise<Answer>) => {
  const state = { settled: false }
  const settled = answer.finally(() => {
    state.settled = true
  })
  settled.catch(() => undefined)
  return { answer: settled, state }
}

const assertError = (answer: Answer, id: string | number, code: number, message?: RegExp) => {
  assertValid("JSONRPCErrorResponse", answer.body)
  assert.strictEqual(answer.status, 200)
  assert.strictEqual(answer.body.id, id)
  assert.strictEqual(answer.body.error?.code, code)
  if (message !== undefined) assert.match(answer.body.error!.message, message)
}

/** Reads an event stream's `data:` frames as JSON (keep-alive comments carry none). */
const frames = (body: string) =>
  body.split("\n\n").flatMap((frame) => {
    const data = frame.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trimStart())
    return data.length === 0 ? [] : [JSON.parse(data.join("\n"))]
  })

const metaRequests = (w: WeaviateTestInstance) => w.requests.filter((r) => r.path === "/v1/meta")

/** Waits (at most 5 s) until the instance has recorded `count` requests to /v1/meta matching `predicate`. */
const metaRequestsSeen = (w: WeaviateTestInstance, count: number, predicate: (r: RecordedRequest) => boolean = () => true) =>
  Effect.gen(function*() {
    for (let i = 0; i < 500; i++) {
      if (metaRequests(w).filter(predicate).length >= count) return
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
    assert.fail(`the instance did not see ${count} such /v1/meta requests: ${JSON.stringify(metaRequests(w).map((r) => ({ aborted: r.aborted, completed: r.completed })))}`)
  })

const hang = (w: WeaviateTestInstance) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      w.clearRequests()
      w.setFault({ kind: "hang" }, { pathPrefix: "/v1/meta" })
    }),
    () => Effect.sync(() => w.setFault({ kind: "none" }))
  )

// ===== Live clock: cancellation, disconnects, revocation =====

// Over both transports: a dropped client interrupts its request on either.
describe.each(TRANSPORTS)("over $name", ({ transport }) => {
layer(daemonLayer("tokens", transport), { excludeTestServices: true, timeout: 30_000 })("in-flight requests over HTTP", (it) => {
  it.scoped("notifications/cancelled from the same token: 202, the call answers -33002 and the database request is aborted", () =>
    Effect.gen(function*() {
      const { tokenA, url } = yield* Endpoint
      const w = yield* WeaviateInstance
      yield* hang(w)
      const running = pending(call(url, tokenA, "c-1", "health"))
      yield* metaRequestsSeen(w, 1)
      const notified = yield* cancelled(url, tokenA, "c-1", "user pressed stop")
      assert.deepStrictEqual(notified, { status: 202, text: "" })
      const answer = yield* Effect.promise(() => running.answer)
      assertError(answer, "c-1", -33002, /^Request cancelled: user pressed stop$/)
      yield* metaRequestsSeen(w, 1, (r) => r.aborted && !r.completed)
    }))

  it.scoped("a notification from another token, or for an id not in flight: 202 and no effect", () =>
    Effect.gen(function*() {
      const { tokenA, tokenB, url } = yield* Endpoint
      const w = yield* WeaviateInstance
      yield* hang(w)
      const running = pending(call(url, tokenA, 42, "health"))
      yield* metaRequestsSeen(w, 1)
      assert.strictEqual((yield* cancelled(url, tokenB, 42)).status, 202, "another token's notification")
      assert.strictEqual((yield* cancelled(url, tokenA, 43)).status, 202, "an id that is not in flight")
      assert.strictEqual((yield* cancelled(url, tokenA, "42")).status, 202, "the string \"42\" is not the id 42")
      // Each notification has been fully handled (cancellation waits for the work to stop) before its 202.
      assert.isFalse(running.state.settled, "the call is still running")
      assert.isFalse(metaRequests(w)[0]!.aborted, "the database request is untouched")
      yield* cancelled(url, tokenA, 42)
      assertError(yield* Effect.promise(() => running.answer), 42, -33002)
    }))

  it.scoped("a notification without a valid token is answered 202 and cancels nothing", () =>
    Effect.gen(function*() {
      const { tokenA, url } = yield* Endpoint
      const w = yield* WeaviateInstance
      yield* hang(w)
      const running = pending(call(url, tokenA, "c-3", "health"))
      yield* metaRequestsSeen(w, 1)
      assert.strictEqual((yield* cancelled(url, "not-a-token", "c-3")).status, 202)
      assert.strictEqual((yield* cancelled(url, "", "c-3")).status, 202)
      assert.isFalse(running.state.settled)
      yield* cancelled(url, tokenA, "c-3")
      assertError(yield* Effect.promise(() => running.answer), "c-3", -33002)
    }))

  it.scoped("a duplicate in-flight id of the same token is refused with -32600; the running call goes on", () =>
    Effect.gen(function*() {
      const { tokenA, url } = yield* Endpoint
      const w = yield* WeaviateInstance
      yield* hang(w)
      const running = pending(call(url, tokenA, "dup", "health"))
      yield* metaRequestsSeen(w, 1)
      const duplicate = yield* Effect.promise(() => call(url, tokenA, "dup", "health"))
      assertValid("JSONRPCErrorResponse", duplicate.body)
      assert.strictEqual(duplicate.status, 400)
      assert.strictEqual(duplicate.body.error?.code, -32600)
      assert.strictEqual(metaRequests(w).length, 1, "the duplicate never reached the database")
      assert.isFalse(running.state.settled)
      assert.isFalse(metaRequests(w)[0]!.aborted)
      yield* cancelled(url, tokenA, "dup")
      assertError(yield* Effect.promise(() => running.answer), "dup", -33002)
    }))

  it.scoped("a dropped client connection stops the call: the database request is aborted", () =>
    Effect.gen(function*() {
      const { tokenA, url } = yield* Endpoint
      const w = yield* WeaviateInstance
      yield* hang(w)
      const controller = new AbortController()
      const running = pending(call(url, tokenA, "gone", "health", { signal: controller.signal }))
      yield* metaRequestsSeen(w, 1)
      controller.abort()
      yield* metaRequestsSeen(w, 1, (r) => r.aborted && !r.completed)
      // The id is free again: the request is no longer in flight.
      const again = pending(call(url, tokenA, "gone", "health"))
      yield* metaRequestsSeen(w, 2)
      yield* cancelled(url, tokenA, "gone")
      assertError(yield* Effect.promise(() => again.answer), "gone", -33002)
      assert.isTrue(running.state.settled)
    }))

  it.scoped("revoking a token while three of its requests and one of another token run cancels exactly three", () =>
    Effect.gen(function*() {
      const { tokenB, tokenR, tokenRId, url } = yield* Endpoint
      const w = yield* WeaviateInstance
      const store = yield* TokenStore
      yield* hang(w)
      const ofA = [1, 2, 3].map((id) => ({ id, running: pending(call(url, tokenR, id, "health")) }))
      const ofB = pending(call(url, tokenB, 1, "health"))
      yield* metaRequestsSeen(w, 4)
      yield* Effect.orDie(store.revoke(tokenRId))
      for (const { id, running } of ofA) {
        assertError(yield* Effect.promise(() => running.answer), id, -33002, /^Request cancelled: the access token was revoked$/)
      }
      yield* metaRequestsSeen(w, 3, (r) => r.aborted)
      assert.strictEqual(metaRequests(w).filter((r) => r.aborted).length, 3, "exactly three database requests aborted")
      assert.isFalse(ofB.state.settled, "token B's request still runs")
      yield* cancelled(url, tokenB, 1)
      assertError(yield* Effect.promise(() => ofB.answer), 1, -33002)
    }))

  it.scoped("a streamed call (progress token) cancelled by notification ends its stream with -33002 and aborts the database request", () =>
    Effect.gen(function*() {
      const { tokenA, url } = yield* Endpoint
      const w = yield* WeaviateInstance
      yield* hang(w)
      const response = yield* Effect.promise(() => streamedCall(url, tokenA, "s-1", "health"))
      assert.strictEqual(response.status, 200)
      assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/)
      yield* metaRequestsSeen(w, 1)
      assert.strictEqual((yield* cancelled(url, tokenA, "s-1")).status, 202)
      const messages = frames(yield* Effect.promise(() => response.text()))
      const last = messages[messages.length - 1]
      assertValid("JSONRPCErrorResponse", last)
      assert.strictEqual(last.id, "s-1")
      assert.strictEqual(last.error.code, -33002)
      yield* metaRequestsSeen(w, 1, (r) => r.aborted && !r.completed)
    }))

  it.scoped("closing the response stream of a streamed call stops it: the database request is aborted", () =>
    Effect.gen(function*() {
      const { tokenA, url } = yield* Endpoint
      const w = yield* WeaviateInstance
      yield* hang(w)
      const controller = new AbortController()
      const response = yield* Effect.promise(() => streamedCall(url, tokenA, "s-2", "health", controller.signal))
      assert.strictEqual(response.status, 200)
      yield* metaRequestsSeen(w, 1)
      controller.abort()
      yield* metaRequestsSeen(w, 1, (r) => r.aborted && !r.completed)
    }))
})
})

// ===== TestClock: deadlines =====


describe("deadlines over HTTP (TestClock)", () => {
  layer(daemonLayer("off"), { timeout: 30_000 })("the daemon's fibers run on the test clock", (it) => {
    it.effect("the 330-second handler deadline: still running at 329 s, -33003 at 330 s, the work stopped", () =>
      Effect.gen(function*() {
        const { url } = yield* Endpoint
        const probe = yield* Probe
        const first = pending(call(url, "", "d-1", "wait"))
        const second = pending(call(url, "", "d-2", "wait"))
        const started = [yield* Queue.take(probe.started), yield* Queue.take(probe.started)]
        assert.sameMembers(started, ["d-1", "d-2"])
        yield* TestClock.adjust("329 seconds")
        // Still running at 329 s: it can still be cancelled, and answers -33002 rather than -33003.
        yield* cancelled(url, "", "d-1")
        assertError(yield* Effect.promise(() => first.answer), "d-1", -33002)
        assert.strictEqual(yield* Queue.take(probe.stopped), "d-1")
        assert.isFalse(second.state.settled)
        yield* TestClock.adjust("1 second")
        assertError(yield* Effect.promise(() => second.answer), "d-2", -33003, /330-second handler deadline/)
        assert.strictEqual(yield* Queue.take(probe.stopped), "d-2")
      }))

    it.effect("a statement's own time-out (timeout_seconds) finishes the call with -33003", () =>
      Effect.gen(function*() {
        const { url } = yield* Endpoint
        const probe = yield* Probe
        const running = pending(call(url, "", "t-1", "wait", { args: { timeout_seconds: 5 } }))
        assert.strictEqual(yield* Queue.take(probe.started), "t-1")
        yield* TestClock.adjust("5 seconds")
        assertError(yield* Effect.promise(() => running.answer), "t-1", -33003, /timeout_seconds/)
        assert.strictEqual(yield* Queue.take(probe.stopped), "t-1")
      }))

    it.effect("subscriptions/listen is exempt from the handler deadline", () =>
      Effect.gen(function*() {
        const { url } = yield* Endpoint
        const body = {
          jsonrpc: "2.0",
          id: "listen-1",
          method: "subscriptions/listen",
          params: {
            _meta: { "io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": {} },
            notifications: { toolsListChanged: true }
          }
        }
        assertValid("SubscriptionsListenRequest", body)
        const response = yield* Effect.promise(() =>
          fetch(url, {
            method: "POST",
            headers: { "content-type": "application/json", accept: "text/event-stream", "mcp-protocol-version": VERSION, "mcp-method": "subscriptions/listen" },
            body: JSON.stringify(body)
          })
        )
        assert.strictEqual(response.status, 200)
        const reader = response.body!.getReader()
        // The acknowledgement is sent by the registered subscription: from here on it is in flight.
        const first = yield* Effect.promise(() => reader.read())
        const decoder = new TextDecoder()
        let text = decoder.decode(first.value)
        // Past the deadline (each simulated second wakes the daemon's timers, so not much further).
        yield* TestClock.adjust("331 seconds")
        yield* cancelled(url, "", "listen-1")
        for (let i = 0; i < 1000; i++) {
          const next = yield* Effect.promise(() => reader.read())
          if (next.done) break
          text += decoder.decode(next.value)
        }
        const messages = frames(text)
        const last = messages[messages.length - 1]
        assertValid("JSONRPCErrorResponse", last)
        assert.strictEqual(last.id, "listen-1")
        assert.strictEqual(last.error.code, -33002, "still running after 331 s: cancelled, not timed out")
      }))
  })
})
