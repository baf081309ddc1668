/**
 * `weaviate-mcp history`: the query history (`history.db`, docs/history.md).
 *
 * - `history [CONN] [--search TEXT] [--since 1h|2026-11-01] [--table T] [--tool T] [--client NAME]
 *   [--outcome ok|error] [--limit N] [--json]`: the newest entries first, as an aligned table (like
 *   `activity`) or JSON;
 * - `history show ID`: the full statement, ready to paste (the rest of the entry on stderr);
 * - `history clear [CONN] [--before DATE] [--yes]`: deletes entries; without `--yes` it only says
 *   how many it would delete. On a damaged history.db, `clear --yes` sets the file aside.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Home } from "../Base/Home.ts"
import { ConnectionStore } from "../Driver/ConnectionStore.ts"
import * as HistoryQuery from "../History/HistoryQuery.ts"
import { HistoryError, HistoryStore, RESET_HINT, setAside } from "../History/HistoryStore.ts"
import { UsageError } from "./CliErrors.ts"
import * as CommonOptions from "./CommonOptions.ts"
import { formatTable } from "./DriverCli.ts"
import * as HistoryCli from "./HistoryCli.ts"
import * as QueryHistory from "../Catalogue/Tools/QueryHistory.ts"

/** There is no entry with that id. @category errors */
export class HistoryEntryNotFound extends Schema.TaggedError<HistoryEntryNotFound>()("HistoryEntryNotFound", { id: Schema.Number }) {
  override get message() {
    return `history: no entry ${this.id} (weaviate-mcp history lists the ids)`
  }
}

/** The columns of the table, in order. @category constants */
export const COLUMNS = QueryHistory.ENTRY_COLUMNS

const STATEMENT_WIDTH = 60

/** The store, or a failure that says why the history is off and how to reset a damaged one. */
const usable = (history: HistoryStore["Type"]) =>
  Effect.suspend(() => {
    const state = history.state()
    if (state._tag === "On") return Effect.succeed(history)
    return Effect.fail(new HistoryError({ reason: "unavailable", message: `history: the query history is off: ${state.reason}${state.damaged ? `; ${RESET_HINT}` : ""}` }))
  })

/** A connection given by id or name, as the history keeps it (by id); a removed connection's id is taken as it is. */
const connectionIdOf = (idOrName: string) =>
  Effect.flatMap(ConnectionStore, (store) => store.get(idOrName)).pipe(Effect.map((c) => c.id), Effect.orElseSucceed(() => idOrName))

const time = (flag: string, text: Option.Option<string>) =>
  Option.match(text, {
    onNone: () => Effect.succeed(undefined),
    onSome: (value) => {
      const at = HistoryQuery.parseTime(value, Date.now())
      return at === undefined ? Effect.fail(new UsageError({ message: `${flag} must be a span like 30m, 1h, 7d or an ISO date, got '${value}'` })) : Effect.succeed(at)
    }
  })

const layers = (home: Option.Option<string>) => (effect: Effect.Effect<void, unknown, HistoryStore | ConnectionStore | Home>) =>
  Effect.scoped(Effect.flatMap(HistoryCli.open({ forReading: true }), (history) => Effect.provideService(effect, HistoryStore, history))).pipe(
    Effect.provide(ConnectionStore.layer),
    Effect.provide(CommonOptions.homeLayer(home))
  )

const listCommand = {
  home: CommonOptions.home,
  json: CommonOptions.json,
  connection: Args.text({ name: "CONN" }).pipe(Args.withDescription("Only this connection (id or name)"), Args.optional),
  search: Options.text("search").pipe(Options.withDescription("Full-text search (FTS5 syntax): words, \"a phrase\", prefix*, AND/OR/NOT"), Options.optional),
  since: Options.text("since").pipe(Options.withDescription("Only entries since: 30m, 1h, 7d, or an ISO date (2026-11-01)"), Options.optional),
  table: Options.text("table").pipe(Options.withDescription("Only statements on this table (collection)"), Options.optional),
  tool: Options.text("tool").pipe(Options.withDescription("Only this tool or command (execute_query, graphql, …)"), Options.optional),
  client: Options.text("client").pipe(Options.withDescription("Only this client (its clientInfo name; cli for the command line)"), Options.optional),
  outcome: Options.choice("outcome", ["ok", "error"]).pipe(Options.withDescription("Only statements that succeeded or failed"), Options.optional),
  limit: Options.integer("limit").pipe(Options.withDescription("Entries to show, 1 to 500 (default 50)"), Options.withDefault(HistoryQuery.DEFAULT_LIMIT))
}

