/**
 * The REST console: `<METHOD> <path>` with an optional JSON body on the same line after the path or
 * on the lines below. A line is parsed once into a canonical request (see `parse`), which is what is
 * classified, shown for approval and sent. A path without the `/v1` prefix receives it (`GET /nodes`
 * reaches `/v1/nodes`). Only paths on the connection's own instance are accepted (no absolute URLs). gRPC is
 * never used. `classify` tells the MCP layer whether a line writes and whether it is one of the
 * destructive operations that need `confirm_destructive_operation`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { type AuthenticationFailed, type ConnectionFailed, type PermissionDenied, StatementRefused } from "./DriverError.ts"
import * as GraphqlEditor from "./GraphqlEditor.ts"
import type { Method, WeaviateHttp } from "./WeaviateHttp.ts"

/** @category models */
export interface ConsoleRequest {
  readonly method: Method
  /**
   * The canonical path as sent, always starting with `/v1`: dot segments resolved, empty segments
   * dropped, each segment percent-encoded one way; the query string (re-encoded) included.
   */
  readonly path: string
  /** The body text (valid JSON), when there is one. */
  readonly body?: string
}

const METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"])

const refused = (reason: string) => Either.left(new StatementRefused({ reason }))

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/

/**
 * The canonical segments of a path (without its query): each segment percent-decoded once, `.`
 * dropped, `..` removing the segment before it, empty segments dropped, and a leading `v1` removed
 * (it is added back by `canonicalPath`). `Left(reason)` for a path whose meaning depends on who
 * reads it: a `..` above the root, a segment that decodes to `.`, `..` or one holding `/`, `\\`, a
 * control character or an invalid escape. The HTTP client resolves dot segments (and `%2e`) before
 * sending, so the check and the request must see the same segments.
 *
 * @category parsing
 */
export const canonicalSegments = (pathname: string): Either.Either<ReadonlyArray<string>, string> => {
  const out: Array<string> = []
  for (const raw of pathname.split("/")) {
    if (raw === "" || raw === ".") continue
    if (raw === "..") {
      if (out.length === 0) return Either.left("the path climbs above the root with '..'")
      out.pop()
      continue
    }
    let segment: string
    try {
      segment = decodeURIComponent(raw)
    } catch {
      return Either.left(`the path segment ${JSON.stringify(raw)} has an invalid percent escape`)
    }
    if (segment === "." || segment === ".." || segment.includes("/") || segment.includes("\\") || CONTROL.test(segment)) {
      return Either.left(`the path segment ${JSON.stringify(raw)} is ambiguous (it encodes a separator, a dot segment or a control character)`)
    }
    out.push(segment)
  }
  if (out[0] === "v1") out.shift()
  return Either.right(out)
}

/** The path that is sent for canonical segments: `/v1/` and each segment percent-encoded. @category parsing */
export const canonicalPath = (segments: ReadonlyArray<string>): string =>
  segments.length === 0 ? "/v1" : `/v1/${segments.map(encodeURIComponent).join("/")}`

/**
 * Parses a console statement once into the request that is classified and sent: the method, the
 * canonical path (see `canonicalSegments`) with its query, and the body.
 *
 * @category parsing
 */
export const parse = (text: string): Either.Either<ConsoleRequest, StatementRefused> => {
  const trimmed = text.replace(/^\s+/, "")
  const m = /^([A-Za-z]+)[ \t]+(\S+)([\s\S]*)$/.exec(trimmed)
  if (m === null) return refused("expected <METHOD> <path> [body], e.g. GET /v1/schema")
  const method = m[1]!.toUpperCase()
  if (!METHODS.has(method)) return refused(`unknown method ${m[1]}; use GET, HEAD, POST, PUT, PATCH or DELETE`)
  const rawPath = m[2]!
  if (/^[a-z][a-z0-9+.-]*:/i.test(rawPath) || rawPath.startsWith("//") || rawPath.includes("\\")) {
    return refused("give a path on this connection (e.g. /v1/schema), not a URL")
  }
  if (rawPath.includes("#")) return refused("a path with a fragment (#) is ambiguous; leave it out")
  const queryAt = rawPath.indexOf("?")
  const segments = canonicalSegments(queryAt === -1 ? rawPath : rawPath.slice(0, queryAt))
  if (Either.isLeft(segments)) return refused(segments.left)
  // One value per name, as the HTTP client sends it: the path shown is the path sent.
  const query = queryAt === -1 ? "" : new URLSearchParams(Object.entries(Object.fromEntries(new URLSearchParams(rawPath.slice(queryAt + 1))))).toString()
  const body = m[3]!.trim()
  if (body.length > 0) {
    if (method === "GET" || method === "HEAD") return refused(`${method} takes no body`)
    try {
      JSON.parse(body)
    } catch (error) {
      return refused(`the body is not valid JSON (${(error as Error).message})`)
    }
  }
  return Either.right({
    method: method as Method,
    path: `${canonicalPath(segments.right)}${query.length > 0 ? `?${query}` : ""}`,
    ...(body.length > 0 ? { body } : {})
  })
}

