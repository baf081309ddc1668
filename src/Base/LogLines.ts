/**
 * Log lines written in bulk outside any fiber, as fields rather than as Effect log calls: the
 * observer's line per request. A logger that formats and writes such a line itself carries a
 * `LineWriter` (`withLineWriter`); callers hand it the fields, and call any other logger as
 * `Effect.log` would (an Effect `HashMap` of annotations, built only then).
 *
 * Why: building that `HashMap` and Effect's own formatting of it (the fiber's id as a `HashSet`, a
 * pattern per value) were a fifth of what a `tools/list` allocated, for a line whose fields are a
 * handful of strings and numbers.
 *
 * @since 0.1.0
 */
import type * as FiberId from "effect/FiberId"
import type * as Logger from "effect/Logger"
import type * as LogLevel from "effect/LogLevel"

/** One line: plain fields, in the order given. @category models */
export interface Line {
  readonly date: Date
  readonly logLevel: LogLevel.LogLevel
  readonly fiberId: FiberId.FiberId
  readonly message: string
  readonly fields: ReadonlyArray<readonly [string, string | number]>
}

/** @category models */
export interface LineWriter {
  readonly write: (line: Line) => void
}

const LineWriterId: unique symbol = Symbol.for("weaviate-mcp/LineWriter")

/**
 * The logger, carrying a writer that writes a `Line` exactly as the logger would write the same
 * message with the fields as annotations.
 *
 * @category constructors
 */
export const withLineWriter = <L extends Logger.Logger<unknown, unknown>>(logger: L, writer: LineWriter): L =>
  Object.assign(logger, { [LineWriterId]: writer })

/** The writer a logger carries, if it carries one. @category getters */
export const writerOf = (logger: Logger.Logger<unknown, unknown>): LineWriter | undefined =>
  (logger as { readonly [LineWriterId]?: LineWriter })[LineWriterId]
