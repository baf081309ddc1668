/**
 * `search_query_history`: what ran against the connections the token may see, newest first, from the
 * query history (`History/HistoryStore`): a full-text search (FTS5 syntax) over the statement, the
 * collection and the client's name, and filters on the connection, table, tool, outcome and time.
 * Pages of at most 500 entries, with a cursor for the next. Needs the `history:read` scope.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { CurrentPrincipal } from "../../Auth/Principal.ts"
import type { ConnectionStore } from "../../Driver/ConnectionStore.ts"
import type { Entry } from "../../History/HistoryEntry.ts"
import * as HistoryQuery from "../../History/HistoryQuery.ts"
import type { HistoryError, HistoryStore } from "../../History/HistoryStore.ts"
import * as HistoryAccess from "../HistoryAccess.ts"
import { intBetween } from "./Parameters.ts"
import * as TextTable from "./TextTable.ts"
import * as ToolDefinition from "./ToolDefinition.ts"
import * as ToolError from "./ToolError.ts"

/** An entry as the tool, the resource and the prompt show it. @category schemas */
export const EntryJson = Schema.Struct({
  id: Schema.Number,
  time: Schema.String,
  connection: Schema.NullOr(Schema.String),
  table: Schema.NullOr(Schema.String),
  tenant: Schema.NullOr(Schema.String),
  consistencyLevel: Schema.NullOr(Schema.String),
  source: Schema.Literal("mcp", "cli"),
  client: Schema.NullOr(Schema.String),
  principal: Schema.NullOr(Schema.String),
  tool: Schema.String,
  statement: Schema.NullOr(Schema.String),
  statementCut: Schema.Boolean,
  digest: Schema.NullOr(Schema.String),
  durationMs: Schema.Number,
  rows: Schema.NullOr(Schema.Number),
  outcome: Schema.Literal("ok", "error"),
  errorCode: Schema.NullOr(Schema.String),
  errorMessage: Schema.NullOr(Schema.String),
  approval: Schema.NullOr(Schema.String)
})

/** @category conversions */
export const toJson = (entry: Entry): typeof EntryJson.Type => ({
  id: entry.id,
  time: new Date(entry.time).toISOString(),
  connection: entry.connection,
  table: entry.collection,
  tenant: entry.tenant,
  consistencyLevel: entry.consistencyLevel,
  source: entry.source,
  client: entry.client,
  principal: entry.principalName ?? entry.principal,
  tool: entry.tool,
  statement: entry.statement,
  statementCut: entry.cutFrom !== null,
  digest: entry.digest,
  durationMs: entry.durationMs,
  rows: entry.rows,
  outcome: entry.outcome,
  errorCode: entry.errorCode,
  errorMessage: entry.errorMessage,
  approval: entry.approval
})

const ONE_LINE = 80

/** The columns of a table of entries, for the tool's text and the `history` command. @category rendering */
export const ENTRY_COLUMNS = ["id", "time", "connection", "table", "tool", "source", "outcome", "rows", "ms", "statement"] as const

/**
 * One entry as a row of that table: the statement on one line, cut to `width` characters; the time
 * as `time` writes it.
 *
 * @category rendering
 */
export const entryRow = (e: Entry, width: number, time: (iso: string) => string = (iso) => iso) => {
  const statement = (e.statement ?? e.digest ?? "").replace(/\s+/g, " ")
  return {
    id: e.id,
    time: time(new Date(e.time).toISOString()),
    connection: e.connection,
    table: e.collection,
    tool: e.tool,
    source: e.source === "cli" ? "cli" : e.client ?? "mcp",
    outcome: e.outcome === "ok" ? "ok" : e.errorCode ?? "error",
    rows: e.rows,
    ms: Math.round(e.durationMs),
    statement: statement.length > width ? `${statement.slice(0, width - 1)}…` : statement
  }
}

/** The text table of entries: one line each, the statement on one line and cut. @category rendering */
export const renderEntries = (entries: ReadonlyArray<Entry>): string =>
  TextTable.render(ENTRY_COLUMNS, entries.map((e) => entryRow(e, ONE_LINE)))

