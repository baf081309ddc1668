/**
 * The MCP endpoint as an `HttpHandler`: the protocol core of `local-mcp-endpoint.md`.
 *
 * A request goes through, in order:
 * 1. transport rules: `/mcp` only (else 404); `Host` names a loopback host and the port the
 *    connection arrived on (else 403 `forbidden_host`); a present `Origin` is allowed (else 403
 *    `forbidden_origin`); `OPTIONS` → 204 preflight; anything but `POST` → 405 `Allow: POST, OPTIONS`;
 * 2. the envelope: JSON (`-32700`; nesting beyond 64 levels `-32600`; large bodies parsed in slices),
 *    one JSON-RPC request or notification (`-32600`: batches, responses, bad members); notifications are answered 202 (only `notifications/cancelled` acts);
 *    while AI access is paused (`PauseSwitch`) everything is answered 503 `-33006`; each request with an id is
 *    reported to the `CallObserver` (activity log, clients, log line) from here to its response;
 * 3. authentication (`Authenticator`, which also takes the request from the principal's rate bucket),
 *    done from the headers before the body is read (`admit`): without a valid token at most 64 KB of
 *    the body is read, so a large body is never parsed;
 * 4. the era (docs/design.md "Decisions" 6): modern requests have their `_meta` (`-32602`, `-32022`) and headers
 *    (`-32020`) validated; legacy requests other than `initialize` need their session (`-33001`);
 * 5. the method (`-32601`, HTTP 404, also for the other era's methods) and its scopes (`-33007`);
 * 6. the handler, with `RequestContext` and `CurrentPrincipal` provided; calls that may suspend run
 *    registered in `InFlight` (cancellation, 330 s deadline, duplicate ids) and answer 503 `-33000`
 *    if the daemon shuts down first. A request with `_meta.progressToken` is answered as an event
 *    stream, progress first and the response last.
 *
 * Error bodies echo the request id (`null` only when it cannot be read; docs/design.md "Decisions" 5) and carry the
 * error's HTTP status and headers (`WWW-Authenticate`, `Retry-After`).
 *
 * Forbidden host and origin are answered `-33007` ("external access") with `data.code` naming the
 * rule. The Host check takes the bound port from the connection (`localPort`), so the handler needs
 * no reference to the transport that is built after it.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Exit from "effect/Exit"
import * as Immediate from "../Base/Immediate.ts"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { identity } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import { CallObserver } from "./CallObserver.ts"
import { ServerInstance } from "./ServerInstance.ts"
import { PauseSwitch } from "./PauseSwitch.ts"
import * as Tracing from "../Tracing/Tracing.ts"
import * as Redaction from "../Base/Redaction.ts"
import { InFlight } from "../Cancellation/InFlight.ts"
import * as JsonRpc from "../Schema/JsonRpc.ts"
import {
  InternalError,
  InvalidParams,
  InvalidRequest,
  isMcpError,
  type McpError,
  MethodNotFound,
  ParseError,
  PayloadTooLarge,
  ServerDisabled,
  ServiceUnavailable,
  toJsonRpcError
} from "../Schema/McpErrors.ts"
import * as McpWire from "../Schema/McpWire.ts"
import { Authenticator } from "../Auth/Authenticator.ts"
import { Lifecycle } from "./Lifecycle.ts"
import * as CacheHints from "./CacheHints.ts"
import * as Catalogue from "./Catalogue.ts"
import * as Discovery from "./Discovery.ts"
import * as Dispatcher from "./Dispatcher.ts"
import * as Eras from "./Eras.ts"
import * as HeaderValidation from "./HeaderValidation.ts"
import * as HttpTransport from "./HttpTransport.ts"
import * as JsonBody from "./JsonBody.ts"
import { LegacySessions } from "./LegacySessions.ts"
import { Pagination } from "./Pagination.ts"
import { CurrentPrincipal, type Principal } from "../Auth/Principal.ts"
import * as Sse from "./Sse.ts"
import * as Subscriptions from "./Subscriptions.ts"

/** @category models */
export interface Options {
  /** Browser origins allowed to call (CORS); every other present `Origin` gets 403. */
  readonly allowedOrigins: ReadonlyArray<string>
  /** Open `subscriptions/listen` streams per principal (default `MAX_LISTEN_STREAMS`). */
  readonly maxListenStreams?: number | undefined
}

/**
 * What answers the paths other than `/mcp` (the daemon's console), when provided: a request is handed
 * to it only after the endpoint's own path check has already said "not `/mcp`", so `/mcp` requests
 * do no more work for its presence. Its answers are its own (no CORS of the endpoint's origins).
 *
 * @category services
 */
export class OtherRoutes extends Context.Tag("weaviate-mcp/Mcp/OtherRoutes")<OtherRoutes, Context.Tag.Service<HttpTransport.HttpHandler>>() {}

/** Deepest JSON nesting of a request body. @category constants */
export const MAX_JSON_DEPTH = 64

/** Open `subscriptions/listen` streams per principal by default (the transport has 64 slots). @category constants */
export const MAX_LISTEN_STREAMS = 8

/**
 * Most of a body read for a request that is refused from its headers (bad token, forbidden host,
 * wrong method): enough to echo a request id or answer a notification, never a large body.
 *
 * @category constants
 */
export const REFUSED_BODY_BYTES = 64 * 1024

