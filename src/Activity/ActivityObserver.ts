/**
 * The daemon's observer of MCP calls, which implements the endpoint's `Mcp/CallObserver` port: each
 * observed call feeds the activity log, the connected clients and the operational log line (`info`:
 * one per request; `warn`: refusals and failed authentications).
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as HashMap from "effect/HashMap"
import * as List from "effect/List"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import * as LogLevel from "effect/LogLevel"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as LogLines from "../Base/LogLines.ts"
import * as HistoryEntry from "../History/HistoryEntry.ts"
import * as TickBatch from "../Base/TickBatch.ts"
import { META_CLIENT_INFO } from "../Schema/McpWire.ts"
import * as Eras from "../Mcp/Eras.ts"
import type * as HttpTransport from "../Mcp/HttpTransport.ts"
import { CallObserver, type Observation, type Started } from "../Mcp/CallObserver.ts"
import type { Principal } from "../Auth/Principal.ts"
import { ActivityLog } from "./ActivityLog.ts"
import * as Line from "./ActivityLine.ts"
import { Clients } from "./Clients.ts"

const isObject = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null && !Array.isArray(u)
const str = (u: unknown): string | null => (typeof u === "string" ? u : null)

/** Client-chosen names reach the log on every call: not at any length. */
const MAX_NAME = 200
const named = (info: Readonly<Record<string, unknown>>) => ({
  name: (info.name as string).slice(0, MAX_NAME),
  version: str(info.version)?.slice(0, MAX_NAME) ?? null
})

const RESOURCE_CONNECTION = /^weaviate:\/\/connections\/([^/]+)/

const WRITE_TOOLS = new Set(["insert_rows", "update_rows", "delete_rows"])

/** The consistency level a write tool's call named, as the activity line's `consistencyLevel`. @category combinators */
export const writeLevelOf = (tool: string | null, params: Readonly<Record<string, unknown>>): { consistencyLevel?: string } => {
  if (tool === null || !WRITE_TOOLS.has(tool)) return {}
  const args = params["arguments"]
  const level = typeof args === "object" && args !== null ? (args as Record<string, unknown>)["consistency_level"] : undefined
  return level === "ONE" || level === "QUORUM" || level === "ALL" ? { consistencyLevel: level } : {}
}

/** The connection a call names: `connection_id` of a tool or prompt, or the resource URI's. */
const connectionOf = (method: string, params: Readonly<Record<string, unknown>>): string | null => {
  if (method === "tools/call" || method === "prompts/get") {
    const args = params.arguments
    return isObject(args) ? str(args.connection_id) : null
  }
  if (method === "resources/read" || method === "resources/subscribe") {
    const uri = str(params.uri)
    const match = uri === null ? null : RESOURCE_CONNECTION.exec(uri)
    return match === null ? null : decodeURIComponent(match[1]!)
  }
  return null
}

/** The collection a tool call names: its `table`, or the first one its query names (the console shows it). */
const collectionOf = (tool: string | null, params: Readonly<Record<string, unknown>>): string | null => {
  if (tool === null) return null
  const args = params.arguments
  if (!isObject(args)) return null
  if (typeof args.table === "string") return args.table.slice(0, MAX_NAME)
  return typeof args.query === "string" ? HistoryEntry.collectionOfStatement(args.query) : null
}

/**
 * The statements a tool call carries, as digests: the query text, or the exact JSON of what is
 * written. The query history stores the same digest (`HistoryEntry.statementDigests`), so an entry and
 * its line join.
 */
const statementsOf = (tool: string | null, params: Readonly<Record<string, unknown>>): ReadonlyArray<string> =>
  HistoryEntry.statementDigests(tool, params.arguments)

/**
 * The outcome of the JSON-RPC message the client got (a response's value, or an event stream's last
 * frame), read from its members: a result's own data (a row with an `error` member, say) is never
 * taken for an error. A stream whose last frame is no message (a keep-alive) ended well.
 */
const outcomeOfMessage = (message: unknown, method: string): { outcome: Line.Outcome; code: number | null } => {
  if (!isObject(message)) return { outcome: "ok", code: null }
  if (isObject(message.error)) {
    const code = typeof message.error.code === "number" ? message.error.code : null
    return { outcome: outcomeOfCode(code), code }
  }
  const result = message.result
  if (isObject(result) && result.resultType === "input_required") return { outcome: "input_required", code: null }
  if (method === "tools/call" && isObject(result) && result.isError === true) return { outcome: "tool_error", code: null }
  return { outcome: "ok", code: null }
}

