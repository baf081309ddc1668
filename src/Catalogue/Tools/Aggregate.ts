/**
 * `aggregate`: counts and statistics of a collection, optionally per group of one property, built
 * by the driver (`Driver/Aggregate`) from the schema: a metric that does not fit its property's type
 * is refused with the reason, and no name or value can change the query's shape. Filters are
 * `browse_table`'s; `near_text` or `hybrid` with `object_limit` aggregate over a search's best matches.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Aggregate from "../../Driver/Aggregate.ts"
import * as InputRequired from "../../Schema/InputRequired.ts"
import { type ToolEnv, open } from "./ConnectionGate.ts"
import { ConnectionId, Filters, intBetween, Row, Table, Tenant, toDriverFilters } from "./Parameters.ts"
import * as TextTable from "./TextTable.ts"
import * as ToolDefinition from "./ToolDefinition.ts"
import * as ToolError from "./ToolError.ts"

const byKind = (Object.entries(Aggregate.METRICS_BY_KIND) as ReadonlyArray<[string, ReadonlyArray<string>]>)
  .map(([kind, metrics]) => `${kind === "numeric" ? "int/number" : kind}: ${metrics.join(", ")}`)
  .join("; ")

/** One metric of one property, as the tool takes it. @category schemas */
export const MetricParam = Schema.Struct({
  property: Schema.String.pipe(Schema.minLength(1)).annotations({ description: "A property of the collection." }),
  metric: Schema.Literal(...Aggregate.METRICS).annotations({ description: `The metric; by the property's type — ${byKind}.` }),
  limit: Schema.optional(intBetween(1, 1000).annotations({
    description: `topOccurrences only: how many of the most frequent values (default ${Aggregate.DEFAULT_TOP_OCCURRENCES}).`
  }))
})

const Input = Schema.Struct({
  connection_id: ConnectionId,
  table: Table,
  group_by: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "One property to group by (text, int, number, boolean, date or uuid): one row per value, largest groups first."
  })),
  metrics: Schema.optional(Schema.Array(MetricParam).pipe(Schema.maxItems(50)).annotations({
    description: "The metrics to compute, each a column \"property:metric\" (e.g. {\"property\": \"price\", \"metric\": \"mean\"}). " +
      "Omit for row counts only."
  })),
  filters: Schema.optional(Filters),
  near_text: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "Aggregate over the object_limit best matches of a semantic search for this text (needs a text vectorizer)."
  })),
  hybrid: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "Aggregate over the best matches of a hybrid (keyword + vector) search for this text: object_limit from each " +
      "side, so up to twice object_limit rows."
  })),
  alpha: Schema.optional(Schema.Number.pipe(Schema.between(0, 1)).annotations({
    description: "hybrid only: 0 = pure keyword, 1 = pure vector (Weaviate's default 0.75)."
  })),
  target_vectors: Schema.optional(Schema.NonEmptyArray(Schema.String.pipe(Schema.minLength(1))).annotations({
    description: "With near_text or hybrid: the named vector(s) to search (describe_table lists them); required when the collection has several."
  })),
  object_limit: Schema.optional(intBetween(1, Aggregate.MAX_OBJECT_LIMIT).annotations({
    description: "With near_text or hybrid (required there): how many best matches to aggregate, 1 to 10,000."
  })),
  limit: Schema.optional(intBetween(1, Aggregate.MAX_GROUPS).annotations({
    description: `With group_by: the most groups to return, 1 to 1,000 (default ${Aggregate.DEFAULT_GROUPS}); the largest come first.`
  })),
  tenant: Schema.optional(Tenant)
})

const Output = Schema.Struct({
  table: Schema.String,
  groupBy: Schema.optional(Schema.String),
  count: Schema.Number.annotations({ description: "Rows of the whole set aggregated (after filters and search)." }),
  columns: Schema.Array(Schema.String),
  rows: Schema.Array(Row).annotations({ description: "One per group (or one for the whole set): the group's value, count, then each metric." }),
  moreGroups: Schema.Boolean.annotations({ description: "True when there are more groups than limit returned." }),
  query: Schema.String.annotations({ description: "The GraphQL that was sent." })
})

type Input = typeof Input.Type

const searchOf = (input: Input): Aggregate.Search | string | undefined => {
  if (input.near_text !== undefined && input.hybrid !== undefined) return "pass near_text or hybrid, not both"
  if (input.alpha !== undefined && input.hybrid === undefined) return "alpha applies to hybrid only"
  if (input.near_text !== undefined) return { _tag: "nearText", text: input.near_text }
  if (input.hybrid !== undefined) return { _tag: "hybrid", text: input.hybrid, alpha: input.alpha }
  return undefined
}

/** @category tools */
export const aggregate = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "aggregate",
    title: "Aggregate",
    description: "Counts and statistics of a collection: \"how many tickets per status\", \"average price per category\". " +
      `group_by gives one row per value of a property; metrics fit the property's type (${byKind}). ` +
      "filters as browse_table's; near_text or hybrid with object_limit aggregate over a search's best matches. " +
      "Multi-tenant collections need tenant. The answer is a grid, one row per group and one column per metric, and the count of the whole set.",
    input: Input,
    output: Output,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    unmirrored: ["near_text", "hybrid"],
    run: Effect.fnUntraced(function*(input) {
      const search = searchOf(input)
      if (typeof search === "string") return yield* ToolError.fail("invalid_argument", search)
      const connection = yield* open(env, input.connection_id, "read")
      if (InputRequired.is(connection)) return connection
      const result = yield* env.driver.aggregate(connection, input.table, {
        groupBy: input.group_by,
        metrics: input.metrics ?? [],
        filters: toDriverFilters(input.filters),
        tenant: input.tenant,
        search,
        targetVectors: input.target_vectors,
        objectLimit: input.object_limit,
        limit: input.limit
      })
      const { columns, rows } = Aggregate.grid(result)
      const textRows = rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Aggregate.cellOf(v)])))
      const footer = [
        `${result.collection}: ${TextTable.count(result.count, "row")} in all` +
        (result.groupBy === undefined ? "" : `; ${TextTable.count(rows.length, "group")} by ${result.groupBy}`),
        ...(result.moreGroups ? [`[more groups: only the ${rows.length} largest are shown; raise limit (up to 1,000) or narrow with filters]`] : [])
      ].join("\n")
      return ToolDefinition.ok(
        {
          table: result.collection,
          ...(result.groupBy === undefined ? {} : { groupBy: result.groupBy }),
          count: result.count,
          columns,
          rows,
          moreGroups: result.moreGroups,
          query: result.query
        },
        `${TextTable.render(columns, textRows)}\n${footer}`,
        "a smaller limit, fewer metrics, or filters"
      )
    })
  })
