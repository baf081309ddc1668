/**
 * Streaming: a request with `_meta.progressToken` is answered as `text/event-stream` (frames without
 * event names, progress in order, non-advancing values dropped, the response last);
 * `subscriptions/listen` acknowledges first (its watches already in place), tags every message with the
 * subscription id, sends only what was asked for, a keep-alive comment every 15 s (TestClock); shutdown answers in-flight calls 503 -33000 and ends subscriptions with their
 * result.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import {
  armSlow,
  Harness,
  layer as harnessLayer,
  MODERN,
  modern,
  modernHeaders,
  parseFrames,
  postModern,
  validateDef,
  validateMessage,
  TRANSPORTS
} from "./support/EndpointHarness.ts"

const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

/**
 * An open event stream read frame by frame. Reads are bounded in wall time only so that a broken
 * server fails the test instead of hanging it; no test waits on the bound to see that nothing came.
 */
const openStream = (endpoint: string, token: string, body: unknown, method: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const controller = new AbortController()
      const response = await fetch(endpoint, {
        method: "POST",
        headers: { ...modernHeaders(method), authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
        signal: controller.signal
      })
      const reader = response.body!.getReader()
      const decoder = new TextDecoder()
      let buffer = ""
      /** The next frame's text (a comment included), or `undefined` at the end or after `ms` without one. */
      const nextRaw = async (ms = 5000): Promise<string | undefined> => {
        const deadline = Date.now() + ms
        for (;;) {
          const cut = buffer.indexOf("\n\n")
          if (cut !== -1) {
            const frame = buffer.slice(0, cut + 2)
            buffer = buffer.slice(cut + 2)
            return frame
          }
          const left = deadline - Date.now()
          if (left <= 0) return undefined
          let timer: ReturnType<typeof setTimeout> | undefined
          const read = await Promise.race([
            reader.read(),
            new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), left)))
          ]).finally(() => clearTimeout(timer))
          if (read === "timeout" || read.done) return undefined
          buffer += decoder.decode(read.value, { stream: true })
        }
      }
      /** The next message, keep-alive comments skipped. */
      const next = async (ms = 5000): Promise<any> => {
        const deadline = Date.now() + ms
        for (;;) {
          const frame = await nextRaw(Math.max(1, deadline - Date.now()))
          if (frame === undefined) return undefined
          const messages = parseFrames(frame)
          if (messages.length > 0) return messages[0]
        }
      }
      return { response, next, nextRaw, close: () => controller.abort() }
    }),
    (stream) => Effect.sync(() => stream.close())
  )

const KEEP_ALIVE = ": keep-alive\n\n"

