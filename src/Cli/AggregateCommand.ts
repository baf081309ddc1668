/**
 * `weaviate-mcp aggregate CONN TABLE [--group-by P] [--metric P:M[:N]]… [--filter "col op value"]…
 * [--tenant T] [--near-text TEXT | --hybrid TEXT [--alpha A]] [--target-vector V]... [--object-limit N] [--limit N] [--json]`:
 * counts and statistics of a collection as an aligned table, one row per group and one column per
 * metric (`Driver/Aggregate`, as the `aggregate` tool). A metric that does not fit its property is
 * refused with the metrics that do (exit 1); a `--metric` that is not `PROPERTY:METRIC` is a usage
 * error (exit 2).
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Aggregate from "../Driver/Aggregate.ts"
import { Driver } from "../Driver/Driver.ts"
import * as FilterBuilder from "../Driver/FilterBuilder.ts"
import { UsageError } from "./CliErrors.ts"
import * as CommonOptions from "./CommonOptions.ts"
import { driverLayer, formatTable } from "./DriverCli.ts"
import * as HistoryCli from "./HistoryCli.ts"

const METRIC_TEXT = /^([^:]+):([^:]+)(?::(\d+))?$/

/**
 * A `--metric` value: `PROPERTY:METRIC`, or `PROPERTY:topOccurrences:N` for the N most frequent values.
 *
 * @category parsing
 */
export const parseMetric = (text: string): Effect.Effect<Aggregate.MetricRequest, UsageError> => {
  const m = METRIC_TEXT.exec(text.trim())
  const metric = Aggregate.METRICS.find((name) => name === m?.[2])
  if (m === null || metric === undefined) {
    return Effect.fail(new UsageError({ message: `--metric takes PROPERTY:METRIC (metrics: ${Aggregate.METRICS.join(", ")}), got '${text}'` }))
  }
  return Effect.succeed({ property: m[1]!, metric, ...(m[3] !== undefined ? { limit: Number(m[3]) } : {}) })
}

const searchOf = (flags: { readonly nearText: Option.Option<string>; readonly hybrid: Option.Option<string>; readonly alpha: Option.Option<number> }) => {
  if (Option.isSome(flags.nearText) && Option.isSome(flags.hybrid)) return Effect.fail(new UsageError({ message: "--near-text and --hybrid cannot be used together" }))
  if (Option.isSome(flags.alpha) && Option.isNone(flags.hybrid)) return Effect.fail(new UsageError({ message: "--alpha applies to --hybrid only" }))
  if (Option.isSome(flags.nearText)) return Effect.succeed<Aggregate.Search | undefined>({ _tag: "nearText", text: flags.nearText.value })
  if (Option.isSome(flags.hybrid)) return Effect.succeed<Aggregate.Search | undefined>({ _tag: "hybrid", text: flags.hybrid.value, alpha: Option.getOrUndefined(flags.alpha) })
  return Effect.succeed(undefined)
}

/** @category commands */
export const aggregateCommand = Command.make(
  "aggregate",
  {
    home: CommonOptions.home,
    json: CommonOptions.json,
    connection: Args.text({ name: "CONN" }).pipe(Args.withDescription("Connection id or name")),
    table: Args.text({ name: "TABLE" }).pipe(Args.withDescription("Collection name")),
    groupBy: Options.text("group-by").pipe(Options.withDescription("One property: a row per value, largest groups first"), Options.optional),
    metric: Options.text("metric").pipe(
      Options.withDescription("PROPERTY:METRIC (e.g. price:mean; colors:topOccurrences:3), repeatable; metrics: " + Aggregate.METRICS.join(", ")),
      CommonOptions.repeatable
    ),
    filter: Options.text("filter").pipe(
      Options.withDescription(`"COLUMN OPERATOR VALUE", repeatable; operators: ${FilterBuilder.operators.join(", ")}, = != > >= < <=`),
      CommonOptions.repeatable
    ),
    tenant: Options.text("tenant").pipe(Options.withDescription("Tenant of a multi-tenant collection"), Options.optional),
    nearText: Options.text("near-text").pipe(Options.withDescription("Aggregate the --object-limit best matches of a semantic search"), Options.optional),
    hybrid: Options.text("hybrid").pipe(Options.withDescription("Aggregate the best matches of a hybrid search (--object-limit from each side)"), Options.optional),
    alpha: Options.float("alpha").pipe(Options.withDescription("--hybrid only: 0 keyword, 1 vector (default 0.75)"), Options.optional),
    targetVector: Options.text("target-vector").pipe(
      Options.withDescription("With --near-text or --hybrid: a named vector to search, repeatable (required when the collection has several)"),
      CommonOptions.repeatable
    ),
    objectLimit: Options.integer("object-limit").pipe(Options.withDescription("How many best matches of the search to aggregate"), Options.optional),
    limit: Options.integer("limit").pipe(Options.withDescription("With --group-by: the most groups (default 100)"), Options.optional)
  },
  (flags) =>
    HistoryCli.recording({
      command: "aggregate",
      connection: flags.connection,
      collection: flags.table,
      tenant: Option.getOrUndefined(flags.tenant),
      statement: JSON.stringify({
        table: flags.table,
        group_by: Option.getOrUndefined(flags.groupBy),
        metrics: flags.metric,
        filters: flags.filter,
        near_text: Option.getOrUndefined(flags.nearText),
        hybrid: Option.getOrUndefined(flags.hybrid),
        ...(flags.targetVector.length > 0 ? { target_vectors: flags.targetVector } : {}),
        object_limit: Option.getOrUndefined(flags.objectLimit),
        limit: Option.getOrUndefined(flags.limit)
      })
    }, (note) =>
      Effect.gen(function*() {
        const metrics = yield* Effect.forEach(flags.metric, parseMetric)
        const filters = yield* Effect.forEach(flags.filter, (text) => FilterBuilder.parseFilterText(text))
        const search = yield* searchOf(flags)
        const driver = yield* Driver
        const result = yield* driver.aggregate(flags.connection, flags.table, {
          groupBy: Option.getOrUndefined(flags.groupBy),
          metrics,
          filters,
          tenant: Option.getOrUndefined(flags.tenant),
          search,
          targetVectors: flags.targetVector,
          objectLimit: Option.getOrUndefined(flags.objectLimit),
          limit: Option.getOrUndefined(flags.limit)
        })
        const { columns, rows } = Aggregate.grid(result)
        note.rows = rows.length
        note.collection = result.collection
        if (flags.json) {
          return yield* Console.log(JSON.stringify(
            {
              table: result.collection,
              groupBy: result.groupBy ?? null,
              count: result.count,
              columns,
              rows,
              moreGroups: result.moreGroups,
              query: result.query
            },
            null,
            2
          ))
        }
        yield* Console.log(formatTable(columns, rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Aggregate.cellOf(v)])))))
        yield* Console.log(
          `(${result.count} rows in all${result.groupBy === undefined ? "" : `; ${rows.length} groups by ${result.groupBy}`}` +
            `${result.moreGroups ? `; more groups: raise --limit (up to ${Aggregate.MAX_GROUPS})` : ""})`
        )
      })).pipe(Effect.provide(driverLayer(flags.home)), Effect.provide(CommonOptions.homeLayer(flags.home)))
).pipe(Command.withDescription("Count rows and compute metrics of a collection, optionally per group"))