/** A history error as a tool error: a bad search is the model's to fix (`invalid_argument`). @category conversions */
export const toToolFailure = (error: HistoryError) =>
  ToolError.fail(error.reason === "invalid_search" ? "invalid_argument" : error.reason === "unavailable" ? "unsupported" : "internal_failure", error.message)

const Time = Schema.String.pipe(Schema.minLength(1))

/** @category tools */
export const searchQueryHistory = (store: ConnectionStore["Type"], history: HistoryStore["Type"]) =>
  ToolDefinition.make({
    name: "search_query_history",
    title: "Search the query history",
    description: "Finds statements that were run against the connections you may see (by AI clients and on the command " +
      "line), newest first: search is full-text (FTS5 syntax: words, \"exact phrase\", prefix*, AND/OR/NOT, NEAR) over " +
      "the statement, the table and the client's name; filter by connection_id, table, tool, outcome (ok or error) and " +
      "time (since/until: 1h, 7d or an ISO date). Each entry has the statement, when it ran, how long it took, the rows " +
      "and the outcome. Pass next_cursor back as cursor for the next page.",
    input: Schema.Struct({
      connection_id: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({
        description: "Only this connection (id or name, as returned by list_connections); omit for every connection."
      })),
      search: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({
        description: "Full-text search, FTS5 syntax, e.g. harbour, \"hybrid search\", Art*, hybrid AND harbour."
      })),
      table: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({ description: "Only statements on this table (collection)." })),
      tool: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({
        description: "Only this tool (execute_query, vector_search, browse_table…) or CLI command (graphql, rest, browse, export, import, aggregate)."
      })),
      outcome: Schema.optional(Schema.Literal("ok", "error").annotations({ description: "Only statements that succeeded (ok) or failed (error)." })),
      since: Schema.optional(Time.annotations({ description: "Only entries since: a span back from now (30m, 1h, 7d) or an ISO date." })),
      until: Schema.optional(Time.annotations({ description: "Only entries before: a span back from now or an ISO date." })),
      limit: Schema.optional(intBetween(1, HistoryQuery.MAX_LIMIT).annotations({ description: "Entries per page, 1 to 500 (default 50)." })),
      cursor: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({ description: "next_cursor of the previous page." }))
    }),
    output: Schema.Struct({
      entries: Schema.Array(EntryJson),
      next_cursor: Schema.optional(Schema.String)
    }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    scopes: ["history:read"],
    unmirrored: ["search"],
    run: Effect.fnUntraced(function*(input) {
      const principal = yield* CurrentPrincipal
      const now = Date.now()
      const time = (name: "since" | "until", text: string | undefined) => {
        if (text === undefined) return Effect.succeed(undefined)
        const at = HistoryQuery.parseTime(text, now)
        return at === undefined
          ? Effect.fail(ToolError.fail("invalid_argument", `${name} must be a span like 30m, 1h, 7d or an ISO date, got ${JSON.stringify(text)}`))
          : Effect.succeed(at)
      }
      const before = input.cursor === undefined ? undefined : HistoryQuery.parseCursor(input.cursor)
      if (input.cursor !== undefined && before === undefined) {
        return yield* ToolError.fail("invalid_argument", "cursor is not a next_cursor this tool returned")
      }
      const scoped = input.connection_id === undefined
        ? { connection: undefined, visibility: yield* HistoryAccess.visibility(store, principal) }
        : yield* HistoryAccess.onConnection(store, principal, input.connection_id)
      const page = yield* history.search({
        search: input.search,
        connection: scoped.connection?.id,
        table: input.table,
        tool: input.tool,
        outcome: input.outcome,
        since: yield* time("since", input.since),
        until: yield* time("until", input.until),
        limit: input.limit,
        before,
        visibility: scoped.visibility
      }).pipe(Effect.mapError(toToolFailure))
      const shown = `${page.entries.length} ${page.entries.length === 1 ? "entry" : "entries"}`
      const footer = page.nextCursor === undefined ? `${shown}; no more` : `${shown}; more: call again with cursor ${page.nextCursor}`
      return ToolDefinition.ok(
        { entries: page.entries.map(toJson), ...(page.nextCursor !== undefined ? { next_cursor: page.nextCursor } : {}) },
        page.entries.length === 0 ? "No history entries match." : `${renderEntries(page.entries)}\n${footer}`
      )
    })
  })
