/**
 * The HTTP transport of the local endpoint: a `node:http` server bound to 127.0.0.1 whose requests
 * are handled by an Effect `HttpHandler`.
 *
 * Why not `@effect/platform`'s HttpServer: measured on this workload it reaches ≈ 0.13× bare
 * `node:http` throughput, and the target is ≥ 0.6× (docs/benchmarks.md). Here node parses HTTP, the
 * body is read straight from the socket with a hard cap, and the handler's effect runs on a fiber of
 * its own only when it needs one (see `respond` in `make`).
 *
 * The transport owns the limits that live at the socket: body cap (413 as a real response),
 * request-header size and time-out, concurrent connections, idle time-out, client disconnect
 * (interrupts the request fiber) and shutdown (every request fiber still running is tracked in a
 * FiberSet and interrupted, so a SIGINT never waits for open streams). Shutdown begins the `Lifecycle`
 * the handler reads, so the same handler runs behind other transports (`McpHttpApp`).
 *
 * Against hostile local callers (any process can reach 127.0.0.1):
 * - headers must complete within `headersTimeoutMs` (node answers 408);
 * - a body that stops arriving is answered 408 after `idleTimeoutMs` of silence, and a connection
 *   that sends nothing is closed after it;
 * - at the connection limit a connection without a request in progress (never used, or an idle
 *   keep-alive one) is recycled for the newcomer, oldest first; when every slot serves a request
 *   the newcomer gets a real `503` (`-33000`, `Retry-After`) instead of a reset;
 * - the handler's `admit` sees the headers before the body is read, and may refuse at once or cap
 *   the body it is willing to read (authentication happens there, so a request without a valid token
 *   never has a large body parsed);
 * - a request with more than one `Host` header is refused with 400.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"
import * as NodeHttp from "node:http"
import { StringDecoder } from "node:string_decoder"
import { Lifecycle } from "./Lifecycle.ts"
import type * as NodeNet from "node:net"

// ===== Models =====

/**
 * A request as the handler sees it: headers lower-cased, the body fully read as UTF-8.
 *
 * @category models
 */
export interface HttpRequest {
  readonly method: string
  /** Path without the query string. */
  readonly path: string
  readonly url: string
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: string
  readonly remoteAddress: string
  /** The local port the connection arrived on: the bound port (the handler is built before it is known). */
  readonly localPort: number
  /** What the handler's `admit` returned for this request (`undefined` without `admit`). */
  readonly admitted: unknown
}

/**
 * A response: a complete body (text, or bytes already encoded as UTF-8, whole or as chunks written in
 * order), or a stream of text chunks (SSE).
 *
 * @category models
 */
export type HttpResponse =
  | {
    readonly _tag: "Full"
    readonly status: number
    readonly headers: Readonly<Record<string, string>>
    readonly body: string | Uint8Array | ReadonlyArray<Uint8Array>
    /**
     * The value whose JSON text the body is, when it was made from one (`json`): an observer reads
     * the answer from it, never by searching the text. `undefined` for any other body.
     */
    readonly json?: unknown
  }
  | {
    readonly _tag: "Stream"
    readonly status: number
    readonly headers: Readonly<Record<string, string>>
    readonly body: Stream.Stream<string>
  }

/** @category constructors */
export const full = (status: number, body: string | Uint8Array | ReadonlyArray<Uint8Array> = "", headers: Readonly<Record<string, string>> = {}): HttpResponse => ({
  _tag: "Full",
  status,
  headers,
  body,
  // Present on every complete response, so that they all share one shape.
  json: undefined
})

/** @category constructors */
export const json = (status: number, value: unknown, headers: Readonly<Record<string, string>> = {}): HttpResponse => ({
  _tag: "Full",
  status,
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(value),
  json: value
})

/** A request before its body is read. @category models */
export type RequestHead = Omit<HttpRequest, "body" | "admitted">

