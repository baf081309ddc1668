/**
 * The HTTP transport of the local endpoint: a `node:http` server bound to 127.0.0.1 whose requests
 * are handled by an Effect `HttpHandler`.
 *
 * Why not `@effect/platform`'s HttpServer: measured before we started (`shared/perf-notes.md`) it
 * reaches ≈ 0.13× bare `node:http` throughput, and the target is ≥ 0.6×. Here node parses HTTP, the
 * body is read straight from the socket with a hard cap, and the handler's effect runs on a fiber of
 * its own only when it needs one (see `respond` in `make`).
 *
 * The transport owns the limits that live at the socket: body cap (413 as a real response),
 * request-header size, concurrent connections, idle time-out, client disconnect (interrupts the
 * request fiber) and shutdown (every request fiber still running is tracked in a FiberSet and
 * interrupted, so a SIGINT never waits for open streams). Shutdown begins the `Lifecycle` the handler
 * reads, so the same handler runs behind other transports (`McpHttpApp`).
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
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as NodeHttp from "node:http"
import type * as NodeNet from "node:net"
import { Lifecycle } from "./Lifecycle.ts"

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
  body
})

/** @category constructors */
export const json = (status: number, value: unknown, headers: Readonly<Record<string, string>> = {}): HttpResponse => ({
  _tag: "Full",
  status,
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(value)
})

/**
 * What answers requests. The handler must not fail; every failure is already a response.
 *
 * @category services
 */
export class HttpHandler extends Context.Tag("weaviate-mcp/HttpHandler")<HttpHandler, {
  readonly handle: (request: HttpRequest) => Effect.Effect<HttpResponse>
  /** The response to a body above the cap, sent before the body is read (no reset). */
  readonly tooLarge: (request: Omit<HttpRequest, "body">) => HttpResponse
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
  readonly idleTimeoutMs: number
  /** How long shutdown waits for handlers to answer before it cuts connections. */
  readonly shutdownGraceMs: number
}

