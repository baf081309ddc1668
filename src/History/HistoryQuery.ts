/**
 * A search of the query history, as SQL: the filters every surface shares (the tool
 * `search_query_history`, the history resource, `weaviate-mcp history`), what a principal may see
 * (its connection allowlist, its tenants), the page cursor and the resource's date filters.
 *
 * Pages run newest first and are keyed on the entry id: a cursor names the last id of a page, so
 * entries written meanwhile never shift a page (keyset paging, no OFFSET).
 *
 * @since 0.1.0
 */
import type { Outcome } from "./HistoryEntry.ts"

/** Entries per page by default, and at most. @category constants */
export const DEFAULT_LIMIT = 50
export const MAX_LIMIT = 500

/**
 * What a reader may see: `connections` (undefined = every connection) and, per connection whose
 * tenants are restricted, the tenants of each collection. An entry on such a connection is shown only
 * when its collection and tenant are listed.
 *
 * @category models
 */
export interface Visibility {
  readonly connections?: ReadonlyArray<string> | undefined
  readonly tenants?: Readonly<Record<string, Readonly<Record<string, ReadonlyArray<string>>>>> | undefined
}

/** @category models */
export interface Query {
  /** An FTS5 query over the statement, the collection and the client's name. */
  readonly search?: string | undefined
  readonly connection?: string | undefined
  readonly table?: string | undefined
  readonly tool?: string | undefined
  readonly client?: string | undefined
  readonly outcome?: Outcome | undefined
  /** Epoch milliseconds, inclusive. */
  readonly since?: number | undefined
  /** Epoch milliseconds, exclusive. */
  readonly until?: number | undefined
  readonly limit?: number | undefined
  /** Only entries older than this id (the cursor's). */
  readonly before?: number | undefined
  readonly visibility?: Visibility | undefined
}

/** SQL with its parameters. @category models */
export interface Sql {
  readonly text: string
  readonly params: ReadonlyArray<string | number>
}

const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(", ")

/** The `WHERE` terms of a query's filters and visibility (the FTS match is added by `select`). */
const conditions = (query: Query): { readonly terms: Array<string>; readonly params: Array<string | number> } => {
  const terms: Array<string> = []
  const params: Array<string | number> = []
  const equal = (column: string, value: string | undefined) => {
    if (value === undefined) return
    terms.push(`e.${column} = ?`)
    params.push(value)
  }
  equal("connection", query.connection)
  equal("collection", query.table)
  equal("tool", query.tool)
  equal("client", query.client)
  equal("outcome", query.outcome)
  if (query.since !== undefined) {
    terms.push("e.time >= ?")
    params.push(query.since)
  }
  if (query.until !== undefined) {
    terms.push("e.time < ?")
    params.push(query.until)
  }
  if (query.before !== undefined) {
    terms.push("e.id < ?")
    params.push(query.before)
  }
  const visibility = query.visibility
  if (visibility?.connections !== undefined) {
    terms.push(visibility.connections.length === 0 ? "0" : `e.connection IN (${placeholders(visibility.connections.length)})`)
    params.push(...visibility.connections)
  }
  for (const [connection, collections] of Object.entries(visibility?.tenants ?? {})) {
    // On a tenant-scoped connection, only entries naming one of the token's tenants of their collection.
    const allowed = Object.entries(collections).filter(([, tenants]) => tenants.length > 0)
    const any = allowed.map(([, tenants]) => `(e.collection = ? AND e.tenant IN (${placeholders(tenants.length)}))`)
    terms.push(`(e.connection IS NOT ? ${any.length > 0 ? `OR ${any.join(" OR ")}` : ""})`)
    params.push(connection)
    for (const [collection, tenants] of allowed) params.push(collection, ...tenants)
  }
  return { terms, params }
}

/** The columns read back, in `Entry` order. @category constants */
export const COLUMNS = "e.id, e.time, e.connection, e.collection, e.tenant, e.consistency_level, e.source, e.client, e.principal, " +
  "e.principal_name, e.tool, e.statement, e.cut_from, e.digest, e.duration_ms, e.rows, e.outcome, e.error_code, e.error_message, e.approval"

/**
 * The page of a query: newest first, `limit + 1` rows (the extra one says whether there is a next page).
 *
 * @category sql
 */