/**
 * What the handler decides from the headers alone: refuse at once (the body is never read and the
 * connection is closed), or go on, with a value handed to `handle` as `admitted` and optionally a
 * smaller body cap whose excess is answered with `response` (for requests that will be refused
 * anyway, so that their body is not read beyond what the refusal needs).
 *
 * @category models
 */
export type Admission =
  | { readonly _tag: "Refuse"; readonly response: HttpResponse }
  | {
    readonly _tag: "Admit"
    readonly value: unknown
    readonly bodyCap?: { readonly bytes: number; readonly response: HttpResponse } | undefined
  }

/**
 * What answers requests. The handler must not fail; every failure is already a response.
 *
 * @category services
 */
export class HttpHandler extends Context.Tag("weaviate-mcp/HttpHandler")<HttpHandler, {
  readonly handle: (request: HttpRequest) => Effect.Effect<HttpResponse>
  /** The response to a body above the cap, sent before the body is read (no reset). */
  readonly tooLarge: (request: RequestHead) => HttpResponse
  /** Runs on the headers before the body is read. */
  readonly admit?: ((request: RequestHead) => Effect.Effect<Admission>) | undefined
  /** Adds what every answer to this request needs (e.g. CORS headers) to the transport's own refusals. */
  readonly decorate?: ((request: RequestHead, response: HttpResponse) => HttpResponse) | undefined
}>() {}

/**
 * Limits enforced at the socket.
 *
 * @category models
 */
export interface Limits {
  readonly maxBodyBytes: number
  readonly maxHeaderBytes: number
  readonly maxConnections: number
  /** Silence allowed before a request's headers complete, and (in other phases) before anything more arrives. */
  readonly idleTimeoutMs: number
  /** Time allowed for a request's headers to arrive completely. */
  readonly headersTimeoutMs: number
  /** How long shutdown waits for handlers to answer before it cuts connections. */
  readonly shutdownGraceMs: number
  /**
   * How long a connection must have been open (never used) or idle (keep-alive) before its slot may be
   * given to a newcomer: a client that has just connected, or just got its answer, is usually sending
   * its request right now, and cutting it would reset a legitimate request.
   */
  readonly recycleGraceMs: number
  /** The clock the recycling grace is measured with (injectable for tests). */
  readonly now: () => number
}

/** The contract's limits. @category constants */
export const defaultLimits: Limits = {
  maxBodyBytes: 10 * 1024 * 1024,
  maxHeaderBytes: 16 * 1024,
  maxConnections: 64,
  idleTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  shutdownGraceMs: 300,
  recycleGraceMs: 1_000,
  now: () => performance.now()
}

/**
 * Where and how to listen. `port: "default-or-free"` tries the default port and falls back to a
 * free one when it is taken; a number insists on it (0 = any free port).
 *
 * @category models
 */
export interface ListenOptions {
  readonly host?: string
  readonly port: number | { readonly preferred: number }
  readonly limits?: Partial<Limits>
}

/**
 * The address actually bound.
 *
 * @category services
 */
export class BoundAddress extends Context.Tag("weaviate-mcp/BoundAddress")<BoundAddress, {
  readonly host: string
  readonly port: number
  readonly url: string
}>() {}

/**
 * The port could not be bound.
 *
 * @category errors
 */
export class ListenError extends Schema.TaggedError<ListenError>()("ListenError", {
  host: Schema.String,
  port: Schema.Number,
  reason: Schema.String
}) {
  override get message() {
    return this.reason === "EADDRINUSE"
      ? `Port ${this.port} on ${this.host} is already in use (choose another with --port, or --port 0 for any free port)`
      : `Cannot listen on ${this.host}:${this.port}: ${this.reason}`
  }
}

// ===== Internal =====

const listenOn = (server: NodeHttp.Server, host: string, port: number) =>
  Effect.async<number, ListenError>((resume) => {
    const onError = (error: NodeJS.ErrnoException) => {
      server.off("listening", onListening)
      resume(Effect.fail(new ListenError({ host, port, reason: error.code ?? error.message })))
    }
    const onListening = () => {
      server.off("error", onError)
      resume(Effect.succeed((server.address() as NodeNet.AddressInfo).port))
    }
    server.once("error", onError)
    server.once("listening", onListening)
    server.listen({ host, port, exclusive: true })
  })

