/**
 * One line of `activity.log`: its fields, how it is written, and how the hash chain is checked.
 *
 * A line is one JSON object on one line, members in a fixed order, `hash` last:
 *
 * ```
 * {"v":1,"type":"call","time":"2026-11-23T22:10:00.000Z","client":"claude-code","clientVersion":"1.2.0",
 *  "principal":"tok_1a2b","principalName":"laptop","era":"modern","method":"tools/call","tool":"execute_query",
 *  "connection":"c_9f","outcome":"ok","code":null,"durationMs":12.4,"statements":["sha256:…"],
 *  "prev":"<64 hex>","hash":"<64 hex>"}
 * ```
 *
 * - `hash` is the SHA-256 (hex) of the line's own text up to, not including, `,"hash":` — the exact
 *   bytes, so no canonical form is needed to check it. `prev` is the `hash` of the line before; the
 *   first line of a log has `prev` = 64 zeros.
 * - Retention removes old lines and puts an **anchor** line first:
 *   `{"v":1,"type":"anchor","time":…,"pruned":N,"prev":"<hash of the last removed line>","hash":…}`.
 *   The chain is then checked from the anchor: a deleted, edited or reordered line after it still
 *   shows, and so does a removed anchor (the first line's `prev` is no longer zeros).
 * - Statements (a GraphQL text, a REST console line, the rows of a write) never appear: only
 *   `sha256:<hex>` digests of their exact text. Hash your own copy of a statement to find its calls.
 *
 * @since 0.1.0
 */
import * as NodeCrypto from "node:crypto"

/** @category constants */
export const GENESIS = "0".repeat(64)

/** How a call ended. @category models */
export type Outcome =
  /** A result (`tools/call`: not `isError`). */
  | "ok"
  /** A `tools/call` result with `isError: true` (denied, user_cancelled, a database error…). */
  | "tool_error"
  /** The client is asked for more (`input_required`: an approval form, first access). */
  | "input_required"
  /** A JSON-RPC error other than the ones below. */
  | "error"
  /** Refused: `-33007` (scope, AI policy, first access) or `-33010` (rate limit). */
  | "refused"
  /** No valid token (`-33008`/`-33009`). */
  | "unauthenticated"
  /** Cancelled (`-33002`), client gone, paused or shutdown. */
  | "cancelled"

/** What the daemon observed of one call. @category models */
export interface Call {
  /** Epoch milliseconds when the call arrived. */
  readonly time: number
  readonly client: string | null
  readonly clientVersion: string | null
  readonly principal: string | null
  readonly principalName: string | null
  readonly era: "modern" | "legacy" | null
  readonly method: string
  readonly tool: string | null
  readonly connection: string | null
  readonly outcome: Outcome
  /** The JSON-RPC error code, when the call ended with one. */
  readonly code: number | null
  readonly durationMs: number
  /** `sha256:<hex>` of each statement the call carried. */
  readonly statements: ReadonlyArray<string>
  /** The consistency level a write named (`consistency_level`); the member is absent otherwise. */
  readonly consistencyLevel?: string | undefined
  /**
   * The collection a tool call names (its `table`, or the first one its query names), for the
   * console's live view; not written to the log (the line's format is fixed).
   */
  readonly collection?: string | null | undefined
}

/** A line as read back. @category models */
export type Entry =
  | ({ readonly type: "call"; readonly prev: string; readonly hash: string } & Omit<Call, "time"> & { readonly time: string })
  | { readonly type: "anchor"; readonly time: string; readonly pruned: number; readonly prev: string; readonly hash: string }

/** @category constructors */
export const sha256: (text: string) => string = typeof NodeCrypto.hash === "function"
  // One call, no Hash object (Node 20.12 and later): every line and statement of every call is hashed.
  ? (text) => NodeCrypto.hash("sha256", text, "hex")
  : (text) => NodeCrypto.createHash("sha256").update(text, "utf8").digest("hex")

/** The digest of a statement as the log stores it. @category constructors */
export const statementDigest = (text: string): string => `sha256:${sha256(text)}`

const HASH_MEMBER = ',"hash":"'

