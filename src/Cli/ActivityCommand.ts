/**
 * `weaviate-mcp activity [--since 1h] [--client NAME] [--tool T] [--connection C] [--json | --csv]`
 * shows `activity.log` as an aligned table (or JSON, or CSV); `activity --verify` checks its hash
 * chain and exits 1 naming the first line (1-based) that no longer matches, then compares the log
 * with its head (`ActivityHead.ts`) and exits 1 when its end was cut off (docs/activity.md).
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs/promises"
import * as ActivityHead from "../Activity/ActivityHead.ts"
import * as Line from "../Activity/ActivityLine.ts"
import { Home } from "../Base/Home.ts"
import { UsageError } from "./CliErrors.ts"
import * as CommonOptions from "./CommonOptions.ts"
import { formatTable } from "./DriverCli.ts"

/** The log is shorter than its head, or its end is not the head's line. @category errors */
export class ActivityLogCut extends Schema.TaggedError<ActivityLogCut>()("ActivityLogCut", {
  reason: Schema.String
}) {
  override get message() {
    return `activity.log: ${this.reason}`
  }
}

/** The chain is broken. @category errors */
export class ActivityLogTampered extends Schema.TaggedError<ActivityLogTampered>()("ActivityLogTampered", {
  line: Schema.Int,
  reason: Schema.String
}) {
  override get message() {
    return `activity.log: line ${this.line} no longer matches its hash (${this.reason})`
  }
}

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }

/**
 * `--since`: a span back from now (`30m`, `1h`, `7d`, `2w`) or an ISO 8601 date-time; epoch ms.
 *
 * @category parsing
 */
export const parseSince = (text: string, now: number): Effect.Effect<number, UsageError> => {
  const span = /^(\d+)\s*([smhdw])$/.exec(text.trim())
  if (span !== null) return Effect.succeed(now - Number(span[1]) * UNITS[span[2]!]!)
  const at = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN
  return Number.isNaN(at)
    ? Effect.fail(new UsageError({ message: `--since must be a span like 30m, 1h, 7d or an ISO date, got '${text}'` }))
    : Effect.succeed(at)
}

type CallEntry = Extract<Line.Entry, { type: "call" }>

/** The columns of the table and the CSV, in order. @category constants */
export const COLUMNS = ["time", "client", "principal", "method", "tool", "connection", "outcome", "code", "durationMs", "statements"] as const

const csvCell = (value: unknown): string => {
  const text = value === null || value === undefined ? "" : Array.isArray(value) ? value.join(" ") : String(value)
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text
}

const row = (entry: CallEntry): Record<(typeof COLUMNS)[number], unknown> => ({
  time: entry.time,
  client: entry.clientVersion === null || entry.client === null ? entry.client : `${entry.client} ${entry.clientVersion}`,
  principal: entry.principalName ?? entry.principal,
  method: entry.method,
  tool: entry.tool,
  connection: entry.connection,
  outcome: entry.outcome,
  code: entry.code,
  durationMs: entry.durationMs,
  statements: entry.statements.map((s) => s.slice(0, 19)).join(" ")
})

/** Reads the complete lines of the log (a line still being written is left out). */
const readLog = Effect.gen(function*() {
  const home = yield* Home
  return yield* Effect.promise(() =>
    NodeFs.readFile(home.path("activity"), "utf8").catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return ""
      throw error
    })
  )
})

/** @category commands */
export const activityCommand = Command.make(
  "activity",
  {
    home: CommonOptions.home,
    since: Options.text("since").pipe(Options.withDescription("Only calls since: 30m, 1h, 7d, or an ISO date"), Options.optional),
    client: Options.text("client").pipe(Options.withDescription("Only this client (clientInfo name)"), Options.optional),
    tool: Options.text("tool").pipe(Options.withDescription("Only calls of this tool"), Options.optional),
    connection: Options.text("connection").pipe(Options.withDescription("Only calls on this connection id"), Options.optional),
    json: Options.boolean("json").pipe(Options.withDescription("Print the lines as a JSON array")),
    csv: Options.boolean("csv").pipe(Options.withDescription("Print CSV with a header line")),
    verify: Options.boolean("verify").pipe(Options.withDescription("Check the hash chain; exit 1 naming the first line that does not match"))
  },
  (flags) =>
    Effect.gen(function*() {
      if (flags.json && flags.csv) return yield* new UsageError({ message: "--json and --csv cannot be used together" })
      const content = yield* readLog
      if (flags.verify) {
        const result = Line.verify(content)
        if (result._tag === "Broken") return yield* new ActivityLogTampered({ line: result.line, reason: result.reason })
        const comparison = ActivityHead.compare(content, yield* ActivityHead.read((yield* Home).dir))
        if (ActivityHead.failed(comparison)) return yield* new ActivityLogCut({ reason: ActivityHead.describe(comparison) })
        return yield* Console.log(`activity.log: ${ActivityHead.describe(comparison)}`)
      }
      const since = Option.isSome(flags.since) ? yield* parseSince(flags.since.value, Date.now()) : undefined
      const lines = content.split("\n")
      lines.pop()
      const entries: Array<CallEntry> = []
      for (const text of lines) {
        const entry = Line.parse(text)
        if (entry === undefined || entry.type !== "call") continue
        if (since !== undefined && Date.parse(entry.time) < since) continue
        if (Option.isSome(flags.client) && entry.client !== flags.client.value) continue
        if (Option.isSome(flags.tool) && entry.tool !== flags.tool.value) continue
        if (Option.isSome(flags.connection) && entry.connection !== flags.connection.value) continue
        entries.push(entry)
      }
      if (flags.json) return yield* Console.log(JSON.stringify(entries, null, 2))
      if (flags.csv) {
        const header = ["time", "client", "clientVersion", "principal", "principalName", "era", "method", "tool", "connection", "outcome", "code", "durationMs", "statements", "hash"]
        const body = entries.map((e) => header.map((h) => csvCell((e as unknown as Record<string, unknown>)[h])).join(","))
        return yield* Console.log([header.join(","), ...body].join("\n"))
      }
      if (entries.length === 0) return yield* Console.log("No activity.")
      yield* Console.log(formatTable(COLUMNS, entries.map(row)))
    }).pipe(Effect.provide(CommonOptions.homeLayer(flags.home)))
).pipe(Command.withDescription("Show what AI clients did (activity.log); --verify checks its hash chain and its head (a cut end)"))