const lowerHeaders = (incoming: NodeHttp.IncomingHttpHeaders): Record<string, string | undefined> => {
  const out: Record<string, string | undefined> = {}
  for (const key in incoming) {
    const value = incoming[key]
    out[key] = Array.isArray(value) ? value.join(", ") : value
  }
  return out
}

/** How long an answer sent before its body was read waits for the client to stop sending. */
const LINGER_MS = 2_000

/**
 * After an answer sent before the body was read (a refusal, a 413): keeps reading and discarding what
 * the client is still sending, and keeps the connection open meanwhile, so that the client reads the
 * answer (closing with unread data makes TCP send a reset, and the client sees "connection reset"
 * instead of the 401 or 413). Bounded: past `maxBytes` more, or `LINGER_MS`, the connection is cut;
 * drained in time, it stays usable for the next request.
 */
const linger = (req: NodeHttp.IncomingMessage, maxBytes: number) => {
  if (req.complete || req.socket.destroyed) return
  let seen = 0
  const timer = setTimeout(() => req.socket.destroy(), LINGER_MS)
  req.socket.once("close", () => clearTimeout(timer))
  req.on("data", (chunk: Buffer) => {
    seen += chunk.length
    if (seen > maxBytes) req.socket.destroy()
  })
  req.resume()
}

/**
 * Reads the body up to `max` bytes with plain stream callbacks: `onBody(undefined)` when the cap was
 * exceeded (the rest is drained so that the 413 can still be delivered on this connection). Neither
 * callback is called when the client goes away first.
 */
const readBody = (
  req: NodeHttp.IncomingMessage,
  max: number,
  idleMs: number,
  onBody: (body: string | undefined) => void,
  onError: (error: Error) => void,
  onIdle: () => void
) => {
  // Decoded chunk by chunk as it arrives: a 10 MB body is not decoded in one block of the event loop.
  const decoder = new StringDecoder("utf8")
  const parts: Array<string> = []
  let size = 0
  // Silence while the body is due is idle time like any other: answered 408, not held for node's
  // whole-request time-out.
  const idle = setTimeout(() => {
    finish()
    onIdle()
  }, idleMs)
  idle.unref()
  const finish = () => {
    clearTimeout(idle)
    req.off("data", onData)
    req.off("end", onEnd)
    req.off("error", onFailure)
  }
  const onData = (chunk: Buffer) => {
    idle.refresh()
    size += chunk.length
    if (size > max) {
      finish()
      linger(req, max)
      onBody(undefined)
      return
    }
    parts.push(decoder.write(chunk))
  }
  const onEnd = () => {
    finish()
    const tail = decoder.end()
    if (tail.length > 0) parts.push(tail)
    onBody(parts.length === 1 ? parts[0]! : parts.join(""))
  }
  const onFailure = (error: Error) => {
    finish()
    onError(error)
  }
  req.on("data", onData)
  req.on("end", onEnd)
  req.on("error", onFailure)
}

/**
 * `headers` with `more` added, as a new object. Object.assign, not a spread: V8 gave each spread copy
 * of a response's headers a map of its own, a new map per response (its commit message).
 *
 * @category responses
 */
export const withHeaders = <H extends Readonly<Record<string, string | number>>>(
  headers: Readonly<Record<string, string>>,
  more: H
): Record<string, string> & H => Object.assign({}, headers, more)

const withLength = (headers: Readonly<Record<string, string>>, length: number) => withHeaders(headers, { "content-length": length })

