/**
 * Every text leaving the tools is redacted: API keys, tokens, Authorization values and credentials in
 * URLs never appear, even when Weaviate echoes the key in its errors.
 */
import { layer } from "@effect/vitest"
import { describe, expect } from "vitest"
import { completed, type Harness, harnessLayer, toolError, withHarness } from "./support.ts"

const KEY = "sk-weaviate-secret-0123456789"
const test = withHarness()

const everything = (exit: Awaited<ReturnType<Harness["call"]>>) => JSON.stringify(completed(exit))

layer(harnessLayer({ weaviate: { apiKeys: [KEY], echoApiKeyInErrors: true }, apiKey: KEY }), { excludeTestServices: true, timeout: "3 minutes" })('redaction', (it) => {
  describe("redaction with an instance that echoes the API key in its errors", () => {
    it.effect("a GraphQL error quoting the key is query_failed without the key", () =>
      test(async (h) => {
        const exit = await h.call("execute_query", { connection_id: h.ids.local, query: "{ Get { Nope { x } } }" })
        const text = toolError(exit, "query_failed")
        expect(text).toContain("Nope")
        expect(everything(exit)).not.toContain(KEY)
      }))

    it.effect("a REST refusal quoting the key is redacted", () =>
      test(async (h) => {
        const exit = await h.call("execute_query", { connection_id: h.ids.local, query: "GET /v1/objects?class=Author&limit=abc" })
        toolError(exit, "query_failed")
        expect(everything(exit)).not.toContain(KEY)
      }))

    it.effect("vector_search refusals are redacted", () =>
      test(async (h) => {
        const exit = await h.call("vector_search", { connection_id: h.ids.local, table: "Product", mode: "near_text", query: "chair" })
        toolError(exit, "query_failed")
        expect(everything(exit)).not.toContain(KEY)
      }))

    it.effect("a rejected key (401) is not_connected, and neither the wrong key nor the right one appears", () =>
      test(async (h) => {
        const wrong = "sk-wrong-key-9876543210"
        const exit = await h.call("execute_query", { connection_id: h.ids.local, query: "GET /v1/meta" })
        expect(completed(exit).isError).toBeUndefined()
        h.w.setApiKeys([wrong])
        try {
          const failed = await h.call("get_connection_status", { connection_id: h.ids.local })
          toolError(failed, "not_connected")
          expect(everything(failed)).not.toContain(KEY)
        } finally {
          h.w.setApiKeys([KEY])
        }
      }))

    it.effect("bearer values, our token format and URL credentials in stored data are redacted in text and structured results", () =>
      test(async (h) => {
        const id = "00000000-0000-4000-8000-00000000beef"
        const response = await fetch(`${h.w.url}/v1/objects`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${KEY}` },
          body: JSON.stringify({
            class: "Author",
            id,
            properties: { bio: `Authorization: Bearer abcdefghijklmnop https://user:pa55word@host wmcp_abcdefghijkl ${KEY}` }
          })
        })
        expect(response.status).toBe(200)
        const exit = await h.call("get_row", { connection_id: h.ids.local, table: "Author", uuid: id })
        const all = everything(exit)
        expect(all).toContain("[redacted]")
        for (const secret of ["abcdefghijklmnop", "pa55word", "wmcp_abcdefghijkl", KEY]) expect(all).not.toContain(secret)
      }))
  })
})