/**
 * The statement of a parsed request: what the approval shows and what is run. `parse(format(r))`
 * is `r`.
 *
 * @category parsing
 */
/**
 * A request's body as JSON (undefined when it has none; `parse` made sure it is valid JSON).
 *
 * @category parsing
 */
export const bodyJson = (request: ConsoleRequest): unknown => (request.body === undefined ? undefined : JSON.parse(request.body))

export const format = (request: ConsoleRequest): string =>
  `${request.method} ${request.path}${request.body !== undefined ? `\n${request.body}` : ""}`

// ===== Classification =====

/** @category models */
export interface Classification {
  /** Anything but GET and HEAD, except a `POST /v1/graphql` whose body holds a valid read-only query. */
  readonly isWrite: boolean
  /** `DELETE /v1/schema/{C}` drops a collection; `DELETE /v1/batch/objects` deletes by filter. */
  readonly destructive?: "drop_table" | "delete_where"
  readonly collection?: string
}

/** The decoded segments after `/v1` of a canonical path. */
const segmentsOf = (path: string): ReadonlyArray<string> => {
  const pathname = path.split("?", 1)[0]!
  return pathname.split("/").slice(2).filter((s) => s.length > 0).map((s) => decodeURIComponent(s))
}

/**
 * Classifies a parsed (canonical) request. Route names compare case-insensitively, so that a
 * spelling the database might route the same way is classified the same way.
 *
 * @category combinators
 */
export const classify = (request: ConsoleRequest): Classification => {
  if (request.method === "GET" || request.method === "HEAD") return { isWrite: false }
  const segments = segmentsOf(request.path)
  const route = segments.map((s) => s.toLowerCase())
  if (request.method === "POST" && route.length === 1 && route[0] === "graphql" && request.body !== undefined) {
    const query = (JSON.parse(request.body) as { query?: unknown } | null)?.query
    if (typeof query === "string" && Either.isRight(GraphqlEditor.validate(query))) return { isWrite: false }
  }
  if (request.method === "DELETE" && route.length === 2 && route[0] === "schema") {
    return { isWrite: true, destructive: "drop_table", collection: segments[1]! }
  }
  if (request.method === "DELETE" && route.length === 2 && route[0] === "batch" && route[1] === "objects") {
    const body = request.body === undefined ? undefined : JSON.parse(request.body) as { match?: { class?: unknown } } | null
    const collection = body?.match?.class
    return { isWrite: true, destructive: "delete_where", ...(typeof collection === "string" ? { collection } : {}) }
  }
  return { isWrite: true }
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
 * Runs a console statement (parsed here when given as text; a parsed request is sent as it is). Any
 * HTTP status is a result (`ok` is false outside 2xx); 401 fails with `AuthenticationFailed`, 403 with
 * `PermissionDenied`.
 *
 * @category requests
 */
export const run = Effect.fnUntraced(function*(
  http: WeaviateHttp,
  statement: string | ConsoleRequest
): Effect.fn.Return<ConsoleResult, StatementRefused | AuthenticationFailed | PermissionDenied | ConnectionFailed> {
  return yield* send(http, typeof statement === "string" ? yield* parse(statement) : statement)
})

/**
 * Sends a parsed request exactly as it was classified: the canonical path, query and body.
 *
 * @category requests
 */
export const send = Effect.fnUntraced(function*(
  http: WeaviateHttp,
  request: ConsoleRequest
): Effect.fn.Return<ConsoleResult, AuthenticationFailed | PermissionDenied | ConnectionFailed> {
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