/** Writes a complete response at once. */
const writeFull = (
  res: NodeHttp.ServerResponse,
  response: Extract<HttpResponse, { _tag: "Full" }>,
  closeConnection: boolean
) => {
  if (res.headersSent || res.writableEnded || res.destroyed) return
  if (closeConnection) res.setHeader("connection", "close")
  const body = response.body
  if (typeof body === "string" || body instanceof Uint8Array) {
    res.writeHead(response.status, withLength(response.headers, Buffer.byteLength(body)))
    res.end(body)
    return
  }
  // Chunks: node corks the socket for the writes of one tick, so they leave in one writev.
  let length = 0
  for (const chunk of body) length += chunk.byteLength
  res.writeHead(response.status, withLength(response.headers, length))
  for (let i = 0; i < body.length - 1; i++) res.write(body[i])
  res.end(body[body.length - 1])
}

/** Writes a stream response chunk by chunk, respecting back-pressure. */
const writeStream = (res: NodeHttp.ServerResponse, response: Extract<HttpResponse, { _tag: "Stream" }>) =>
  Effect.suspend(() => {
    if (res.headersSent || res.writableEnded || res.destroyed) return Effect.void
    res.writeHead(response.status, response.headers)
    res.flushHeaders()
    return response.body.pipe(
      Stream.runForEach((chunk) =>
        res.write(chunk)
          ? Effect.void
          : Effect.async<void>((resume) => {
            const go = () => {
              res.off("drain", go)
              res.off("close", go)
              resume(Effect.void)
            }
            res.once("drain", go)
            res.once("close", go)
          })
      ),
      Effect.ensuring(Effect.sync(() => {
        if (!res.writableEnded) res.end()
      }))
    )
  })

const writeResponse = (res: NodeHttp.ServerResponse, response: HttpResponse): Effect.Effect<void> =>
  response._tag === "Full" ? Effect.sync(() => writeFull(res, response, false)) : writeStream(res, response)

/** The answer to a request whose handling failed in the transport itself (a handler defect). */
const writeInternalError = (res: NodeHttp.ServerResponse) => {
  if (!res.headersSent) {
    res.writeHead(500, { "content-type": "application/json", connection: "close" })
    res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32603, message: "Internal error" } }))
  } else if (!res.writableEnded) res.destroy()
}

const admitAll: Admission = { _tag: "Admit", value: undefined }

const rpcError = (status: number, code: number, message: string, headers: Readonly<Record<string, string>> = {}): HttpResponse =>
  json(status, { jsonrpc: "2.0", id: null, error: { code, message } }, headers)

const serviceUnavailable = rpcError(503, -33000, "Service unavailable: every connection slot is serving a request; retry shortly", { "retry-after": "1" })
const duplicateHost = rpcError(400, -32600, "Bad request: more than one Host header")
const requestTimeout = rpcError(408, -32600, "Request time-out: the request body stopped arriving")

/** How many `Host` headers a request carries (node keeps only the first in `headers`). */
const hostHeaders = (raw: ReadonlyArray<string>): number => {
  let count = 0
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!
    if (name.length === 4 && name.toLowerCase() === "host") count++
  }
  return count
}

// ===== Constructors =====

/** The `node:http` server with the limits node itself enforces. */
const createNodeServer = (limits: Limits) =>
  NodeHttp.createServer({
    maxHeaderSize: limits.maxHeaderBytes,
    keepAliveTimeout: limits.idleTimeoutMs,
    headersTimeout: limits.headersTimeoutMs,
    // The whole request (headers and body) within twice the idle time: a body trickled a byte at a
    // time is still bounded.
    requestTimeout: Math.max(limits.idleTimeoutMs * 2, limits.headersTimeoutMs),
    // Node checks header/request time-outs on this interval (default 30 s): without it a silent
    // connection could live twice its time-out.
    connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(Math.min(limits.idleTimeoutMs, limits.headersTimeoutMs) / 4))),
    noDelay: true
  })

/**
 * The connection slots: at most `maxConnections` connections hold one. At the limit a newcomer gets
 * the slot of a recyclable connection, or is marked `overflow` (its first request is answered 503);
 * past one refusal per slot, newcomers are dropped.
 */
