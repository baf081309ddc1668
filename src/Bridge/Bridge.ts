/**
 * The stdio bridge: speaks the MCP stdio transport (newline-delimited JSON-RPC) to one client and
 * the modern, stateless revision over HTTP to the daemon.
 *
 * - `initialize`, `ping`, `logging/setLevel` and `notifications/initialized` are answered here; the
 *   client's session lives in the bridge, so a daemon restart does not end it.
 * - Every other request becomes one modern POST with the required `_meta` and headers and the
 *   handshake token. Requests get bridge-unique ids towards the daemon: all bridges share one
 *   principal, and a cancellation must only reach the request it names.
 * - `input_required` becomes `elicitation/create` for a legacy client that declared elicitation; a
 *   client without it is forwarded without the capability, so the daemon shows its own dialog.
 * - SSE progress frames are written as stdio `notifications/progress`.
 * - `notifications/cancelled` is forwarded and the POST aborted; closing stdin cancels everything.
 * - A changed handshake file (token rotation, restart) is re-read before the next request; a 401 or
 *   an unreachable daemon re-reads it and retries once. A `tools/call` is retried after a failure
 *   only when the connection was refused (nothing was delivered), so a write never runs twice.
 *
 * stdout carries protocol only; diagnostics go to stderr.
 *
 * @since 0.1.0
 */
import * as NodeReadline from "node:readline"
import { PROTOCOL_VERSION } from "../Daemon/HandshakeWire.ts"
import * as DaemonLink from "./DaemonLink.ts"

/** The revisions the bridge speaks on stdio, newest first. @category constants */
export const STDIO_VERSIONS = [PROTOCOL_VERSION, "2025-11-25", "2025-06-18"] as const

const LEGACY_DEFAULT = "2025-11-25"
/** Bounds the approval round trips of one call (first access, then the statement). */
const MAX_INPUT_ROUNDS = 4
/** How long a restarted daemon may take to publish its new handshake file. */
const RESTART_WAIT_MS = 10_000
const POLL_MS = 100

/** @category models */
export interface Options {
  readonly handshakePath: string
  readonly input: NodeJS.ReadableStream
  readonly output: NodeJS.WritableStream
  readonly log: (line: string) => void
}

type Id = string | number
type Json = Record<string, unknown>

const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

const errorResponse = (id: Id | null, code: number, message: string, data?: unknown) => ({
  jsonrpc: "2.0" as const,
  id,
  error: { code, message, ...(data === undefined ? {} : { data }) }
})

/** Strips what only the modern era carries, for a legacy client. */
const legacyResult = (result: Json): Json => {
  const { resultType: _r, ttlMs: _t, cacheScope: _c, ...rest } = result
  if (isRecord(rest["_meta"])) {
    const { "io.modelcontextprotocol/serverInfo": _s, ...meta } = rest["_meta"]
    if (Object.keys(meta).length === 0) delete rest["_meta"]
    else rest["_meta"] = meta
  }
  return rest
}

/** One client's session: what `initialize` set, the requests in flight, the daemon in use. */
class Session {
  private daemon: DaemonLink.Daemon
  private version: string = LEGACY_DEFAULT
  private clientCapabilities: Json = {}
  private clientInfo: Json | undefined
  /**
   * Tells this bridge's requests to the daemon apart from other clients': the pid is unique among
   * the processes running on this machine (where the daemon is), the start time among those a pid was
   * reused by. Not `crypto.randomUUID()`: loading Node's crypto for it took about 3 ms of every
   * bridge start (its commit message).
   */
  private readonly sessionId = `${process.pid.toString(36)}.${Date.now().toString(36)}`
  private sequence = 0
  private readonly inFlight = new Map<Id, { readonly daemonId: string; readonly abort: AbortController }>()
  private readonly pendingFromClient = new Map<string, (message: Json) => void>()
  private closed = false
  private refreshing: Promise<void> | undefined

