/**
 * HTTP to one Weaviate instance: the SSL mode decides the scheme and how the server certificate is
 * checked, the auth method decides whether `Authorization: Bearer` is sent, and every failure is
 * mapped to the contract's messages. Each connection owns its own undici `Agent` (TLS options are
 * per connection), used directly: interrupting a call aborts the underlying HTTP request.
 *
 * SSL modes:
 * | mode | scheme | certificate check |
 * |---|---|---|
 * | `disabled` | http | none |
 * | `preferred` | https | encrypted, any certificate accepted (self-signed included) |
 * | `required` | https | full verification against the system roots and the host name; a self-signed certificate is refused |
 * | `required-skip-verify` | https | encrypted, any certificate accepted |
 * | `verify-ca` | https | chain verified against the CA file (system roots without one); host name not checked |
 * | `verify-identity` | https | chain verified against the CA file (system roots without one) and the host name checked |
 * Skip TLS Verification accepts any certificate under every https mode.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as NodeEvents from "node:events"
import * as NodeFs from "node:fs/promises"
import * as NodeNet from "node:net"
import * as NodeTls from "node:tls"
import { type Connection, DEFAULT_REQUEST_TIMEOUT_SECONDS, isOidc, secretLabel, secretStdinFlag } from "../Schema/Connection.ts"
import * as OidcSignIn from "./OidcSignIn.ts"
import * as Undici from "./UndiciAgent.ts"
import {
  AuthenticationFailed,
  ConnectionFailed,
  DatabaseRefused,
  PermissionDenied,
  type RequestError,
  UnexpectedResponse
} from "./DriverError.ts"
import * as Redaction from "../Base/Redaction.ts"
import * as Tracing from "../Tracing/Tracing.ts"

// ===== Models =====

/** @category models */
export type Method = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS"

/** @category models */
export interface Request {
  readonly method: Method
  /** Absolute path on the instance, starting with `/` (e.g. `/v1/objects`). */
  readonly path: string
  readonly query?: Readonly<Record<string, string | undefined>>
  /** A JSON value (serialised) or raw text (sent as is, as JSON). */
  readonly body?: { readonly json: unknown } | { readonly text: string }
  /** Give up after this long (milliseconds); default from `Timeouts` for health checks and schema reads. */
  readonly timeoutMs?: number
  /**
   * A 2xx answer's body as the server sent it: not scrubbed, not parsed (`json` is `undefined`). For
   * rows read to be written elsewhere as they are (an export: redaction would rewrite a row that only
   * looks like a secret), and for large answers of which the caller reads only a part (a batch's
   * answer echoes every object it wrote: scanning and parsing it whole cost the import a fifth of
   * its CPU). The caller scrubs what it shows as a message. Other statuses are scrubbed and parsed
   * as always.
   */
  readonly raw?: boolean
}

/**
 * Default time-outs of the calls that have no time-out of their own: a hung database must not hold
 * a caller (and its connection slot on the endpoint) forever. A time-out fails with
 * `ConnectionFailed` whose `code` is `TIMEOUT`. Provide another value to change them (`0` = none).
 *
 * @category config
 */
export class Timeouts extends Context.Reference<Timeouts>()("weaviate-mcp/WeaviateHttp/Timeouts", {
  defaultValue: () => ({
    /** `GET /v1/meta`, the health check. */
    healthMs: 10_000,
    /** `GET /v1/schema…`: schema reads, which completions and resource reads also use. */
    schemaMs: 15_000
  })
}) {}

/** The code of `ConnectionFailed` for a call that got no answer in time. @category constants */
export const TIMEOUT_CODE = "TIMEOUT"

/**
 * A request's own time-out on Effect's `Clock` (health checks, schema reads, an explicit `timeoutMs`);
 * 0 for the others, which are bounded by the connection's request time-out (`requestTimeoutMs`).
 */
const clockTimeout = (req: Request, timeouts: Timeouts["Type"]): number => {
  if (req.timeoutMs !== undefined) return req.timeoutMs
  if (req.method === "GET" && req.path === "/v1/meta") return timeouts.healthMs
  if (req.method === "GET" && (req.path === "/v1/schema" || req.path.startsWith("/v1/schema/"))) return timeouts.schemaMs
  return 0
}

