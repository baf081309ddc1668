/**
 * `weaviate-mcp import CONN TABLE FILE [--format jsonl|csv] [--batch-size N] [--id-field F]
 * [--tenant T] [--consistency-level L] [--fail-fast] [--dry-run] [--errors FILE] [--progress] [--json]`:
 * the rows of a JSONL or CSV file written into a collection through `POST /v1/batch/objects`
 * (`BatchImport`), a few batches in flight, backing off when Weaviate answers 429 or 503.
 *
 * Every row that is not written is reported with its line number and the reason (a malformed line, a
 * CSV record with the wrong number of cells, a value of the wrong type for the schema, a vector of
 * the wrong length, or Weaviate's own message): on stderr, in the summary and, with `--errors FILE`,
 * as one JSON line each. The other rows are written, unless `--fail-fast` stops at the first one.
 * `--dry-run` checks the whole file against the collection's schema and sends nothing. A connection
 * in Safe Mode `readOnly` refuses an import. Exit code 0 when every row was written (or, in a dry run,
 * is valid), 1 otherwise.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as NodeFs from "node:fs"
import * as BatchImport from "../Driver/BatchImport.ts"
import { ConnectionStore } from "../Driver/ConnectionStore.ts"
import { Driver } from "../Driver/Driver.ts"
import * as RowFormat from "../Driver/RowFormat.ts"
import * as BulkHeap from "./BulkHeap.ts"
import * as BulkProgress from "./BulkProgress.ts"
import { UsageError } from "./CliErrors.ts"
import * as CommonOptions from "./CommonOptions.ts"
import * as HistoryCli from "./HistoryCli.ts"
import { driverLayer } from "./DriverCli.ts"
import { consistencyLevel, OutputFailed } from "./ExportCommand.ts"

/** An import into a connection whose Safe Mode is `readOnly`. @category errors */
export class ImportRefused extends Schema.TaggedError<ImportRefused>()("ImportRefused", {
  reason: Schema.String
}) {
  override get message() {
    return `Import refused: ${this.reason}`
  }
}

/** The rows an import could not write (exit code 1; the summary was printed). @category errors */
export class RowsRejected extends Schema.TaggedError<RowsRejected>()("RowsRejected", {
  rejected: Schema.Number,
  written: Schema.Number,
  dryRun: Schema.Boolean
}) {
  override get message() {
    return this.dryRun
      ? `${this.rejected} rows would be rejected (dry run; nothing was sent)`
      : `${this.rejected} rows were not written (${this.written} were)`
  }
}

/** Rows reported one by one on stderr and in the summary; the rest are counted (all are in --errors). */
const SHOWN = 100

/** What the query history keeps of an import: the table and the options, as JSON. */
const recordedAs = (flags: {
  readonly connection: string
  readonly table: string
  readonly file: string
  readonly format: Option.Option<string>
  readonly idField: Option.Option<string>
  readonly tenant: Option.Option<string>
  readonly consistencyLevel: Option.Option<string>
  readonly dryRun: boolean
}): HistoryCli.Statement => ({
  command: "import",
  connection: flags.connection,
  collection: flags.table,
  tenant: Option.getOrUndefined(flags.tenant),
  consistencyLevel: Option.getOrUndefined(flags.consistencyLevel),
  statement: JSON.stringify({
    table: flags.table,
    file: flags.file,
    format: Option.getOrUndefined(flags.format),
    idField: Option.getOrUndefined(flags.idField),
    tenant: Option.getOrUndefined(flags.tenant),
    dryRun: flags.dryRun
  })
})

