/**
 * Tool errors: a failed tool is a result with `isError: true` whose text starts with one of the
 * contract's codes, a colon and a message. Driver errors map to codes here, in one place, and every
 * text is redacted (`Redaction.global`) before it leaves the process, on top of the driver's own
 * scrubbing of the connection's key.
 *
 * | code | when |
 * |---|---|
 * | `invalid_argument` | arguments that do not fit the tool's `inputSchema`, a filter or statement refused before sending |
 * | `not_connected` | the database cannot be reached, or it rejects the connection's key (401) |
 * | `not_found` | unknown connection, collection or row; HTTP 404 from the database |
 * | `denied` | the user or Safe Mode refused the write; the Weaviate user may not do it (RBAC: checked before approval, or the database's 403) |
 * | `timeout` | Weaviate itself reports a time-out (HTTP 408/504, "context deadline exceeded") |
 * | `unsupported` | something the tool does not do (REGEX filters, destructive statements in `execute_query`) |
 * | `query_failed` | the database refused the statement (validation, GraphQL errors, other HTTP errors) |
 * | `user_cancelled` | nobody could be asked to approve (no dialog available) |
 * | `internal_failure` | the daemon itself failed (unreadable connection store, a defect) |
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Redaction from "../../Base/Redaction.ts"
import type { CallToolResult } from "../../Mcp/Catalogue.ts"
import { capError } from "./TextCap.ts"

/** @category models */
export type ToolErrorCode =
  | "invalid_argument"
  | "not_connected"
  | "not_found"
  | "denied"
  | "timeout"
  | "unsupported"
  | "query_failed"
  | "user_cancelled"
  | "internal_failure"

/**
 * A tool failure on its way to becoming an `isError` result. Internal to the tools: it never
 * reaches the protocol core as an error.
 *
 * @category errors
 */
export class ToolFailure extends Data.TaggedError("ToolFailure")<{
  readonly code: ToolErrorCode
  readonly reason: string
}> {}

/** @category constructors */
export const fail = (code: ToolErrorCode, reason: string): ToolFailure => new ToolFailure({ code, reason })

/**
 * The `isError` result of a failure: `code: message`, redacted, as text only. No `structuredContent`:
 * it would have to match the tool's `outputSchema`, which describes success, and the official clients
 * (SDK v1, the Inspector) reject a result whose structured content does not, hiding the error.
 *
 * @category conversions
 */
export const toResult = (failure: { readonly code: ToolErrorCode; readonly reason: string }): CallToolResult => {
  const message = withHint(Redaction.global.redact(failure.reason))
  return {
    content: [{ type: "text", text: capError(`${failure.code}: ${message}`) }],
    isError: true
  }
}

/** Weaviate's own words for a read of an inactive tenant (a GraphQL statement, a REST line). */
const INACTIVE_TENANT = /tenant not active/i

/** Weaviate's refusal of an inactive tenant, with the tool that activates it named. */
const withHint = (message: string): string =>
  INACTIVE_TENANT.test(message) && !message.includes("set_tenant_status") ? `${message} (activate it with set_tenant_status, status ACTIVE)` : message

const TIMEOUT = /deadline exceeded|timed? ?out|timeout/i

/** The errors of the driver, the store and the helpers the tools use, by `_tag`. */
type Tagged = { readonly _tag: string; readonly message: string }

/**
 * The tool error of a driver (or store) error.
 *
 * @category conversions
 */
export const fromDriverError = (error: Tagged): ToolFailure => {
  const e = error as Tagged & { status?: number; detail?: string; reason?: string; code?: string }
  switch (e._tag) {
    case "ConnectionFailed":
      return e.code === "TIMEOUT" ? fail("timeout", e.message) : fail("not_connected", e.message)
    case "AuthenticationFailed":
      return e.status === 403 ? fail("denied", e.message) : fail("not_connected", e.message)
    case "PermissionDenied":
      return fail("denied", e.message)
    case "DatabaseRefused": {
      const status = e.status ?? 0
      if (status === 408 || status === 504 || TIMEOUT.test(e.detail ?? "")) return fail("timeout", e.message)
      if (status === 404) return fail("not_found", e.message)
      if (status === 501) return fail("unsupported", e.message)
      return fail("query_failed", e.message)
    }
    case "FilterRefused":
      return /not supported/i.test(e.reason ?? "") ? fail("unsupported", e.message) : fail("invalid_argument", e.message)
    case "StatementRefused":
      return fail("invalid_argument", e.message)
    case "CollectionNotFound":
    case "ConnectionNotFound":
      return fail("not_found", e.message)
    case "TenantRefused":
      return e.reason === "not_found" ? fail("not_found", e.message) : fail("invalid_argument", e.message)
    case "UnexpectedResponse":
    case "ConsistencyNotReached":
      return fail("query_failed", e.message)
    case "ClusterDegraded":
      return e.code === "TIMEOUT" ? fail("timeout", e.message) : fail("not_connected", e.message)
    default:
      return fail("internal_failure", e.message)
  }
}