/** The contract's limits. @category constants */
export const defaultLimits: Limits = {
  maxBodyBytes: 10 * 1024 * 1024,
  maxHeaderBytes: 16 * 1024,
  maxConnections: 64,
  idleTimeoutMs: 30_000,
  shutdownGraceMs: 300
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

/**
 * Reads the body up to `max` bytes with plain stream callbacks: `onBody(undefined)` when the cap was
 * exceeded (the rest is drained so that the 413 can still be delivered on this connection). Neither
 * callback is called when the client goes away first.
 */
const readBody = (
  req: NodeHttp.IncomingMessage,
  max: number,
  onBody: (body: string | undefined) => void,
  onError: (error: Error) => void
) => {
  const chunks: Array<Buffer> = []
  let size = 0
  const finish = () => {
    req.off("data", onData)
    req.off("end", onEnd)
    req.off("error", onFailure)
  }
  const onData = (chunk: Buffer) => {
    size += chunk.length
    if (size > max) {
      finish()
      req.resume()
      onBody(undefined)
      return
    }
    chunks.push(chunk)
  }
  const onEnd = () => {
    finish()
    onBody(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8"))
  }
  const onFailure = (error: Error) => {
    finish()
    onError(error)
  }
  req.on("data", onData)
  req.on("end", onEnd)
  req.on("error", onFailure)
}

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
    res.writeHead(response.status, { ...response.headers, "content-length": Buffer.byteLength(body) })
    res.end(body)
    return
  }
  // Chunks: node corks the socket for the writes of one tick, so they leave in one writev.
  let length = 0
  for (const chunk of body) length += chunk.byteLength
  res.writeHead(response.status, { ...response.headers, "content-length": length })
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

// ===== Constructors =====

/**
 * Starts the server and keeps it for the life of the scope. On scope close: handlers are told to
 * shut down, given `shutdownGraceMs` to answer, then every request fiber is interrupted and every
 * connection destroyed.
 *
 * @category constructors
 */
export const make = Effect.fn("HttpTransport.make")(function*(options: ListenOptions) {
  const handler = yield* HttpHandler
  const lifecycle = yield* Lifecycle
  const limits: Limits = { ...defaultLimits, ...options.limits }
  const host = options.host ?? "127.0.0.1"
  const runtime = yield* Effect.runtime<never>()
  const runFork = Runtime.runFork(runtime)
  const fibers = yield* FiberSet.make<void, never>()
  const sockets = new Set<NodeNet.Socket>()
  const started = new WeakSet<NodeNet.Socket>()

  const server = NodeHttp.createServer({
    maxHeaderSize: limits.maxHeaderBytes,
    keepAliveTimeout: limits.idleTimeoutMs,
    headersTimeout: limits.idleTimeoutMs,
    requestTimeout: limits.idleTimeoutMs * 2,
    // Node checks header/request time-outs on this interval (default 30 s): without it a silent
    // connection could live twice the idle time-out.
    connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(limits.idleTimeoutMs / 2))),
    noDelay: true
  })
  server.maxConnections = limits.maxConnections
  server.on("connection", (socket: NodeNet.Socket) => {
    // A connection that never sends a request is idle too: node's own time-outs start with a request
    // (and keepAliveTimeout covers the time after a response), so close it ourselves.
    const idle = setTimeout(() => {
      if (!started.has(socket)) socket.destroy()
    }, limits.idleTimeoutMs)
    idle.unref()
    socket.once("close", () => clearTimeout(idle))
    sockets.add(socket)
    socket.once("close", () => sockets.delete(socket))
  })

  // Requests whose body is still arriving: shutdown waits for them as for running requests (they are
  // answered 503 once read). A counter rather than a fiber per request, see `onRequest`.
  let reading = 0
  let onReadsDone: (() => void) | undefined
  const readsDone = Effect.async<void>((resume) => {
    if (reading === 0) return resume(Effect.void)
    onReadsDone = () => resume(Effect.void)
  })
  const doneReading = () => {
    reading--
    if (reading === 0) onReadsDone?.()
  }

  const transportFailure = (res: NodeHttp.ServerResponse) => (cause: Cause.Cause<unknown>) =>
    Effect.zipRight(Effect.logWarning("request failed in the transport", cause), Effect.sync(() => writeInternalError(res)))

  /**
   * Runs the handler on a read request. Why no fiber before this point, and often none at all: a
   * request's fiber used to start at once and wait for the body, paying an asynchronous suspension
   * and resumption (and a scheduler entry) per request. Now the body is read with plain callbacks;
   * a handler that answers synchronously (`Effect.succeed`, an `Exit`) is written without a fiber; any
   * other runs on a fiber that usually completes while it starts; only a fiber still running after
   * that is tracked for shutdown and interrupted when its client goes away.
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

  const onRequest = (req: NodeHttp.IncomingMessage, res: NodeHttp.ServerResponse) => {
    started.add(req.socket)
    const url = req.url ?? "/"
    const queryAt = url.indexOf("?")
    const request = (body: string): HttpRequest => ({
      method: req.method ?? "GET",
      path: queryAt === -1 ? url : url.slice(0, queryAt),
      url,
      headers: lowerHeaders(req.headers),
      body,
      remoteAddress: req.socket.remoteAddress ?? "",
      localPort: req.socket.localPort ?? 0
    })
    const declared = Number(req.headers["content-length"] ?? "0")
    if (Number.isFinite(declared) && declared > limits.maxBodyBytes) {
      // Answer before reading, and close: the client may still be sending.
      try {
        return send(res, handler.tooLarge(request("")), true)
      } catch (defect) {
        return void runFork(transportFailure(res)(Cause.die(defect)))
      }
    }
    reading++
    let pending = true
    const settled = () => {
      if (!pending) return false
      pending = false
      res.off("close", onGone)
      return true
    }
    // A client that goes away while sending: nothing runs.
    const onGone = () => {
      if (settled()) doneReading()
    }
    res.once("close", onGone)
    readBody(
      req,
      limits.maxBodyBytes,
      (body) => {
        if (!settled()) return
        try {
          if (body === undefined) send(res, handler.tooLarge(request("")), true)
          else respond(res, request(body))
        } catch (defect) {
          // Outside a fiber a throw would escape into node's event loop: it is a defect like any other.
          runFork(transportFailure(res)(Cause.die(defect)))
        } finally {
          doneReading()
        }
      },
      (error) => {
        if (!settled()) return
        doneReading()
        runFork(transportFailure(res)(Cause.fail(error)))
      }
    )
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
      yield* readsDone.pipe(
        Effect.zipRight(Effect.forEach(fibers, (fiber) => Fiber.await(fiber), { concurrency: "unbounded", discard: true })),
        Effect.interruptible,
        Effect.timeoutOption(limits.shutdownGraceMs)
      )
      server.off("request", onRequest)
      yield* FiberSet.clear(fibers)
      for (const socket of sockets) socket.destroy()
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
