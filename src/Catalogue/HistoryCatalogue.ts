/**
 * The query history for AI clients beyond the tool `search_query_history`:
 *
 * - the resource template `weaviate://connections/{id}/history{?limit,search,date_filter}`: the
 *   newest entries of a connection (`limit` 1–500, default 50; `search` in FTS5 syntax; `date_filter`
 *   `today`, `thisWeek`, `thisMonth` or `all`, the default), as JSON;
 * - the prompt `summarize_query_history`: what was run against a connection over a period, built
 *   from its history;
 * - completions of that prompt's `table` and `tool` from the history, and of the template's `id`.
 *
 * Each needs the `history:read` scope and shows only what the token may see (`HistoryAccess`).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { CurrentPrincipal } from "../Auth/Principal.ts"
import type { ConnectionStore } from "../Driver/ConnectionStore.ts"
import * as HistoryEntry from "../History/HistoryEntry.ts"
import * as HistoryQuery from "../History/HistoryQuery.ts"
import type { HistoryStore } from "../History/HistoryStore.ts"
import { type Completion, complete, type PromptDescriptor, type ResourceTemplateDescriptor } from "../Mcp/Catalogue.ts"
import { InvalidParams, type McpError } from "../Schema/McpErrors.ts"
import * as HistoryAccess from "./HistoryAccess.ts"
import type { ConnectionAccess } from "./ConnectionAccess.ts"
import { renderEntries, toJson } from "./Tools/QueryHistory.ts"

// ===== The resource =====

/** @category constants */
export const TEMPLATE = "weaviate://connections/{id}/history{?limit,search,date_filter}"

/** How long a client may keep a read of the history: it grows with every statement. @category constants */
export const TTL_MS = 5_000

/** @category constants */
export const template: ResourceTemplateDescriptor = {
  uriTemplate: TEMPLATE,
  name: "query-history",
  title: "Query history",
  description: "The statements run against a connection, newest first, with when they ran, how long they took, the rows, " +
    "the outcome and who sent them (an AI client or the command line). limit 1-500 (default 50); search: FTS5 full-text " +
    "search; date_filter: today, thisWeek, thisMonth or all (default). Cached 5 seconds.",
  mimeType: "application/json"
}

/** The variables of the template (what `completion/complete` may be asked about). @category constants */
export const TEMPLATE_VARIABLES: ReadonlyArray<string> = ["id", "limit", "search", "date_filter"]

/** A read of the history resource. @category models */
export interface HistoryRef {
  readonly connectionId: string
  readonly limit: number
  readonly search: string | undefined
  readonly dateFilter: HistoryQuery.DateFilter
}