describe.each(TRANSPORTS)("Endpoint streaming over $name", ({ transport }) => {
  layer(harnessLayer({}, transport), { excludeTestServices: true })("progress", (it) => {
    it.effect("a progressToken turns the answer into text/event-stream: progress in order, non-advancing dropped, the response last", () =>
      Effect.gen(function*() {
        const reply = yield* postModern("tools/call", { name: "progress", arguments: {} }, { meta: { progressToken: "p-1" }, id: "call-1" })
        assert.strictEqual(reply.status, 200)
        assert.match(reply.headers.get("content-type") ?? "", /^text\/event-stream/)
        assert.notInclude(reply.text, "event:")
        const frames = reply.frames
        assert.strictEqual(frames.length, 4)
        const progress = frames.slice(0, 3)
        assert.deepStrictEqual(progress.map((f) => f.params.progress), [0, 0.3, 1])
        assert.deepStrictEqual(progress.map((f) => f.params.message), ["started", "running", "done"])
        for (const frame of progress) {
          assert.strictEqual(frame.method, "notifications/progress")
          assert.strictEqual(frame.params.progressToken, "p-1")
          assert.strictEqual(frame.params.total, 1)
          validateMessage(MODERN, frame)
          validateDef(MODERN, "ProgressNotification", frame)
        }
        const last = frames[3]
        assert.strictEqual(last.id, "call-1")
        validateMessage(MODERN, last, "CallToolResult")
        assert.strictEqual(last.result.content[0].text, "finished")
      }))

    it.effect("an integer progress token is echoed; an error is the last frame of the stream", () =>
      Effect.gen(function*() {
        const ok = yield* postModern("tools/call", { name: "progress", arguments: {} }, { meta: { progressToken: 0 } })
        assert.strictEqual(ok.frames[0].params.progressToken, 0)
        const failed = yield* postModern("tools/call", { name: "fails", arguments: {} }, { meta: { progressToken: "p" } })
        assert.match(failed.headers.get("content-type") ?? "", /^text\/event-stream/)
        assert.strictEqual(failed.frames.length, 1)
        assert.strictEqual(failed.frames[0].error.code, -32602)
        validateMessage(MODERN, failed.frames[0])
      }))

    it.effect("errors found before the call runs are plain JSON with their status", () =>
      Effect.gen(function*() {
        const reply = yield* postModern("tools/call", { name: "nope", arguments: {} }, { meta: { progressToken: "p" } })
        assert.strictEqual(reply.status, 400)
        assert.strictEqual(reply.json.error.code, -32602)
      }))

    it.effect("a list method with a progressToken streams its response alone", () =>
      Effect.gen(function*() {
        const reply = yield* postModern("prompts/list", {}, { meta: { progressToken: "p" } })
        assert.strictEqual(reply.frames.length, 1)
        validateMessage(MODERN, reply.frames[0], "ListPromptsResult")
      }))
  })

  layer(harnessLayer({}, transport), { excludeTestServices: true })("subscriptions/listen", (it) => {
    it.scoped("acknowledgement first, the subscription id on every message, only the types asked for", () =>
      Effect.gen(function*() {
        const { endpoint, signals, token } = yield* Harness
        const request = modern("subscriptions/listen", {
          notifications: { resourcesListChanged: true, resourceSubscriptions: ["test://items/2"], toolsListChanged: true }
        }, "listen-1")
        validateDef(MODERN, "SubscriptionsListenRequest", request)
        const stream = yield* openStream(endpoint, token, request, "subscriptions/listen")
        assert.match(stream.response.headers.get("content-type") ?? "", /^text\/event-stream/)
        const ack = yield* Effect.promise(() => stream.next())
        validateMessage(MODERN, ack)
        validateDef(MODERN, "SubscriptionsAcknowledgedNotification", ack)
        assert.strictEqual(ack.method, "notifications/subscriptions/acknowledged")
        assert.strictEqual(ack.params._meta[SUBSCRIPTION_ID], "listen-1")
        assert.deepStrictEqual(ack.params.notifications, { resourcesListChanged: true, resourceSubscriptions: ["test://items/2"] })

        // The watches are in place before the acknowledgement is sent: one change after it is seen.
        yield* PubSub.publish(signals.listChanged, undefined)
        const listChanged = yield* Effect.promise(() => stream.next())
        assert.strictEqual(listChanged.method, "notifications/resources/list_changed")
        assert.strictEqual(listChanged.params._meta[SUBSCRIPTION_ID], "listen-1")
        validateDef(MODERN, "ResourceListChangedNotification", listChanged)
        // A change to a URI nobody subscribed to, then one to the subscribed URI: the first frame is
        // the second change (both pass through the same catalogue stream, in order).
        yield* PubSub.publish(signals.updated, "test://items/9")
        yield* PubSub.publish(signals.updated, "test://items/2")
        const updated = yield* Effect.promise(() => stream.next())
        assert.strictEqual(updated.method, "notifications/resources/updated")
        assert.strictEqual(updated.params.uri, "test://items/2")
        assert.strictEqual(updated.params._meta[SUBSCRIPTION_ID], "listen-1")
        validateDef(MODERN, "ResourceUpdatedNotification", updated)
      }))

    it.scoped("a URI that cannot be watched fails the request with its error, never acknowledged", () =>
      Effect.gen(function*() {
        const { endpoint, token } = yield* Harness
        const stream = yield* openStream(endpoint, token, modern("subscriptions/listen", { notifications: { resourceSubscriptions: ["test://nope"] } }, 3), "subscriptions/listen")
        const end = yield* Effect.promise(() => stream.next())
        assert.strictEqual(end.id, 3)
        assert.strictEqual(end.error.code, -32602)
        validateMessage(MODERN, end)
      }))

    it.effect("subscriptions/listen without notifications: -32602", () =>
      Effect.gen(function*() {
        const reply = yield* postModern("subscriptions/listen", {})
        assert.strictEqual(reply.status, 400)
        assert.strictEqual(reply.json.error.code, -32602)
      }))
  })

  // The daemon is built inside the block's TestContext: its keep-alive schedule runs on the TestClock.
  // (The exemption of subscriptions/listen from the 330 s deadline is tested in
  // test/Cancellation/EndToEnd.test.ts.)
  layer(harnessLayer({}, transport))("subscriptions/listen on the TestClock", (it) => {
    const listen = (id: string, notifications: Record<string, unknown>) =>
      Effect.gen(function*() {
        const { endpoint, token } = yield* Harness
        const stream = yield* openStream(endpoint, token, modern("subscriptions/listen", { notifications }, id), "subscriptions/listen")
        const ack = yield* Effect.promise(() => stream.nextRaw())
        assert.strictEqual(parseFrames(ack!)[0].method, "notifications/subscriptions/acknowledged")
        return stream
      })
    const nextRaw = (stream: Effect.Effect.Success<ReturnType<typeof listen>>) => Effect.promise(() => stream.nextRaw())

    it.scoped("keep-alive comment every 15 s: none at 14 s, one at 15 s, another at 30 s", () =>
      Effect.gen(function*() {
        const { signals } = yield* Harness
        const stream = yield* listen("keep-alive", { resourcesListChanged: true })
        yield* TestClock.adjust("14 seconds")
        // A notification published now comes before any comment sent by 14 s: there is none.
        yield* PubSub.publish(signals.listChanged, undefined)
        assert.strictEqual(parseFrames((yield* nextRaw(stream))!)[0].method, "notifications/resources/list_changed")
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* nextRaw(stream), KEEP_ALIVE)
        yield* TestClock.adjust("14 seconds")
        yield* PubSub.publish(signals.listChanged, undefined)
        assert.strictEqual(parseFrames((yield* nextRaw(stream))!)[0].method, "notifications/resources/list_changed")
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* nextRaw(stream), KEEP_ALIVE)
      }))

    it.scoped("nothing but the acknowledgement (and keep-alives) when nothing is asked for", () =>
      Effect.gen(function*() {
        const { signals } = yield* Harness
        const stream = yield* listen("nothing", {})
        yield* PubSub.publish(signals.listChanged, undefined)
        yield* PubSub.publish(signals.updated, "test://items/2")
        // The first frame after them is the 15 s keep-alive: neither change was sent.
        yield* TestClock.adjust("15 seconds")
        assert.strictEqual(yield* nextRaw(stream), KEEP_ALIVE)
      }))
  })

  it.live("shutdown: in-flight calls answered 503 -33000, subscriptions ended with their result", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(harnessLayer({}, transport), scope)
      const harness = Context.get(context, Harness)
      const run = <A, E>(effect: Effect.Effect<A, E, Harness>) => Effect.provide(effect, context)
      const started = yield* run(armSlow)
      const call = yield* Effect.fork(run(postModern("tools/call", { name: "slow", arguments: {} }, { id: "s" })))
      yield* Deferred.await(started)
      const listen = yield* Effect.fork(Effect.scoped(Effect.gen(function*() {
        const stream = yield* openStream(harness.endpoint, harness.token, modern("subscriptions/listen", { notifications: { resourcesListChanged: true } }, "l"), "subscriptions/listen")
        const frames = [yield* Effect.promise(() => stream.next())]
        yield* Deferred.succeed(listening, undefined)
        frames.push(yield* Effect.promise(() => stream.next(5000)))
        return frames
      })))
      const listening = yield* Deferred.make<void>()
      yield* Deferred.await(listening)
      yield* Scope.close(scope, Exit.void)
      const reply = yield* Fiber.join(call)
      assert.strictEqual(reply.status, 503)
      assert.strictEqual(reply.json.error.code, -33000)
      assert.strictEqual(reply.json.id, "s")
      validateMessage(MODERN, reply.json)
      const [ack, end] = yield* Fiber.join(listen)
      assert.strictEqual(ack.method, "notifications/subscriptions/acknowledged")
      assert.strictEqual(end.id, "l")
      validateMessage(MODERN, end, "SubscriptionsListenResult")
      assert.strictEqual(end.result._meta[SUBSCRIPTION_ID], "l")
    }))
})