/** The message of an event stream's frame (`data: <JSON>` and a blank line); `undefined` if it holds none. */
const messageOfFrame = (frame: string): unknown => {
  if (!frame.startsWith("data: ")) return undefined
  try {
    return JSON.parse(frame.slice(6))
  } catch {
    return undefined
  }
}

const outcomeOfCode = (code: number | null): Line.Outcome => {
  switch (code) {
    case -33007:
    case -33010:
      return "refused"
    case -33008:
    case -33009:
      return "unauthenticated"
    case -33002:
    case -33006:
    case -33000:
      return "cancelled"
    default:
      return "error"
  }
}

/**
 * Legacy sessions remembered for their client's name (a legacy request names its client only in
 * `initialize`); the oldest go first. Well above the 16 sessions the endpoint holds, so a session still
 * in use keeps its name however it is ordered there. @category constants
 */
export const MAX_SESSION_CLIENTS = 1000

type ClientName = { name: string; version: string | null }

/** The client a call names: `clientInfo` of a modern request or of `initialize`, else its legacy session's. */
const clientOf = (started: Started, modern: boolean, sessionClients: ReadonlyMap<string, ClientName>): ClientName | undefined => {
  const { meta, method, params, request } = started
  const info = modern ? meta?.[META_CLIENT_INFO] : method === "initialize" ? params.clientInfo : undefined
  if (modern || method === "initialize") return isObject(info) && typeof info.name === "string" ? named(info) : undefined
  const session = request.headers["mcp-session-id"]
  return session === undefined ? undefined : sessionClients.get(session)
}

interface LogLine {
  readonly warn: boolean
  readonly message: string
  readonly fields: LogLines.Line["fields"]
}

/** The operational log line of a call: `info` per request, `warn` for refusals and failed authentications. */
const logLineOf = (call: Line.Call): LogLine => {
  const fields: Array<readonly [string, string | number]> = [
    ["method", call.method],
    ["tool", call.tool ?? ""],
    ["principal", call.principalName ?? ""],
    ["client", call.client ?? ""],
    ["outcome", call.outcome]
  ]
  if (call.code !== null) fields.push(["code", call.code])
  fields.push(["durationMs", Math.round(call.durationMs * 10) / 10])
  return {
    warn: call.outcome === "refused" || call.outcome === "unauthenticated",
    message: call.outcome === "refused" ? "mcp request refused" : call.outcome === "unauthenticated" ? "authentication failed" : "mcp request",
    fields
  }
}

/**
 * Log lines are written after the answer, those of one turn of the event loop together
 * (`Base/TickBatch`: no fiber is woken per request); what is pending is written when the scope closes.
 */
const makeLogLines = Effect.gen(function*() {
  // The loggers are called directly, as `Effect.log` would call them from the layer's fiber, but once
  // per batch rather than through one log effect per line: on a busy daemon this is most of the cost
  // of the line. A logger that writes lines of fields itself (the daemon's, `Base/LogLines`) is given
  // the fields; any other gets them as annotations.
  const fiber = yield* Effect.withFiberRuntime<Fiber.RuntimeFiber<unknown, unknown>>((fiber) => Effect.succeed(fiber))
  const minimum = fiber.getFiberRef(FiberRef.currentMinimumLogLevel)
  // Effect's tracer logger adds a line to the current span as an event: with no span in the layer's
  // context (no tracing of the daemon's own start) it writes nothing, so it is not called.
  const span = Context.getOption(fiber.currentContext, Tracer.ParentSpan)
  const spanless = Option.isNone(span) || span.value._tag === "ExternalSpan"
  const loggers = Array.from(fiber.getFiberRef(FiberRef.currentLoggers))
    .filter((logger) => !(spanless && logger === Logger.tracerLogger))
    .map((logger) => ({ logger, writer: LogLines.writerOf(logger) }))
  const context = fiber.getFiberRefs()
  const fiberId = fiber.id()
  const write = (lines: ReadonlyArray<LogLine>) => {
    const date = new Date()
    for (const line of lines) {
      const logLevel = line.warn ? LogLevel.Warning : LogLevel.Info
      if (LogLevel.greaterThan(minimum, logLevel)) continue
      let annotations: HashMap.HashMap<string, unknown> | undefined
      for (const { logger, writer } of loggers) {
        if (writer !== undefined) {
          writer.write({ date, logLevel, fiberId, message: line.message, fields: line.fields })
          continue
        }
        annotations ??= HashMap.fromIterable(line.fields)
        logger.log({ fiberId, logLevel, message: line.message, cause: Cause.empty, context, spans: List.empty(), annotations, date })
      }
    }
  }
  // A logger that throws loses its batch, as a failed write to stderr loses the line.
  const batch = TickBatch.make(write, () => undefined)
  yield* Effect.addFinalizer(() => Effect.promise(batch.drained))
  return { push: batch.push }
})