const PATTERN = /^weaviate:\/\/connections\/([^/?#]+)\/history(?:\?([^#]*))?$/i

const invalid = (uri: string, reason: string) => new InvalidParams({ message: `Invalid history resource ${JSON.stringify(uri)}: ${reason}`, data: { uri } })

/**
 * Reads a history URI: `undefined` when the URI is not one (another resource), a failure when it is
 * one with a bad parameter.
 *
 * @category parsing
 */
export const parse = (uri: string): Effect.Effect<HistoryRef, InvalidParams> | undefined => {
  const match = PATTERN.exec(uri)
  if (match === null) return undefined
  let connectionId: string
  try {
    connectionId = decodeURIComponent(match[1]!)
  } catch {
    return Effect.fail(invalid(uri, "bad percent-encoding in the connection id"))
  }
  const params = new URLSearchParams(match[2] ?? "")
  for (const key of params.keys()) {
    if (!["limit", "search", "date_filter"].includes(key)) return Effect.fail(invalid(uri, `unknown parameter ${JSON.stringify(key)} (limit, search, date_filter)`))
  }
  const limitText = params.get("limit")
  const limit = limitText === null ? HistoryQuery.DEFAULT_LIMIT : Number(limitText)
  if (!Number.isInteger(limit) || limit < 1 || limit > HistoryQuery.MAX_LIMIT) return Effect.fail(invalid(uri, "limit must be a whole number from 1 to 500"))
  const dateFilter = (params.get("date_filter") ?? "all") as HistoryQuery.DateFilter
  if (!HistoryQuery.DATE_FILTERS.includes(dateFilter)) return Effect.fail(invalid(uri, "date_filter must be today, thisWeek, thisMonth or all"))
  const search = params.get("search") ?? undefined
  return Effect.succeed({ connectionId, limit, search: search === "" ? undefined : search, dateFilter })
}

/** A history error as the protocol reports it on a resource or prompt: a bad search is `-32602`. */
const toMcpError = (error: { readonly reason: string; readonly message: string }): McpError =>
  new InvalidParams({ message: error.message, data: { reason: error.reason } })

/**
 * `resources/read` of a history URI.
 *
 * @category resources
 */
export const read = (deps: { readonly store: ConnectionStore["Type"]; readonly access: ConnectionAccess; readonly history: HistoryStore["Type"] }, uri: string, ref: HistoryRef) =>
  Effect.gen(function*() {
    const principal = yield* CurrentPrincipal
    const visibility = yield* HistoryAccess.visibility(deps.store, principal)
    const connection = yield* deps.access.readable(ref.connectionId)
    const page = yield* deps.history.search({
      connection: connection.id,
      search: ref.search,
      since: HistoryQuery.sinceOf(ref.dateFilter, Date.now()),
      limit: ref.limit,
      visibility
    }).pipe(Effect.mapError(toMcpError))
    const body = {
      connectionId: connection.id,
      connectionName: connection.name,
      limit: ref.limit,
      dateFilter: ref.dateFilter,
      ...(ref.search !== undefined ? { search: ref.search } : {}),
      entries: page.entries.map(toJson)
    }
    return complete({ contents: [{ uri, mimeType: "application/json", text: JSON.stringify(body, null, 2) }], ttlMs: TTL_MS })
  })

// ===== The prompt =====

/** @category constants */
export const PROMPT = "summarize_query_history"

/** @category constants */
export const prompt: PromptDescriptor & { readonly arguments: ReadonlyArray<{ name: string; description: string; required: boolean }> } = {
  name: PROMPT,
  title: "Summarize the query history",
  description: "Summarises what was run against a connection over a period (by AI clients and on the command line), " +
    "from its query history: the statements, the tables they touched, what failed and why.",
  arguments: [
    { name: "connection_id", description: "The id (or name) of a saved Weaviate connection.", required: true },
    { name: "period", description: "today, thisWeek, thisMonth or all (default thisWeek), or a span back from now such as 24h or 7d.", required: false },
    { name: "table", description: "Optional: only statements on this table.", required: false },
    { name: "tool", description: "Optional: only this tool or command (execute_query, vector_search, graphql…).", required: false }
  ]
}

/** The most entries a summary is built from. @category constants */
export const PROMPT_ENTRIES = 200

const counted = (values: ReadonlyArray<string>) => {
  const counts = new Map<string, number>()
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1)
  return Array.from(counts).sort((a, b) => b[1] - a[1]).map(([value, n]) => `${value} ${n}`).join(", ")
}

/**
 * `prompts/get summarize_query_history`.
 *
 * @category prompts
 */
export const get = (
  deps: { readonly store: ConnectionStore["Type"]; readonly access: ConnectionAccess; readonly history: HistoryStore["Type"] },
  args: Readonly<Record<string, string>>
) =>
  Effect.gen(function*() {
    const given = Object.fromEntries(Object.entries(args).filter(([, v]) => v.trim() !== ""))
    if (given["connection_id"] === undefined) {
      return yield* new InvalidParams({ message: `Prompt ${PROMPT} is missing required argument: connection_id`, data: { missing: ["connection_id"] } })
    }
    const principal = yield* CurrentPrincipal
    const visibility = yield* HistoryAccess.visibility(deps.store, principal)
    const connection = yield* deps.access.readable(given["connection_id"], { byName: true })
    const period = given["period"] ?? "thisWeek"
    const now = Date.now()
    const since = (HistoryQuery.DATE_FILTERS as ReadonlyArray<string>).includes(period)
      ? HistoryQuery.sinceOf(period as HistoryQuery.DateFilter, now)
      : HistoryQuery.parseTime(period, now)
    if (since === undefined && period !== "all") {
      return yield* new InvalidParams({ message: `period must be today, thisWeek, thisMonth, all or a span such as 7d, got ${JSON.stringify(period)}` })
    }
    const page = yield* deps.history.search({
      connection: connection.id,
      table: given["table"],
      tool: given["tool"],
      since,
      limit: PROMPT_ENTRIES,
      visibility
    }).pipe(Effect.mapError(toMcpError))
    const entries = page.entries
    const scope = [given["table"] !== undefined ? `on the table ${given["table"]}` : "", given["tool"] !== undefined ? `with ${given["tool"]}` : ""]
      .filter((s) => s !== "").join(" ")
    const failed = entries.filter((e) => e.outcome === "error")
    const text = [
      `Summarise what was run against the Weaviate connection "${connection.name}" (id ${connection.id})${scope === "" ? "" : ` ${scope}`} ` +
      `${period === "all" ? "over its whole history" : `since ${new Date(since!).toISOString()} (${period})`}, from its query history below.`,
      "Say which tables were read or written and how, which statements ran most often, which were slow, what failed and why, " +
      "and which clients or command-line sessions did what. Suggest what to look at next (a failing statement to fix, a slow query to tune).",
      "",
      entries.length === 0
        ? "The history holds no statements for this connection and period."
        : [
          `${entries.length} statements${page.nextCursor !== undefined ? ` (the newest ${PROMPT_ENTRIES}; there are more)` : ""}; ` +
          `${failed.length} failed.`,
          `By tool: ${counted(entries.map((e) => e.tool))}.`,
          `By table: ${counted(entries.map((e) => e.collection ?? "(none)"))}.`,
          `By source: ${counted(entries.map((e) => (e.source === "cli" ? "cli" : e.client ?? "mcp")))}.`,
          "",
          renderEntries(entries),
          ...(failed.length === 0 ? [] : ["", "Failures:", ...failed.slice(0, 20).map((e) => `- #${e.id} ${e.tool}: ${e.errorCode}: ${e.errorMessage ?? ""}`)])
        ].join("\n")
    ].join("\n")
    return complete({ description: `The query history of ${connection.name}`, messages: [{ role: "user", content: { type: "text", text } }] })
  })

// ===== Completions =====

/** The tools and commands whose statements are recorded. @category constants */
export const RECORDED: ReadonlyArray<string> = [...HistoryEntry.RECORDED_TOOLS, "graphql", "rest", "browse", "export", "import"].sort()

const startsWith = (values: ReadonlyArray<string>, prefix: string): Completion => {
  const needle = prefix.toLowerCase()
  const matches = Array.from(new Set(values.filter((v) => v.toLowerCase().startsWith(needle))))
  return { values: matches.slice(0, 100), total: matches.length, hasMore: matches.length > 100 }
}

/**
 * Completes the prompt's `table` (the tables in the connection's history) and `tool` (the tools and
 * commands recorded); `undefined` for any other argument (completed as elsewhere).
 *
 * @category completions
 */
export const completeArgument = (
  deps: { readonly store: ConnectionStore["Type"]; readonly history: HistoryStore["Type"] },
  name: string,
  value: string,
  context: Readonly<Record<string, string>>
): Effect.Effect<Completion, McpError, CurrentPrincipal> | undefined => {
  if (name === "tool") return Effect.succeed(startsWith(RECORDED, value))
  if (name === "period") return Effect.succeed(startsWith(HistoryQuery.DATE_FILTERS, value))
  if (name !== "table") return undefined
  return Effect.gen(function*() {
    const principal = yield* CurrentPrincipal
    const visibility = yield* HistoryAccess.visibility(deps.store, principal)
    const named = context["connection_id"] ?? context["id"]
    const connection = named === undefined ? Option.none() : yield* Effect.option(deps.store.get(named))
    const scoped = Option.isSome(connection)
      ? { ...visibility, connections: (visibility.connections ?? [connection.value.id]).filter((id) => id === connection.value.id) }
      : visibility
    return startsWith(yield* deps.history.values("collection", "", scoped), value)
  })
}