/** @category commands */
export const importCommand = Command.make(
  "import",
  {
    home: CommonOptions.home,
    json: CommonOptions.json,
    connection: Args.text({ name: "CONN" }).pipe(Args.withDescription("Connection id or name")),
    table: Args.text({ name: "TABLE" }).pipe(Args.withDescription("Collection name")),
    file: Args.file({ name: "FILE", exists: "yes" }).pipe(Args.withDescription("JSONL or CSV file (as export writes them)")),
    format: Options.choice("format", ["jsonl", "csv"]).pipe(
      Options.withDescription("jsonl or csv (default: csv for a .csv file, else jsonl)"),
      Options.optional
    ),
    batchSize: Options.integer("batch-size").pipe(Options.withDescription("Rows per batch request (default 100)"), Options.withDefault(100)),
    idField: Options.text("id-field").pipe(
      Options.withDescription("Column whose value is the row's id (a UUID as is, any other value as its UUID v5): a re-run upserts"),
      Options.optional
    ),
    tenant: Options.text("tenant").pipe(Options.withDescription("Tenant of a multi-tenant collection"), Options.optional),
    consistencyLevel,
    failFast: Options.boolean("fail-fast").pipe(Options.withDescription("Stop at the first row that is not written")),
    dryRun: Options.boolean("dry-run").pipe(Options.withDescription("Check every row against the collection's schema; send nothing")),
    errors: Options.text("errors").pipe(Options.withDescription("Write each rejected row as a JSON line {line, uuid, reason} to FILE"), Options.optional),
    progress: Options.boolean("progress").pipe(Options.withDescription("Show progress on stderr even when it is not a terminal"))
  },
  (flags) =>
    HistoryCli.recording(recordedAs(flags), (note) => Effect.gen(function*() {
      BulkHeap.bound()
      if (flags.batchSize < 1 || flags.batchSize > 10_000) return yield* new UsageError({ message: "--batch-size must be between 1 and 10000" })
      const format = Option.getOrElse(flags.format, () => (RowFormat.formatOfName(flags.file) === "csv" ? "csv" as const : "jsonl" as const))
      const store = yield* ConnectionStore
      const connection = yield* store.get(flags.connection)
      if (connection.safeMode === "readOnly" && !flags.dryRun) {
        return yield* new ImportRefused({ reason: `the connection ${connection.name} is in Safe Mode readOnly` })
      }
      const driver = yield* Driver
      const { collection, tenant } = yield* driver.resolveTenant(connection, flags.table, Option.getOrUndefined(flags.tenant), "insert")
      const http = yield* driver.http(connection)
      const vectorLengths = yield* BatchImport.vectorLengths(http, collection, tenant)

      const errorsPath = Option.getOrUndefined(flags.errors)
      const errorsFile = errorsPath === undefined ? undefined : yield* Effect.try({
        try: () => NodeFs.openSync(errorsPath, "w", 0o644),
        catch: (e) => new OutputFailed({ path: errorsPath, reason: e instanceof Error ? e.message : String(e) })
      })
      const size = yield* Effect.orElseSucceed(Effect.sync(() => NodeFs.statSync(flags.file).size), () => 0)
      // The file's size is the total: rows are read a few batches ahead of the ones answered. Finished
      // on every way out (it keeps a timer while it runs).
      const progress = yield* Effect.acquireRelease(
        Effect.sync(() =>
          BulkProgress.make({
            label: flags.dryRun ? "import (dry run)" : "import",
            enabled: BulkProgress.wanted(flags),
            total: size > 0 ? { bytes: size } : undefined
          })
        ),
        (p) => Effect.sync(() => p.finish())
      )
      const started = performance.now()
      let written = 0
      let rejected = 0
      let stopped = false
      const shown: Array<BatchImport.Rejected> = []

      let offset = 0
      // Per chunk, not per row: a stream step per row is a cost the import can feel.
      const items = Stream.mapChunks(RowFormat.read(flags.file, format), (chunk) => {
        for (const item of chunk) if (item._tag === "Parsed" && item.offset !== undefined) offset = item.offset
        return chunk
      })
      const results = BatchImport.writeAll(http, collection, items, {
        batchSize: flags.batchSize,
        idField: Option.getOrUndefined(flags.idField),
        tenant,
        vectorLengths,
        consistencyLevel: Option.getOrUndefined(flags.consistencyLevel),
        dryRun: flags.dryRun
      })
      yield* results.pipe(
        Stream.takeUntil((result) => {
          stopped = result.rejected.some((r) => r.fatal === true) || (flags.failFast && result.rejected.length > 0)
          return stopped
        }),
        Stream.runForEach((result) =>
          Effect.try({
            try: () => {
              written += result.written
              note.rows = written
              for (const r of result.rejected) {
                rejected++
                const entry = { line: r.line, ...(r.uuid !== undefined ? { uuid: r.uuid } : {}), reason: r.reason }
                if (errorsFile !== undefined) NodeFs.writeSync(errorsFile, `${JSON.stringify(entry)}\n`)
                if (shown.length < SHOWN) {
                  shown.push(r)
                  progress.log(`line ${r.line}: ${r.reason}\n`)
                }
              }
              progress.update(written + rejected, offset)
            },
            catch: (e) => new OutputFailed({ path: errorsPath ?? "errors", reason: e instanceof Error ? e.message : String(e) })
          })
        ),
        Effect.ensuring(Effect.sync(() => {
          if (errorsFile !== undefined) NodeFs.closeSync(errorsFile)
        })),
        // Ctrl-C: batches in flight are abandoned (a re-run with ids upserts them); say how far it got.
        Effect.onInterrupt(() =>
          Effect.sync(() => {
            progress.finish()
            process.stderr.write(`import interrupted: ${written} rows written, ${rejected} rejected\n`)
            process.exitCode = 1
          })
        )
      )
      progress.finish()
      const seconds = (performance.now() - started) / 1000
      const report = {
        dryRun: flags.dryRun,
        complete: !stopped,
        rows: written,
        rejected,
        seconds: Math.round(seconds * 1000) / 1000,
        rowsPerSecond: BulkProgress.rate(written, seconds),
        bytes: size,
        errors: shown.map((r) => ({ line: r.line, ...(r.uuid !== undefined ? { uuid: r.uuid } : {}), reason: r.reason }))
      }
      if (BulkProgress.jsonSummary(flags)) {
        process.stdout.write(`${JSON.stringify(report)}\n`)
      } else {
        const verb = flags.dryRun ? "checked" : "imported"
        process.stdout.write(
          `${verb} ${written} rows into ${collection.name} in ${report.seconds} s (${report.rowsPerSecond} rows/s)` +
            `${rejected > 0 ? `; ${rejected} rejected${errorsPath !== undefined ? ` (see ${errorsPath})` : ""}` : ""}` +
            `${stopped ? "; stopped early" : ""}\n`
        )
      }
      if (rejected > 0) return yield* new RowsRejected({ rejected, written, dryRun: flags.dryRun })
    }).pipe(Effect.scoped)).pipe(Effect.provide(driverLayer(flags.home)), Effect.provide(CommonOptions.homeLayer(flags.home)))
).pipe(Command.withDescription("Write the rows of a JSONL or CSV file into a collection (batched)"))