/**
 * The observer of the daemon: activity log, connected clients, operational log lines.
 *
 * @category layers
 */
export const layer: Layer.Layer<CallObserver, never, ActivityLog | Clients> = Layer.scoped(
  CallObserver,
  Effect.gen(function*() {
    const log = yield* ActivityLog
    const clients = yield* Clients
    const sessionClients = new Map<string, ClientName>()

    const logLines = yield* makeLogLines

    const begin = (started: Started): Observation => {
      const { method, meta, params, request } = started
      const time = Date.now()
      const start = performance.now()
      const modern = Eras.isModern(meta, request.headers["mcp-protocol-version"])
      const client = clientOf(started, modern, sessionClients)
      const tool = method === "tools/call" ? str(params.name)?.slice(0, MAX_NAME) ?? null : null
      let principal: Principal | undefined
      let endClient: (() => void) | undefined

      let finished = false
      let stopObserving: (() => void) | undefined
      const finish = (result: { outcome: Line.Outcome; code: number | null }): void => {
        if (finished) return
        finished = true
        stopObserving?.()
        endClient?.()
        const durationMs = performance.now() - start
        const call: Line.Call = {
          time,
          client: client?.name ?? null,
          clientVersion: client?.version ?? null,
          principal: principal?.id ?? null,
          principalName: principal?.name ?? null,
          era: modern ? "modern" : "legacy",
          method,
          tool,
          connection: connectionOf(method, params)?.slice(0, MAX_NAME) ?? null,
          outcome: result.outcome,
          code: result.code,
          durationMs,
          statements: statementsOf(tool, params),
          collection: collectionOf(tool, params),
          ...writeLevelOf(tool, params)
        }
        log.record(call)
        logLines.push(logLineOf(call))
      }

      /** The outcome of a complete response. */
      const settled = (r: Extract<HttpTransport.HttpResponse, { _tag: "Full" }>) => {
        rememberSession(r)
        // A body not made from a value (the spliced `tools/list` result) is a result when it is a 200.
        finish(r.json === undefined ? { outcome: r.status === 200 ? "ok" : "error", code: null } : outcomeOfMessage(r.json, method))
      }

      const rememberSession = (response: HttpTransport.HttpResponse) => {
        const session = response.headers["mcp-session-id"]
        if (method !== "initialize" || session === undefined || client === undefined) return
        if (sessionClients.size >= MAX_SESSION_CLIENTS) sessionClients.delete(sessionClients.keys().next().value!)
        sessionClients.set(session, client)
      }

      return {
        authenticated: (p) => {
          principal = p
          endClient = clients.begin({
            name: client?.name ?? "unknown",
            version: client?.version ?? null,
            principal: p.id,
            principalName: p.name,
            principalSource: p._tag === "AnonymousPrincipal" ? "anonymous" : p.source,
            era: modern ? "modern" : "legacy"
          })
        },
        end: (response) => {
          // A response known at once stays an `Exit`: the transport writes it without a fiber.
          if (Exit.isExit(response)) {
            const exit = response as Exit.Exit<HttpTransport.HttpResponse>
            if (Exit.isSuccess(exit) && exit.value._tag === "Full") {
              settled(exit.value)
              return response
            }
          }
          // Otherwise the call ends with the fiber that answers it. A fiber that ends without its call
          // finished (interrupted: the client went away, shutdown; a failure; an event stream never run)
          // ends the call as `cancelled`. Observing the fiber adds no step to the request's run
          // (`Effect.onExit` ran an uninterruptible region and a finalizer per call), and a long-lived
          // fiber keeps no observer past its call.
          return Effect.withFiberRuntime<HttpTransport.HttpResponse>((fiber) => {
            const ended = () => finish({ outcome: "cancelled", code: null })
            fiber.addObserver(ended)
            stopObserving = () => fiber.removeObserver(ended)
            return Effect.map(response, (r): HttpTransport.HttpResponse => {
              if (r._tag === "Full") {
                settled(r)
                return r
              }
              // An event stream ends with its last frame (the response or the error) unless it is cut short.
              let last = ""
              let completed = false
              return {
                ...r,
                body: r.body.pipe(
                  Stream.tap((frame) => Effect.sync(() => (last = frame))),
                  Stream.onEnd(Effect.sync(() => (completed = true))),
                  Stream.ensuring(Effect.sync(() => finish(completed ? outcomeOfMessage(messageOfFrame(last), method) : { outcome: "cancelled", code: null })))
                )
              }
            })
          })
        }
      }
    }

    return { begin }
  })
)