/**
 * The connection's request time-out: a node that died holds a request until Weaviate notices; this
 * bounds every request without a time-out of its own. A timer on the request itself (no timed race,
 * so a tool call keeps its one fiber).
 */
const requestTimeoutMs = (connection: Connection) => (connection.requestTimeoutSeconds ?? DEFAULT_REQUEST_TIMEOUT_SECONDS) * 1000

const timedOut = (connection: Connection, req: Request, timeoutMs: number) =>
  new ConnectionFailed({
    reason: `${connection.host}:${connection.port} did not answer ${req.method} ${req.path} within ${timeoutMs / 1000} s (time-out)`,
    code: TIMEOUT_CODE
  })

/** A response with any status (401 is already turned into `AuthenticationFailed`, 403 into `PermissionDenied`). @category models */
export interface Response {
  readonly status: number
  readonly contentType: string | undefined
  readonly text: string
  /** The parsed body when it is JSON, else `undefined`. */
  readonly json: unknown
}

/** @category models */
export interface GraphqlError {
  readonly message: string
  readonly path?: ReadonlyArray<string | number> | null
  readonly locations?: ReadonlyArray<{ readonly line: number; readonly column: number }>
}

/** @category models */
export interface GraphqlResponse {
  readonly data?: Record<string, unknown> | null
  readonly errors?: ReadonlyArray<GraphqlError>
}

/**
 * HTTP to one instance.
 *
 * @category models
 */
export interface WeaviateHttp {
  readonly connection: Connection
  readonly baseUrl: string
  /**
   * Any status is returned; 401 fails with `AuthenticationFailed`, 403 with `PermissionDenied` (the key
   * was accepted, its user may not do this), transport errors with `ConnectionFailed`.
   */
  readonly request: (request: Request) => Effect.Effect<Response, AuthenticationFailed | PermissionDenied | ConnectionFailed>
  /** Like `request`, but a status other than 2xx fails with `DatabaseRefused` carrying the server's message. */
  readonly requestOk: (request: Request) => Effect.Effect<Response, RequestError>
  /** `POST /v1/graphql`; HTTP errors fail, GraphQL `errors` are returned with the data. */
  readonly graphql: (query: string) => Effect.Effect<GraphqlResponse, RequestError>
  /** Replaces the API key in a text (servers may echo it). */
  readonly scrub: (text: string) => string
  /** Under an OIDC auth method: who the connection signs in as and until when (`undefined` before the first sign-in). */
  readonly identity: () => OidcSignIn.Identity | undefined
}

// ===== Constructors =====

/**
 * The API key to send: `undefined` under Auth Method `None`. Under `API Key` the key comes from the
 * settings or from the named environment variable; a missing key is an authentication failure.
 *
 * @category constructors
 */
export const resolveApiKey = (
  connection: Connection,
  env: NodeJS.ProcessEnv = process.env
): Effect.Effect<Redacted.Redacted<string> | undefined, AuthenticationFailed> => {
  if (connection.authMethod !== "apiKey") return Effect.succeed(undefined)
  if (connection.apiKey !== undefined && Redacted.value(connection.apiKey).length > 0) {
    return Effect.succeed(connection.apiKey)
  }
  if (connection.apiKeyEnv !== undefined) {
    const value = env[connection.apiKeyEnv]
    return value !== undefined && value.length > 0
      ? Effect.succeed(Redacted.make(value))
      : Effect.fail(new AuthenticationFailed({ reason: `Auth Method is API Key but the environment variable ${connection.apiKeyEnv} is not set` }))
  }
  if (connection.keychain?.includes("apiKey") === true) return Effect.fail(missingFromKeychain(connection, "apiKey"))
  return Effect.fail(new AuthenticationFailed({ reason: "Auth Method is API Key but no API key is configured" }))
}

/**
 * A secret the file says is in the OS keychain, which did not give it (no keychain answers here, or
 * the home was moved from another machine): it must be entered again.
 *
 * @category constructors
 */
export const missingFromKeychain = (connection: Pick<Connection, "name">, field: keyof typeof secretLabel) =>
  new AuthenticationFailed({
    reason: `the ${secretLabel[field]} of ${connection.name} is kept in the OS keychain, which does not have it here; ` +
      `enter it again: weaviate-mcp connections update ${connection.name} ${secretStdinFlag[field]}`
  })

