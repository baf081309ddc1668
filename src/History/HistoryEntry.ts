/**
 * One entry of the query history: what ran against a connection, by whom, and how it ended. Built by
 * the tools (`Catalogue/Tools/ToolsLive`) and the CLI's driver commands, stored by `HistoryStore`.
 *
 * - The statement is kept as it was sent (the GraphQL text, the REST line with its body) or, for the
 *   tools that take structured arguments, as those arguments in JSON, ready to paste back. Secrets are
 *   redacted as in logs (`Base/Redaction`).
 * - A statement longer than `MAX_STATEMENT_BYTES` (64 KB) is cut there and marked: `statementBytes`
 *   keeps the length of the whole one.
 * - `digest` is the digest the activity log writes for the same call (`statementDigests`), so an entry
 *   and its activity line can be joined.
 *
 * @since 0.1.0
 */
import * as NodeCrypto from "node:crypto"
import * as Redaction from "../Base/Redaction.ts"

/** The longest statement kept, in UTF-8 bytes; longer ones are cut and marked. @category constants */
export const MAX_STATEMENT_BYTES = 64 * 1024

/** How an entry ended: `ok`, or `error` with the tool error code and its message. @category models */
export type Outcome = "ok" | "error"

/** Where a statement came from. @category models */
export type Source = "mcp" | "cli"

/** What is recorded of one statement. @category models */
export interface NewEntry {
  /** Epoch milliseconds when it started. */
  readonly time: number
  readonly connection: string | null
  readonly collection: string | null
  readonly tenant: string | null
  readonly consistencyLevel: string | null
  readonly source: Source
  /** The MCP client's name (`clientInfo`), or `cli`. */
  readonly client: string | null
  readonly principal: string | null
  readonly principalName: string | null
  /** The tool (`execute_query`) or the command (`graphql`). */
  readonly tool: string
  /** The statement as sent, unredacted and uncut: `prepare` redacts and cuts it. */
  readonly statement: string
  readonly digest: string | null
  readonly durationMs: number
  /** Rows returned or written, when known. */
  readonly rows: number | null
  readonly outcome: Outcome
  readonly errorCode: string | null
  readonly errorMessage: string | null
  /** How a write was approved (`dialog`, `form`, `terminal`, `exec`, `silent`…). */
  readonly approval: string | null
}

/** An entry as stored and read back. @category models */
export interface Entry extends Omit<NewEntry, "statement"> {
  readonly id: number
  /** `null` when the store keeps no statements (`history.recordText: false`). */
  readonly statement: string | null
  /** The length in bytes of the whole statement when it was cut; `null` when it was kept whole. */
  readonly cutFrom: number | null
}

/** A statement as it is stored: redacted, cut to `MAX_STATEMENT_BYTES`. @category models */
export interface Prepared {
  readonly text: string
  readonly cutFrom: number | null
}

/**
 * The statement as stored: redacted, then cut at `MAX_STATEMENT_BYTES` on a character boundary.
 *
 * @category constructors
 */
export const prepare = (statement: string): Prepared => {
  // Cut before redacting a 10 MB text: a secret split by the cut is caught by the shape patterns of what remains.
  const bytes = Buffer.byteLength(statement, "utf8")
  if (bytes <= MAX_STATEMENT_BYTES) return { text: Redaction.global.redact(statement), cutFrom: null }
  const buffer = Buffer.from(statement, "utf8").subarray(0, MAX_STATEMENT_BYTES)
  // A cut in the middle of a multi-byte character drops that character (the decoder's U+FFFD).
  const text = buffer.toString("utf8").replace(/\uFFFD$/, "")
  return { text: Redaction.global.redact(text), cutFrom: bytes }
}

// ===== Statements and digests =====

const isObject = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null && !Array.isArray(u)

const sha256: (text: string) => string = typeof NodeCrypto.hash === "function"
  ? (text) => NodeCrypto.hash("sha256", text, "hex")
  : (text) => NodeCrypto.createHash("sha256").update(text, "utf8").digest("hex")

/** The digest of a statement as the activity log stores it. @category constructors */
export const digest = (text: string): string => `sha256:${sha256(text)}`

/**
 * The digests the activity log writes for a tool call: the query text, or the exact JSON of what is
 * written. The activity log and the history both use this, so their entries join.
 *
 * @category constructors
 */
export const statementDigests = (tool: string | null, args: unknown): ReadonlyArray<string> => {
  if (tool === null || !isObject(args)) return []
  // A structure change's statement is the change it asked for (its history statement, digested).
  if (STRUCTURE_CHANGES.has(tool)) return [digest(statementOf(tool, args))]
  switch (tool) {
    case "execute_query":
    case "vector_search":
      return typeof args.query === "string" ? [digest(args.query)] : []
    case "insert_rows":
    case "update_rows":
      return args.rows === undefined ? [] : [digest(JSON.stringify(args.rows))]
    case "delete_rows":
      return args.uuids === undefined ? [] : [digest(JSON.stringify(args.uuids))]
    case "confirm_destructive_operation":
      return [digest(JSON.stringify({ operation: args.operation, table: args.table, filters: args.filters ?? [] }))]
    default:
      return []
  }
}