/** The session header of the legacy era. @category constants */
export const SESSION_HEADER = "mcp-session-id"

// ===== Transport rules =====

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(["localhost", "127.0.0.1", "[::1]"])

/**
 * Whether a `Host` header names a loopback host and the bound port (no port means 80).
 *
 * @category predicates
 */
export const isAllowedHost = (host: string | undefined, port: number): boolean => {
  if (host === undefined) return false
  const value = host.trim().toLowerCase()
  const bracket = value.lastIndexOf("]")
  const colon = value.lastIndexOf(":")
  const hasPort = colon > bracket
  const name = hasPort ? value.slice(0, colon) : value
  const portText = hasPort ? value.slice(colon + 1) : "80"
  return LOOPBACK_HOSTS.has(name) && /^[0-9]{1,5}$/.test(portText) && Number(portText) === port
}

/** Request headers a browser client may send (Mcp-Param-* names are echoed from the preflight). */
const ALLOWED_HEADERS = "authorization, content-type, accept, mcp-protocol-version, mcp-method, mcp-name, mcp-session-id, last-event-id"
const EXPOSED_HEADERS = "mcp-session-id, www-authenticate, retry-after"

const notFound = HttpTransport.full(404, "Not found: the MCP endpoint is POST /mcp", { "content-type": "text/plain" })
const methodNotAllowed = HttpTransport.full(405, "Method not allowed", { allow: "POST, OPTIONS", "content-type": "text/plain" })
const accepted = HttpTransport.full(202)
const admitOther: HttpTransport.Admission = { _tag: "Admit", value: undefined }

// ===== Bodies =====

const errorBody = (id: JsonRpc.RequestId | null, error: McpError) => ({
  jsonrpc: "2.0" as const,
  id,
  error: toJsonRpcError(error)
})

const errorResponse = (id: JsonRpc.RequestId | null, error: McpError, headers?: Readonly<Record<string, string>>): HttpTransport.HttpResponse =>
  HttpTransport.json(error.httpStatus, errorBody(id, error), headers === undefined ? error.headers ?? {} : { ...error.headers, ...headers })

const successResponse = (id: JsonRpc.RequestId, result: unknown, headers?: Readonly<Record<string, string>>): HttpTransport.HttpResponse =>
  HttpTransport.json(200, { jsonrpc: "2.0", id, result }, headers)

/**
 * The JSON text (UTF-8) of a result with members whose JSON text is known (`serialized`): the bytes
 * are spliced in rather than serialised and encoded again (the tools of `tools/list` are most of its
 * bytes). Chunks, from `{` to `}`.
 */
const splicedResult = (
  result: Readonly<Record<string, unknown>>,
  serialized: Readonly<Record<string, Uint8Array>>
): ReadonlyArray<Uint8Array> => {
  const chunks: Array<Uint8Array> = []
  let text = "{"
  let first = true
  for (const member in serialized) {
    if (!(member in result)) continue
    chunks.push(Buffer.from(`${text}${first ? "" : ","}${JSON.stringify(member)}:`), serialized[member]!)
    text = ""
    first = false
  }
  const rest: Record<string, unknown> = {}
  for (const member in result) {
    if (!(member in serialized)) rest[member] = result[member]
  }
  const tail = JSON.stringify(rest)
  chunks.push(Buffer.from(`${text}${tail === "{}" ? "" : `${first ? "" : ","}${tail.slice(1, -1)}`}}`))
  return chunks
}

const JSON_CONTENT: Readonly<Record<string, string>> = { "content-type": "application/json" }
const RESPONSE_END = Buffer.from("}")

/**
 * A success whose result is JSON bytes already: the response is written as chunks around it, never
 * concatenated (that was a 30 KB allocation and copy per `tools/list`).
 */
