/**
 * The query history: `history.db` in the home (mode 0600), an SQLite database through
 * `better-sqlite3`, with an FTS5 index over the statement, the collection and the client's name.
 *
 * - **Off the response path.** `record` queues an entry and returns; the entries of one turn of the
 *   event loop are redacted, cut and inserted in one transaction on the next turn (`Base/TickBatch`),
 *   like the activity log's lines.
 * - **WAL.** The daemon writes while a CLI command reads (`weaviate-mcp history`), and the CLI's own
 *   commands add their entries beside the daemon's.
 * - **Losing entries, never calls.** A database that is locked by another writer (the daemon waits
 *   `busyTimeoutMs` at most), full or failing loses that batch's entries, with one warning; a damaged
 *   one (not a database, truncated) turns the history off with one error line, and `doctor` and
 *   `history` say why and how to reset it. Nothing here ever fails a tool call.
 * - **Durability.** A batch is committed with `synchronous = NORMAL`: a killed daemon (`kill -9`) loses
 *   at most the batch it had not written yet, and the database opens cleanly afterwards.
 * - **Size.** Entries older than `retentionDays` or beyond `maxEntries` (oldest first) are deleted in
 *   the background, `PRUNE_CHUNK` at a time; SQLite reuses the freed pages, so at `maxEntries` the
 *   file stops growing.
 * - **Loaded on demand.** The native module is loaded when a store opens, never when the history is
 *   off (`--history off`, `history.enabled: false`); a module that cannot load turns the history off
 *   like a damaged file.
 *
 * @since 0.1.0
 */
import type BetterSqlite3 from "better-sqlite3"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs"
import { Home } from "../Base/Home.ts"
import * as TickBatch from "../Base/TickBatch.ts"
import { type Entry, type NewEntry, prepare } from "./HistoryEntry.ts"
import * as HistoryQuery from "./HistoryQuery.ts"

// ===== Options =====

/** @category models */
export interface Options {
  readonly enabled: boolean
  /** Days an entry is kept (default 90). */
  readonly retentionDays: number
  /** Entries kept at most, oldest deleted first (default 1,000,000). */
  readonly maxEntries: number
  /** `false`: statements are not stored, only their digests and the metadata. */
  readonly recordText: boolean
  /** How long a write waits for another writer (default 25 ms in the daemon: a batch is lost, not a call delayed). */
  readonly busyTimeoutMs?: number | undefined
  /** How often the age limit is applied after the start (default hourly). */
  readonly pruneEvery?: Duration.DurationInput | undefined
  /** Why the history is off when `enabled` is false (default: the setting). */
  readonly offReason?: string | undefined
  /**
   * Open the database at its first use rather than at once (the daemon: its start and an idle daemon
   * never load the native module); a damaged file is then reported at that first use.
   */
  readonly lazy?: boolean | undefined
  /** The most pages (4 KB) the database may grow to, as on a small disk: past it a batch is lost as on a full one. */
  readonly maxPageCount?: number | undefined
}

/** The defaults of `settings.json`'s `history` keys. @category constants */
export const DEFAULTS: Options = { enabled: true, retentionDays: 90, maxEntries: 1_000_000, recordText: true }

/**
 * How long a batch collects entries before it is written: one transaction (and one FTS5 segment) per
 * batch, not per call, which is what makes recording cost nothing measurable. `kill -9` loses at most
 * this long of entries.
 *
 * @category constants
 */
export const BATCH_MS = 100

/** Entries deleted per step of retention: a step holds the event loop for milliseconds, not seconds. @category constants */
export const PRUNE_CHUNK = 1_000

// ===== Errors =====

/**
 * A history operation that could not run: `invalid_search` (FTS5 refused the search text; the message
 * is SQLite's), `unavailable` (the history is off or its database is damaged), `failed` (anything else).
 *
 * @category errors
 */
export class HistoryError extends Schema.TaggedError<HistoryError>()("HistoryError", {
  reason: Schema.Literal("invalid_search", "unavailable", "failed"),
  message: Schema.String
}) {}

// ===== Models =====

/** Whether the history is recording, and why not. @category models */
export type State =
  | { readonly _tag: "On"; readonly path: string }
  | { readonly _tag: "Off"; readonly reason: string; readonly damaged: boolean }

/** @category models */
export interface Page {
  readonly entries: ReadonlyArray<Entry>
  /** The cursor of the next page; absent on the last. */
  readonly nextCursor?: string | undefined
}

