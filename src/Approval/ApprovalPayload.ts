/**
 * The approval payloads of the contract: the `input_required` result that asks the client to show
 * the user a one-checkbox form, and the reading of the client's answer.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { InputRequired } from "../Schema/InputRequired.ts"

// ===== Constants =====

/** The request key of every approval question. @category constants */
export const APPROVE_STATEMENT = "approve_statement" as const

/** Longest `description` sent to a client (contract Limits). @category constants */
export const MAX_DESCRIPTION_LENGTH = 2_000

// ===== Models =====

/** @category models */
export interface ApproveStatementRequest {
  readonly method: "elicitation/create"
  readonly params: {
    readonly mode: "form"
    readonly message: string
    readonly requestedSchema: {
      readonly type: "object"
      readonly properties: {
        readonly approved: { readonly type: "boolean"; readonly title: string; readonly description: string }
      }
      readonly required: ReadonlyArray<"approved">
    }
  }
}

/** The input an approval requires: one form, `approve_statement`. @category models */
export type ApprovalInput = InputRequired<{ readonly [APPROVE_STATEMENT]: ApproveStatementRequest }>

/** What the client answered. `missing`: no answer to our question was sent. @category models */
export type Answer = "approved" | "denied" | "missing"

// ===== Constructors =====

const formatCount = (n: number) => n.toLocaleString("en-US")

/**
 * The line that ends a cut statement: `… [truncated: N more characters]`.
 *
 * @category constructors
 */
export const truncationMarker = (omitted: number): string => `… [truncated: ${formatCount(omitted)} more characters]`

const marker = (more: number) => `\n${truncationMarker(more)}`

/** @category models */
export interface CutStatement {
  /** The beginning that is shown (the whole statement when nothing is cut). */
  readonly kept: string
  /** Characters (code points) left out; 0 when the statement fits. */
  readonly omitted: number
  /** Characters (code points) in the whole statement. */
  readonly total: number
}

/**
 * Where `describeStatement` cuts: the kept beginning and the marker together stay within `limit`
 * characters. Characters are Unicode code points, so a cut never splits a surrogate pair.
 *
 * @category constructors
 */
export const cutStatement = (statement: string, limit: number = MAX_DESCRIPTION_LENGTH): CutStatement => {
  const chars = Array.from(statement)
  if (chars.length <= limit) return { kept: statement, omitted: 0, total: chars.length }
  // The marker's length depends on the count it prints; two passes settle it (digits only shrink).
  let kept = limit - marker(chars.length - limit).length
  kept = Math.max(0, limit - marker(chars.length - kept).length)
  return { kept: chars.slice(0, kept).join(""), omitted: chars.length - kept, total: chars.length }
}

/**
 * The statement as shown to the user: verbatim (line breaks included) when it fits in 2,000
 * characters, otherwise its beginning followed by a marker naming how much was cut, the whole staying
 * within 2,000 characters.
 *
 * @category constructors
 */
export const describeStatement = (statement: string, limit: number = MAX_DESCRIPTION_LENGTH): string => {
  const cut = cutStatement(statement, limit)
  return cut.omitted === 0 ? statement : cut.kept + marker(cut.omitted)
}

/**
 * The `input_required` result for an approval.
 *
 * @category constructors
 */
export const inputRequired = (options: {
  readonly message: string
  readonly title: string
  readonly statement: string
  readonly requestState: string
}): ApprovalInput => ({
  _tag: "InputRequired",
  inputRequests: {
    [APPROVE_STATEMENT]: {
      method: "elicitation/create",
      params: {
        mode: "form",
        message: options.message,
        requestedSchema: {
          type: "object",
          properties: {
            approved: { type: "boolean", title: options.title, description: describeStatement(options.statement) }
          },
          required: ["approved"]
        }
      }
    }
  },
  requestState: options.requestState
})

// ===== Parsing =====

/**
 * `inputResponses.approve_statement` as the official `ElicitResult` shapes it.
 *
 * @category schemas
 */
export const ApproveStatementResponse = Schema.Struct({
  action: Schema.Literal("accept", "decline", "cancel"),
  content: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})

const InputResponses = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const decodeResponses = Schema.decodeUnknownEither(InputResponses)
const decodeResponse = Schema.decodeUnknownEither(ApproveStatementResponse)

/**
 * Reads the answer to `approve_statement`. Only `action: "accept"` with `content.approved === true`
 * approves; any other answer that is present, malformed ones included, is a denial; no answer (or no
 * `inputResponses` at all) is `missing`, and the question is asked again.
 *
 * @category parsing
 */
export const parseAnswer = (inputResponses: unknown): Answer => {
  if (inputResponses === undefined || inputResponses === null) return "missing"
  const responses = decodeResponses(inputResponses)
  if (Either.isLeft(responses)) return "denied"
  if (!Object.hasOwn(responses.right, APPROVE_STATEMENT) || responses.right[APPROVE_STATEMENT] === undefined) {
    return "missing"
  }
  const response = decodeResponse(responses.right[APPROVE_STATEMENT])
  if (Either.isLeft(response)) return "denied"
  return response.right.action === "accept" && response.right.content?.["approved"] === true ? "approved" : "denied"
}
