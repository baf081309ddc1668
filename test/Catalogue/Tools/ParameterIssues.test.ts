/**
 * Refused tool arguments are said the way they are fixed: per parameter, what it must be (read from
 * the schema's constraints, not its description) and what it was; an optional parameter's
 * `undefined` is never listed as a second failure; a refinement's own message is kept. Through the
 * real tools' input schemas (`tools/call` answers these texts as `invalid_argument`).
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import type { ToolEnv } from "../../../src/Catalogue/Tools/ConnectionGate.ts"
import { all } from "../../../src/Catalogue/Tools/ToolsLive.ts"
import { searchQueryHistory } from "../../../src/Catalogue/Tools/QueryHistory.ts"
import type { CallToolResult } from "../../../src/Mcp/Catalogue.ts"

// Arguments that fail to decode are answered before any service is used.
const tools = new Map([...all({} as ToolEnv), searchQueryHistory({} as never, {} as never)].map((t) => [t.descriptor.name, t]))

const refusal = (tool: string, args: Record<string, unknown>) => {
  const outcome = Effect.runSync(tools.get(tool)!.call(args) as unknown as Effect.Effect<{ readonly value: CallToolResult }>)
  expect(outcome.value.isError).toBe(true)
  const text = (outcome.value.content[0] as { text: string }).text
  expect(text.startsWith("invalid_argument: ")).toBe(true)
  return text.slice("invalid_argument: ".length)
}

describe("refused arguments name the parameter, what it must be, and what it was", () => {
  it("an integer out of its range says the range, not the parameter's description", () => {
    expect(refusal("search_query_history", { limit: 0 })).toBe("limit: expected an integer from 1 to 500, got 0")
    expect(refusal("browse_table", { connection_id: "c", table: "T", limit: 5000 })).toBe("limit: expected an integer from 1 to 1000, got 5000")
  })

  it("a fraction where an integer is expected, and a string where a number is", () => {
    expect(refusal("search_query_history", { limit: 2.5 })).toBe("limit: expected an integer from 1 to 500, got 2.5")
    expect(refusal("search_query_history", { limit: "x" })).toBe("limit: expected an integer from 1 to 500, got \"x\"")
  })

  it("a value outside a set of literals lists the set", () => {
    expect(refusal("search_query_history", { outcome: "maybe" })).toBe("outcome: expected \"ok\" or \"error\", got \"maybe\"")
  })

  it("an optional parameter's undefined is never a second failure", () => {
    for (const args of [{ search: 5 }, { limit: 0 }, { outcome: 1 }, { since: "" }]) {
      expect(refusal("search_query_history", args)).not.toMatch(/undefined/)
    }
    expect(refusal("search_query_history", { search: 5 })).toBe("search: expected a non-empty string, got 5")
  })

  it("a missing required parameter and an unknown one are named, with the tool's parameters", () => {
    expect(refusal("browse_table", { table: "T" })).toBe("connection_id: required, and missing")
    expect(refusal("search_query_history", { nope: 1 })).toBe(
      "nope: not a parameter of this tool (its parameters: connection_id, search, table, tool, outcome, since, until, limit, cursor)"
    )
  })

  it("every failure is listed, once each", () => {
    expect(refusal("search_query_history", { limit: 0, outcome: "x", nope: true })).toBe(
      "nope: not a parameter of this tool (its parameters: connection_id, search, table, tool, outcome, since, until, limit, cursor); outcome: expected \"ok\" or \"error\", got \"x\"; limit: expected an integer from 1 to 500, got 0"
    )
  })

  it("a long refused value is quoted cut", () => {
    const text = refusal("search_query_history", { limit: "9".repeat(500) })
    expect(text.length).toBeLessThan(140)
    expect(text).toContain("…")
  })

  it("a refinement's own message is kept (a UUID, the rows per call)", () => {
    expect(refusal("get_row", { connection_id: "c", table: "T", uuid: "not-a-uuid" })).toMatch(/^uuid: .*a UUID such as 00000000-0000-4000-8000-000000000001/)
    const rows = Array.from({ length: 1_001 }, () => ({ properties: { title: "t" } }))
    expect(refusal("insert_rows", { connection_id: "c", table: "T", rows })).toMatch(/^rows: .*at most 1,000 rows per call/)
  })

  it("a mistake inside an object parameter is named by its path inside it", () => {
    const text = refusal("browse_table", { connection_id: "c", table: "T", sort: [{ column: "title", direction: "sideways" }] })
    expect(text).toBe("sort.0.direction: expected \"asc\" or \"desc\", got \"sideways\"")
  })

  it("the same mistake in a thousand rows is ten clauses and a count, not a thousand clauses", () => {
    const rows = Array.from({ length: 1_000 }, () => ({}))
    const text = refusal("insert_rows", { connection_id: "c", table: "T", rows })
    expect(text.split("; ")).toHaveLength(11)
    expect(text).toMatch(/^rows\.0\.properties: required, and missing; rows\.1\.properties: .*; and 990 more$/)
  })
})