/** What `doctor` reports. @category models */
export interface Stats {
  readonly path: string
  /** The database and its WAL, in bytes. */
  readonly bytes: number
  readonly entries: number
  /** `ok`, or what `PRAGMA quick_check` found. */
  readonly quickCheck: string
}

/** @category models */
export interface Service {
  readonly state: () => State
  readonly recordText: boolean
  /**
   * Queues an entry; synchronous, never blocks, never fails. A function is called when the batch is
   * written, off the response path (building a statement and its digest costs what the call's rows do).
   */
  readonly record: (entry: NewEntry | (() => NewEntry | undefined)) => void
  /** Waits until everything recorded so far is written (or lost). */
  readonly flush: Effect.Effect<void>
  readonly search: (query: HistoryQuery.Query) => Effect.Effect<Page, HistoryError>
  readonly get: (id: number, visibility?: HistoryQuery.Visibility) => Effect.Effect<Entry | undefined, HistoryError>
  /** Deletes the entries on a connection, before a time, or all; how many. */
  readonly clear: (options: { readonly connection?: string | undefined; readonly before?: number | undefined }) => Effect.Effect<number, HistoryError>
  /** Applies retention now (also run after batches and every `pruneEvery`); how many entries it removed. */
  readonly prune: Effect.Effect<number>
  /** Distinct values of `collection` or `tool` among the latest entries, starting with `prefix`. */
  readonly values: (column: "collection" | "tool", prefix: string, visibility?: HistoryQuery.Visibility) => Effect.Effect<ReadonlyArray<string>>
  readonly stats: Effect.Effect<Stats, HistoryError>
}

// ===== The database =====

type Database = BetterSqlite3.Database

const SCHEMA_VERSION = 1

const SCHEMA = `
CREATE TABLE IF NOT EXISTS entries (
  id INTEGER PRIMARY KEY,
  time INTEGER NOT NULL,
  connection TEXT,
  collection TEXT,
  tenant TEXT,
  consistency_level TEXT,
  source TEXT NOT NULL,
  client TEXT,
  principal TEXT,
  principal_name TEXT,
  tool TEXT NOT NULL,
  statement TEXT,
  cut_from INTEGER,
  digest TEXT,
  duration_ms REAL NOT NULL,
  rows INTEGER,
  outcome TEXT NOT NULL,
  error_code TEXT,
  error_message TEXT,
  approval TEXT
);
CREATE INDEX IF NOT EXISTS entries_time ON entries(time);
CREATE VIRTUAL TABLE IF NOT EXISTS entries_fts USING fts5(
  statement, collection, client, content='entries', content_rowid='id', tokenize="unicode61 tokenchars '_'"
);
CREATE TRIGGER IF NOT EXISTS entries_ai AFTER INSERT ON entries BEGIN
  INSERT INTO entries_fts(rowid, statement, collection, client) VALUES (new.id, new.statement, new.collection, new.client);
END;
CREATE TRIGGER IF NOT EXISTS entries_ad AFTER DELETE ON entries BEGIN
  INSERT INTO entries_fts(entries_fts, rowid, statement, collection, client) VALUES ('delete', old.id, old.statement, old.collection, old.client);
END;
`

/** Error codes of a file that is no (longer a) database. */
const DAMAGED = new Set(["SQLITE_CORRUPT", "SQLITE_NOTADB", "SQLITE_CORRUPT_VTAB", "SQLITE_IOERR_SHORT_READ"])

const codeOf = (error: unknown): string => (typeof (error as { code?: unknown })?.code === "string" ? (error as { code: string }).code : "")
const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** Whether an error says the file is damaged rather than busy or full. @category predicates */
export const isDamage = (error: unknown): boolean => DAMAGED.has(codeOf(error)) || /malformed|not a database/i.test(messageOf(error))

/** What to do about a damaged file, as `history` and `doctor` say it. @category constants */
export const RESET_HINT = "`weaviate-mcp history clear --yes` sets the damaged file aside and starts an empty one (restart `serve` afterwards)"

/**
 * Loads the native module on demand (`import()`; the CLI bundle turns it into a `require` of the
 * package, which stays outside the bundle: scripts/build.mjs).
 */
const loadDriver = async (): Promise<typeof BetterSqlite3> => {
  const module = await import("better-sqlite3")
  return (module.default ?? module) as typeof BetterSqlite3
}