/**
 * TLS options of the identity provider's agent: the connection's CA file and skip-verify apply to it
 * as to Weaviate; under SSL Mode Disabled an https provider is verified against the system roots (and
 * the CA file when one is given).
 *
 * @category constructors
 */
export const providerTlsOptions = (connection: Connection): Effect.Effect<TlsOptions, ConnectionFailed> =>
  Effect.gen(function*(): Effect.fn.Return<TlsOptions, ConnectionFailed> {
    const mode = connection.sslMode
    if (connection.skipTlsVerify || mode === "preferred" || mode === "required-skip-verify") return { rejectUnauthorized: false }
    const ca = connection.caFile !== undefined && mode !== "required" ? yield* readCa(connection.caFile) : undefined
    return {
      rejectUnauthorized: true,
      ...(ca !== undefined ? { ca } : {}),
      ...(mode === "verify-ca" ? { checkServerIdentity: () => undefined } : {})
    }
  })

/** `openid-client`'s fetch through an undici agent: the provider gets the connection's TLS settings. */
const fetchThrough = (undici: Undici.Undici, agent: Undici.Agent): OidcSignIn.Fetch => async (url, init) => {
  const target = new URL(url)
  const headers: Record<string, string> = { ...(init.headers as Record<string, string>) }
  const raw = init.body as unknown
  const body = raw === undefined || raw === null ? null : typeof raw === "string" ? raw : raw instanceof URLSearchParams ? raw.toString() : String(raw)
  if (raw instanceof URLSearchParams && !Object.keys(headers).some((h) => h.toLowerCase() === "content-type")) {
    headers["content-type"] = "application/x-www-form-urlencoded;charset=UTF-8"
  }
  const answer = await undici.request(agent, {
    origin: target.origin,
    path: `${target.pathname}${target.search}`,
    method: (init.method ?? "GET") as Method,
    headers,
    body,
    ...(init.signal !== undefined && init.signal !== null ? { signal: init.signal } : {})
  })
  const text = await answer.body.text()
  const responseHeaders = new Headers()
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined) continue
    for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(name, v)
  }
  const empty = answer.statusCode === 204 || answer.statusCode === 304
  return new Response(empty ? null : text, { status: answer.statusCode, headers: responseHeaders })
}

/** Requests that only read, and so may be sent again after a 401 with a renewed token. GraphQL here only reads. */
const isRead = (req: Request) => req.method === "GET" || req.method === "HEAD" || (req.method === "POST" && req.path === "/v1/graphql")

/** Weaviate's answer to `GET /v1/.well-known/openid-configuration`: where its identity provider is. */
const weaviateOidc = (
  connection: Connection,
  send: (req: Request, traceState: string | undefined, bearer: string | undefined) => Effect.Effect<Response, AuthenticationFailed | PermissionDenied | ConnectionFailed>
): Effect.Effect<OidcSignIn.WeaviateOidc, AuthenticationFailed | ConnectionFailed> =>
  Effect.flatMap(
    send({ method: "GET", path: "/v1/.well-known/openid-configuration" }, undefined, undefined).pipe(
      // The discovery document is public: a refusal of it is a sign-in failure, not a missing permission.
      Effect.catchTag("PermissionDenied", (denied) => Effect.fail(new AuthenticationFailed({ reason: denied.message, status: 403 })))
    ),
    (response) => {
    const body = response.json as { href?: unknown; clientId?: unknown; scopes?: unknown } | undefined
    if (response.status === 404) {
      return Effect.fail(new AuthenticationFailed({
        reason: `${connection.host}:${connection.port} does not use OIDC (GET /v1/.well-known/openid-configuration answered 404); ` +
          "choose Auth Method API Key or None, or give the provider with --oidc-issuer and --oidc-client-id"
      }))
    }
    if (response.status !== 200 || typeof body !== "object" || body === null || typeof body.href !== "string") {
      return Effect.fail(new AuthenticationFailed({ reason: `Weaviate's OIDC discovery (GET /v1/.well-known/openid-configuration) answered HTTP ${response.status}: ${truncate(response.text)}` }))
    }
    return Effect.succeed({
      href: body.href,
      clientId: typeof body.clientId === "string" ? body.clientId : "",
      scopes: Array.isArray(body.scopes) ? body.scopes.filter((s): s is string => typeof s === "string") : []
    })
  })

