/**
 * `weaviate-mcp export CONN TABLE [--format jsonl|csv|json] [--output FILE] [--tenant T]
 * [--include-vector] [--page-size N] [--resume CURSOR] [--consistency-level L] [--progress] [--json]`:
 * every row of a collection, read through the `after` cursor (`Driver.readAll`: no
 * `QUERY_MAXIMUM_RESULTS` cap) and written page by page, so memory does not grow with the collection.
 *
 * With `--output` the rows go to a temporary file beside FILE, renamed to FILE when every row is in.
 * When the export stops early (Ctrl-C, a lost connection, a refusal), the rows written so far, each
 * one whole, are kept as `FILE.partial`; the command prints the cursor (the uuid of the last row
 * kept) to pass to `--resume`, and exits 1. Without `--output` the rows go to stdout, and the cursor is
 * printed on stderr all the same.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Driver } from "../Driver/Driver.ts"
import type { Row } from "../Driver/Grid.ts"
import * as RowFormat from "../Driver/RowFormat.ts"
import * as BulkHeap from "./BulkHeap.ts"
import * as BulkProgress from "./BulkProgress.ts"
import { UsageError } from "./CliErrors.ts"
import * as CommonOptions from "./CommonOptions.ts"
import * as HistoryCli from "./HistoryCli.ts"
import { driverLayer } from "./DriverCli.ts"

/** The export file could not be written. @category errors */
export class OutputFailed extends Schema.TaggedError<OutputFailed>()("OutputFailed", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `Cannot write ${this.path}: ${this.reason}`
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Weaviate's consistency levels, as its API spells them. @category options */
export const consistencyLevel = Options.choice("consistency-level", ["ONE", "QUORUM", "ALL"]).pipe(
  Options.withDescription("Replicas that must answer (Weaviate's consistency_level): ONE, QUORUM or ALL"),
  Options.optional
)

/** Where the rows go: a temporary file (renamed at the end) or stdout. */
interface Target {
  readonly name: string
  /**
   * Queues the text (all of it, at once) and waits until it is written. `queued` runs in the same
   * step as the queueing, so an interruption can never fall between the two: what it counts is what
   * the file (flushed when closed) will hold.
   */
  readonly write: (text: string, queued?: () => void) => Effect.Effect<void, OutputFailed>
  readonly close: Effect.Effect<void, OutputFailed>
}

const writeTo = (stream: NodeJS.WritableStream, name: string) => (text: string, queued?: () => void) =>
  text.length === 0
    ? Effect.sync(() => queued?.())
    : Effect.async<void, OutputFailed>((resume) => {
      // The write's callback gets the error (EPIPE when a reader such as `head` went away); without a
      // listener the stream would also throw it out of the event loop.
      if (stream.listenerCount("error") === 0) stream.on("error", () => undefined)
      stream.write(text, (error) =>
        resume(error === null || error === undefined ? Effect.void : Effect.fail(new OutputFailed({ path: name, reason: error.message }))))
      queued?.()
    })

const fileTarget = (path: string) =>
  Effect.try({
    try: () => {
      const fd = NodeFs.openSync(path, "w", 0o644)
      const stream = NodeFs.createWriteStream("", { fd })
      return {
        name: path,
        write: writeTo(stream, path),
        close: Effect.async<void, OutputFailed>((resume) => {
          stream.end(() => resume(Effect.void))
          stream.once("error", (e) => resume(Effect.fail(new OutputFailed({ path, reason: e.message }))))
        })
      } satisfies Target
    },
    catch: (e) => new OutputFailed({ path, reason: e instanceof Error ? e.message : String(e) })
  })

const stdoutTarget: Target = { name: "stdout", write: writeTo(process.stdout, "stdout"), close: Effect.void }

const rename = (from: string, to: string) =>
  Effect.try({
    try: () => NodeFs.renameSync(from, to),
    catch: (e) => new OutputFailed({ path: to, reason: e instanceof Error ? e.message : String(e) })
  })

const remove = (path: string) =>
  Effect.try({
    try: () => NodeFs.rmSync(path, { force: true }),
    catch: (e) => new OutputFailed({ path, reason: e instanceof Error ? e.message : String(e) })
  })

/** @category commands */
export const exportCommand = Command.make(
  "export",
  {
    home: CommonOptions.home,
    json: CommonOptions.json,
    connection: Args.text({ name: "CONN" }).pipe(Args.withDescription("Connection id or name")),
    table: Args.text({ name: "TABLE" }).pipe(Args.withDescription("Collection name")),
    format: Options.choice("format", ["jsonl", "csv", "json"]).pipe(
      Options.withDescription("jsonl (default; .csv and .json output names choose csv and json), csv or json"),
      Options.optional
    ),
    output: Options.text("output").pipe(Options.withDescription("Write to FILE (temp file, renamed when complete) instead of stdout"), Options.optional),
    tenant: Options.text("tenant").pipe(Options.withDescription("Tenant of a multi-tenant collection"), Options.optional),
    includeVector: Options.boolean("include-vector").pipe(Options.withDescription("Add the vector column(s): vector, or vector:<name> per named vector")),
    pageSize: Options.integer("page-size").pipe(Options.withDescription("Rows per request (default 500, at most 10000)"), Options.withDefault(500)),
    resume: Options.text("resume").pipe(Options.withDescription("Start after this cursor (printed by an interrupted export)"), Options.optional),
    consistencyLevel,
    progress: Options.boolean("progress").pipe(Options.withDescription("Show progress on stderr even when it is not a terminal"))
  },
  (flags) =>
    HistoryCli.recording({
      command: "export",
      connection: flags.connection,
      collection: flags.table,
      tenant: Option.getOrUndefined(flags.tenant),
      consistencyLevel: Option.getOrUndefined(flags.consistencyLevel),
      statement: JSON.stringify({
        table: flags.table,
        format: Option.getOrUndefined(flags.format),
        output: Option.getOrUndefined(flags.output),
        tenant: Option.getOrUndefined(flags.tenant),
        includeVector: flags.includeVector,
        resume: Option.getOrUndefined(flags.resume)
      })
    }, (note) => Effect.gen(function*() {
      BulkHeap.bound()
      const resume = Option.getOrUndefined(flags.resume)
      if (resume !== undefined && !UUID.test(resume)) return yield* new UsageError({ message: `--resume must be a cursor (a uuid), got '${resume}'` })
      if (flags.pageSize < 1 || flags.pageSize > 10_000) return yield* new UsageError({ message: "--page-size must be between 1 and 10000" })
      const output = Option.getOrUndefined(flags.output)
      const format: RowFormat.Format = Option.getOrElse(flags.format, () => (output === undefined ? "jsonl" : RowFormat.formatOfName(output)))
      const tenant = Option.getOrUndefined(flags.tenant)
      const driver = yield* Driver
      const { columns } = yield* driver.describe(flags.connection, flags.table)
      const names = columns.filter((c) => flags.includeVector || c.kind !== "vector").map((c) => c.name)
      const showProgress = BulkProgress.wanted(flags)
      const total = showProgress
        ? yield* Effect.orElseSucceed(driver.count(flags.connection, flags.table, { tenant }), () => undefined)
        : undefined
      // Finished on every way out (it keeps a timer while it runs).
      const progress = yield* Effect.acquireRelease(
        Effect.sync(() => BulkProgress.make({ label: "export", enabled: showProgress, total: total === undefined ? undefined : { rows: total } })),
        (p) => Effect.sync(() => p.finish())
      )
      const encoder = RowFormat.encoder(format, names)

      const temporary = output === undefined
        ? undefined
        : NodePath.join(NodePath.dirname(output), `.${NodePath.basename(output)}.${process.pid}.tmp`)
      const target = temporary === undefined ? stdoutTarget : yield* fileTarget(temporary)
      const started = performance.now()
      let rows = 0
      let cursor: string | undefined = resume

      const summary = (complete: boolean, partial?: string) => {
        const seconds = (performance.now() - started) / 1000
        const report = {
          complete,
          rows,
          seconds: Math.round(seconds * 1000) / 1000,
          rowsPerSecond: BulkProgress.rate(rows, seconds),
          errors: complete ? 0 : 1,
          cursor: complete ? null : cursor ?? null,
          output: complete ? output ?? null : partial ?? null
        }
        // The summary goes where the rows do not: stdout when they went to a file.
        const out = output === undefined ? process.stderr : process.stdout
        if (BulkProgress.jsonSummary(flags)) out.write(`${JSON.stringify(report)}\n`)
        else if (complete) out.write(`exported ${rows} rows${output !== undefined ? ` to ${output}` : ""} in ${report.seconds} s (${report.rowsPerSecond} rows/s)\n`)
      }

      /** Stopped early: whole rows kept under a name that says so, and the cursor to resume from. */
      const keepPartial = (exit: Exit.Exit<unknown, unknown>) =>
        Effect.gen(function*() {
          progress.finish()
          yield* Effect.ignore(target.write(encoder.footer(rows)))
          yield* Effect.ignore(target.close)
          // Nothing written: no file is left behind.
          const partial = output === undefined || rows === 0 ? undefined : `${output}.partial`
          if (temporary !== undefined) {
            yield* Effect.ignore(partial !== undefined ? rename(temporary, partial) : remove(temporary))
          }
          const where = partial === undefined ? "" : `; the ${rows} rows written are in ${partial}`
          const how = cursor === undefined ? "start again without --resume" : `continue with --resume ${cursor}`
          const interrupted = Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause)
          process.stderr.write(`export ${interrupted ? "interrupted" : "stopped"} after ${rows} rows${where}; ${how}\n`)
          summary(false, partial)
          // An interruption ends the program without a failure to map: the exit code is set here.
          if (interrupted) process.exitCode = 1
        })

      const readAll = driver.readAll(flags.connection, flags.table, {
        pageSize: flags.pageSize,
        tenant,
        after: resume,
        includeVector: flags.includeVector,
        consistencyLevel: Option.getOrUndefined(flags.consistencyLevel),
        vectorText: true
      })
      // The next page is asked for while this one is written, so Weaviate and we work at the same
      // time; one page ahead at most, so memory holds two pages.
      const pages = Stream.bufferChunks(readAll, { capacity: 1 })
      const copy = Effect.zipRight(
        target.write(encoder.header),
        Stream.runForEachChunk(pages, (chunk) => {
          const page = Chunk.toReadonlyArray(chunk) as ReadonlyArray<Row>
          let text = ""
          page.forEach((row, i) => {
            text += encoder.row(row, rows + i === 0)
          })
          // Counted when queued: an interruption while the page is being written keeps it (the file is
          // flushed when closed), and the cursor names its last row.
          return target.write(text, () => {
            rows += page.length
            note.rows = rows
            const last = page[page.length - 1]?.uuid
            if (typeof last === "string") cursor = last
            progress.update(rows)
          })
        })
      )
      yield* Effect.onExit(copy, (exit) => (Exit.isSuccess(exit) ? Effect.void : keepPartial(exit)))
      yield* target.write(encoder.footer(rows))
      yield* target.close
      if (temporary !== undefined && output !== undefined) yield* rename(temporary, output)
      progress.finish()
      summary(true)
    }).pipe(Effect.scoped)).pipe(Effect.provide(driverLayer(flags.home)), Effect.provide(CommonOptions.homeLayer(flags.home)))
).pipe(Command.withDescription("Write every row of a collection to a file or stdout (JSONL, CSV or JSON)"))