/**
 * Opens (creating when missing, mode 0600) and checks the database: its header, its schema, and the
 * pages of the newest entry. SQLite creates the WAL beside it with the same mode. Not exported: the
 * package's declarations name no type of better-sqlite3 (its types are not a dependency).
 */
const open = async (path: string, busyTimeoutMs: number, maxPageCount?: number): Promise<Database> => {
  const Driver = await loadDriver()
  NodeFs.closeSync(NodeFs.openSync(path, "a", 0o600))
  NodeFs.chmodSync(path, 0o600)
  const db = new Driver(path, { timeout: busyTimeoutMs })
  try {
    db.pragma("journal_mode = WAL")
    db.pragma("synchronous = NORMAL")
    if (maxPageCount !== undefined) db.pragma(`max_page_count = ${Math.floor(maxPageCount)}`)
    if ((db.pragma("user_version", { simple: true }) as number) < SCHEMA_VERSION) {
      db.exec(SCHEMA)
      db.pragma(`user_version = ${SCHEMA_VERSION}`)
    }
    // Reads the first and the last page of the table: a truncated file fails here, not on the first search.
    db.prepare("SELECT min(id), max(id) FROM entries").get()
    return db
  } catch (error) {
    db.close()
    throw error
  }
}

const INSERT = `INSERT INTO entries (time, connection, collection, tenant, consistency_level, source, client, principal,
  principal_name, tool, statement, cut_from, digest, duration_ms, rows, outcome, error_code, error_message, approval)
  VALUES (@time, @connection, @collection, @tenant, @consistencyLevel, @source, @client, @principal, @principalName, @tool,
  @statement, @cutFrom, @digest, @durationMs, @rows, @outcome, @errorCode, @errorMessage, @approval)`

interface Row {
  id: number
  time: number
  connection: string | null
  collection: string | null
  tenant: string | null
  consistency_level: string | null
  source: string
  client: string | null
  principal: string | null
  principal_name: string | null
  tool: string
  statement: string | null
  cut_from: number | null
  digest: string | null
  duration_ms: number
  rows: number | null
  outcome: string
  error_code: string | null
  error_message: string | null
  approval: string | null
}

const toEntry = (row: Row): Entry => ({
  id: row.id,
  time: row.time,
  connection: row.connection,
  collection: row.collection,
  tenant: row.tenant,
  consistencyLevel: row.consistency_level,
  source: row.source === "cli" ? "cli" : "mcp",
  client: row.client,
  principal: row.principal,
  principalName: row.principal_name,
  tool: row.tool,
  statement: row.statement,
  cutFrom: row.cut_from,
  digest: row.digest,
  durationMs: row.duration_ms,
  rows: row.rows,
  outcome: row.outcome === "ok" ? "ok" : "error",
  errorCode: row.error_code,
  errorMessage: row.error_message,
  approval: row.approval
})

/**
 * The parameters of one insert (the INSERT's named parameters): the statement redacted and cut, or
 * left out. Written out member by member, not spread: a spread copy with `cutFrom` added made V8 a
 * new map transition for every entry (test/Mcp/MapsPerCall.test.ts).
 */
const toParams = (entry: NewEntry, recordText: boolean) => {
  const prepared = recordText ? prepare(entry.statement) : undefined
  return {
    time: entry.time,
    connection: entry.connection,
    collection: entry.collection,
    tenant: entry.tenant,
    consistencyLevel: entry.consistencyLevel,
    source: entry.source,
    client: entry.client,
    principal: entry.principal,
    principalName: entry.principalName,
    tool: entry.tool,
    statement: prepared?.text ?? null,
    cutFrom: prepared?.cutFrom ?? null,
    digest: entry.digest,
    durationMs: Math.round(entry.durationMs * 10) / 10,
    rows: entry.rows,
    outcome: entry.outcome,
    errorCode: entry.errorCode,
    errorMessage: entry.errorMessage,
    approval: entry.approval
  }
}

/** An open database and what the parts of the store share about it. */
interface Open {
  readonly db: Database
  readonly options: Options
  readonly report: (level: "warning" | "error", message: string) => void
  state: State
  /** The entries, as this process last counted them (CLI commands add their own). */
  count: number
  /** Turns the history off, once, saying why: the file is damaged. */
  readonly damaged: (error: unknown) => void
}

