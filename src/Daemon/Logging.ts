/**
 * Structured logging to stderr (Effect Logger): text (logfmt) or JSON lines, a minimum level, and
 * every line passed through `Redaction.global` so no secret reaches a log.
 *
 * @since 0.1.0
 */
import * as FiberId from "effect/FiberId"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Schema from "effect/Schema"
import * as LogLines from "../Base/LogLines.ts"
import * as Redaction from "../Base/Redaction.ts"

/** @category schemas */
export const LogFormat = Schema.Literal("text", "json")
export type LogFormat = typeof LogFormat.Type

/** @category schemas */
export const LogLevelName = Schema.Literal("all", "trace", "debug", "info", "warning", "error", "fatal", "none")
export type LogLevelName = typeof LogLevelName.Type

const levels: Record<LogLevelName, LogLevel.LogLevel> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

/** The output stream; tests may capture it. @category models */
export interface Sink {
  readonly write: (line: string) => void
}

/** Buffers waiting for their flush, all written at process exit at the latest. */
const unflushed = new Set<() => void>()
let exitHook = false

/**
 * A sink that writes the lines of one tick together (`write` receives whole lines, each ending in a
 * newline): under load the per-request lines of a batch cost one write instead of one each (measured:
 * about 5 µs per `tools/list` with stderr redirected to a file). Lines keep their order; whatever is
 * still buffered is written when the process exits.
 *
 * @category constructors
 */
export const batchedSink = (write: (text: string) => void): Sink => {
  let buffer = ""
  const flush = () => {
    unflushed.delete(flush)
    if (buffer.length === 0) return
    const text = buffer
    buffer = ""
    // Runs outside any fiber: a failing output (a full disk, a closed pipe) must not throw into the
    // event loop and end the daemon. The lines are lost, as a failed write to stderr loses them.
    try {
      write(text)
    } catch {
      // Nowhere left to report it.
    }
  }
  if (!exitHook) {
    exitHook = true
    process.once("exit", () => {
      for (const pending of Array.from(unflushed)) pending()
    })
  }
  return {
    write: (line) => {
      if (buffer.length === 0) {
        unflushed.add(flush)
        queueMicrotask(flush)
      }
      buffer += `${line}\n`
    }
  }
}

const stderrSink: Sink = batchedSink((text) => void process.stderr.write(text))

/** Effect's logfmt: a label without spaces, `=` or quotes; a value as it is, or quoted when it holds any. */
const TEXT_ONLY = /^[^\s"=]*$/
const logfmtLabel = (label: string) => label.replace(/[\s="]/g, "_")
const logfmtValue = (value: string) => (TEXT_ONLY.test(value) ? value : JSON.stringify(value))

/**
 * The order Effect's loggers write a set of annotations in (its `HashMap`'s), computed once per list
 * of names: a line written from fields reads exactly as the same line logged with annotations. The
 * lists are few (the observer's line has two), so they are found by comparing names, with nothing
 * built per line.
 */
const annotationOrders: Array<{ readonly names: ReadonlyArray<string>; readonly order: ReadonlyArray<number> }> = []
const sameNames = (names: ReadonlyArray<string>, fields: LogLines.Line["fields"]) =>
  names.length === fields.length && names.every((name, i) => name === fields[i]![0])
const orderOf = (fields: LogLines.Line["fields"]): ReadonlyArray<number> => {
  const known = annotationOrders.find((entry) => sameNames(entry.names, fields))
  if (known !== undefined) return known.order
  const order = Array.from(HashMap.values(HashMap.fromIterable(fields.map(([name], i) => [name, i] as const))))
  if (annotationOrders.length < 64) annotationOrders.push({ names: fields.map(([name]) => name), order })
  return order
}

const threadNames = new WeakMap<FiberId.FiberId, string>()
const threadName = (fiberId: FiberId.FiberId) => {
  let name = threadNames.get(fiberId)
  if (name === undefined) threadNames.set(fiberId, name = FiberId.threadName(fiberId))
  return name
}

/** A line of fields as Effect's `logfmtLogger` writes it (no cause, no spans). */
const logfmtLine = (line: LogLines.Line) => {
  let out = `timestamp=${logfmtValue(line.date.toISOString())} level=${logfmtValue(line.logLevel.label)}` +
    ` fiber=${logfmtValue(threadName(line.fiberId))} message=${logfmtValue(line.message)}`
  for (const i of orderOf(line.fields)) {
    const [name, value] = line.fields[i]!
    out += ` ${logfmtLabel(name)}=${logfmtValue(String(value))}`
  }
  return out
}

/** A line of fields as Effect's `jsonLogger` writes it (no cause, no spans). */
const jsonLine = (line: LogLines.Line) => {
  const annotations: Record<string, string | number> = {}
  for (const i of orderOf(line.fields)) annotations[line.fields[i]![0]] = line.fields[i]![1]
  return JSON.stringify({
    message: line.message,
    logLevel: line.logLevel.label,
    timestamp: line.date.toISOString(),
    annotations,
    spans: {},
    fiberId: threadName(line.fiberId)
  })
}

/**
 * A logger that formats with Effect's logfmt or JSON logger, redacts, and writes one line. It also
 * writes lines given as fields (`LogLines`), formatted here the same way without Effect's logger.
 *
 * @category constructors
 */
export const makeLogger = (format: LogFormat, sink: Sink = stderrSink) => {
  const base = format === "json" ? Logger.jsonLogger : Logger.logfmtLogger
  const logger = Logger.make<unknown, void>((options) => {
    const withoutSpans = { ...options, annotations: options.annotations ?? HashMap.empty() }
    sink.write(Redaction.global.redact(base.log(withoutSpans)))
  })
  const formatLine = format === "json" ? jsonLine : logfmtLine
  return LogLines.withLineWriter(logger, { write: (line) => sink.write(Redaction.global.redact(formatLine(line))) })
}

/**
 * Replaces the default logger and sets the minimum level.
 *
 * @category layers
 */
export const layer = (options: { readonly format: LogFormat; readonly level: LogLevelName; readonly sink?: Sink }) =>
  Layer.merge(
    Logger.replace(Logger.defaultLogger, makeLogger(options.format, options.sink)),
    Logger.minimumLogLevel(levels[options.level])
  )