  constructor(initial: DaemonLink.Daemon, private readonly options: Options) {
    this.daemon = initial
  }

  private send(message: unknown) {
    if (this.closed) return
    this.options.output.write(JSON.stringify(message) + "\n")
  }

  private modern() {
    return this.version === PROTOCOL_VERSION
  }

  // ===== The daemon =====

  /** Re-reads the handshake file; waits (bounded) for a restarted daemon to publish it. */
  private refresh(waitMs: number): Promise<void> {
    this.refreshing ??= (async () => {
      const deadline = Date.now() + waitMs
      for (let attempt = 0; ; attempt++) {
        try {
          this.daemon = await DaemonLink.locate(this.options.handshakePath)
          this.options.log(`weaviate-mcp bridge: using the daemon on port ${this.daemon.file.port} (pid ${this.daemon.file.pid})`)
          return
        } catch (error) {
          if (!(error instanceof DaemonLink.BridgeRefused) || !error.notRunning || Date.now() >= deadline || attempt > waitMs / POLL_MS) {
            throw error
          }
          await new Promise((resolve) => setTimeout(resolve, POLL_MS))
        }
      }
    })().finally(() => {
      this.refreshing = undefined
    })
    return this.refreshing
  }

  /** Picks up a rewritten handshake file (rotated token, restarted daemon) before a request. */
  private async refreshIfChanged() {
    const mtime = await DaemonLink.mtimeOf(this.options.handshakePath)
    if (mtime !== undefined && mtime !== this.daemon.mtimeMs) await this.refresh(RESTART_WAIT_MS).catch(() => undefined)
  }

  private forwardMeta(clientMeta: Json): Json {
    const meta: Json = { ...clientMeta }
    if (!this.modern() || meta["io.modelcontextprotocol/protocolVersion"] === undefined) {
      meta["io.modelcontextprotocol/protocolVersion"] = PROTOCOL_VERSION
      meta["io.modelcontextprotocol/clientCapabilities"] = this.clientCapabilities
      if (this.clientInfo !== undefined) meta["io.modelcontextprotocol/clientInfo"] = this.clientInfo
    }
    return meta
  }

  /** One POST, with one retry after a token or daemon change. */
  private async postOnce(
    method: string,
    params: Json,
    signal: AbortSignal,
    daemonId: string,
    progress: { last: number }
  ): Promise<DaemonLink.Message | undefined> {
    await this.refreshIfChanged()
    const attempt = () =>
      DaemonLink.post(this.daemon.file.port, this.daemon.file.token, { jsonrpc: "2.0", id: daemonId, method, params }, {
        signal,
        onFrame: (frame) => {
          if (frame.method !== "notifications/progress" || !isRecord(frame["params"])) return
          // Each approval round restarts the daemon's count; the client sees progress only advance.
          const value = frame["params"]["progress"]
          if (typeof value !== "number" || value <= progress.last) return
          progress.last = value
          this.send(frame)
        }
      })
    let reply: Awaited<ReturnType<typeof attempt>>
    try {
      reply = await attempt()
    } catch (error) {
      if (!(error instanceof DaemonLink.Unreachable) || signal.aborted) throw error
      if (method === "tools/call" && !error.refused) throw error
      this.options.log(`weaviate-mcp bridge: ${error.message}; re-reading the handshake file`)
      await this.refresh(RESTART_WAIT_MS)
      reply = await attempt()
    }
    if (reply.status === 401) {
      this.options.log("weaviate-mcp bridge: the token was refused; re-reading the handshake file")
      await this.refresh(RESTART_WAIT_MS)
      reply = await attempt()
    }
    return reply.body
  }