/** Retention: past the age limit or beyond `maxEntries`, in steps, one run at a time (a second call joins it). */
const retention = (open: Open) => {
  const { db, options } = open
  /** One step: at most `PRUNE_CHUNK` entries. */
  const step = (now: number): number => {
    if (open.state._tag === "Off") return 0
    const cutoff = now - options.retentionDays * 86_400_000
    const old = db.prepare("DELETE FROM entries WHERE id IN (SELECT id FROM entries WHERE time < ? ORDER BY time LIMIT ?)").run(cutoff, PRUNE_CHUNK).changes
    const beyond = Math.max(0, open.count - old - options.maxEntries)
    const extra = beyond === 0 ? 0 : db.prepare("DELETE FROM entries WHERE id IN (SELECT id FROM entries ORDER BY id LIMIT ?)").run(Math.min(beyond, PRUNE_CHUNK)).changes
    open.count = Math.max(0, open.count - old - extra)
    // Deleting from the index adds delete markers; merging a few hundred pages after each step purges
    // them, so that at maxEntries the freed pages are reused and the file stops growing.
    if (old + extra > 0) db.prepare("INSERT INTO entries_fts(entries_fts, rank) VALUES ('merge', 500)").run()
    return old + extra
  }
  let running: Promise<number> | undefined
  /** Every step, each on a turn of its own, until nothing is left to delete. */
  const all = (): Promise<number> => {
    if (running !== undefined) return running
    const run = (async () => {
      let removed = 0
      try {
        open.count = (db.prepare("SELECT count(*) AS n FROM entries").get() as { n: number }).n
        for (let i = 0; i < 1_000_000; i++) {
          const n = step(Date.now())
          removed += n
          if (n === 0) break
          await new Promise((resolve) => setImmediate(resolve))
        }
      } catch (error) {
        if (isDamage(error)) open.damaged(error)
        else open.report("warning", `cannot apply the query history's retention: ${messageOf(error)}`)
      }
      return removed
    })()
    running = run
    void run.finally(() => {
      if (running === run) running = undefined
    })
    return run
  }
  return { all, running: () => running !== undefined }
}

/** The batch writer: one transaction per batch; a locked or full database loses the batch, said once a minute at most. */
const writer = (open: Open, prune: ReturnType<typeof retention>) => {
  const insert = open.db.prepare(INSERT)
  const insertAll = open.db.transaction((entries: ReadonlyArray<NewEntry>) => {
    for (const entry of entries) insert.run(toParams(entry, open.options.recordText))
  })
  let lostSince = 0
  const write = (queued: ReadonlyArray<NewEntry | (() => NewEntry | undefined)>) => {
    if (open.state._tag === "Off") return
    const entries: Array<NewEntry> = []
    for (const item of queued) {
      const entry = typeof item === "function" ? item() : item
      if (entry !== undefined) entries.push(entry)
    }
    try {
      insertAll(entries)
      open.count += entries.length
    } catch (error) {
      if (isDamage(error)) return open.damaged(error)
      const now = Date.now()
      if (now - lostSince >= 60_000) {
        lostSince = now
        open.report("warning", `query history: ${entries.length} entries lost (${messageOf(error)})`)
      }
      return
    }
    if (open.count > open.options.maxEntries && !prune.running()) void prune.all()
  }
  return TickBatch.make(write, (error) => open.report("warning", `query history: a batch was lost (${messageOf(error)})`), { delayMs: BATCH_MS })
}

/**
 * The store over an open database. `report` receives the lines the store logs (one per loss, one when
 * it turns off).
 */