export const select = (query: Query): Sql => {
  const { params, terms } = conditions(query)
  const limit = clampLimit(query.limit)
  if (query.search !== undefined && query.search.trim().length > 0) {
    // The FTS index in descending rowid order, joined to its rows: the newest matches first, stopping at the page.
    return {
      text: `SELECT ${COLUMNS} FROM entries_fts f JOIN entries e ON e.id = f.rowid WHERE entries_fts MATCH ?` +
        `${terms.length > 0 ? ` AND ${terms.join(" AND ")}` : ""} ORDER BY f.rowid DESC LIMIT ?`,
      params: [query.search, ...params, limit + 1]
    }
  }
  return {
    text: `SELECT ${COLUMNS} FROM entries e${terms.length > 0 ? ` WHERE ${terms.join(" AND ")}` : ""} ORDER BY e.id DESC LIMIT ?`,
    params: [...params, limit + 1]
  }
}

/**
 * The entries a `history clear` removes: on a connection, before a time, or all.
 *
 * @category sql
 */
export const clearWhere = (options: { readonly connection?: string | undefined; readonly before?: number | undefined }): Sql => {
  const terms: Array<string> = []
  const params: Array<string | number> = []
  if (options.connection !== undefined) {
    terms.push("connection = ?")
    params.push(options.connection)
  }
  if (options.before !== undefined) {
    terms.push("time < ?")
    params.push(options.before)
  }
  return { text: terms.length === 0 ? "1" : terms.join(" AND "), params }
}

/** A limit within 1 and `MAX_LIMIT` (default `DEFAULT_LIMIT`). @category combinators */
export const clampLimit = (limit: number | undefined): number =>
  limit === undefined || !Number.isFinite(limit) ? DEFAULT_LIMIT : Math.min(MAX_LIMIT, Math.max(1, Math.floor(limit)))

// ===== Cursors =====

const CURSOR_PREFIX = "h1."

/** The opaque cursor of the page after the one ending at `lastId`. @category cursors */
export const cursorAfter = (lastId: number): string => CURSOR_PREFIX + Buffer.from(String(lastId), "utf8").toString("base64url")

/** The id a cursor names; `undefined` when it is not one of ours. @category cursors */
export const parseCursor = (cursor: string): number | undefined => {
  if (!cursor.startsWith(CURSOR_PREFIX)) return undefined
  const text = Buffer.from(cursor.slice(CURSOR_PREFIX.length), "base64url").toString("utf8")
  if (!/^[1-9]\d{0,15}$/.test(text)) return undefined
  return Number(text)
}

// ===== Date filters (the resource's) =====

/** @category models */
export type DateFilter = "today" | "thisWeek" | "thisMonth" | "all"

/** @category constants */
export const DATE_FILTERS: ReadonlyArray<DateFilter> = ["today", "thisWeek", "thisMonth", "all"]

/**
 * The start of a date filter's period, in UTC: today from midnight, this week from Monday, this month
 * from its first day; `undefined` for `all`.
 *
 * @category combinators
 */
export const sinceOf = (filter: DateFilter, now: number): number | undefined => {
  const day = new Date(now)
  day.setUTCHours(0, 0, 0, 0)
  switch (filter) {
    case "today":
      return day.getTime()
    case "thisWeek":
      return day.getTime() - ((day.getUTCDay() + 6) % 7) * 86_400_000
    case "thisMonth":
      return Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), 1)
    case "all":
      return undefined
  }
}

// ===== Times =====

const UNITS: Readonly<Record<string, number>> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }

/**
 * A point in time as people and models write it: a span back from now (`30m`, `1h`, `7d`, `2w`) or an
 * ISO 8601 date or date-time (`2026-11-01`, `2026-11-01T12:00:00Z`); epoch milliseconds, or
 * `undefined` when it is neither.
 *
 * @category parsing
 */
export const parseTime = (text: string, now: number): number | undefined => {
  const span = /^(\d+)\s*([smhdw])$/.exec(text.trim())
  if (span !== null) return now - Number(span[1]) * UNITS[span[2]!]!
  const at = /^\d{4}-\d{2}-\d{2}/.test(text.trim()) ? Date.parse(text.trim()) : Number.NaN
  return Number.isNaN(at) ? undefined : at
}
