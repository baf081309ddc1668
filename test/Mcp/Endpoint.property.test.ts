/**
 * Property tests over real HTTP: arbitrary bodies and header values never crash the server; every
 * answer is a well-formed JSON-RPC error or a valid result (or 202 for a notification), and the
 * server keeps answering afterwards.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import fc from "fast-check"
import { Harness, layer as harnessLayer, MODERN, modern, modernHeaders, validateMessage } from "./support/EndpointHarness.ts"

const METHODS = ["server/discover", "tools/list", "tools/call", "resources/read", "prompts/get", "completion/complete", "subscriptions/listen", "initialize", "ping", "x/y"]

/** Checks one answer: a JSON-RPC message of the modern schema (errors echo a readable id), or 202. */
/** The JSON-RPC messages of an event stream, in order: each event's `data:` lines joined. */
const eventMessages = (text: string): Array<unknown> =>
  text.split(/\r?\n\r?\n/).flatMap((event) => {
    const data = event.split(/\r?\n/).filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trimStart())
    return data.length === 0 ? [] : [JSON.parse(data.join("\n"))]
  })

const checkAnswer = (status: number, contentType: string, text: string) => {
  if (status === 202) return assert.strictEqual(text, "")
  if (contentType.startsWith("text/event-stream")) {
    // A stream is answered 200; every event is a valid message and the last one is the response.
    assert.strictEqual(status, 200, text)
    const messages = eventMessages(text)
    assert.isAbove(messages.length, 0, "an event stream carries the response")
    for (const message of messages) validateMessage(MODERN, message)
    const last = messages[messages.length - 1] as { result?: unknown; error?: { code?: unknown } }
    assert.isTrue(last.result !== undefined || typeof last.error?.code === "number", "the stream ends with the response")
    return
  }
  assert.include(contentType, "application/json", `${status} ${text}`)
  const message = JSON.parse(text)
  validateMessage(MODERN, message)
  if (message.error !== undefined) {
    assert.isNumber(message.error.code)
    assert.isAtLeast(status, 400)
  } else {
    assert.strictEqual(status, 200)
  }
}

const post = (endpoint: string, body: string, headers: Record<string, string>) =>
  fetch(endpoint, { method: "POST", body, headers }).then(async (response) => ({
    status: response.status,
    contentType: response.headers.get("content-type") ?? "",
    text: await response.text()
  }))

describe("Endpoint properties", () => {
  layer(harnessLayer(), { excludeTestServices: true })("arbitrary input", (it) => {
    it.effect("arbitrary bodies get a well-formed JSON-RPC answer", () =>
      Effect.gen(function*() {
        const { endpoint, token } = yield* Harness
        const headers = { "content-type": "application/json", authorization: `Bearer ${token}` }
        const jsonish = fc.oneof(
          fc.string(),
          fc.json(),
          fc.jsonValue().map((v) => JSON.stringify(v)),
          fc.record({
            jsonrpc: fc.oneof(fc.constant("2.0"), fc.string()),
            id: fc.oneof(fc.integer(), fc.string(), fc.constant(null), fc.double(), fc.boolean()),
            method: fc.oneof(fc.constantFrom(...METHODS), fc.string()),
            params: fc.oneof(fc.jsonValue(), fc.record({ _meta: fc.jsonValue(), name: fc.string(), uri: fc.string(), cursor: fc.string() }))
          }, { requiredKeys: [] }).map((v) => JSON.stringify(v))
        )
        yield* Effect.promise(() =>
          fc.assert(fc.asyncProperty(jsonish, async (body) => {
            const answer = await post(endpoint, body, headers)
            checkAnswer(answer.status, answer.contentType, answer.text)
          }), { numRuns: 150 })
        )
      }))

    it.effect("arbitrary header values on a modern request get a well-formed JSON-RPC answer", () =>
      Effect.gen(function*() {
        const { endpoint, token } = yield* Harness
        // Values node's HTTP client accepts: printable text, with the base64 wrapper sometimes.
        const headerValue = fc.oneof(
          fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) }),
          fc.string().map((s) => `=?base64?${Buffer.from(s).toString("base64")}?=`),
          fc.string({ unit: fc.constantFrom("=", "?", "b", "a", "s", "e", "6", "4", "A", "/") })
        ).map((s) => s.trim())
        const headerName = fc.constantFrom("mcp-protocol-version", "mcp-method", "mcp-name", "mcp-param-query", "mcp-param-limit", "mcp-param-x", "content-type", "origin", "authorization")
        yield* Effect.promise(() =>
          fc.assert(fc.asyncProperty(fc.dictionary(headerName, headerValue, { maxKeys: 4 }), fc.constantFrom("tools/list", "tools/call", "server/discover"), async (overrides, method) => {
            const body = modern(method, method === "tools/call" ? { name: "echo", arguments: { query: "q", limit: 1 } } : {})
            const answer = await post(endpoint, JSON.stringify(body), {
              ...modernHeaders(method, method === "tools/call" ? "echo" : undefined),
              authorization: `Bearer ${token}`,
              ...overrides
            })
            checkAnswer(answer.status, answer.contentType, answer.text)
          }), { numRuns: 150 })
        )
        // Still alive.
        const alive = yield* Effect.promise(() => post(endpoint, JSON.stringify(modern("server/discover")), { ...modernHeaders("server/discover"), authorization: `Bearer ${token}` }))
        assert.strictEqual(alive.status, 200)
      }))
  })
})
