/**
 * The protocol errors of the local MCP endpoint: one `Schema.TaggedError` per JSON-RPC code, each
 * knowing its HTTP status (the contract's error table). Tool failures are not here: they are
 * results with `isError: true` (see `ToolError`).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

const fields = {
  message: Schema.String,
  data: Schema.optional(Schema.Unknown),
  /** Extra HTTP response headers (`WWW-Authenticate`, `Retry-After`, `Allow`, ...). */
  headers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
}

/** @category errors */
export class ParseError extends Schema.TaggedError<ParseError>()("ParseError", fields) {
  get code() { return -32700 as const }
  get httpStatus() { return 400 }
}
/** @category errors */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", fields) {
  get code() { return -32600 as const }
  get httpStatus() { return 400 }
}
/** @category errors */
export class MethodNotFound extends Schema.TaggedError<MethodNotFound>()("MethodNotFound", fields) {
  get code() { return -32601 as const }
  get httpStatus() { return 404 }
}
/** Invalid params; also unknown tool, prompt or resource URI, a bad cursor or `requestState`. @category errors */
export class InvalidParams extends Schema.TaggedError<InvalidParams>()("InvalidParams", fields) {
  get code() { return -32602 as const }
  get httpStatus() { return 400 }
}
/** @category errors */
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", fields) {
  get code() { return -32603 as const }
  get httpStatus() { return 500 }
}
/** A required header is missing, malformed or disagrees with the body. @category errors */
export class HeaderMismatch extends Schema.TaggedError<HeaderMismatch>()("HeaderMismatch", fields) {
  get code() { return -32020 as const }
  get httpStatus() { return 400 }
}
/** `data.requiredCapabilities` is an object keyed by capability, e.g. `{ elicitation: {} }`. @category errors */
export class MissingCapability extends Schema.TaggedError<MissingCapability>()("MissingCapability", fields) {
  get code() { return -32021 as const }
  get httpStatus() { return 400 }
}
/** `data: { supported, requested }`. @category errors */
export class UnsupportedVersion extends Schema.TaggedError<UnsupportedVersion>()("UnsupportedVersion", fields) {
  get code() { return -32022 as const }
  get httpStatus() { return 400 }
}
/** Service unavailable (e.g. shutting down). @category errors */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()("ServiceUnavailable", fields) {
  get code() { return -33000 as const }
  get httpStatus() { return 503 }
}
/** Legacy session unknown or owned by another principal. @category errors */
export class SessionNotFound extends Schema.TaggedError<SessionNotFound>()("SessionNotFound", fields) {
  get code() { return -33001 as const }
  get httpStatus() { return 404 }
}
/** @category errors */
export class RequestCancelled extends Schema.TaggedError<RequestCancelled>()("RequestCancelled", fields) {
  get code() { return -33002 as const }
  get httpStatus() { return 200 }
}
/** Handler deadline (330 s) or a statement's own `timeout_seconds`. @category errors */
export class RequestTimeout extends Schema.TaggedError<RequestTimeout>()("RequestTimeout", fields) {
  get code() { return -33003 as const }
  get httpStatus() { return 200 }
}
/** Body above 10 MB. @category errors */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", fields) {
  get code() { return -33005 as const }
  get httpStatus() { return 413 }
}
/** AI access paused by the user. @category errors */
export class ServerDisabled extends Schema.TaggedError<ServerDisabled>()("ServerDisabled", fields) {
  get code() { return -33006 as const }
  get httpStatus() { return 503 }
}
/** Token scope, connection allowlist, AI policy or first-access refusal. @category errors */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", fields) {
  get code() { return -33007 as const }
  get httpStatus() { return 403 }
}
/** @category errors */
export class TokenExpired extends Schema.TaggedError<TokenExpired>()("TokenExpired", fields) {
  get code() { return -33008 as const }
  get httpStatus() { return 401 }
}
/** No, unknown or revoked token. @category errors */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", fields) {
  get code() { return -33009 as const }
  get httpStatus() { return 401 }
}
/** Carries `Retry-After` in `headers`. @category errors */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", fields) {
  get code() { return -33010 as const }
  get httpStatus() { return 429 }
}

/** @category models */
export type McpError =
  | ParseError
  | InvalidRequest
  | MethodNotFound
  | InvalidParams
  | InternalError
  | HeaderMismatch
  | MissingCapability
  | UnsupportedVersion
  | ServiceUnavailable
  | SessionNotFound
  | RequestCancelled
  | RequestTimeout
  | PayloadTooLarge
  | ServerDisabled
  | Forbidden
  | TokenExpired
  | Unauthenticated
  | RateLimited

/** @category schemas */
export const McpError = Schema.Union(
  ParseError,
  InvalidRequest,
  MethodNotFound,
  InvalidParams,
  InternalError,
  HeaderMismatch,
  MissingCapability,
  UnsupportedVersion,
  ServiceUnavailable,
  SessionNotFound,
  RequestCancelled,
  RequestTimeout,
  PayloadTooLarge,
  ServerDisabled,
  Forbidden,
  TokenExpired,
  Unauthenticated,
  RateLimited
)

const tags = new Set(McpError.members.map((member) => member.identifier))

/** @category guards */
export const isMcpError = (u: unknown): u is McpError =>
  typeof u === "object" && u !== null && "_tag" in u && tags.has((u as { _tag: string })._tag)

/**
 * The JSON-RPC `error` member of a response.
 *
 * @category conversions
 */
export const toJsonRpcError = (error: McpError): { code: number; message: string; data?: unknown } =>
  error.data === undefined
    ? { code: error.code, message: error.message }
    : { code: error.code, message: error.message, data: error.data }