/** @category models */
export interface TlsOptions {
  readonly rejectUnauthorized?: boolean
  readonly ca?: string
  readonly checkServerIdentity?: () => undefined
}

/**
 * TLS options of the connection's undici agent (see the table at the top of the module).
 *
 * @category constructors
 */
export const tlsOptions = (
  connection: Connection
): Effect.Effect<TlsOptions, ConnectionFailed> =>
  Effect.gen(function*(): Effect.fn.Return<TlsOptions, ConnectionFailed> {
    const mode = connection.sslMode
    if (mode === "disabled") return {}
    const acceptAny = connection.skipTlsVerify || mode === "preferred" || mode === "required-skip-verify"
    if (acceptAny) return { rejectUnauthorized: false }
    const usesCa = mode === "verify-ca" || mode === "verify-identity"
    const ca = usesCa && connection.caFile !== undefined ? yield* readCa(connection.caFile) : undefined
    return {
      rejectUnauthorized: true,
      ...(ca !== undefined ? { ca } : {}),
      // Verify CA checks the chain only; the host name is checked by Required and Verify Identity.
      ...(mode === "verify-ca" ? { checkServerIdentity: () => undefined } : {})
    }
  })

const readCa = (file: string) =>
  Effect.tryPromise({
    try: () => NodeFs.readFile(file, "utf8"),
    catch: (cause) =>
      new ConnectionFailed({ reason: `cannot read the CA file ${file}: ${causeMessage(cause)}`, code: "CA_FILE" })
  })

/**
 * Builds the HTTP access of one connection. The agent is destroyed when the scope closes.
 *
 * @category constructors
 */
export const make = (
  connection: Connection,
  options: {
    readonly env?: NodeJS.ProcessEnv
    /** `oidcToken`: the provider rotated the refresh token; the new pair should be saved. */
    readonly onTokensRotated?: (tokens: { readonly accessToken: string; readonly refreshToken: string }) => Effect.Effect<void>
  } = {}
): Effect.Effect<WeaviateHttp, AuthenticationFailed | ConnectionFailed, Scope.Scope> =>
  Effect.gen(function*() {
    const apiKey = yield* resolveApiKey(connection, options.env)
    const tls = yield* tlsOptions(connection)
    const timeouts = yield* Timeouts
    const undici = yield* Effect.promise(Undici.load)
    const agent = yield* Effect.acquireRelease(
      Effect.sync(() => new undici.Agent({ connect: { ...tls, timeout: 10_000 } })),
      (agent) => Effect.promise(() => agent.destroy().catch(() => undefined))
    )
    const baseUrl = connection.baseUrl
    const secret = apiKey === undefined ? undefined : Redacted.value(apiKey)
    // The key joins the process-wide redaction where it is resolved, so no surface that quotes a
    // server text (tools, resources, prompts, the CLI, logs) can carry it out.
    if (secret !== undefined) Redaction.global.register(secret)
    const scrub = Redaction.global.redact

    const send = makeSend({ undici, agent, baseUrl, connection, scrub, timeouts })

    const tokens = isOidc(connection.authMethod) ? yield* oidcTokens(connection, undici, send, options.onTokensRotated) : undefined

    /**
     * Under OIDC: a token valid now; a 401 renews it once and sends a read once more. A write is
     * never sent twice: its 401 fails (the driver then drops the session, so the next call signs in anew).
     */
    const signedIn = (req: Request, traceState: string | undefined, t: OidcSignIn.Tokens) =>
      Effect.flatMap(t.bearer, (bearer) =>
        isRead(req)
          ? Effect.catchIf(send(req, traceState, bearer), (e): e is AuthenticationFailed => e._tag === "AuthenticationFailed" && e.status === 401, () =>
            Effect.flatMap(t.renew(bearer), (renewed) => send(req, traceState, renewed)))
          : send(req, traceState, bearer))

    const request = (req: Request): Effect.Effect<Response, AuthenticationFailed | PermissionDenied | ConnectionFailed> =>
      Effect.flatMap(FiberRef.get(Tracing.currentTraceState), (traceState) =>
        tokens === undefined ? send(req, traceState, secret) : signedIn(req, traceState, tokens))

    const requestOk = (req: Request): Effect.Effect<Response, RequestError> =>
      Effect.flatMap(request(req), (response) =>
        response.status >= 200 && response.status < 300
          ? Effect.succeed(response)
          : Effect.fail(new DatabaseRefused({ status: response.status, detail: scrub(serverMessage(response)) })))

    const graphql = (query: string): Effect.Effect<GraphqlResponse, RequestError> =>
      Effect.flatMap(requestOk({ method: "POST", path: "/v1/graphql", body: { json: { query } } }), (response) => {
        const body = response.json
        if (typeof body !== "object" || body === null || Array.isArray(body)) {
          return Effect.fail(new UnexpectedResponse({ detail: `GraphQL answered with ${truncate(scrub(response.text))}` }))
        }
        const { data, errors } = body as { data?: unknown; errors?: unknown }
        const result: { data?: Record<string, unknown> | null; errors?: ReadonlyArray<GraphqlError> } = {}
        if (typeof data === "object") result.data = data as Record<string, unknown> | null
        if (Array.isArray(errors)) {
          result.errors = errors.map((e): GraphqlError => {
            const item = (typeof e === "object" && e !== null ? e : { message: String(e) }) as Record<string, unknown>
            return {
              message: scrub(typeof item.message === "string" ? item.message : JSON.stringify(item)),
              ...(Array.isArray(item.path) ? { path: item.path as Array<string | number> } : {}),
              ...(Array.isArray(item.locations) ? { locations: item.locations as Array<{ line: number; column: number }> } : {})
            }
          })
        }
        return Effect.succeed(result)
      })

    return { connection, baseUrl, request, requestOk, graphql, scrub, identity: () => tokens?.identity() }
  })