const makeSlots = (limits: Limits) => {
  // Connections holding a slot, oldest first (a Set iterates in insertion order).
  const sockets = new Set<NodeNet.Socket>()
  const started = new WeakSet<NodeNet.Socket>()
  // Requests in progress per connection: a connection without one can be recycled at the limit.
  const active = new WeakMap<NodeNet.Socket, number>()
  // Since when a connection has had no request in progress (opened, or its last answer finished).
  const idleSince = new WeakMap<NodeNet.Socket, number>()
  // Connections over the limit that no slot could be recycled for: answered 503 on their first request.
  const overflow = new Set<NodeNet.Socket>()

  /**
   * A connection without a request in progress for at least `recycleGraceMs`, to give its slot to a
   * newcomer: never used first (oldest first), then the keep-alive connection idle the longest.
   */
  const recyclable = (): NodeNet.Socket | undefined => {
    const now = limits.now()
    let idleKeepAlive: NodeNet.Socket | undefined
    let idleFrom = Number.POSITIVE_INFINITY
    for (const socket of sockets) {
      if ((active.get(socket) ?? 0) > 0) continue
      const since = idleSince.get(socket) ?? now
      if (now - since < limits.recycleGraceMs) continue
      if (!started.has(socket)) return socket
      if (since < idleFrom) (idleKeepAlive = socket, idleFrom = since)
    }
    return idleKeepAlive
  }

  const onConnection = (socket: NodeNet.Socket) => {
    if (sockets.size >= limits.maxConnections) {
      const victim = recyclable()
      if (victim !== undefined) {
        sockets.delete(victim)
        victim.destroy()
      } else if (overflow.size >= limits.maxConnections) {
        // Even the refusals are bounded: past one refusal per slot, the connection is dropped.
        return void socket.destroy()
      } else {
        overflow.add(socket)
        socket.once("close", () => overflow.delete(socket))
        // Its request is answered at once; one that sends none is not kept.
        const refuse = setTimeout(() => socket.destroy(), Math.min(limits.headersTimeoutMs, limits.idleTimeoutMs))
        refuse.unref()
        socket.once("close", () => clearTimeout(refuse))
        return
      }
    }
    // A connection that never sends a request is idle too: node's own time-outs start with a request
    // (and keepAliveTimeout covers the time after a response), so close it ourselves.
    const idle = setTimeout(() => {
      if (!started.has(socket)) socket.destroy()
    }, limits.idleTimeoutMs)
    idle.unref()
    socket.once("close", () => clearTimeout(idle))
    sockets.add(socket)
    idleSince.set(socket, limits.now())
    socket.once("close", () => sockets.delete(socket))
  }

  /** A request began on `socket`; false when the connection is an overflow one, to be answered 503. */
  const requestStarted = (socket: NodeNet.Socket, res: NodeHttp.ServerResponse): boolean => {
    started.add(socket)
    if (overflow.has(socket)) return false
    active.set(socket, (active.get(socket) ?? 0) + 1)
    res.once("close", () => {
      const left = (active.get(socket) ?? 1) - 1
      active.set(socket, left)
      if (left === 0) idleSince.set(socket, limits.now())
    })
    return true
  }

  return { sockets, onConnection, requestStarted }
}

/**
 * Requests whose body is still arriving: shutdown waits for them as for running requests (they are
 * answered 503 once read). A counter rather than a fiber per request, see `respond`.
 */
const makeReads = () => {
  let reading = 0
  let onReadsDone: (() => void) | undefined
  return {
    begin: () => void reading++,
    end: () => {
      reading--
      if (reading === 0) onReadsDone?.()
    },
    done: Effect.async<void>((resume) => {
      if (reading === 0) return resume(Effect.void)
      onReadsDone = () => resume(Effect.void)
    })
  }
}