const GRAPHQL_COLLECTION = /\b(?:Get|Aggregate)\s*\{\s*([A-Za-z_][A-Za-z0-9_]*)/
const REST_COLLECTION = /^\s*[A-Za-z]+\s+\/v1\/(?:objects|schema)\/([A-Z][A-Za-z0-9_]*)/
const REST_CLASS = /^\s*[A-Za-z]+\s+\/v1\/[^\s?]*\?(?:[^\s#]*&)?class=([A-Za-z_][A-Za-z0-9_]*)/

/**
 * The collection a statement names first: `Get { Article`, `GET /v1/objects/Article/…`,
 * `GET /v1/objects?class=Article`; `null` when it names none.
 *
 * @category constructors
 */
export const collectionOfStatement = (statement: string): string | null =>
  REST_COLLECTION.exec(statement)?.[1] ?? REST_CLASS.exec(statement)?.[1] ?? GRAPHQL_COLLECTION.exec(statement)?.[1] ?? null

/** The structure and tenant tools: their statement is the change they asked for. */
const STRUCTURE_CHANGES: ReadonlySet<string> = new Set([
  "create_table",
  "add_column",
  "update_table",
  "drop_table",
  "create_tenants",
  "set_tenant_status",
  "delete_tenants"
])

/** The tools whose statements reach Weaviate, and so are recorded. @category constants */
export const RECORDED_TOOLS: ReadonlySet<string> = new Set([
  "execute_query",
  "vector_search",
  "browse_table",
  "count_rows",
  "get_row",
  "insert_rows",
  "update_rows",
  "delete_rows",
  "confirm_destructive_operation",
  "aggregate",
  ...STRUCTURE_CHANGES
])

const pick = (args: Readonly<Record<string, unknown>>, keys: ReadonlyArray<string>) => {
  const out: Record<string, unknown> = {}
  for (const key of keys) if (args[key] !== undefined) out[key] = args[key]
  return out
}

const idsOf = (result: Readonly<Record<string, unknown>> | undefined, fallback: ReadonlyArray<unknown>): ReadonlyArray<unknown> => {
  const results = result?.results
  if (Array.isArray(results)) return results.map((r) => (isObject(r) && typeof r.uuid === "string" ? r.uuid : null))
  return fallback
}

/**
 * The statement of a tool call: `execute_query`'s text as it is; the other tools' arguments (without
 * `connection_id`) as JSON, which can be passed to the tool again; a write names its table and row ids.
 *
 * @category constructors
 */
export const statementOf = (tool: string, args: Readonly<Record<string, unknown>>, result?: Readonly<Record<string, unknown>>): string => {
  if (STRUCTURE_CHANGES.has(tool)) {
    // The change asked for, which can be passed to the tool again (with a connection).
    const { connection_id: _, ...change } = args
    return JSON.stringify(change)
  }
  switch (tool) {
    case "execute_query":
      return typeof args.query === "string" ? args.query : ""
    case "vector_search":
      return JSON.stringify(pick(args, ["table", "mode", "query", "vector", "alpha", "filters", "limit", "properties", "target_vectors", "combination", "weights", "tenant"]))
    case "browse_table":
      return JSON.stringify(pick(args, ["table", "filters", "sort", "limit", "offset", "tenant"]))
    case "count_rows":
      return JSON.stringify(pick(args, ["table", "filters", "tenant"]))
    case "get_row":
      return JSON.stringify(pick(args, ["table", "uuid", "include_vector", "tenant"]))
    case "insert_rows": {
      const rows = Array.isArray(args.rows) ? args.rows : []
      return JSON.stringify({ table: args.table, ids: idsOf(result, rows.map((r) => (isObject(r) && typeof r.id === "string" ? r.id : null))) })
    }
    case "update_rows": {
      const rows = Array.isArray(args.rows) ? args.rows : []
      return JSON.stringify({ table: args.table, ids: idsOf(result, rows.map((r) => (isObject(r) ? r.uuid ?? null : null))) })
    }
    case "delete_rows":
      return JSON.stringify({ table: args.table, ids: Array.isArray(args.uuids) ? args.uuids : [] })
    case "confirm_destructive_operation":
      return JSON.stringify(pick(args, ["operation", "table", "filters"]))
    case "aggregate":
      return JSON.stringify(pick(args, ["table", "group_by", "metrics", "filters", "near_text", "hybrid", "alpha", "object_limit", "limit", "tenant"]))
    default:
      return JSON.stringify(args)
  }
}

/**
 * Rows returned or written, read from a successful result's structured content.
 *
 * @category constructors
 */
export const rowsOf = (tool: string, structured: Readonly<Record<string, unknown>> | undefined): number | null => {
  if (structured === undefined) return null
  switch (tool) {
    case "browse_table":
    case "vector_search":
    case "aggregate":
      return Array.isArray(structured.rows) ? structured.rows.length : null
    case "count_rows":
      return typeof structured.count === "number" ? structured.count : null
    case "get_row":
      return structured.row === undefined ? 0 : 1
    case "insert_rows":
    case "update_rows":
    case "delete_rows":
      return typeof structured.applied === "number" ? structured.applied : null
    case "confirm_destructive_operation":
      return typeof structured.deleted === "number" ? structured.deleted : null
    case "drop_table":
    case "delete_tenants":
      return typeof structured.rowsLost === "number" ? structured.rowsLost : null
    case "execute_query": {
      if (Array.isArray(structured.tables)) {
        return structured.tables.reduce((n: number, t: unknown) => n + (isObject(t) && Array.isArray(t.rows) ? t.rows.length : 0), 0)
      }
      const body = structured.body
      if (Array.isArray(body)) return body.length
      if (isObject(body) && Array.isArray(body.objects)) return body.objects.length
      return null
    }
    default:
      return null
  }
}