const over = (
  db: Database,
  path: string,
  options: Options,
  report: (level: "warning" | "error", message: string) => void
): Service => {
  const open: Open = {
    db,
    options,
    report,
    state: { _tag: "On", path },
    count: (db.prepare("SELECT count(*) AS n FROM entries").get() as { n: number }).n,
    damaged: (error) => {
      if (open.state._tag === "Off") return
      open.state = { _tag: "Off", reason: `history.db is damaged (${messageOf(error)})`, damaged: true }
      report("error", `query history is off: ${open.state.reason}; ${RESET_HINT}`)
      try {
        db.close()
      } catch {
        // Closing a damaged database may fail too; it is not used again.
      }
    }
  }
  const statements = new Map<string, BetterSqlite3.Statement>()
  const statementOf = (text: string) => {
    let statement = statements.get(text)
    if (statement === undefined) {
      // Bounded: queries differ only by which filters they use.
      if (statements.size >= 64) statements.clear()
      statement = db.prepare(text)
      statements.set(text, statement)
    }
    return statement
  }

  /** Runs `f` on the open database; a damaged file turns the history off, other errors are `failed`. */
  const use = <A>(f: () => A, onError: (error: unknown) => HistoryError = (e) => new HistoryError({ reason: "failed", message: messageOf(e) })) =>
    Effect.suspend(() => {
      const state = open.state
      if (state._tag === "Off") return Effect.fail(new HistoryError({ reason: "unavailable", message: `the query history is off: ${state.reason}` }))
      try {
        return Effect.succeed(f())
      } catch (error) {
        if (isDamage(error)) {
          open.damaged(error)
          return Effect.fail(new HistoryError({ reason: "unavailable", message: `the query history is off: ${messageOf(error)}` }))
        }
        return Effect.fail(onError(error))
      }
    })

  const prune = retention(open)
  const batch = writer(open, prune)

  return {
    state: () => open.state,
    recordText: options.recordText,
    record: (entry) => {
      if (open.state._tag === "On") batch.push(entry)
    },
    flush: Effect.promise(batch.drained),
    search: (query) =>
      use(() => {
        const limit = HistoryQuery.clampLimit(query.limit)
        const sql = HistoryQuery.select(query)
        const rows = statementOf(sql.text).all(...sql.params) as Array<Row>
        const entries = rows.slice(0, limit).map(toEntry)
        return rows.length > limit ? { entries, nextCursor: HistoryQuery.cursorAfter(entries[entries.length - 1]!.id) } : { entries }
      }, (error) =>
        query.search !== undefined && codeOf(error).startsWith("SQLITE_ERROR")
          ? new HistoryError({ reason: "invalid_search", message: `the search ${JSON.stringify(query.search)} is not valid FTS5: ${messageOf(error)}` })
          : new HistoryError({ reason: "failed", message: messageOf(error) })),
    get: (id, visibility) =>
      use(() => {
        const sql = HistoryQuery.select({ visibility, limit: 1, before: id + 1 })
        const row = statementOf(sql.text).get(...sql.params) as Row | undefined
        return row !== undefined && row.id === id ? toEntry(row) : undefined
      }),
    clear: (options) =>
      use(() => {
        const where = HistoryQuery.clearWhere(options)
        const removed = db.prepare(`DELETE FROM entries WHERE ${where.text}`).run(...where.params).changes
        open.count = Math.max(0, open.count - removed)
        return removed
      }),
    prune: Effect.promise(prune.all),
    values: (column, prefix, visibility) =>
      use(() => {
        // The latest 10,000 entries only: completions answer in milliseconds on any history.
        const sql = HistoryQuery.select({ visibility, limit: HistoryQuery.MAX_LIMIT })
        const inner = sql.text.replace(/LIMIT \?$/, "LIMIT 10000").replace(HistoryQuery.COLUMNS, `e.${column} AS value`)
        const rows = statementOf(`SELECT DISTINCT value FROM (${inner}) WHERE value IS NOT NULL AND substr(value, 1, ?) = ? LIMIT 100`)
          .all(...sql.params.slice(0, -1), prefix.length, prefix) as Array<{ value: string }>
        return rows.map((r) => r.value).sort()
      }).pipe(Effect.orElseSucceed(() => [])),
    stats: use(() => {
      const check = db.pragma("quick_check", { simple: false }) as Array<{ quick_check: string }>
      const bytes = [path, `${path}-wal`].reduce((n, file) => n + (NodeFs.statSync(file, { throwIfNoEntry: false })?.size ?? 0), 0)
      const entries = (db.prepare("SELECT count(*) AS n FROM entries").get() as { n: number }).n
      return { path, bytes, entries, quickCheck: check.map((c) => c.quick_check).join("; ") }
    })
  }
}

const offService = (state: Extract<State, { _tag: "Off" }>, recordText: boolean): Service => {
  const unavailable = Effect.fail(new HistoryError({ reason: "unavailable", message: `the query history is off: ${state.reason}` }))
  return {
    state: () => state,
    recordText,
    record: () => undefined,
    flush: Effect.void,
    search: () => unavailable,
    get: () => unavailable,
    clear: () => unavailable,
    prune: Effect.succeed(0),
    values: () => Effect.succeed([]),
    stats: unavailable
  }
}

// ===== The service =====

/**
 * @category services
 */
