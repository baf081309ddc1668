/**
 * The parameters the tools share, as Effect Schemas with descriptions a model can act on. The filter
 * operators are the contract's UI names (the same as the CLI's `--filter`).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as ConsistencyLevel from "../../Schema/ConsistencyLevel.ts"
import * as FilterBuilder from "../../Driver/FilterBuilder.ts"

/** A whole number between `min` and `max` (no `$ref` in the generated JSON Schema). @category schemas */
export const intBetween = (min: number, max: number) => Schema.Number.pipe(Schema.int(), Schema.between(min, max))

/** @category schemas */
export const ConnectionId = Schema.String.pipe(Schema.minLength(1)).annotations({
  description: "The id (or name) of a saved connection, as returned by list_connections."
})

/** @category schemas */
export const Table = Schema.String.pipe(Schema.minLength(1)).annotations({
  description: "The collection (table) name, case-sensitive, as returned by list_tables (e.g. \"Article\")."
})

/** @category schemas */
export const Tenant = Schema.String.pipe(Schema.minLength(1)).annotations({
  description: "The tenant to read or write, required for multi-tenant collections (describe_table lists the tenants)."
})

/** @category schemas */
export const Uuid = Schema.String.pipe(
  Schema.pattern(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, {
    message: () => "a UUID such as 00000000-0000-4000-8000-000000000001"
  })
).annotations({ description: "The object's uuid." })

const FilterScalar = Schema.Union(Schema.String, Schema.Number, Schema.Boolean)

/** @category schemas */
export const Filter = Schema.Struct({
  column: Schema.String.annotations({ description: "A column of the collection: a property name or \"uuid\"." }),
  operator: Schema.Literal(...FilterBuilder.operators, "=", "!=", ">", ">=", "<", "<=").annotations({
    description: "One of the operators describe_table lists for the column. \"between\" takes [low, high] (inclusive); " +
      "\"in list\"/\"not in list\" take a list; the NULL and empty tests take no value; REGEX is not supported by Weaviate."
  }),
  value: Schema.optional(Schema.Union(FilterScalar, Schema.Null, Schema.Array(FilterScalar))).annotations({
    description: "The value, typed like the column (dates as RFC 3339 timestamps such as 2024-01-31T00:00:00Z)."
  })
})

/** @category schemas */
export const Filters = Schema.Array(Filter).annotations({
  description: "Filters, all of which must hold (AND). Omit or pass [] for none."
})

/** @category schemas */
export const Sort = Schema.Struct({
  column: Schema.String.annotations({ description: "A sortable property (text, int, number, boolean, date)." }),
  direction: Schema.Literal("asc", "desc")
})

/** The decoded filters, in the driver's shape. @category conversions */
export const toDriverFilters = (filters: ReadonlyArray<typeof Filter.Type> | undefined): ReadonlyArray<FilterBuilder.Filter> =>
  (filters ?? []).map((f) => (f.value === undefined ? { column: f.column, operator: f.operator } : { column: f.column, operator: f.operator, value: f.value }))

/** A row as the tools return it. @category schemas */
export const Row = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** `consistency_level` of the tools that read or write objects. */
export const ConsistencyLevelParam = ConsistencyLevel.ConsistencyLevel.annotations({
  description: "How many replicas must answer on a replicated collection: ONE, QUORUM (a majority) or ALL. " +
    "Default: the connection's consistency level, else Weaviate's own (QUORUM)."
})