const bytesResponse = (id: JsonRpc.RequestId, result: ReadonlyArray<Uint8Array>): HttpTransport.HttpResponse =>
  HttpTransport.full(200, [Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`), ...result, RESPONSE_END], JSON_CONTENT)

/** The id of a body we did not decode (the transport-level refusals). */
const idOfBody = (body: string): JsonRpc.RequestId | null => {
  if (body.length === 0) return null
  try {
    return JsonRpc.readableId(JSON.parse(body))
  } catch {
    return null
  }
}

const forbidden = (code: "forbidden_host" | "forbidden_origin", id: JsonRpc.RequestId | null): HttpTransport.HttpResponse =>
  HttpTransport.json(403, {
    jsonrpc: "2.0",
    id,
    error: {
      code: -33007,
      message: code === "forbidden_host"
        ? "Forbidden: the Host header must name localhost, 127.0.0.1 or [::1] with the server's port"
        : "Forbidden: this Origin is not allowed",
      data: { code }
    }
  })

/** Messages that leave the process are redacted: a catalogue error may quote a driver message. */
const redacted = (error: McpError): McpError => {
  const message = Redaction.global.redact(error.message)
  if (message === error.message) return error
  const Constructor = error.constructor as new(fields: { message: string; data?: unknown; headers?: Record<string, string> }) => McpError
  return new Constructor({
    message,
    ...(error.data === undefined ? {} : { data: error.data }),
    ...(error.headers === undefined ? {} : { headers: error.headers })
  })
}

const internal = () => new InternalError({ message: "Internal error" })

const isObject = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The W3C trace context of `_meta`, passed through unchanged; `undefined` when absent. */
const traceOf = (meta: Readonly<Record<string, unknown>> | undefined): Readonly<Record<string, unknown>> | undefined => {
  if (meta === undefined) return undefined
  let trace: Record<string, unknown> | undefined
  for (const key of McpWire.TRACE_KEYS) {
    if (key in meta) (trace ??= {})[key] = meta[key]
  }
  return trace
}

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/**
 * Handler spans join the client's trace when it sent a valid `traceparent` (and the driver's requests
 * carry it on, with its `tracestate`).
 */
const withTraceParent = (trace: Readonly<Record<string, unknown>> | undefined) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  const match = typeof trace?.traceparent === "string" ? TRACEPARENT.exec(trace.traceparent) : null
  if (match === null) return effect
  const parented = Effect.withParentSpan(effect, Tracer.externalSpan({
    traceId: match[1]!,
    spanId: match[2]!,
    sampled: (Number.parseInt(match[3]!, 16) & 1) === 1
  }))
  return typeof trace?.tracestate === "string" ? Effect.locally(parented, Tracing.currentTraceState, trace.tracestate) : parented
}

const decodeProgressToken = Schema.decodeUnknownOption(McpWire.ProgressToken)
const decodeCancelled = Schema.decodeUnknownOption(McpWire.CancelledParams)
const decodeInitialize = Schema.decodeUnknownEither(McpWire.InitializeParams)
const decodeSetLevel = Schema.decodeUnknownEither(McpWire.SetLevelParams)
const decodeListen = Schema.decodeUnknownEither(McpWire.ListenParams)

/** What the handler of one request knows after the era checks. */
interface Scope {
  readonly request: HttpTransport.HttpRequest
  readonly id: JsonRpc.RequestId
  readonly method: string
  readonly params: Readonly<Record<string, unknown>>
  readonly meta: Readonly<Record<string, unknown>> | undefined
  readonly principal: Principal
  readonly era: Catalogue.Era
  readonly protocolVersion: string
  readonly clientCapabilities: Readonly<Record<string, unknown>>
  readonly clientInfo: Option.Option<Catalogue.ClientInfo>
}

/** What the envelope and authentication established, before the era's checks. */
type Received = Omit<Scope, "era" | "protocolVersion" | "clientCapabilities" | "clientInfo">

/**
 * A request's scope in its era. Built member by member: the object spreads it replaces took ~15% of
 * the endpoint's time on `tools/list` (V8 copies spread sources of varying shapes on its slow path).
 */
const inEra = (
  received: Received,
  era: Catalogue.Era,
  declared: Pick<Scope, "protocolVersion" | "clientCapabilities" | "clientInfo">
): Scope => ({
  request: received.request,
  id: received.id,
  method: received.method,
  params: received.params,
  meta: received.meta,
  principal: received.principal,
  era,
  protocolVersion: declared.protocolVersion,
  clientCapabilities: declared.clientCapabilities,
  clientInfo: declared.clientInfo
})

// ===== Constructor =====

// ===== The endpoint, in steps =====

/** What the steps of the endpoint share: the services and settings `make` gathered once. */
interface Deps {
  readonly instanceId: string
  readonly authenticator: Authenticator["Type"]
  readonly inFlight: InFlight["Type"]
  readonly sessions: LegacySessions["Type"]
  readonly lifecycle: Lifecycle["Type"]
  readonly resources: Catalogue.Resources["Type"]
  readonly observer: CallObserver["Type"]
  readonly pause: PauseSwitch["Type"]
  readonly traced: boolean
  readonly dispatcher: ReturnType<typeof Dispatcher.make>
  readonly allowedOrigins: ReadonlySet<string>
  readonly listenSlots: ReturnType<typeof Subscriptions.slots>
}

const shortMeta = { [McpWire.META_SERVER_INFO]: Discovery.serverInfo }

/** Results per era: a reply shaped for the request's era, and the kept result texts of cached replies. */
const makeResults = () => {
  const metaWith = (payloadMeta: unknown, trace: Readonly<Record<string, unknown>> | undefined, base: Readonly<Record<string, unknown>> | undefined) =>
    isObject(payloadMeta) || trace !== undefined || base !== undefined ? { ...(isObject(payloadMeta) ? payloadMeta : {}), ...base, ...trace } : undefined

  const shape = (scope: Scope, reply: Dispatcher.Reply, trace: Readonly<Record<string, unknown>> | undefined): unknown => {
    if (reply._tag === "InputRequired") {
      return {
        resultType: "input_required",
        inputRequests: reply.inputRequests,
        requestState: reply.requestState,
        _meta: metaWith(undefined, trace, shortMeta)
      }
    }
    if (scope.era === "legacy") {
      const meta = metaWith(reply.payload._meta, trace, undefined)
      return meta === undefined ? reply.payload : Object.assign({}, reply.payload, { _meta: meta })
    }
    // Built with Object.assign, not a spread: V8 gave every spread copy of a payload a map of its own
    // (three new maps per call, each making the sites that read the result megamorphic).
    const result: Record<string, unknown> = Object.assign({}, reply.payload)
    result.resultType = "complete"
    if (reply.cache !== undefined) Object.assign(result, reply.cache)
    result._meta = metaWith(reply.payload._meta, trace, shortMeta)
    return result
  }

  // A reply's result text depends only on the reply and the era when no trace context is echoed: it is
  // kept per reply (the dispatcher keeps its `tools/list` replies), so such a request serialises its id
  // and nothing else.
  const resultTexts: Record<Catalogue.Era, WeakMap<Dispatcher.Reply, ReadonlyArray<Uint8Array>>> = {
    modern: new WeakMap(),
    legacy: new WeakMap()
  }
  const resultText = (
    scope: Scope,
    reply: Extract<Dispatcher.Reply, { _tag: "Result" }>,
    serialized: Readonly<Record<string, Uint8Array>>,
    trace: Readonly<Record<string, unknown>> | undefined
  ): ReadonlyArray<Uint8Array> => {
    const kept = trace === undefined ? resultTexts[scope.era] : undefined
    const known = kept?.get(reply)
    if (known !== undefined) return known
    const text = splicedResult(shape(scope, reply, trace) as Readonly<Record<string, unknown>>, serialized)
    kept?.set(reply, text)
    return text
  }

  return { shape, resultText }
}

const unavailable = () => new ServiceUnavailable({ message: "Service unavailable: the server is shutting down" })

/** Running handlers: failures as JSON-RPC errors, event streams, and one prepared call with its context. */
const makeRunning = (deps: Deps, results: ReturnType<typeof makeResults>) => {
  const { inFlight, lifecycle, traced } = deps
  const { resultText, shape } = results
  /** Failures become JSON-RPC errors; defects are logged and answered -32603; interruption stays interruption. */
  const settle = <A>(
    id: JsonRpc.RequestId,
    effect: Effect.Effect<A, unknown>,
    onSuccess: (value: A) => HttpTransport.HttpResponse
  ): Effect.Effect<HttpTransport.HttpResponse> =>
    Effect.matchCauseEffect(effect, {
      onSuccess: (value) => Effect.succeed(onSuccess(value)),
      onFailure: (cause) => {
        const failure = Cause.failureOption(cause)
        if (Option.isSome(failure) && isMcpError(failure.value)) return Effect.succeed(errorResponse(id, redacted(failure.value)))
        if (Cause.isInterruptedOnly(cause)) return Effect.interrupt
        return Effect.as(Effect.logWarning("request failed", cause), errorResponse(id, internal()))
      }
    })

  const toFinalFrame = <A>(id: JsonRpc.RequestId, exit: Either.Either<A, unknown>, onSuccess: (value: A) => unknown): string =>
    Either.match(exit, {
      onRight: (value) => Sse.frame({ jsonrpc: "2.0", id, result: onSuccess(value) }),
      onLeft: (error) => Sse.frame(errorBody(id, isMcpError(error) ? redacted(error) : internal()))
    })

  /**
   * An event-stream response: `work` runs in the stream's scope (a client that goes away interrupts
   * it) and sends frames; its outcome is the last frame.
   */
  // A generator function made once (a map per call otherwise: docs/design.md, "No V8 map made per call").
  const frames = Effect.fnUntraced(function*<A>(
    id: JsonRpc.RequestId,
    work: (send: (frame: string) => Effect.Effect<void>) => Effect.Effect<A, unknown>,
    onSuccess: (value: A) => unknown
  ) {
    const mailbox = yield* Mailbox.make<string>()
    const send = (frame: string) => Effect.asVoid(mailbox.offer(frame))
    yield* work(send).pipe(
      Effect.either,
      Effect.catchAllDefect((defect) =>
        Effect.as(Effect.logWarning("streamed request failed", defect), Either.left(internal()) as Either.Either<A, unknown>)
      ),
      Effect.flatMap((exit) => mailbox.offer(toFinalFrame(id, exit, onSuccess))),
      Effect.ensuring(mailbox.end),
      Effect.forkScoped
    )
    return Mailbox.toStream(mailbox)
  })

  const eventStream = <A>(
    id: JsonRpc.RequestId,
    work: (send: (frame: string) => Effect.Effect<void>) => Effect.Effect<A, unknown>,
    onSuccess: (value: A) => unknown
  ): HttpTransport.HttpResponse => ({ _tag: "Stream", status: 200, headers: Sse.headers, body: Stream.unwrapScoped(frames(id, work, onSuccess)) })


  const dispatch = (scope: Scope, prepared: Dispatcher.Prepared): Effect.Effect<HttpTransport.HttpResponse> => {
    const { id, meta, params, principal } = scope
    const trace = traceOf(meta)
    const progressToken = meta === undefined || !("progressToken" in meta) ? Option.none() : decodeProgressToken(meta.progressToken)
    const context = (progress: Catalogue.RequestContext["Type"]["progress"]) =>
      Catalogue.RequestContext.of({
        era: scope.era,
        protocolVersion: scope.protocolVersion,
        method: scope.method,
        requestId: id,
        clientCapabilities: scope.clientCapabilities,
        clientInfo: scope.clientInfo,
        requestState: typeof params.requestState === "string" ? Option.some(params.requestState) : Option.none(),
        inputResponses: isObject(params.inputResponses) ? Option.some(params.inputResponses) : Option.none(),
        progress
      })
    const run = (progress: Catalogue.RequestContext["Type"]["progress"]) => {
      const services = Context.make(Catalogue.RequestContext, context(progress)).pipe(Context.add(CurrentPrincipal, principal))
      const work = prepared.run.pipe(traced ? requestSpan(scope) : identity, withTraceParent(trace))
      if (!prepared.suspends) return Effect.provide(work, services)
      // The work runs on this request's fiber with the request's services; a stop is answered here.
      // Shutdown stops these through `InFlight` too (see `make`): answered 503 `-33000`.
      return Effect.suspend(() =>
        lifecycle.isShuttingDown()
          ? Effect.fail(unavailable())
          : inFlight.run({ principalId: principal.id, requestId: id }, work, { context: services })
      )
    }
    const toResult = (reply: Dispatcher.Reply): Effect.Effect<unknown, InternalError> =>
      reply._tag === "InputRequired" && scope.era === "legacy"
        // Handlers see the era: an input_required in the legacy era is a catalogue bug.
        ? Effect.zipRight(Effect.logWarning(`input_required answered to a legacy ${scope.method}`), Effect.fail(internal()))
        : Effect.succeed(shape(scope, reply, trace))
    if (Option.isNone(progressToken)) {
      const respond = (reply: Dispatcher.Reply) =>
        reply._tag === "Result" && reply.serialized !== undefined
          ? Effect.succeed(bytesResponse(id, resultText(scope, reply, reply.serialized, trace)))
          : Effect.map(toResult(reply), (result) => successResponse(id, result))
      // A reply known already (the static lists) needs no handler context, and no fiber when its
      // response is known at once too.
      if (prepared.reply !== undefined) {
        const known = respond(prepared.reply)
        if (Immediate.succeeded(known)) return Exit.succeed(known.value)
      }
      const replied = prepared.reply === undefined ? run(() => Effect.void) : Effect.succeed(prepared.reply)
      return settle(id, Effect.flatMap(replied, respond), (response) => response)
    }
    return Effect.succeed(eventStream(
      id,
      (send) => Effect.flatMap(run(Sse.progressReporter(progressToken.value, send, trace)), toResult),
      (result) => result
    ))
  }

  return { settle, eventStream, dispatch }
}

/** The methods of each era: modern (with `subscriptions/listen` and `server/discover`) and legacy (with sessions). */
const makeMethods = (deps: Deps, running: ReturnType<typeof makeRunning>) => {
  const { dispatcher, inFlight, instanceId, lifecycle, listenSlots, resources, sessions } = deps
  const { dispatch, eventStream } = running
  const discoverResult = {
    ...Discovery.discoverPayload(instanceId),
    resultType: "complete",
    ...CacheHints.table["server/discover"],
    _meta: { [McpWire.META_SERVER_INFO]: Discovery.fullServerInfo(instanceId) }
  }

  const listen = (scope: Scope): Effect.Effect<HttpTransport.HttpResponse> => {
    const decoded = decodeListen(scope.params)
    if (Either.isLeft(decoded)) return Effect.succeed(errorResponse(scope.id, new InvalidParams({ message: "Invalid params for subscriptions/listen: notifications is required" })))
    const { id, principal } = scope
    // One token cannot hold every connection slot with streams.
    const release = listenSlots.acquire(principal.id)
    if (release === undefined) return Effect.succeed(errorResponse(id, Subscriptions.tooManyStreams(listenSlots.max)))
    const agreed = Subscriptions.agree(decoded.right.notifications)
    const endMeta = { [McpWire.META_SUBSCRIPTION_ID]: id, [McpWire.META_SERVER_INFO]: Discovery.serverInfo }
    return Effect.succeed(eventStream(
      id,
      (send) =>
        inFlight.run(
          { principalId: principal.id, requestId: id },
          Stream.runForEach(Subscriptions.frames({ subscriptionId: id, agreed, resources }), send),
          {
            deadline: false,
            context: Context.make(Catalogue.RequestContext, Catalogue.RequestContext.of({
              era: "modern",
              protocolVersion: scope.protocolVersion,
              method: scope.method,
              requestId: id,
              clientCapabilities: scope.clientCapabilities,
              clientInfo: scope.clientInfo,
              requestState: Option.none(),
              inputResponses: Option.none(),
              progress: () => Effect.void
            })).pipe(Context.add(CurrentPrincipal, principal))
          }
        ).pipe(
          // The graceful end of a subscription is its result, sent when the server tears it down.
          (work) => Effect.raceFirst(work, lifecycle.shutdown),
          Effect.ensuring(Effect.sync(release))
        ),
      () => ({ resultType: "complete", _meta: endMeta })
    ))
  }

  const modern = (scope: Received): Effect.Effect<HttpTransport.HttpResponse> => {
    const { id, meta, method, params, request } = scope
    const versionCopy = HeaderValidation.checkVersionCopy(request.headers, meta?.[McpWire.META_PROTOCOL_VERSION])
    if (Either.isLeft(versionCopy)) return Effect.succeed(errorResponse(id, versionCopy.left))
    const validated = Eras.validateModernMeta(meta)
    if (Either.isLeft(validated)) return Effect.succeed(errorResponse(id, validated.left))
    const declared = validated.right
    const headers = HeaderValidation.validate(request.headers, { method, protocolVersion: declared.protocolVersion, params })
    if (Either.isLeft(headers)) return Effect.succeed(errorResponse(id, headers.left))
    const full = inEra(scope, "modern", declared)
    if (Dispatcher.METHODS.has(method)) {
      const prepared = dispatcher.prepare(full)
      return Either.isLeft(prepared) ? Effect.succeed(errorResponse(id, prepared.left)) : dispatch(full, prepared.right)
    }
    if (method === "server/discover") return Effect.succeed(successResponse(id, discoverResult))
    if (method === "subscriptions/listen") return listen(full)
    return Effect.succeed(errorResponse(id, methodNotFound(method)))
  }

  const initialize = (scope: Received) => {
    const decoded = decodeInitialize(scope.params)
    if (Either.isLeft(decoded)) {
      return Effect.succeed(errorResponse(scope.id, new InvalidParams({ message: "Invalid params for initialize: protocolVersion is required" })))
    }
    const { capabilities, clientInfo, protocolVersion } = decoded.right
    if (!Eras.LEGACY_VERSIONS.includes(protocolVersion)) {
      return Effect.succeed(errorResponse(scope.id, Eras.unsupported(protocolVersion, Eras.LEGACY_VERSIONS)))
    }
    return Effect.map(
      sessions.create({
        principalId: scope.principal.id,
        protocolVersion,
        clientCapabilities: capabilities ?? {},
        clientInfo: Option.fromNullable(clientInfo)
      }),
      (session) =>
        successResponse(scope.id, Discovery.initializeResult(protocolVersion, instanceId), { [SESSION_HEADER]: session.id })
    )
  }

  const legacy = (scope: Received): Effect.Effect<HttpTransport.HttpResponse> => {
    const { id, method, params, principal, request } = scope
    if (method === "initialize") return initialize(scope)
    const known = Dispatcher.METHODS.has(method) || method === "ping" || method === "logging/setLevel"
    if (!known) return Effect.succeed(errorResponse(id, methodNotFound(method)))
    const sessionId = request.headers[SESSION_HEADER]
    if (sessionId === undefined) {
      return Effect.succeed(errorResponse(id, new InvalidRequest({ message: "Invalid request: the Mcp-Session-Id header is required (send initialize first)" })))
    }
    return sessions.get(sessionId, principal.id).pipe(
      Effect.matchEffect({
        onFailure: (error) => Effect.succeed(errorResponse(id, error)),
        onSuccess: (session) => {
          if (method === "ping") return Effect.succeed(successResponse(id, {}))
          if (method === "logging/setLevel") {
            return Effect.succeed(Either.isLeft(decodeSetLevel(params))
              ? errorResponse(id, new InvalidParams({ message: "Invalid params for logging/setLevel: level must be a logging level" }))
              : successResponse(id, {}))
          }
          const full = inEra(scope, "legacy", session)
          const prepared = dispatcher.prepare(full)
          return Either.isLeft(prepared) ? Effect.succeed(errorResponse(id, prepared.left)) : dispatch(full, prepared.right)
        }
      })
    )
  }

  return { modern, legacy }
}

/** A POST with its headers admitted: the body parsed, the message routed to its era (or to a notification). */
const makeIntake = (deps: Deps, methods: ReturnType<typeof makeMethods>) => {
  const { authenticator, inFlight, lifecycle, observer, pause } = deps
  const { legacy, modern } = methods

  type AuthenticationError = Effect.Effect.Error<ReturnType<typeof authenticator.authenticate>>

  /** Authentication from the headers, as an `Either`; an outcome known at once stays an `Exit` (no fiber). */
  const authenticate = (head: HttpTransport.RequestHead): Effect.Effect<Either.Either<Principal, AuthenticationError>> => {
    const outcome = authenticator.authenticate({ authorization: head.headers.authorization, remoteAddress: head.remoteAddress })
    if (Exit.isExit(outcome)) {
      const exit = outcome as Exit.Exit<Principal, AuthenticationError>
      if (Exit.isSuccess(exit)) return Exit.succeed(Either.right(exit.value))
      const failure = Cause.failureOption(exit.cause)
      if (Option.isSome(failure)) return Exit.succeed(Either.left(failure.value))
    }
    return Effect.either(outcome)
  }

  /** The outcome of `admit`: authentication runs once per request, from the headers, before the body is read. */
  const authenticated = (request: HttpTransport.HttpRequest): Effect.Effect<Principal, AuthenticationError> =>
    Either.isEither(request.admitted)
      ? request.admitted as Either.Either<Principal, AuthenticationError>
      : authenticator.authenticate({ authorization: request.headers.authorization, remoteAddress: request.remoteAddress })

  // ----- Notifications -----

  const notification = (request: HttpTransport.HttpRequest, message: JsonRpc.Message): Effect.Effect<HttpTransport.HttpResponse> => {
    if (message.method !== "notifications/cancelled") return Effect.succeed(accepted)
    const params = decodeCancelled(message.params)
    if (Option.isNone(params)) return Effect.succeed(accepted)
    // Only the principal that sent the request may cancel it; any failure still answers 202.
    return authenticated(request).pipe(
      Effect.flatMap((principal) =>
        inFlight.cancel({ principalId: principal.id, requestId: params.value.requestId }, params.value.reason)
      ),
      Effect.ignore,
      Effect.as(accepted)
    )
  }

  // ----- POST /mcp -----

  const post = (request: HttpTransport.HttpRequest): Effect.Effect<HttpTransport.HttpResponse> => {
    if (lifecycle.isShuttingDown()) {
      return Effect.succeed(errorResponse(idOfBody(request.body), unavailable(), { connection: "close" }))
    }
    // A small body is parsed at once; a large one in slices, so that other clients are answered meanwhile.
    const small = JsonBody.parseSmall(request.body, MAX_JSON_DEPTH)
    if (small !== undefined) return parsed(request, small)
    return Effect.flatMap(
      Effect.match(JsonBody.parse(request.body, MAX_JSON_DEPTH), { onFailure: (failure) => failure, onSuccess: (value) => ({ value }) }),
      (outcome) => parsed(request, outcome)
    )
  }

  const parsed = (
    request: HttpTransport.HttpRequest,
    outcome: { readonly value: unknown } | JsonBody.Failure
  ): Effect.Effect<HttpTransport.HttpResponse> => {
    if (!("value" in outcome)) {
      return Effect.succeed(errorResponse(
        null,
        outcome._tag === "TooDeep"
          ? new InvalidRequest({ message: `Invalid request: the JSON nests deeper than ${outcome.max} levels` })
          : new ParseError({ message: "Parse error: the body is not JSON" })
      ))
    }
    const body = outcome.value
    if (Array.isArray(body)) {
      return Effect.succeed(errorResponse(null, new InvalidRequest({ message: "Invalid request: batches are not supported" })))
    }
    if (JsonRpc.isResponse(body)) {
      return Effect.succeed(errorResponse(JsonRpc.readableId(body), new InvalidRequest({ message: "Invalid request: the server does not take JSON-RPC responses" })))
    }
    const message = JsonRpc.asMessage(body)
    if (message === undefined) {
      return Effect.succeed(errorResponse(JsonRpc.readableId(body), new InvalidRequest({ message: "Invalid request: not a JSON-RPC 2.0 request" })))
    }
    if (message.id === undefined) return pause.isPaused() ? Effect.succeed(errorResponse(null, paused())) : notification(request, message)
    const id = message.id
    const params = message.params ?? {}
    const meta = isObject(params._meta) ? params._meta : undefined
    const observed = observer.begin({ request, method: message.method, params, meta })
    if (pause.isPaused()) {
      const refused = Effect.succeed(errorResponse(id, paused()))
      return observed === undefined ? refused : observed.end(refused)
    }
    const onFailure = (error: AuthenticationError) => Effect.succeed(errorResponse(id, error))
    const onSuccess = (principal: Principal) => {
      observed?.authenticated(principal)
      const scope = { request, id, method: message.method, params, meta, principal }
      if (Eras.isModern(meta, request.headers["mcp-protocol-version"])) {
        return Eras.LEGACY_ONLY.has(message.method) ? Effect.succeed(errorResponse(id, methodNotFound(message.method))) : modern(scope)
      }
      return Eras.MODERN_ONLY.has(message.method) ? Effect.succeed(errorResponse(id, methodNotFound(message.method))) : legacy(scope)
    }
    // Authenticated at admission (the usual case): answered without a fiber when the reply is known at once.
    const admitted = request.admitted
    const response = Either.isEither(admitted)
      ? Either.isRight(admitted) ? onSuccess(admitted.right as Principal) : onFailure(admitted.left as AuthenticationError)
      : Effect.matchEffect(authenticated(request), { onFailure, onSuccess })
    return observed === undefined ? response : observed.end(response)
  }

  return { post, authenticate }
}

/** The endpoint's front: answers from the head alone (path, Host, Origin, method), CORS, admission. */
const makeFront = (deps: Deps, intake: ReturnType<typeof makeIntake>, others: Context.Tag.Service<OtherRoutes> | undefined) => {
  const { allowedOrigins } = deps
  const { authenticate, post } = intake

  /** The answer a request gets from its head alone (path, Host, Origin, method), if any. */
  const headAnswer = (head: HttpTransport.RequestHead, id: () => JsonRpc.RequestId | null): HttpTransport.HttpResponse | undefined => {
    if (head.path !== "/mcp") return notFound
    if (!isAllowedHost(head.headers.host, head.localPort)) return forbidden("forbidden_host", id())
    const origin = head.headers.origin
    if (origin !== undefined && !allowedOrigins.has(origin)) return forbidden("forbidden_origin", id())
    if (head.method === "OPTIONS") return preflight(origin, head.headers["access-control-request-headers"])
    if (head.method !== "POST") return methodNotAllowed
    return undefined
  }

  const withCors = (origin: string | undefined, response: HttpTransport.HttpResponse): HttpTransport.HttpResponse =>
    origin === undefined || !allowedOrigins.has(origin) ? response : {
      ...response,
      headers: HttpTransport.withHeaders(response.headers, { "access-control-allow-origin": origin, "access-control-expose-headers": EXPOSED_HEADERS, vary: "Origin" })
    }

  /**
   * Before the body is read: a request refused from its head reads at most `REFUSED_BODY_BYTES` (for
   * the id it echoes); a POST is authenticated here, and without a valid token the same cap holds, so
   * a large body is answered with the challenge and never parsed.
   */
  const admit = (head: HttpTransport.RequestHead): Effect.Effect<HttpTransport.Admission> => {
    const refused = headAnswer(head, () => null)
    if (refused !== undefined) {
      // Another path: the other routes admit it themselves.
      if (refused === notFound && others !== undefined) return others.admit === undefined ? Effect.succeed(admitOther) : others.admit(head)
      return Effect.succeed({ _tag: "Admit", value: undefined, bodyCap: { bytes: REFUSED_BODY_BYTES, response: refused } })
    }
    const toAdmission = (outcome: Either.Either<Principal, unknown>): HttpTransport.Admission =>
      Either.isRight(outcome)
        ? { _tag: "Admit", value: outcome }
        : {
          _tag: "Admit",
          value: outcome,
          bodyCap: { bytes: REFUSED_BODY_BYTES, response: withCors(head.headers.origin, errorResponse(null, outcome.left as McpError)) }
        }
    // Known at once: the transport reads the admission without a fiber.
    return Immediate.map(authenticate(head), toAdmission)
  }

  const handle = (request: HttpTransport.HttpRequest): Effect.Effect<HttpTransport.HttpResponse> => {
    // A request `admit` authenticated passed its head's checks there; any other (refused from its
    // head, or from a transport without `admit`) is checked here, with the id of its body.
    const refused = Either.isEither(request.admitted) ? undefined : headAnswer(request, () => idOfBody(request.body))
    if (refused !== undefined) return refused === notFound && others !== undefined ? others.handle(request) : Effect.succeed(refused)
    const origin = request.headers.origin
    if (origin === undefined) return post(request)
    return Immediate.map(post(request), (response) => withCors(origin, response))
  }

  /** Whether the other routes answer this request (only asked on the transport's own refusals). */
  const isOther = (head: HttpTransport.RequestHead) => others !== undefined && head.path !== "/mcp"

  return HttpTransport.HttpHandler.of({
    handle,
    admit,
    decorate: (head, response) =>
      isOther(head) ? (others!.decorate === undefined ? response : others!.decorate(head, response)) : withCors(head.headers.origin, response),
    // Errors carry the CORS headers too: a browser client must be able to read them.
    tooLarge: (head) =>
      isOther(head)
        ? others!.tooLarge(head)
        : withCors(head.headers.origin, errorResponse(null, new PayloadTooLarge({ message: "Payload too large: the body cap is 10 MB" })))
  })
}

/**
 * @category constructors
 */
export const make = Effect.fn("Endpoint.make")(function*(options: Options) {
  const resources = yield* Catalogue.Resources
  const deps: Deps = {
    instanceId: (yield* ServerInstance).instanceId,
    authenticator: yield* Authenticator,
    inFlight: yield* InFlight,
    sessions: yield* LegacySessions,
    lifecycle: yield* Lifecycle,
    resources,
    observer: yield* CallObserver,
    pause: yield* PauseSwitch,
    traced: yield* Tracing.TracingEnabled,
    dispatcher: Dispatcher.make({
      tools: yield* Catalogue.Tools,
      resources,
      prompts: yield* Catalogue.Prompts,
      completions: yield* Catalogue.Completions,
      pagination: yield* Pagination
    }),
    allowedOrigins: new Set(options.allowedOrigins),
    listenSlots: Subscriptions.slots(options.maxListenStreams ?? MAX_LISTEN_STREAMS)
  }
  // When shutdown begins, every call in flight is answered 503 `-33000` (its work stopped first).
  yield* Effect.forkScoped(Effect.zipRight(deps.lifecycle.shutdown, deps.inFlight.stopAll(unavailable)))
  const running = makeRunning(deps, makeResults())
  const others = yield* Effect.serviceOption(OtherRoutes)
  return makeFront(deps, makeIntake(deps, makeMethods(deps, running)), Option.getOrUndefined(others))
})

/** The server span of a request (exported only when tracing is on), named and annotated per the MCP semantic conventions. */
const requestSpan = (scope: Scope) => {
  const tool = scope.method === "tools/call" && typeof scope.params.name === "string" ? scope.params.name : undefined
  return <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.withSpan(effect, tool === undefined ? scope.method : `${scope.method} ${tool}`, {
      kind: "server",
      captureStackTrace: false,
      attributes: {
        "mcp.method.name": scope.method,
        "mcp.protocol.version": scope.protocolVersion,
        "jsonrpc.request.id": String(scope.id),
        "network.transport": "tcp",
        "network.protocol.name": "http",
        ...(tool === undefined ? {} : { "gen_ai.tool.name": tool, "gen_ai.operation.name": "execute_tool" })
      }
    })
}

const paused = () => new ServerDisabled({ message: "Server disabled: the user has paused AI access" })

const methodNotFound = (method: string) => new MethodNotFound({ message: `Method not found: ${method}` })

const preflight = (origin: string | undefined, requested: string | undefined): HttpTransport.HttpResponse =>
  origin === undefined
    ? HttpTransport.full(204, "", { allow: "POST, OPTIONS" })
    : HttpTransport.full(204, "", {
      allow: "POST, OPTIONS",
      "access-control-allow-origin": origin,
      "access-control-allow-methods": "POST, OPTIONS",
      "access-control-allow-headers": requested === undefined ? ALLOWED_HEADERS : `${ALLOWED_HEADERS}, ${requested}`,
      "access-control-expose-headers": EXPOSED_HEADERS,
      "access-control-max-age": "600",
      vary: "Origin"
    })

/**
 * The endpoint; needs the catalogue, authentication, in-flight tracking and legacy sessions.
 *
 * @category layers
 */
export const layer = (options: Options) =>
  Layer.scoped(HttpTransport.HttpHandler, make(options)).pipe(Layer.provide(Pagination.layer))
