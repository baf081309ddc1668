/**
 * Each call's outcome, as the activity log records it, is read from the answer the client got: a
 * result (`ok`), a tool result with `isError` (`tool_error`), a rate-limit or scope refusal (`refused`,
 * with its code), any other JSON-RPC error (`error`, with its code). It is read from the message's
 * members, never from its text: a row whose data holds an `error` object is still `ok`. The real
 * daemon over HTTP (and the real Weaviate for the row).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Line from "../../src/Activity/ActivityLine.ts"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { modern as modernBody, modernHeaders, parseFrames } from "../Mcp/support/EndpointHarness.ts"
import { TestDaemon, layer, layerIn } from "../support/TestDaemon.ts"
import * as TestHome from "../support/TestHome.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"

/** A modern request over fetch (the body and headers of the endpoint tests). */
const modern = (endpoint: string, id: number, method: string, params: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) =>
  Effect.promise(() =>
    fetch(endpoint, {
      method: "POST",
      headers: { ...modernHeaders(method, method === "tools/call" ? String(params.name) : undefined), accept: "application/json, text/event-stream" },
      body: JSON.stringify(modernBody(method, params, id, meta))
    }).then((response) => response.text())
  )

/** POSTs JSON to the Weaviate under test; fails on a non-2xx answer. */
const weaviatePost = (url: string, path: string, body: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    const text = await response.text()
    if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${text}`)
    return text
  })

/** The call lines of the log once it holds `count` of them (bounded: 100 looks, 20 ms apart). */
const callLines = (home: string, count: number) =>
  Effect.promise(async () => {
    const path = NodePath.join(home, "activity.log")
    let calls: Array<Extract<Line.Entry, { type: "call" }>> = []
    for (let i = 0; i < 100 && calls.length < count; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 20))
      const text = NodeFs.existsSync(path) ? NodeFs.readFileSync(path, "utf8") : ""
      calls = text.split("\n").filter((l) => l.length > 0).map((l) => Line.parse(l)!)
        .filter((e): e is Extract<Line.Entry, { type: "call" }> => e.type === "call")
    }
    return calls
  })

describe("the outcome of each call in the activity log", () => {
  it.scoped("ok, tool_error and error with its code, as the client was answered", () =>
    Effect.gen(function*() {
      const daemon = yield* TestDaemon
      yield* modern(daemon.endpoint, 1, "tools/list")
      const toolError = yield* modern(daemon.endpoint, 2, "tools/call", { name: "describe_table", arguments: { connection_id: "nowhere", table: "T" } })
      const unknownTool = yield* modern(daemon.endpoint, 3, "tools/call", { name: "no_such_tool", arguments: {} })
      assert.include(toolError, '"isError":true')
      assert.include(unknownTool, '"code":-32602')
      const calls = yield* callLines(daemon.home, 3)
      assert.deepStrictEqual(calls.map((c) => [c.method, c.outcome, c.code]), [
        ["tools/list", "ok", null],
        ["tools/call", "tool_error", null],
        ["tools/call", "error", -32602]
      ])
    }).pipe(Effect.provide(layer({ auth: "off", rateLimit: 0 }))))

  it.scoped("refused, with its code, for a call over the rate", () =>
    Effect.gen(function*() {
      const daemon = yield* TestDaemon
      // One request a second in bursts of two: of six sent together, four are refused unless the
      // six take seconds to arrive; each line says what its answer said.
      const answers = yield* Effect.all([1, 2, 3, 4, 5, 6].map((id) => modern(daemon.endpoint, id, "tools/list")), { concurrency: 6 })
      const answered = answers.map((a): [string, number | null] => (a.includes('"code":-33010') ? ["refused", -33010] : ["ok", null])).sort()
      assert.isTrue(answered.some(([outcome]) => outcome === "refused"), answers.join("\n"))
      const calls = yield* callLines(daemon.home, 6)
      assert.deepStrictEqual(calls.map((c): [string, number | null] => [c.outcome, c.code]).sort(), answered)
    }).pipe(Effect.provide(layer({ auth: "off", rateLimit: 1 }))))

  it.scoped("ok for a result whose rows hold an error object, answered whole or as an event stream", () =>
    Effect.gen(function*() {
      const weaviate = yield* Effect.acquireRelease(Effect.promise(() => startTestWeaviate()), (w) => Effect.promise(() => w.close()))
      yield* weaviatePost(weaviate.url, "/v1/schema", {
        class: "Incident",
        vectorizer: "none",
        properties: [
          { name: "title", dataType: ["text"] },
          { name: "error", dataType: ["object"], nestedProperties: [{ name: "code", dataType: ["int"] }, { name: "message", dataType: ["text"] }] }
        ]
      })
      yield* weaviatePost(weaviate.url, "/v1/objects", { class: "Incident", properties: { title: "disk full", error: { code: -32603, message: "no space left" } } })
      const home = yield* TestHome.tempDir()
      const connection = yield* Effect.flatMap(ConnectionStore, (store) => store.add({ name: "local", host: "127.0.0.1", port: weaviate.port })).pipe(
        Effect.provide(ConnectionStore.layer.pipe(Layer.provide(TestHome.at(home))))
      )
      const query = { name: "execute_query", arguments: { connection_id: connection.id, query: "{ Get { Incident { title error { code message } } } }" } }
      const answers = yield* Effect.gen(function*() {
        const daemon = yield* TestDaemon
        const whole = yield* modern(daemon.endpoint, 1, "tools/call", query)
        const streamed = yield* modern(daemon.endpoint, 2, "tools/call", query, { progressToken: "p" })
        return { whole, streamed, calls: yield* callLines(daemon.home, 2) }
      }).pipe(Effect.provide(layerIn({ auth: "off", rateLimit: 0, approvals: "exec", approvalCommand: Option.some("cat >/dev/null") }).pipe(
        Layer.provide(TestHome.at(home))
      )))
      const whole = JSON.parse(answers.whole)
      const last = parseFrames(answers.streamed).at(-1)
      for (const message of [whole, last]) {
        assert.strictEqual(message.error, undefined, JSON.stringify(message))
        assert.notStrictEqual(message.result.isError, true, JSON.stringify(message))
        // The row's own error object is in the answer: the text once held `"error":{"code":-32603`.
        assert.deepStrictEqual(message.result.structuredContent.tables[0].rows[0].error, { code: -32603, message: "no space left" })
      }
      assert.deepStrictEqual(answers.calls.map((c) => [c.tool, c.outcome, c.code]), [
        ["execute_query", "ok", null],
        ["execute_query", "ok", null]
      ])
    }))
})