const showCommand = Command.make(
  "show",
  { home: CommonOptions.home, json: CommonOptions.json, id: Args.integer({ name: "ID" }).pipe(Args.withDescription("The entry's id (first column of history)")) },
  (flags) =>
    Effect.gen(function*() {
      const history = yield* usable(yield* HistoryStore)
      const entry = yield* history.get(flags.id)
      if (entry === undefined) return yield* new HistoryEntryNotFound({ id: flags.id })
      if (flags.json) return yield* Console.log(JSON.stringify(toJsonEntry(entry), null, 2))
      // The statement alone on stdout, ready to paste; what else is known on stderr.
      const outcome = entry.outcome === "ok" ? `ok${entry.rows !== null ? `, ${entry.rows} rows` : ""}` : `${entry.errorCode}: ${entry.errorMessage}`
      yield* Console.error(
        `# ${entry.id} ${new Date(entry.time).toISOString()} ${entry.tool} on ${entry.connection ?? "-"}` +
          `${entry.collection !== null ? ` (${entry.collection})` : ""} by ${entry.source === "cli" ? "cli" : `${entry.client ?? "?"} / ${entry.principalName ?? entry.principal ?? "?"}`}; ` +
          `${outcome}; ${Math.round(entry.durationMs)} ms${entry.cutFrom !== null ? `; cut at 64 KB of ${entry.cutFrom} bytes` : ""}`
      )
      yield* Console.log(entry.statement ?? `(statement not recorded: history.recordText is false; digest ${entry.digest ?? "none"})`)
    }).pipe(layers(flags.home))
).pipe(Command.withDescription("Print one entry's full statement, ready to paste"))

const clearCommand = Command.make(
  "clear",
  {
    home: CommonOptions.home,
    connection: Args.text({ name: "CONN" }).pipe(Args.withDescription("Only this connection's entries (id or name)"), Args.optional),
    before: Options.text("before").pipe(Options.withDescription("Only entries older than this: an ISO date (2026-11-01) or a span (30d)"), Options.optional),
    yes: Options.boolean("yes").pipe(Options.withDescription("Delete; without it, only say how many entries would go"))
  },
  (flags) =>
    Effect.gen(function*() {
      const history = yield* HistoryStore
      const state = history.state()
      const whole = Option.isNone(flags.connection) && Option.isNone(flags.before)
      if (state._tag === "Off" && state.damaged && whole) {
        if (!flags.yes) return yield* Console.log(`history.db is damaged (${state.reason}); add --yes to set it aside and start an empty one`)
        const moved = setAside((yield* Home).path("history"), Date.now())
        return yield* Console.log(`Set the damaged history aside as ${moved}; a new history.db starts with the next statement (restart serve).`)
      }
      yield* usable(history)
      const connection = Option.isSome(flags.connection) ? yield* connectionIdOf(flags.connection.value) : undefined
      const before = yield* time("--before", flags.before)
      if (!flags.yes) {
        const page = yield* history.search({ connection, until: before, limit: HistoryQuery.MAX_LIMIT })
        const count = page.nextCursor === undefined ? `${page.entries.length}` : `at least ${page.entries.length}`
        return yield* Console.log(`Would delete ${count} entries; add --yes to delete them.`)
      }
      const removed = yield* history.clear({ connection, before })
      yield* Console.log(`Deleted ${removed} ${removed === 1 ? "entry" : "entries"}.`)
    }).pipe(layers(flags.home))
).pipe(Command.withDescription("Delete history entries (all, one connection's, or those before a date); needs --yes"))

/** An entry as `--json` prints it: as `search_query_history` gives it, with the principal's id and name apart and the cut statement's size. */
const toJsonEntry = (entry: NonNullable<Effect.Effect.Success<ReturnType<HistoryStore["Type"]["get"]>>>) => ({
  ...QueryHistory.toJson(entry),
  principal: entry.principal,
  principalName: entry.principalName,
  statementBytes: entry.cutFrom
})

/** @category commands */
export const historyCommand = Command.make("history", listCommand, (flags) =>
  Effect.gen(function*() {
    const history = yield* usable(yield* HistoryStore)
    if (flags.limit < 1 || flags.limit > HistoryQuery.MAX_LIMIT) return yield* new UsageError({ message: "--limit must be between 1 and 500" })
    const page = yield* history.search({
      search: Option.getOrUndefined(flags.search),
      connection: Option.isSome(flags.connection) ? yield* connectionIdOf(flags.connection.value) : undefined,
      table: Option.getOrUndefined(flags.table),
      tool: Option.getOrUndefined(flags.tool),
      client: Option.getOrUndefined(flags.client),
      outcome: Option.getOrUndefined(flags.outcome),
      since: yield* time("--since", flags.since),
      limit: flags.limit
    })
    if (flags.json) return yield* Console.log(JSON.stringify(page.entries.map(toJsonEntry), null, 2))
    if (page.entries.length === 0) return yield* Console.log("No history.")
    yield* Console.log(formatTable(COLUMNS, page.entries.map((e) => QueryHistory.entryRow(e, STATEMENT_WIDTH, (iso) => iso.replace(/\.\d{3}Z$/, "Z")))))
    if (page.nextCursor !== undefined) yield* Console.log(`(the newest ${page.entries.length}; --limit shows more, up to 500)`)
  }).pipe(layers(flags.home))).pipe(
  Command.withDescription("Show the query history: every statement run by AI clients and the command line (history show ID, history clear)"),
  Command.withSubcommands([showCommand, clearCommand])
)
