/**
 * `execute_query` in process: GraphQL and REST console statements, progress, the 100 KB cap,
 * `max_rows` truncation, destructive refusal, writes through the console, `timeout_seconds`.
 */
import { layer } from "@effect/vitest"
import { describe, expect } from "vitest"
import { DatabaseRefused } from "../../../src/Driver/DriverError.ts"
import * as ToolError from "../../../src/Catalogue/Tools/ToolError.ts"
import { defaultScopes } from "../../../src/Schema/Policy.ts"
import { type Harness, harnessLayer, protocolError, success, token, toolError, withHarness, writesTo } from "./support.ts"

const test = withHarness((h) => {
  h.dialog.answer = true
  h.dialog.asked.length = 0
  h.w.setFault({ kind: "none" })
  h.w.clearRequests()
})

const run = (h: Harness, query: string, extra: Record<string, unknown> = {}, options: Parameters<Harness["call"]>[2] = {}) =>
  h.call("execute_query", { connection_id: h.ids.local, query, ...extra }, options)

layer(harnessLayer(), { excludeTestServices: true, timeout: "3 minutes" })('execute_query', (it) => {
  describe("GraphQL", () => {
    it.effect("a Get becomes a grid; max_rows cuts it with a marker; progress is 0.0, 0.3, 1.0", () =>
      test(async (h) => {
        const progress: Array<readonly [number, string]> = []
        const { structured, text } = success(h, "execute_query", await run(h, "{ Get { Author(limit: 10) { name _additional { id } } } }", { max_rows: 3 }, { progress }))
        expect(structured.kind).toBe("graphql")
        expect(structured.tables[0].rows).toHaveLength(3)
        expect(structured.tables[0].totalRows).toBe(10)
        expect(structured.truncated).toBe(true)
        expect(text).toContain("[truncated: 3 of 10 rows shown (max_rows)]")
        expect(text).toContain("| uuid | name |")
        expect(progress.map(([p]) => p)).toEqual([0, 0.3, 1])
      }))
    it.effect("an Aggregate is JSON", () =>
      test(async (h) => {
        const { structured } = success(h, "execute_query", await run(h, "{ Aggregate { Article { meta { count } } } }"))
        expect(structured.data.Aggregate.Article[0].meta.count).toBe(200)
      }))
    it.effect("a mutation or two operations are invalid_argument, never sent", () =>
      test(async (h) => {
        toolError(await run(h, "mutation { x }"), "invalid_argument")
        toolError(await run(h, "{ Get { A { x } } } { Get { B { y } } }"), "invalid_argument")
        expect(h.w.requests.filter((r) => r.path === "/v1/graphql")).toEqual([])
      }))
    it.effect("GraphQL errors without data are query_failed with the database's message", () =>
      test(async (h) => {
        const text = toolError(await run(h, "{ Get { Nope { x } } }"), "query_failed")
        expect(text).toContain("Nope")
      }))
  })

  describe("the 100 KB cap", () => {
    it.effect("a statement above 100 KB is invalid_argument and nothing is sent", () =>
      test(async (h) => {
        const padding = " ".repeat(100 * 1024)
        const text = toolError(await run(h, `{ Get { Author { name } } }${padding}`), "invalid_argument")
        expect(text).toContain("100 KB")
        expect(h.w.requests.filter((r) => r.path === "/v1/graphql")).toEqual([])
        success(h, "execute_query", await run(h, `{ Get { Author(limit: 1) { name } } }${" ".repeat(100 * 1024 - 40)}`))
      }))
  })

  describe("REST console", () => {
    it.effect("a read runs without approval; max_rows cuts object lists", () =>
      test(async (h) => {
        const { structured, text } = success(h, "execute_query", await run(h, "GET /v1/objects?class=Author&limit=5", { max_rows: 2 }))
        expect(structured.status).toBe(200)
        expect(structured.body.objects).toHaveLength(2)
        expect(text).toContain("[truncated: 2 of 5 rows shown (max_rows)]")
        expect(h.dialog.asked.filter((q) => q.title.includes("write"))).toEqual([])
      }))
    it.effect("a 404 from the database is not_found; a validation error query_failed", () =>
      test(async (h) => {
        toolError(await run(h, "GET /v1/schema/Nope"), "not_found")
        toolError(await run(h, "GET /v1/objects?class=Author&limit=abc"), "query_failed")
      }))
    it.effect("dropping a collection is refused with a pointer to confirm_destructive_operation, before anyone is asked", () =>
      test(async (h) => {
        const text = toolError(await run(h, "DELETE /v1/schema/Article"), "unsupported")
        expect(text).toContain("confirm_destructive_operation")
        expect(text).toContain("use drop_table")
        expect(h.dialog.asked).toEqual([])
        expect(writesTo(h.w)).toEqual([])
      }))
    it.effect("a batch delete by filter is refused the same way", () =>
      test(async (h) => {
        const text = toolError(
          await run(h, "DELETE /v1/batch/objects\n{\"match\":{\"class\":\"Article\",\"where\":{\"path\":[\"wordCount\"],\"operator\":\"GreaterThan\",\"valueInt\":0}}}"),
          "unsupported"
        )
        expect(text).toContain("confirm_destructive_operation")
        expect(writesTo(h.w)).toEqual([])
      }))
    it.effect("a write asks with the line and its body verbatim, then runs exactly once", () =>
      test(async (h) => {
        const principal = token("readWrite", { id: "tok-console" })
        const line = "POST /v1/objects\n{\"class\":\"Author\",\"properties\":{\"name\":\"From the console\"}}"
        const { structured } = success(h, "execute_query", await run(h, line, {}, { principal }))
        expect(structured.approvedBy).toBe("exec")
        expect(h.dialog.asked.at(-1)!.statement).toBe(line)
        expect(writesTo(h.w).map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/objects"])
      }))
    it.effect("a write without tools:write is -33007, as is a readOnly token; nothing is written", () =>
      test(async (h) => {
        const noWriteScope = token("readWrite", { id: "tok-no-write-scope", scopes: defaultScopes.readOnly })
        protocolError(await run(h, "POST /v1/objects {\"class\":\"Author\",\"properties\":{}}", {}, { principal: noWriteScope }), -33007)
        protocolError(await run(h, "POST /v1/objects {\"class\":\"Author\",\"properties\":{}}", {}, { principal: token("readOnly", { id: "tok-ro-console" }) }), -33007)
        expect(writesTo(h.w)).toEqual([])
      }))
    it.effect("the user's refusal is denied; nothing is written", () =>
      test(async (h) => {
        h.dialog.answer = true
        const principal = token("readWrite", { id: "tok-console-no" })
        success(h, "list_tables", await h.call("list_tables", { connection_id: h.ids.local }, { principal }))
        h.dialog.answer = false
        toolError(await run(h, "PATCH /v1/objects/Author/00000000-0000-4000-8000-000000000001 {\"class\":\"Author\",\"properties\":{}}", {}, { principal }), "denied")
        expect(writesTo(h.w)).toEqual([])
      }))
    it.effect("a malformed line is invalid_argument", () =>
      test(async (h) => {
        toolError(await run(h, "POST /v1/objects {not json"), "invalid_argument")
        toolError(await run(h, "GET https://elsewhere.example/v1/meta"), "invalid_argument")
      }))
  })

  describe("time-outs", () => {
    it.effect("timeout_seconds ends the call with -33003 and stops the database call", () =>
      test(async (h) => {
        h.w.setFault({ kind: "hang" }, { pathPrefix: "/v1/graphql" })
        const error = protocolError(
          await run(h, "{ Get { Author { name } } }", { timeout_seconds: 30 }, {
            timeTravel: { waitFor: (r) => r.path === "/v1/graphql", advance: "31 seconds" }
          }),
          -33003
        )
        expect(error.message).toContain("timeout_seconds")
        await h.w.waitForRequest((r) => r.path === "/v1/graphql" && r.aborted, 5_000)
      }))
    it("a time-out reported by Weaviate itself is the tool error timeout", () => {
      expect(ToolError.fromDriverError(new DatabaseRefused({ status: 500, detail: "context deadline exceeded" })).code).toBe("timeout")
      expect(ToolError.fromDriverError(new DatabaseRefused({ status: 504, detail: "gateway" })).code).toBe("timeout")
      expect(ToolError.fromDriverError(new DatabaseRefused({ status: 422, detail: "invalid" })).code).toBe("query_failed")
    })
  })
})
