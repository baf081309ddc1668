/**
 * The JSON-RPC 2.0 envelope as the local endpoint accepts it: one request or notification per POST
 * (no batches), ids kept verbatim (a string, or an integer including 0).
 *
 * Decoded once at the edge with `Schema.decodeUnknownEither` (synchronous, no fiber), so that the
 * hot path pays for one `JSON.parse` and one structural check.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** A JSON-RPC id as MCP allows it: a string or an integer. @category schemas */
export const RequestId = Schema.Union(Schema.String, Schema.Int)
export type RequestId = typeof RequestId.Type

/** Method parameters: a JSON object. @category schemas */
export const Params = Schema.Record({ key: Schema.String, value: Schema.Unknown })
export type Params = typeof Params.Type

/**
 * A request (with `id`) or a notification (without). Unknown members are ignored, as JSON-RPC allows.
 *
 * @category schemas
 */
export const Message = Schema.Struct({
  jsonrpc: Schema.Literal("2.0"),
  id: Schema.optional(RequestId),
  method: Schema.String,
  params: Schema.optional(Params)
})
export type Message = typeof Message.Type

/** @category decoding */
export const decodeMessage = Schema.decodeUnknownEither(Message)

/**
 * Whether a parsed body looks like a JSON-RPC response (a client must not send one to the server).
 *
 * @category predicates
 */
export const isResponse = (u: unknown): boolean =>
  typeof u === "object" && u !== null && !Array.isArray(u) && !("method" in u) && ("result" in u || "error" in u)

/**
 * The id of a body that failed to decode, when it can still be read (every error echoes it).
 *
 * @category decoding
 */
export const readableId = (u: unknown): RequestId | null => {
  if (typeof u !== "object" || u === null || Array.isArray(u)) return null
  const id = (u as { id?: unknown }).id
  if (typeof id === "string") return id
  if (typeof id === "number" && Number.isInteger(id)) return id
  return null
}