/** The OIDC sign-in of a connection, its identity provider reached with the connection's TLS settings. */
const oidcTokens = (
  connection: Connection,
  undici: Undici.Undici,
  send: (req: Request, traceState: string | undefined, bearer: string | undefined) => Effect.Effect<Response, AuthenticationFailed | PermissionDenied | ConnectionFailed>,
  onRotated?: (tokens: { readonly accessToken: string; readonly refreshToken: string }) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    const tls = yield* providerTlsOptions(connection)
    const agent = yield* Effect.acquireRelease(
      Effect.sync(() => new undici.Agent({ connect: { ...tls, timeout: 10_000 } })),
      (agent) => Effect.promise(() => agent.destroy().catch(() => undefined))
    )
    for (const field of ["oidcClientSecret", "oidcPassword", "oidcAccessToken", "oidcRefreshToken"] as const) {
      if (connection.keychain?.includes(field) === true && connection[field] === undefined) return yield* missingFromKeychain(connection, field)
    }
    return yield* OidcSignIn.make(connection, weaviateOidc(connection, send), fetchThrough(undici, agent), onRotated)
  })

/** What sending a request needs from its connection. */
interface SendContext {
  readonly undici: Undici.Undici
  readonly agent: Undici.Agent
  readonly baseUrl: string
  readonly connection: Connection
  readonly scrub: (text: string) => string
  readonly timeouts: Timeouts["Type"]
}