const headOf = (req: NodeHttp.IncomingMessage): RequestHead => {
  const url = req.url ?? "/"
  const queryAt = url.indexOf("?")
  return {
    method: req.method ?? "GET",
    path: queryAt === -1 ? url : url.slice(0, queryAt),
    url,
    headers: lowerHeaders(req.headers),
    remoteAddress: req.socket.remoteAddress ?? "",
    localPort: req.socket.localPort ?? 0
  }
}

/** What the request steps share: the handler, the limits, and where fibers run and are tracked. */
interface Pipeline {
  readonly handler: Context.Tag.Service<HttpHandler>
  readonly limits: Limits
  readonly runFork: <A, E>(effect: Effect.Effect<A, E>) => Fiber.RuntimeFiber<A, E>
  readonly fibers: FiberSet.FiberSet<void, never>
  readonly reads: ReturnType<typeof makeReads>
}

/** Writing answers: the handler's (on a fiber only when it needs one), the transport's own, and failures. */
const makeResponder = ({ fibers, handler, runFork }: Pipeline) => {
  const transportFailure = (res: NodeHttp.ServerResponse) => (cause: Cause.Cause<unknown>) =>
    Effect.zipRight(Effect.logWarning("request failed in the transport", cause), Effect.sync(() => writeInternalError(res)))

  /**
   * Runs the handler on a read request. Why no fiber before this point, and often none at all: a
   * fiber that starts at once and waits for the body pays an asynchronous suspension and resumption
   * (and a scheduler entry) per request. So the body is read with plain callbacks;
   * a handler that answers synchronously (`Effect.succeed`, an `Exit`) is written without a fiber; any
   * other runs on a fiber that usually completes while it starts; only a fiber still running after
   * that is tracked for shutdown and interrupted when its client goes away.
   *
   * What the two shortcuts (this one and `admitThen`'s) pay, measured 2026-11-25 with `tools/list`
   * under wrk (64 connections, daemon and wrk on their own cores, three interleaved pairs): 262–414 µs
   * of CPU per request with them (median 360), 409–498 µs with both removed (median 472), so a fiber
   * per request costs about 30% more CPU, and 1.2–1.7× the requests per second are answered with them.
   */
  const respond = (res: NodeHttp.ServerResponse, request: HttpRequest) => {
    const effect = handler.handle(request)
    // In Effect 3 `Effect.succeed` / `Effect.fail` values are `Exit`s: the outcome is known already.
    if (Exit.isExit(effect)) {
      const exit = effect as Exit.Exit<HttpResponse>
      if (Exit.isFailure(exit)) return void runFork(transportFailure(res)(exit.cause))
      if (exit.value._tag === "Full") return writeFull(res, exit.value, false)
    }
    const fiber = runFork(Effect.catchAllCause(Effect.flatMap(effect, (response) => writeResponse(res, response)), transportFailure(res)))
    if (fiber.unsafePoll() !== null) return
    FiberSet.unsafeAdd(fibers, fiber)
    // A client that goes away interrupts its request (and, through it, any database call).
    res.once("close", () => {
      if (!res.writableEnded) fiber.unsafeInterruptAsFork(FiberId.none)
    })
  }

  /** A response known at once (the refusals of the transport). */
  const send = (res: NodeHttp.ServerResponse, response: HttpResponse, closeConnection: boolean) =>
    response._tag === "Full"
      ? writeFull(res, response, closeConnection)
      : void runFork(Effect.catchAllCause(writeStream(res, response), transportFailure(res)))

  /** Runs a synchronous step; a throw outside a fiber would escape into node's event loop, so it is a defect. */
  const guarded = (res: NodeHttp.ServerResponse, step: () => void) => {
    try {
      step()
    } catch (defect) {
      runFork(transportFailure(res)(Cause.die(defect)))
    }
  }

  const own = (head: RequestHead, response: HttpResponse) => handler.decorate === undefined ? response : handler.decorate(head, response)

  return { transportFailure, respond, send, guarded, own }
}