export class HistoryStore extends Context.Tag("weaviate-mcp/HistoryStore")<HistoryStore, Service>() {
  /**
   * Opens the history of the home (or leaves it off). Never fails: a database that cannot be opened
   * leaves the history off, with one log line saying why.
   */
  static readonly make = (options: Options) =>
    Effect.gen(function*() {
      const home = yield* Home
      const path = home.path("history")
      if (!options.enabled) return offService({ _tag: "Off", reason: options.offReason ?? "history.enabled is false", damaged: false }, options.recordText)
      const runtime = yield* Effect.runtime<never>()
      const run = Runtime.runPromise(runtime)
      const report = (level: "warning" | "error", message: string) =>
        void Runtime.runFork(runtime)(level === "error" ? Effect.logError(message) : Effect.logWarning(message))

      /** Opens the database once; a file that cannot be opened leaves the history off, said in one line. */
      let opened: Service | undefined
      let db: Database | undefined
      let opening: Promise<Service> | undefined
      const ensure = (): Promise<Service> =>
        opening ??= open(path, options.busyTimeoutMs ?? 25, options.maxPageCount).then(
          (database) => {
            db = database
            opened = over(database, path, options, report)
            // Retention at the first open, in the background like every later run.
            void run(opened.prune)
            return opened
          },
          (error: unknown) => {
            const damagedFile = isDamage(error)
            const reason = damagedFile ? `history.db is damaged (${messageOf(error)})` : `cannot open history.db (${messageOf(error)})`
            report("error", `query history is off: ${reason}${damagedFile ? `; ${RESET_HINT}` : ""}`)
            opened = offService({ _tag: "Off", reason, damaged: damagedFile }, options.recordText)
            return opened
          }
        )
      const using = <A, E>(f: (service: Service) => Effect.Effect<A, E>) => Effect.flatMap(Effect.promise(ensure), f)

      if (options.lazy !== true) yield* Effect.promise(ensure)
      yield* Effect.addFinalizer(() =>
        opened === undefined && opening === undefined
          ? Effect.void
          : using((service) => service.flush).pipe(Effect.zipRight(Effect.sync(() => {
            if (db !== undefined && opened?.state()._tag === "On") db.close()
          })))
      )
      // Hourly retention once the history is open (an idle daemon that never opened it has nothing to prune).
      yield* Effect.forkScoped(
        Effect.sleep(options.pruneEvery ?? Duration.hours(1)).pipe(
          Effect.zipRight(Effect.suspend(() => (opened === undefined ? Effect.void : Effect.asVoid(opened.prune)))),
          Effect.forever
        )
      )

      const service: Service = {
        state: () => opened?.state() ?? { _tag: "On", path },
        recordText: options.recordText,
        record: (entry) => {
          if (opened !== undefined) return opened.record(entry)
          // Before the first open: the entry waits for it (the open takes milliseconds).
          void ensure().then((ready) => ready.record(entry))
        },
        flush: Effect.suspend(() => (opened === undefined && opening === undefined ? Effect.void : using((s) => s.flush))),
        search: (query) => using((s) => s.search(query)),
        get: (id, visibility) => using((s) => s.get(id, visibility)),
        clear: (what) => using((s) => s.clear(what)),
        prune: using((s) => s.prune),
        values: (column, prefix, visibility) => using((s) => s.values(column, prefix, visibility)),
        stats: using((s) => s.stats)
      }
      return service
    })

  /** Needs the home. @category layers */
  static readonly layer = (options: Options): Layer.Layer<HistoryStore, never, Home> => Layer.scoped(HistoryStore, HistoryStore.make(options))

  /** No history (the store of a catalogue without one). @category layers */
  static readonly layerOff = (reason: string): Layer.Layer<HistoryStore> =>
    Layer.succeed(HistoryStore, offService({ _tag: "Off", reason, damaged: false }, true))
}

/**
 * Sets a damaged `history.db` aside (renamed `history.db.damaged-<time>`, with its WAL) so that the
 * next open starts an empty one; the path it was moved to.
 *
 * @category constructors
 */
export const setAside = (path: string, now: number): string => {
  const target = `${path}.damaged-${new Date(now).toISOString().replace(/[:.]/g, "-")}`
  NodeFs.renameSync(path, target)
  for (const suffix of ["-wal", "-shm"]) NodeFs.rmSync(`${path}${suffix}`, { force: true })
  return target
}