  /**
   * Asks the client; resolves with its response message. When the request it asks for is cancelled
   * first, the question is cancelled at the client too (`notifications/cancelled`) and forgotten here:
   * a client that never answers it holds nothing in the bridge.
   */
  private askClient(method: string, params: Json, signal: AbortSignal) {
    return new Promise<Json>((resolve) => {
      const cancelled: Json = { result: { action: "cancel" } }
      if (signal.aborted) return resolve(cancelled)
      const id = `bridge-${this.sessionId}-${++this.sequence}`
      const settle = (message: Json) => {
        this.pendingFromClient.delete(id)
        signal.removeEventListener("abort", onAbort)
        resolve(message)
      }
      const onAbort = () => {
        this.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "the request it was asked for was cancelled" } })
        settle(cancelled)
      }
      this.pendingFromClient.set(id, settle)
      signal.addEventListener("abort", onAbort, { once: true })
      this.send({ jsonrpc: "2.0", id, method, params })
    })
  }

  private elicitationParams(params: Json): Json {
    if (this.version !== "2025-06-18") return params
    const { mode: _, ...rest } = params
    return rest
  }

  /**
   * Relays the daemon's `input_required` to a legacy client as `elicitation/create` requests; the
   * answers to send back, or an error message when a request cannot be relayed.
   */
  private async relayInput(result: Json, signal: AbortSignal): Promise<Json | string | undefined> {
    const requests = isRecord(result["inputRequests"]) ? result["inputRequests"] : {}
    const inputResponses: Json = {}
    for (const [key, request] of Object.entries(requests)) {
      if (!isRecord(request) || request["method"] !== "elicitation/create" || !isRecord(request["params"])) {
        return `the daemon asked for input the bridge cannot relay (${key})`
      }
      const answer = await this.askClient("elicitation/create", this.elicitationParams(request["params"]), signal)
      if (signal.aborted) return undefined
      inputResponses[key] = isRecord(answer["result"]) ? answer["result"] : { action: "cancel" }
    }
    return inputResponses
  }

  /** Forwards one client request; the approval round trips happen here for a legacy client. */
  async forward(id: Id, method: string, params: Json) {
    const abort = new AbortController()
    const daemonId = `${this.sessionId}-${++this.sequence}`
    this.inFlight.set(id, { daemonId, abort })
    try {
      const { _meta, ...rest } = params
      let body: Json = { ...rest, _meta: this.forwardMeta(isRecord(_meta) ? _meta : {}) }
      const progress = { last: Number.NEGATIVE_INFINITY }
      for (let round = 0; round <= MAX_INPUT_ROUNDS; round++) {
        const reply = await this.postOnce(method, body, abort.signal, daemonId, progress)
        if (abort.signal.aborted) return
        if (reply === undefined) return this.send(errorResponse(id, -32603, "the daemon sent no response"))
        if (isRecord(reply["error"])) return this.send({ jsonrpc: "2.0", id, error: reply["error"] })
        const result = isRecord(reply["result"]) ? reply["result"] : {}
        if (result["resultType"] !== "input_required" || this.modern()) {
          return this.send({ jsonrpc: "2.0", id, result: this.modern() ? result : legacyResult(result) })
        }
        if (round === MAX_INPUT_ROUNDS) break
        const inputResponses = await this.relayInput(result, abort.signal)
        if (inputResponses === undefined) return
        if (typeof inputResponses === "string") return this.send(errorResponse(id, -32603, inputResponses))
        body = { ...body, requestState: result["requestState"], inputResponses }
      }
      this.send(errorResponse(id, -32603, "too many input rounds for one request"))
    } catch (error) {
      if (abort.signal.aborted) return
      const message = error instanceof Error ? error.message : String(error)
      this.options.log(`weaviate-mcp bridge: ${method} failed: ${message}`)
      this.send(errorResponse(id, -33000, message))
    } finally {
      this.inFlight.delete(id)
    }
  }

  /** Cancels one forwarded request: tells the daemon, then drops the connection. */
  async cancel(id: Id, reason: string) {
    const entry = this.inFlight.get(id)
    if (entry === undefined) return
    this.inFlight.delete(id)
    try {
      await DaemonLink.post(this.daemon.file.port, this.daemon.file.token, {
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: entry.daemonId, reason, _meta: this.forwardMeta({}) }
      })
    } catch (error) {
      this.options.log(`weaviate-mcp bridge: could not forward a cancellation: ${(error as Error).message}`)
    } finally {
      entry.abort.abort()
    }
  }

  // ===== The client =====

  private initialize(id: Id, params: Json) {
    const offered = typeof params["protocolVersion"] === "string" ? params["protocolVersion"] : LEGACY_DEFAULT
    this.version = (STDIO_VERSIONS as ReadonlyArray<string>).includes(offered) ? offered : LEGACY_DEFAULT
    this.clientCapabilities = isRecord(params["capabilities"]) ? params["capabilities"] : {}
    if (isRecord(params["clientInfo"])) this.clientInfo = params["clientInfo"]
    const capabilities: Json = { ...this.daemon.discovery.capabilities }
    if (!this.modern()) {
      delete capabilities["extensions"]
      if (isRecord(capabilities["resources"])) capabilities["resources"] = { ...capabilities["resources"], subscribe: false }
    }
    this.send({
      jsonrpc: "2.0",
      id,
      result: {
        protocolVersion: this.version,
        capabilities,
        serverInfo: this.daemon.discovery.serverInfo,
        instructions: this.daemon.discovery.instructions
      }
    })
  }

  /** One line of stdin, parsed: a request, a notification, or the client's answer to us. */
  handle(message: unknown) {
    if (!isRecord(message) || message["jsonrpc"] !== "2.0") {
      this.send(errorResponse(null, -32600, "invalid JSON-RPC message"))
      return
    }
    const id = message["id"] as Id | undefined
    const method = message["method"]
    const params = isRecord(message["params"]) ? message["params"] : {}
    if (typeof method !== "string") {
      if (typeof id === "string" && this.pendingFromClient.has(id)) {
        const resolve = this.pendingFromClient.get(id)!
        this.pendingFromClient.delete(id)
        resolve(message)
      }
      return
    }
    if (id === undefined) {
      if (method === "notifications/cancelled" && (typeof params["requestId"] === "string" || typeof params["requestId"] === "number")) {
        void this.cancel(params["requestId"], typeof params["reason"] === "string" ? params["reason"] : "cancelled by the client")
      }
      return
    }
    switch (method) {
      case "initialize":
        return this.initialize(id, params)
      case "ping":
      case "logging/setLevel":
        return this.send({ jsonrpc: "2.0", id, result: {} })
      default:
        void this.forward(id, method, params)
    }
  }

  /** A line of stdin that is not JSON. */
  parseError() {
    this.send(errorResponse(null, -32700, "parse error: a line of stdin is not JSON"))
  }

  /** stdin closed: cancels what is in flight and answers pending questions with `cancel`. */
  async close() {
    const pending = [...this.inFlight.keys()].map((id) => this.cancel(id, "the client closed stdin"))
    for (const [, answer] of this.pendingFromClient) answer({ result: { action: "cancel" } })
    this.pendingFromClient.clear()
    await Promise.allSettled(pending)
    this.closed = true
  }
}

/**
 * Runs one bridge session until stdin closes. `daemon` is the already trusted daemon.
 *
 * @category running
 */
export const run = (initial: DaemonLink.Daemon, options: Options): Promise<void> => {
  const session = new Session(initial, options)
  return new Promise<void>((resolve) => {
    const lines = NodeReadline.createInterface({ input: options.input, crlfDelay: Infinity })
    lines.on("line", (line) => {
      if (line.trim().length === 0) return
      let parsed: unknown
      try {
        parsed = JSON.parse(line)
      } catch {
        session.parseError()
        return
      }
      session.handle(parsed)
    })
    lines.once("close", () => void session.close().then(resolve))
  })
}