/** Reading a request: admission from its head, then the body within its cap, then the handler. */
const makeReader = (pipeline: Pipeline, responder: ReturnType<typeof makeResponder>) => {
  const { handler, limits, reads, runFork } = pipeline
  const { guarded, own, respond, send, transportFailure } = responder

  /** Reads the body of an admitted request (capped by its admission) and responds, or refuses it early. */
  const readThenRespond = (req: NodeHttp.IncomingMessage, res: NodeHttp.ServerResponse, head: RequestHead) => {
    const declared = Number(req.headers["content-length"] ?? "0")
    const hasBody = req.headers["transfer-encoding"] !== undefined || declared !== 0
    reads.begin()
    let pending = true
    const settled = () => {
      if (!pending) return false
      pending = false
      res.off("close", onGone)
      return true
    }
    // A client that goes away while sending: nothing runs.
    const onGone = () => {
      if (settled()) reads.end()
    }
    res.once("close", onGone)
    /** An answer that does not wait for the body: the connection is closed if one may still come. */
    const refuse = (response: HttpResponse, stalled = false) => {
      if (!settled()) return
      reads.end()
      // A body that stopped arriving ends its connection; one still coming is drained (bounded).
      if (hasBody && !stalled) linger(req, limits.maxBodyBytes)
      guarded(res, () => send(res, response, stalled))
    }
    const read = (admission: Admission) => {
      if (!pending) return
      if (admission._tag === "Refuse") return refuse(admission.response)
      const cap = admission.bodyCap
      const max = cap === undefined ? limits.maxBodyBytes : Math.min(cap.bytes, limits.maxBodyBytes)
      if (cap !== undefined && Number.isFinite(declared) && declared > max) return refuse(cap.response)
      readBody(
        req,
        max,
        limits.idleTimeoutMs,
        (body) => {
          if (!settled()) return
          guarded(res, () => {
            if (body === undefined) send(res, cap !== undefined && cap.bytes < limits.maxBodyBytes ? cap.response : handler.tooLarge(head), false)
            else {
              // Built field by field: an object spread here costs measurably on the hot path.
              respond(res, {
                method: head.method,
                path: head.path,
                url: head.url,
                headers: head.headers,
                body,
                remoteAddress: head.remoteAddress,
                localPort: head.localPort,
                admitted: admission.value
              })
            }
          })
          reads.end()
        },
        (error) => {
          if (!settled()) return
          reads.end()
          runFork(transportFailure(res)(Cause.fail(error)))
        },
        () => refuse(own(head, requestTimeout), true)
      )
    }
    const failed = (cause: Cause.Cause<unknown>) => {
      if (settled()) reads.end()
      if (!Cause.isInterruptedOnly(cause)) runFork(transportFailure(res)(cause))
    }
    return { read, failed }
  }

  /** Admits a request from its head (`handler.admit`, without a fiber when the outcome is known), then reads it. */
  const admitThen = (head: RequestHead, next: { readonly read: (a: Admission) => void; readonly failed: (c: Cause.Cause<unknown>) => void }) => {
    if (handler.admit === undefined) return next.read(admitAll)
    let admit: Effect.Effect<Admission>
    try {
      admit = handler.admit(head)
    } catch (defect) {
      return next.failed(Cause.die(defect))
    }
    // As in `respond`: an outcome known already needs no fiber.
    if (Exit.isExit(admit) && Exit.isSuccess(admit as Exit.Exit<Admission>)) return next.read((admit as Exit.Success<Admission, never>).value)
    const fiber = runFork(admit)
    const settle = (exit: Exit.Exit<Admission>) => Exit.isSuccess(exit) ? next.read(exit.value) : next.failed(exit.cause)
    const done = fiber.unsafePoll()
    if (done !== null) return settle(done)
    fiber.addObserver(settle)
  }

  return { readThenRespond, admitThen }
}

/**
 * Starts the server and keeps it for the life of the scope. On scope close: handlers are told to
 * shut down, given `shutdownGraceMs` to answer, then every request fiber is interrupted and every
 * connection destroyed.
 *
 * @category constructors
 */