/** Sending one request of a connection: the exchange, its span when traced, its time-out, auth failures. */
const makeSend = ({ agent, baseUrl, connection, scrub, timeouts, undici }: SendContext) => {
  /**
   * One exchange with undici directly: the request and its body are sent as they are, the answer
   * read whole. Interruption aborts it (the signal of `Effect.async`). (@effect/platform's
   * HttpClient around the same agent cost 4x the CPU per request: request objects copied per
   * setter, a span and header attributes per request, a finalization registry per response.)
   */
  const exchange = (req: Request, headers: Record<string, string>, body: string | undefined, boundMs: number) =>
    Effect.async<Response, ConnectionFailed>((resume) => {
      let status: number | undefined
      // undici takes an EventEmitter as its abort signal (`signal: AbortSignal | EventEmitter`). Node 20
      // gives every AbortSignal maps of its own (three new maps per signal: each one slows every site
      // that reads a signal, and lives until a full collection), so neither this exchange nor
      // Effect.async (a register function without its signal parameter) makes one.
      const signal = new NodeEvents.EventEmitter()
      let stopped = false
      const abort = () => signal.emit("abort")
      let expired = false
      const timer = boundMs > 0 ? setTimeout(() => ((expired = true), abort()), boundMs) : undefined
      const done = (effect: Effect.Effect<Response, ConnectionFailed>) => {
        if (timer !== undefined) clearTimeout(timer)
        if (!stopped) resume(effect)
      }
      undici.request(agent, { origin: baseUrl, path: pathWithQuery(req), method: req.method, headers, body: body ?? null, signal })
        .then((answer) => {
          status = answer.statusCode
          const contentType = answer.headers["content-type"]
          return answer.body.text().then((raw) => {
            const ok = answer.statusCode >= 200 && answer.statusCode < 300
            if (req.raw === true && ok) {
              return done(Effect.succeed({ status: answer.statusCode, contentType: Array.isArray(contentType) ? contentType.join(", ") : contentType, text: raw, json: undefined }))
            }
            // Servers may echo a rejected key: it never leaves this module (but for `raw`, see there).
            const text = scrub(raw)
            // Go's TLS server answers a plain-HTTP request with this 400: the SSL mode is wrong.
            if (answer.statusCode === 400 && PLAIN_TO_TLS.test(text)) {
              return done(Effect.fail(new ConnectionFailed({ reason: `${connection.host}:${connection.port} ${TLS_PORT_HINT}`, code: "HTTP_TO_HTTPS" })))
            }
            done(Effect.succeed({
              status: answer.statusCode,
              contentType: Array.isArray(contentType) ? contentType.join(", ") : contentType,
              text,
              json: parseJson(text)
            }))
          })
        })
        .catch((cause: unknown) => {
          if (expired) return done(Effect.fail(timedOut(connection, req, boundMs)))
          const failure = transportFailure(connection, { cause, status }, scrub)
          // A connection closed without an answer is a TLS symptom only when the port does speak TLS
          // (a node that died closes connections too).
          done(
            connection.sslMode === "disabled" && status === undefined && CLOSED.has(failure.code ?? "")
              ? Effect.flatMap(speaksTls(connection.host, connection.port), (tls) =>
                Effect.fail(tls ? new ConnectionFailed({ reason: `${failure.reason}; ${TLS_PORT_HINT}`, code: failure.code! }) : failure))
              : Effect.fail(failure)
          )
        })
      // Interrupted: the exchange is aborted and its answer, if one still comes, is dropped.
      return Effect.sync(() => {
        stopped = true
        if (timer !== undefined) clearTimeout(timer)
        abort()
      })
    })

  /**
   * `tracestate` is the client's, passed on. When the call is traced (an exporter, or a client
   * that sent `traceparent`), the request is a client span whose id goes out in `traceparent` (and
   * `b3`), as `http.client <METHOD>` with the HTTP semantic-convention attributes.
   */
  const send = (req: Request, traceState: string | undefined, secret: string | undefined): Effect.Effect<Response, AuthenticationFailed | PermissionDenied | ConnectionFailed> => {
    const headers: Record<string, string> = { accept: "application/json" }
    if (secret !== undefined) headers.authorization = `Bearer ${secret}`
    if (traceState !== undefined) headers.tracestate = traceState
    const body = req.body === undefined ? undefined : "json" in req.body ? JSON.stringify(req.body.json) : req.body.text
    if (body !== undefined) headers["content-type"] = "application/json"
    const timeoutMs = clockTimeout(req, timeouts)
    const bound = timeoutMs > 0 ? 0 : requestTimeoutMs(connection)
    const traced = Effect.withFiberRuntime<Response, ConnectionFailed>((fiber) =>
      Tracing.isTraced(fiber)
        ? Effect.useSpan(`http.client ${req.method}`, { kind: "client", captureStackTrace: false }, (span) => {
          const url = new URL(pathWithQuery(req), baseUrl)
          span.attribute("http.request.method", req.method)
          span.attribute("server.address", url.origin)
          if (url.port !== "") span.attribute("server.port", Number(url.port))
          span.attribute("url.full", url.toString())
          span.attribute("url.path", url.pathname)
          span.attribute("url.scheme", url.protocol.slice(0, -1))
          for (const name in headers) {
            span.attribute(`http.request.header.${name}`, name === "authorization" ? "<redacted>" : headers[name]!)
          }
          headers.traceparent = `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`
          headers.b3 = `${span.traceId}-${span.spanId}-${span.sampled ? "1" : "0"}${span.parent._tag === "Some" ? `-${span.parent.value.spanId}` : ""}`
          return Effect.tap(exchange(req, headers, body, bound), (response) =>
            Effect.sync(() => {
              span.attribute("http.response.status_code", response.status)
              if (response.contentType !== undefined) span.attribute("http.response.header.content-type", response.contentType)
            }))
        })
        : exchange(req, headers, body, bound)
    )
    return (timeoutMs > 0
      ? Effect.timeoutFail(traced, {
        duration: timeoutMs,
        onTimeout: () => timedOut(connection, req, timeoutMs)
      })
      : traced).pipe(
      Effect.flatMap((response) =>
        response.status === 401 || response.status === 403
          ? Effect.fail(authFailure(connection, response, scrub))
          : Effect.succeed(response)
      )
    )
  }
  return send
}

