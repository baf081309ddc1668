/**
 * The CLI's side of the query history: its settings (`history.*` of settings.json and
 * `WEAVIATE_MCP_HISTORY_*`), and the recording of the driver commands (`graphql`, `browse`, `rest`,
 * `export`, `import`), whose statements are stored with the source `cli` beside the daemon's. A
 * command's history entry is written once it has run, in one insert (WAL: the daemon may be writing);
 * a history that cannot be written loses the entry, never the command's result or exit code.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Settings from "../Daemon/Settings.ts"
import { ConnectionStore } from "../Driver/ConnectionStore.ts"
import * as ToolError from "../Catalogue/Tools/ToolError.ts"
import * as HistoryEntry from "../History/HistoryEntry.ts"
import { HistoryStore } from "../History/HistoryStore.ts"

/** The history settings in force for a CLI command (the defaults when settings.json cannot be read). @category config */
export const settings = Effect.gen(function*() {
  const provider = yield* Settings.provider()
  return yield* Effect.withConfigProvider(Settings.HistorySettings, provider)
}).pipe(Effect.orElseSucceed(() => ({ enabled: true, retentionDays: 90, maxEntries: 1_000_000, recordText: true })))

/**
 * The history of the home, opened for a command (writes wait up to 2 s for the daemon's). It logs
 * nothing: a command's output is its own, and `history` says itself why the history is off.
 *
 * @category constructors
 */
export const open = (options: { readonly forReading?: boolean } = {}) =>
  Effect.flatMap(settings, (configured) =>
    HistoryStore.make({
      ...configured,
      // Reading works whether or not statements are being recorded.
      enabled: options.forReading === true || configured.enabled,
      offReason: "history.enabled is false in settings.json",
      busyTimeoutMs: 2_000,
      // Retention is the daemon's: a command never waits on it.
      retentionDays: Number.MAX_SAFE_INTEGER / 86_400_000,
      maxEntries: Number.MAX_SAFE_INTEGER
    })).pipe(Logger.withMinimumLogLevel(LogLevel.None))

/** What a command tells the recording as it runs: the rows it read or wrote, the collection it resolved. @category models */
export interface Note {
  rows: number | null
  collection?: string | undefined
  /** The statement, when the command reads it itself (stdin). */
  statement?: string | undefined
}

/** @category models */
export interface Statement {
  readonly command: "graphql" | "browse" | "rest" | "export" | "import" | "aggregate"
  readonly connection: string
  readonly collection?: string | undefined
  readonly tenant?: string | undefined
  readonly consistencyLevel?: string | undefined
  readonly statement?: string | undefined
}

const errorOf = <E>(cause: Cause.Cause<E>): { readonly code: string; readonly message: string } => {
  if (Cause.isInterruptedOnly(cause)) return { code: "cancelled", message: "the command was interrupted" }
  const failure = Cause.failureOption(cause)
  const error = Option.getOrUndefined(failure) as { readonly _tag?: unknown; readonly message?: unknown } | undefined
  if (typeof error?._tag !== "string" || typeof error.message !== "string") return { code: "internal_failure", message: Cause.pretty(cause).split("\n")[0] ?? "failed" }
  // The tool error codes, as the daemon records a tool's failure: the history reads the same either way.
  const coded = error._tag === "UsageError" ? ToolError.fail("invalid_argument", error.message) : ToolError.fromDriverError(error as { _tag: string; message: string })
  return { code: coded.code, message: coded.reason }
}

/**
 * Runs a driver command and records its statement in the history afterwards (`source: cli`); the
 * command's own result, error and exit code are unchanged.
 *
 * @category combinators
 */
export const recording = <A, E, R>(statement: Statement, run: (note: Note) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const note: Note = { rows: null }
    const time = Date.now()
    const start = performance.now()
    const exit = yield* Effect.exit(run(note))
    const durationMs = performance.now() - start
    const store = yield* Effect.serviceOption(ConnectionStore)
    const connection = Option.isNone(store)
      ? statement.connection
      : yield* store.value.get(statement.connection).pipe(Effect.map((c) => c.id), Effect.orElseSucceed(() => statement.connection))
    const failed = Exit.isFailure(exit) ? errorOf(exit.cause) : undefined
    const text = note.statement ?? statement.statement
    // A command that failed before it had its statement (stdin unreadable) ran nothing.
    if (text === undefined) return yield* exit
    const entry: HistoryEntry.NewEntry = {
      time,
      connection,
      collection: note.collection ?? statement.collection ?? HistoryEntry.collectionOfStatement(text),
      tenant: statement.tenant ?? null,
      consistencyLevel: statement.consistencyLevel ?? null,
      source: "cli",
      client: "cli",
      principal: null,
      principalName: null,
      tool: statement.command,
      statement: text,
      digest: HistoryEntry.digest(text),
      durationMs,
      rows: failed === undefined ? note.rows : null,
      outcome: failed === undefined ? "ok" : "error",
      errorCode: failed?.code ?? null,
      errorMessage: failed?.message ?? null,
      approval: null
    }
    yield* Effect.scoped(Effect.flatMap(open(), (history) => Effect.zipRight(Effect.sync(() => history.record(entry)), history.flush))).pipe(
      Effect.catchAllCause(() => Effect.void)
    )
    return yield* exit
  })