const seal = (body: string): { readonly text: string; readonly hash: string } => {
  const hash = sha256(body)
  return { text: `${body}${HASH_MEMBER}${hash}"}`, hash }
}

/**
 * The text of a call's line (without the newline) and its hash.
 *
 * @category formatting
 */
export const formatCall = (call: Call, prev: string): { readonly text: string; readonly hash: string } =>
  seal(
    "{" +
      `"v":1,"type":"call","time":${JSON.stringify(new Date(call.time).toISOString())}` +
      `,"client":${JSON.stringify(call.client)},"clientVersion":${JSON.stringify(call.clientVersion)}` +
      `,"principal":${JSON.stringify(call.principal)},"principalName":${JSON.stringify(call.principalName)}` +
      `,"era":${JSON.stringify(call.era)},"method":${JSON.stringify(call.method)},"tool":${JSON.stringify(call.tool)}` +
      `,"connection":${JSON.stringify(call.connection)}` +
      (call.consistencyLevel !== undefined ? `,"consistencyLevel":${JSON.stringify(call.consistencyLevel)}` : "") +
      `,"outcome":${JSON.stringify(call.outcome)},"code":${JSON.stringify(call.code)}` +
      `,"durationMs":${JSON.stringify(Math.round(call.durationMs * 10) / 10)},"statements":${JSON.stringify(call.statements)}` +
      `,"prev":${JSON.stringify(prev)}`
  )

/**
 * The anchor that starts a pruned log: `prev` is the hash of the last line removed.
 *
 * @category formatting
 */
export const formatAnchor = (time: number, pruned: number, prev: string): { readonly text: string; readonly hash: string } =>
  seal(`{"v":1,"type":"anchor","time":${JSON.stringify(new Date(time).toISOString())},"pruned":${pruned},"prev":${JSON.stringify(prev)}`)

/** Parses a line; `undefined` when it is not a log line. @category parsing */
export const parse = (text: string): Entry | undefined => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof value !== "object" || value === null) return undefined
  const record = value as Record<string, unknown>
  if ((record.type !== "call" && record.type !== "anchor") || typeof record.prev !== "string" || typeof record.hash !== "string") return undefined
  return record as unknown as Entry
}

/** The result of checking a log. @category models */
export type Verification =
  | { readonly _tag: "Valid"; readonly lines: number }
  | { readonly _tag: "Broken"; readonly line: number; readonly reason: string }

/**
 * Checks every line's own hash and its link to the line before. Reports the first line (1-based)
 * that does not match. An unterminated last line (a write in progress) is not counted.
 *
 * @category verifying
 */
export const verify = (content: string): Verification => {
  const lines = content.split("\n")
  // The text after the last newline is a line still being written (or nothing).
  lines.pop()
  let expectedPrev = GENESIS
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const number = i + 1
    const at = line.lastIndexOf(HASH_MEMBER)
    const entry = at === -1 ? undefined : parse(line)
    if (entry === undefined) return { _tag: "Broken", line: number, reason: "not a log line" }
    if (sha256(line.slice(0, at)) !== entry.hash || line.slice(at) !== `${HASH_MEMBER}${entry.hash}"}`) {
      return { _tag: "Broken", line: number, reason: "its content does not match its hash" }
    }
    if (entry.type === "anchor") {
      if (i !== 0) return { _tag: "Broken", line: number, reason: "an anchor line may only be the first line" }
      // The first line kept links to the last line removed, which the anchor names.
      expectedPrev = entry.prev
      continue
    }
    if (entry.prev !== expectedPrev) {
      return {
        _tag: "Broken",
        line: number,
        reason: i === 0 ? "the log does not start at its beginning or at an anchor" : "it does not follow the line before it (a line was removed, inserted or moved)"
      }
    }
    expectedPrev = entry.hash
  }
  return { _tag: "Valid", lines: lines.length }
}

/** The hash of the last complete line, or the genesis hash. @category verifying */
export const lastHash = (content: string): string => {
  const end = content.lastIndexOf("\n")
  if (end === -1) return GENESIS
  const start = content.lastIndexOf("\n", end - 1) + 1
  const entry = parse(content.slice(start, end))
  return entry?.hash ?? GENESIS
}
