/**
 * The REST console: `<METHOD> <path>` with an optional JSON body on the same line after the path or
 * on the lines below. A path without the `/v1` prefix receives it (`GET /nodes` reaches
 * `/v1/nodes`). Only paths on the connection's own instance are accepted (no absolute URLs). gRPC is
 * never used. `classify` tells the MCP layer whether a line writes and whether it is one of the
 * destructive operations that need `confirm_destructive_operation`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { type AuthenticationFailed, type ConnectionFailed, StatementRefused } from "./DriverError.ts"
import * as GraphqlEditor from "./GraphqlEditor.ts"
import type { Method, WeaviateHttp } from "./WeaviateHttp.ts"

/** @category models */
export interface ConsoleRequest {
  readonly method: Method
  /** The path as sent, always starting with `/v1`, query string included. */
  readonly path: string
  /** The body text (valid JSON), when there is one. */
  readonly body?: string
}

const METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"])

/**
 * Adds `/v1` to a path that lacks it.
 *
 * @category parsing
 */
export const withV1 = (path: string): string => {
  const absolute = path.startsWith("/") ? path : `/${path}`
  const pathname = absolute.split(/[?#]/, 1)[0]!
  return pathname === "/v1" || pathname.startsWith("/v1/") ? absolute : `/v1${absolute === "/" ? "" : absolute}`
}

/**
 * Parses a console statement.
 *
 * @category parsing
 */
export const parse = (text: string): Either.Either<ConsoleRequest, StatementRefused> => {
  const trimmed = text.replace(/^\s+/, "")
  const m = /^([A-Za-z]+)[ \t]+(\S+)([\s\S]*)$/.exec(trimmed)
  if (m === null) {
    return Either.left(new StatementRefused({ reason: "expected <METHOD> <path> [body], e.g. GET /v1/schema" }))
  }
  const method = m[1]!.toUpperCase()
  if (!METHODS.has(method)) {
    return Either.left(new StatementRefused({ reason: `unknown method ${m[1]}; use GET, HEAD, POST, PUT, PATCH or DELETE` }))
  }
  const rawPath = m[2]!
  if (/^[a-z][a-z0-9+.-]*:/i.test(rawPath) || rawPath.startsWith("//") || rawPath.includes("\\")) {
    return Either.left(new StatementRefused({ reason: "give a path on this connection (e.g. /v1/schema), not a URL" }))
  }
  const body = m[3]!.trim()
  if (body.length > 0) {
    if (method === "GET" || method === "HEAD") {
      return Either.left(new StatementRefused({ reason: `${method} takes no body` }))
    }
    try {
      JSON.parse(body)
    } catch (error) {
      return Either.left(new StatementRefused({ reason: `the body is not valid JSON (${(error as Error).message})` }))
    }
  }
  return Either.right({ method: method as Method, path: withV1(rawPath), ...(body.length > 0 ? { body } : {}) })
}

// ===== Classification =====

/** @category models */
export interface Classification {
  /** Anything but GET and HEAD, except a `POST /v1/graphql` whose body holds a valid read-only query. */
  readonly isWrite: boolean
  /** `DELETE /v1/schema/{C}` drops a collection; `DELETE /v1/batch/objects` deletes by filter. */
  readonly destructive?: "drop_table" | "delete_where"
  readonly collection?: string
}

/**
 * @category combinators
 */
export const classify = (request: ConsoleRequest): Classification => {
  const pathname = request.path.split(/[?#]/, 1)[0]!.replace(/\/+$/, "")
  const segments = pathname.split("/").filter((s) => s.length > 0).map((s) => safeDecode(s))
  if (request.method === "GET" || request.method === "HEAD") return { isWrite: false }
  if (request.method === "POST" && pathname === "/v1/graphql" && request.body !== undefined) {
    const query = (JSON.parse(request.body) as { query?: unknown }).query
    if (typeof query === "string" && Either.isRight(GraphqlEditor.validate(query))) return { isWrite: false }
  }
  if (request.method === "DELETE" && segments.length === 3 && segments[1] === "schema") {
    return { isWrite: true, destructive: "drop_table", collection: segments[2]! }
  }
  if (request.method === "DELETE" && pathname === "/v1/batch/objects") {
    const body = request.body === undefined ? undefined : JSON.parse(request.body) as { match?: { class?: unknown } }
    const collection = body?.match?.class
    return { isWrite: true, destructive: "delete_where", ...(typeof collection === "string" ? { collection } : {}) }
  }
  return { isWrite: true }
}

const safeDecode = (segment: string) => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

// ===== Running =====

/** @category models */
export interface ConsoleResult {
  readonly request: ConsoleRequest
  readonly status: number
  readonly ok: boolean
  /** The parsed JSON body, or `undefined` when the body is empty or not JSON. */
  readonly json: unknown
  readonly text: string
}

/**
 * Runs a console statement. Any HTTP status is a result (`ok` is false outside 2xx); 401/403 fail
 * with `AuthenticationFailed`.
 *
 * @category requests
 */
export const run = Effect.fn("RestConsole.run")(function*(
  http: WeaviateHttp,
  text: string
): Effect.fn.Return<ConsoleResult, StatementRefused | AuthenticationFailed | ConnectionFailed> {
  const request = yield* parse(text)
  const [path, query] = splitQuery(request.path)
  const response = yield* http.request({
    method: request.method,
    path,
    query,
    ...(request.body !== undefined ? { body: { text: request.body } } : {})
  })
  return {
    request,
    status: response.status,
    ok: response.status >= 200 && response.status < 300,
    json: response.json,
    text: http.scrub(response.text)
  }
})

const splitQuery = (path: string): [string, Record<string, string>] => {
  const index = path.indexOf("?")
  if (index < 0) return [path, {}]
  return [path.slice(0, index), Object.fromEntries(new URLSearchParams(path.slice(index + 1)))]
}
