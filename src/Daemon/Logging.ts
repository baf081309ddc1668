/**
 * Structured logging to stderr (Effect Logger): text (logfmt) or JSON lines, a minimum level, and
 * every line passed through `Redaction.global` so no secret reaches a log.
 *
 * @since 0.1.0
 */
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Schema from "effect/Schema"
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

/**
 * A logger that formats with Effect's logfmt or JSON logger, redacts, and writes one line.
 *
 * @category constructors
 */
export const makeLogger = (format: LogFormat, sink: Sink = stderrSink) => {
  const base = format === "json" ? Logger.jsonLogger : Logger.logfmtLogger
  return Logger.make<unknown, void>((options) => {
    const withoutSpans = { ...options, annotations: options.annotations ?? HashMap.empty() }
    sink.write(Redaction.global.redact(base.log(withoutSpans)))
  })
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