// ===== Error mapping =====

/** The request's path with its query string (parameters without a value left out). */
const pathWithQuery = (req: Request): string => {
  if (req.query === undefined) return req.path
  const params = new URLSearchParams()
  for (const name in req.query) {
    const value = req.query[name]
    if (value !== undefined) params.append(name, value)
  }
  const query = params.toString()
  return query === "" ? req.path : `${req.path}${req.path.includes("?") ? "&" : "?"}${query}`
}

const CLOSED = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE"])

const PLAIN_TO_TLS = /client sent an http request to an https server/i

const TLS_PORT_HINT = "speaks HTTPS (TLS) on this port: the server uses HTTPS, choose an SSL Mode other than Disabled"

/**
 * Whether host:port completes a TLS handshake (any certificate), within 2 s: the evidence that a
 * connection closed without an answer was a TLS server refusing plain HTTP, and not, say, a node that
 * died with the request.
 */
const speaksTls = (host: string, port: number): Effect.Effect<boolean> =>
  Effect.async<boolean>((resume) => {
    const socket = NodeTls.connect({ host, port, rejectUnauthorized: false, ...(NodeNet.isIP(host) === 0 ? { servername: host } : {}) })
    let finished = false
    const done = (tls: boolean) => {
      if (finished) return
      finished = true
      clearTimeout(timer)
      socket.destroy()
      resume(Effect.succeed(tls))
    }
    const timer = setTimeout(() => done(false), 2_000)
    socket.once("secureConnect", () => done(true))
    socket.once("error", () => done(false))
    socket.once("close", () => done(false))
    return Effect.sync(() => {
      clearTimeout(timer)
      socket.destroy()
    })
  })

const parseJson = (text: string): unknown => {
  if (text.length === 0) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const truncate = (text: string, max = 500) => (text.length > max ? `${text.slice(0, max)}…` : text)

/**
 * The server's own message from either of Weaviate's error bodies (`{"error":[{"message"}]}` or
 * `{"code","message"}`), or the raw text.
 *
 * @category combinators
 */
export const serverMessage = (response: Pick<Response, "status" | "text" | "json">): string => {
  const body = response.json ?? parseJson(response.text.trim())
  if (typeof body === "object" && body !== null) {
    const record = body as Record<string, unknown>
    if (Array.isArray(record.error)) {
      const messages = record.error
        .map((e) => (typeof e === "object" && e !== null ? (e as Record<string, unknown>).message : undefined))
        .filter((m): m is string => typeof m === "string")
      if (messages.length > 0) return messages.join("; ")
    }
    if (typeof record.message === "string") return record.message
  }
  const text = response.text.trim()
  if (text.length > 0) return truncate(text)
  return response.status === 404 ? "not found" : `HTTP ${response.status} without a body`
}

const authFailure = (connection: Connection, response: Response, scrub: (s: string) => string) => {
  const detail = scrub(serverMessage(response))
  if (response.status === 403) return PermissionDenied.fromWeaviate(detail)
  const reason = isOidc(connection.authMethod)
    ? `Weaviate rejected the OIDC token (HTTP 401: ${detail})`
    : connection.authMethod === "none"
    ? `the node requires an API key but Auth Method is None; set Auth Method to API Key (HTTP 401: ${detail})`
    : `the API key was rejected (HTTP 401: ${detail})`
  return new AuthenticationFailed({ reason, status: response.status })
}

const causeMessage = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)