export const make = Effect.fn("HttpTransport.make")(function*(options: ListenOptions) {
  const handler = yield* HttpHandler
  const limits: Limits = { ...defaultLimits, ...options.limits }
  const host = options.host ?? "127.0.0.1"
  // Request fibers run with the services this layer was built with (settings a handler reads when it
  // needs them, such as the driver's time-outs when a connection's session opens), but outside the
  // span of this constructor: a request is a trace of its own, or its client's (`traceparent`), not a
  // child of the daemon's start.
  const built = yield* Effect.runtime<never>()
  const requests = Runtime.make({ ...built, context: Context.omit(Tracer.ParentSpan)(built.context) })
  const runFork: Pipeline["runFork"] = Runtime.runFork(requests)
  const fibers = yield* FiberSet.make<void, never>()
  const lifecycle = yield* Lifecycle
  const slots = makeSlots(limits)
  const reads = makeReads()
  const server = createNodeServer(limits)
  server.on("connection", slots.onConnection)

  const pipeline: Pipeline = { handler, limits, runFork, fibers, reads }
  const responder = makeResponder(pipeline)
  const { guarded, own, send } = responder
  const { admitThen, readThenRespond } = makeReader(pipeline, responder)

  const onRequest = (req: NodeHttp.IncomingMessage, res: NodeHttp.ServerResponse) => {
    const head = headOf(req)
    if (!slots.requestStarted(req.socket, res)) return send(res, own(head, serviceUnavailable), true)
    if (hostHeaders(req.rawHeaders) > 1) return send(res, own(head, duplicateHost), true)
    const declared = Number(req.headers["content-length"] ?? "0")
    if (Number.isFinite(declared) && declared > limits.maxBodyBytes) {
      // Answered before reading; kept open while the rest is drained (bounded by `linger`), so the
      // client reads the 413.
      return guarded(res, () => {
        linger(req, limits.maxBodyBytes)
        send(res, handler.tooLarge(head), false)
      })
    }
    admitThen(head, readThenRespond(req, res, head))
  }
  server.on("request", onRequest)

  const port = yield* (typeof options.port === "number"
    ? listenOn(server, host, options.port)
    : listenOn(server, host, options.port.preferred).pipe(
      Effect.catchIf((e) => e.reason === "EADDRINUSE", () => listenOn(server, host, 0))
    ))

  yield* Effect.addFinalizer(() =>
    Effect.gen(function*() {
      // Requests that still arrive on open connections during the grace period are answered
      // (the handler sees `Lifecycle.isShuttingDown`), not left hanging.
      server.close()
      server.closeIdleConnections()
      yield* lifecycle.beginShutdown
      // Give handlers a moment to answer (they race their work against `shutdown`), then cut.
      // Finalizers run uninterruptibly: the wait itself must be interruptible for its time-out to work.
      yield* reads.done.pipe(
        Effect.zipRight(Effect.forEach(fibers, (fiber) => Fiber.await(fiber), { concurrency: "unbounded", discard: true })),
        Effect.interruptible,
        Effect.timeoutOption(limits.shutdownGraceMs)
      )
      server.off("request", onRequest)
      yield* FiberSet.clear(fibers)
      for (const socket of slots.sockets) socket.destroy()
    })
  )

  return BoundAddress.of({ host, port, url: `http://${host}:${port}` })
})

/**
 * The transport as a layer providing the bound address.
 *
 * @category layers
 */
export const layer = (options: ListenOptions): Layer.Layer<BoundAddress, ListenError, HttpHandler | Lifecycle> =>
  Layer.scoped(BoundAddress, make(options))

/**
 * What serves the endpoint: starts listening for the life of the scope and returns the bound
 * address. The default is the `node:http` transport (`make`).
 *
 * @category models
 */
export type Transport<R = never> = (options: ListenOptions) => Effect.Effect<
  Context.Tag.Service<BoundAddress>,
  unknown,
  HttpHandler | Lifecycle | Scope.Scope | R
>
