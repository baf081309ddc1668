/**
 * The JSON-RPC 2.0 envelope as the local endpoint accepts it: one request or notification per POST
 * (no batches), ids kept verbatim (a string, or an integer including 0).
 *
 * Decoded once at the edge, synchronously and without a fiber, so that the hot path pays for one
 * `JSON.parse` and one structural check (`asMessage`: `Message`'s rules written out).
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

const isParams = (u: unknown): u is Params => typeof u === "object" && u !== null && !Array.isArray(u)

const isRequestId = (u: unknown): u is RequestId => typeof u === "string" || Number.isSafeInteger(u)

/** The schema's decoder, with its parse errors. @category decoding */
export const decodeMessage = Schema.decodeUnknownEither(Message)

/**
 * A parsed body as a `Message`, or `undefined` when it is not one: exactly `decodeMessage`'s answers
 * (test/Schema/JsonRpc.test.ts holds the two to the same), checked in place. The endpoint reads every
 * request with this: the schema's decoder copied `params` member by member and built its result
 * through its parsers, 3 KB and a few microseconds per request (its commit message); here `params`
 * is kept as parsed.
 *
 * @category decoding
 */
export const asMessage = (u: unknown): Message | undefined => {
  if (typeof u !== "object" || u === null || Array.isArray(u)) return undefined
  const { id, jsonrpc, method, params } = u as Record<string, unknown>
  if (jsonrpc !== "2.0" || typeof method !== "string") return undefined
  if (id !== undefined && !isRequestId(id)) return undefined
  if (params !== undefined && !isParams(params)) return undefined
  return {
    jsonrpc,
    method,
    ...(Object.hasOwn(u, "id") ? { id } : {}),
    ...(Object.hasOwn(u, "params") ? { params } : {})
  }
}

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