/** The innermost error that carries a system or TLS error code. */
const findCode = (cause: unknown, depth = 0): { code: string; message: string } | undefined => {
  if (depth > 8 || typeof cause !== "object" || cause === null) return undefined
  const record = cause as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown }
  const inner = findCode(record.cause, depth + 1) ??
    (Array.isArray(record.errors) ? record.errors.map((e) => findCode(e, depth + 1)).find((x) => x !== undefined) : undefined)
  if (inner !== undefined) return inner
  return typeof record.code === "string"
    ? { code: record.code, message: typeof record.message === "string" ? record.message : record.code }
    : undefined
}

const untrustedCertificate = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_GET_ISSUER_CERT",
  "CERT_UNTRUSTED"
])

const selfSignedAdvice =
  "use SSL Mode Required (skip verify) or turn on Skip TLS Verification for a self-signed certificate, or give its CA with Verify CA"

/**
 * Maps an HTTP client failure to `ConnectionFailed` with a reason a person can act on.
 *
 * @category combinators
 */
export const transportFailure = (
  connection: Connection,
  error: { readonly cause: unknown; readonly status?: number | undefined },
  scrub: (s: string) => string = (s) => s
): ConnectionFailed => {
  const where = `${connection.host}:${connection.port}`
  const found = findCode(error.cause)
  const code = found?.code
  // One line: OpenSSL's messages carry newlines, and a command line prints the first line of an error.
  const detail = scrub(found?.message ?? causeMessage(error.cause)).replace(/\s*\n\s*/g, " ").replace(/:\s*$/, "")
  let reason: string
  if (code !== undefined && untrustedCertificate.has(code)) {
    reason = `the server certificate of ${where} is not trusted (${detail}); ${selfSignedAdvice}`
  } else if (code === "ERR_TLS_CERT_ALTNAME_INVALID") {
    reason = `the server certificate does not match the host name ${connection.host} (${detail}); ` +
      "connect with a host name the certificate names, use Verify CA, or turn on Skip TLS Verification"
  } else if (code === "CERT_HAS_EXPIRED" || code === "CERT_NOT_YET_VALID") {
    reason = `the server certificate of ${where} is not valid now (${detail})`
  } else if (code === "ECONNREFUSED") {
    reason = `nothing accepts connections on ${where} (connection refused)`
  } else if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
    reason = `the host ${connection.host} cannot be resolved (${detail})`
  } else if (code === "EPROTO" || code === "ERR_SSL_WRONG_VERSION_NUMBER" || /wrong version number|packet length too long/i.test(detail)) {
    reason = `TLS handshake with ${where} failed: the server speaks plain HTTP on this port, not HTTPS; ` +
      "connect with --ssl-mode disabled (SSL Mode Disabled), or use the server's HTTPS port"
  } else if (code === "UND_ERR_CONNECT_TIMEOUT" || code === "ETIMEDOUT") {
    reason = `connecting to ${where} timed out`
  } else if (error.status !== undefined && (code === "UND_ERR_SOCKET" || code === "ECONNRESET" || code === "EPIPE")) {
    // The status line and headers arrived in plain HTTP, so the port does speak it: no HTTPS hint.
    reason = `${where} closed the connection in the middle of its answer (HTTP ${error.status}; ${detail})`
  } else if (code === "UND_ERR_SOCKET" || code === "ECONNRESET" || code === "EPIPE") {
    // No TLS hint here: a node that died closes connections too (see `speaksTls`).
    reason = `${where} closed the connection (${detail})`
  } else {
    reason = `${where}: ${detail}`
  }
  return new ConnectionFailed({ reason, ...(code !== undefined ? { code } : {}) })
}
