/**
 * Typed aggregation: a GraphQL `Aggregate` built from a collection's schema, optionally grouped by one
 * property, with the metrics Weaviate offers for each property's data type
 * (adapters/handlers/graphql/local/aggregate/properties.go):
 *
 * | data type | metrics |
 * |---|---|
 * | `int`, `number` (and arrays) | `count`, `sum`, `mean`, `median`, `mode`, `minimum`, `maximum` |
 * | `text`, `text[]`, `blob` | `count`, `topOccurrences` (with a limit) |
 * | `boolean` (and arrays) | `count`, `totalTrue`, `totalFalse`, `percentageTrue`, `percentageFalse` |
 * | `date` (and arrays) | `count`, `minimum`, `maximum`, `median`, `mode` |
 *
 * Other types (uuid, geoCoordinates, phoneNumber, object, cross-references) have none. A metric that
 * does not fit its property is refused with the reason before anything is sent.
 *
 * Nothing a caller names reaches the query unchecked: the collection and property names must be
 * GraphQL names and properties of the collection's schema, metrics come from the table above, every
 * number is a whole number checked here, and text (tenant, search text) is printed as an escaped
 * GraphQL string literal. A hostile name is refused, never printed.
 *
 * One request: with `groupBy`, the whole set's count is asked beside the groups under an alias
 * (`all:`), so the answer says how many rows matched in all. Groups come ordered by their size, as
 * Weaviate returns them; one more group than the limit is asked for, to say whether there are more.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { type Collection, type Property, targetVectorsProblem } from "./CollectionSchema.ts"
import { DatabaseRefused, type FilterRefused, type RequestError, StatementRefused, UnexpectedResponse } from "./DriverError.ts"
import * as FilterBuilder from "./FilterBuilder.ts"
import type { WeaviateHttp } from "./WeaviateHttp.ts"

// ===== Metrics =====

/** Every metric name, as Weaviate's GraphQL names it. @category models */
export const METRICS = [
  "count",
  "sum",
  "mean",
  "median",
  "mode",
  "minimum",
  "maximum",
  "topOccurrences",
  "totalTrue",
  "totalFalse",
  "percentageTrue",
  "percentageFalse"
] as const
export type Metric = typeof METRICS[number]

/** How a property aggregates. @category models */
export type Kind = "numeric" | "text" | "boolean" | "date"

/** The metrics of each kind, in the order they are listed. @category constants */
export const METRICS_BY_KIND: Readonly<Record<Kind, ReadonlyArray<Metric>>> = {
  numeric: ["count", "sum", "mean", "median", "mode", "minimum", "maximum"],
  text: ["count", "topOccurrences"],
  boolean: ["count", "totalTrue", "totalFalse", "percentageTrue", "percentageFalse"],
  date: ["count", "minimum", "maximum", "median", "mode"]
}

/** The kind a property aggregates as; `undefined` when Weaviate has no metric for its type. @category models */
export const kindOf = (property: Property): Kind | undefined => {
  switch (property.baseType) {
    case "int":
    case "number":
      return "numeric"
    case "text":
    case "blob":
      return "text"
    case "boolean":
      return "boolean"
    case "date":
      return "date"
    default:
      return undefined
  }
}

/** The metrics a property offers (none for types Weaviate does not aggregate). @category models */
export const metricsOf = (property: Property): ReadonlyArray<Metric> => {
  const kind = kindOf(property)
  return kind === undefined ? [] : METRICS_BY_KIND[kind]
}

/** The default number of values `topOccurrences` lists (Weaviate's own default). @category constants */
export const DEFAULT_TOP_OCCURRENCES = 5

/** The default and the largest number of groups. @category constants */
export const DEFAULT_GROUPS = 100
export const MAX_GROUPS = 1000

/** The largest `objectLimit` of a search. @category constants */
export const MAX_OBJECT_LIMIT = 10_000

// ===== Requests =====

/** One metric of one property; `limit` applies to `topOccurrences` only. @category models */
export interface MetricRequest {
  readonly property: string
  readonly metric: Metric
  readonly limit?: number | undefined
}

/** A search whose best `objectLimit` matches are aggregated. @category models */
export type Search =
  | { readonly _tag: "nearText"; readonly text: string }
  | { readonly _tag: "hybrid"; readonly text: string; readonly alpha?: number | undefined }

/** @category models */
export interface Request {
  readonly groupBy?: string | undefined
  readonly metrics?: ReadonlyArray<MetricRequest>
  readonly filters?: ReadonlyArray<FilterBuilder.Filter>
  readonly tenant?: string | undefined
  readonly search?: Search | undefined
  /** With a search on a collection with named vectors: which of them it searches (required with several). */
  readonly targetVectors?: ReadonlyArray<string> | undefined
  readonly objectLimit?: number | undefined
  /** Groups at most (default 100). */
  readonly limit?: number | undefined
}

/** A metric's column: `property:metric`. @category models */
export const columnOf = (m: Pick<MetricRequest, "property" | "metric">): string => `${m.property}:${m.metric}`

/** One value of `topOccurrences`. @category models */
export interface Occurrence {
  readonly value: string
  readonly occurs: number
}

/** One row of the answer: a group (or the whole set), its row count and each metric by column. @category models */
export interface Group {
  /** The group's value (Weaviate gives it as text); absent without `groupBy`. */
  readonly value?: string | null
  readonly count: number
  readonly metrics: Readonly<Record<string, number | string | ReadonlyArray<Occurrence> | null>>
}

/** @category models */
export interface Result {
  readonly collection: string
  readonly groupBy: string | undefined
  /** Rows of the whole set (after filters and search). */
  readonly count: number
  readonly groups: ReadonlyArray<Group>
  /** Whether more groups exist than the limit let through. */
  readonly moreGroups: boolean
  /** The metric columns, in the order asked. */
  readonly columns: ReadonlyArray<string>
  /** The GraphQL sent. */
  readonly query: string
}

// ===== Building =====

/** A GraphQL name (and so a Weaviate collection or property name). */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

const refuse = (reason: string) => new StatementRefused({ reason })

const checkWhole = (what: string, value: number | undefined, min: number, max: number): StatementRefused | undefined =>
  value === undefined || (Number.isSafeInteger(value) && value >= min && value <= max)
    ? undefined
    : refuse(`${what} is a whole number from ${min} to ${max}`)

/** The property of the collection named `name`, or the refusal saying why it cannot be used. */
const propertyOf = (collection: Collection, name: string, use: string): Property | StatementRefused => {
  if (!NAME.test(name)) return refuse(`${JSON.stringify(name)} is not a property name (${use})`)
  const property = collection.properties.find((p) => p.name === name)
  if (property === undefined) {
    return refuse(`${collection.name} has no property ${name} (${use}; its properties: ${collection.properties.map((p) => p.name).join(", ") || "none"})`)
  }
  return property
}

const typeName = (p: Property) => p.dataType.join(", ")

/** The metric's refusal when it does not fit the property's type. */
const metricProblem = (property: Property, request: MetricRequest): string | undefined => {
  if (!(METRICS as ReadonlyArray<string>).includes(request.metric)) {
    return `${JSON.stringify(request.metric)} is not a metric (metrics: ${METRICS.join(", ")})`
  }
  const offered = metricsOf(property)
  if (offered.length === 0) return `${property.name} is ${typeName(property)}: Weaviate aggregates no metric of that type`
  if (!offered.includes(request.metric)) {
    return `${request.metric} does not fit ${property.name}, which is ${typeName(property)}; its metrics are ${offered.join(", ")}`
  }
  if (request.limit !== undefined && request.metric !== "topOccurrences") return `limit applies to topOccurrences only (${columnOf(request)})`
  return checkWhole(`the limit of ${columnOf(request)}`, request.limit, 1, 1000)?.reason
}

/** Group values of these types are what Weaviate can group by (not references, geo, phone, objects or blobs). */
const GROUPABLE: ReadonlySet<string> = new Set(["text", "int", "number", "boolean", "date", "uuid"])

/** Whether Weaviate can group by a property. @category models */
export const canGroupBy = (property: Property): boolean => GROUPABLE.has(property.baseType)

/**
 * Every metric a collection offers, as `property:metric` (schema order, then the metric order of each
 * type): what completion offers for a metric.
 *
 * @category models
 */
export const metricNames = (collection: Collection): ReadonlyArray<string> =>
  collection.properties.flatMap((p) => metricsOf(p).map((metric) => columnOf({ property: p.name, metric })))

/** The problem with a `property:metric` of a collection, if any (`undefined`: it fits). @category models */
export const metricTextProblem = (collection: Collection, text: string): string | undefined => {
  const [name = "", metric = "", ...rest] = text.split(":")
  if (rest.length > 0 || name === "" || metric === "") return `${JSON.stringify(text)} is not property:metric`
  const property = propertyOf(collection, name, "metric")
  if (property instanceof StatementRefused) return property.reason
  return metricProblem(property, { property: name, metric: metric as Metric })
}

// Lone surrogates cannot be written in a GraphQL string literal.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

const searchArgument = (search: Search, targets: ReadonlyArray<string>): string => {
  const targetVectors = targets.length === 0 ? "" : `, targetVectors: [${targets.map(FilterBuilder.graphqlString).join(", ")}]`
  return search._tag === "nearText"
    ? `nearText: {concepts: [${FilterBuilder.graphqlString(search.text)}]${targetVectors}}`
    : `hybrid: {query: ${FilterBuilder.graphqlString(search.text)}${search.alpha === undefined ? "" : `, alpha: ${search.alpha}`}${targetVectors}}`
}

/** Why the target vectors of a request cannot be searched, if they cannot: the words of `vector_search`. */
const targetProblem = (collection: Collection, request: Request): string | undefined => {
  const targets = request.targetVectors ?? []
  if (request.search === undefined) return targets.length > 0 ? "target_vectors apply with near_text or hybrid only" : undefined
  return targetVectorsProblem(collection, targets)
}

/** The checked request: the GraphQL to send and how to read its answer. */
export interface Plan {
  readonly query: string
  readonly columns: ReadonlyArray<string>
  readonly metrics: ReadonlyArray<MetricRequest>
  readonly limit: number
}

/**
 * The GraphQL `Aggregate` of a request, every name checked against the schema and every value
 * escaped; a request that cannot run is refused with the reason.
 *
 * @category building
 */
export const plan = (collection: Collection, request: Request): Effect.Effect<Plan, StatementRefused | FilterRefused> =>
  Effect.gen(function*() {
    if (!NAME.test(collection.name)) return yield* refuse(`${JSON.stringify(collection.name)} is not a collection name`)
    const groupBy = request.groupBy === undefined ? undefined : propertyOf(collection, request.groupBy, "group_by")
    if (groupBy instanceof StatementRefused) return yield* groupBy
    if (groupBy !== undefined && !canGroupBy(groupBy)) {
      return yield* refuse(`${groupBy.name} is ${typeName(groupBy)}: Weaviate cannot group by that type (text, int, number, boolean, date or uuid)`)
    }
    const limit = request.limit ?? DEFAULT_GROUPS
    const bad = checkWhole("limit", request.limit, 1, MAX_GROUPS) ?? checkWhole("object_limit", request.objectLimit, 1, MAX_OBJECT_LIMIT)
    if (bad !== undefined) return yield* bad
    if (request.limit !== undefined && groupBy === undefined) return yield* refuse("limit counts groups: it applies with group_by only")
    if (request.search !== undefined && request.objectLimit === undefined) {
      return yield* refuse("a search (near_text or hybrid) needs object_limit: how many of its best matches to aggregate")
    }
    if (request.search === undefined && request.objectLimit !== undefined) return yield* refuse("object_limit applies with near_text or hybrid only")
    for (const [what, text] of [["the search text", request.search?.text], ["the tenant", request.tenant]] as const) {
      if (text !== undefined && LONE_SURROGATE.test(text)) return yield* refuse(`${what} is not valid Unicode (a lone surrogate)`)
    }
    const targets = targetProblem(collection, request)
    if (targets !== undefined) return yield* refuse(targets)
    const alpha = request.search?._tag === "hybrid" ? request.search.alpha : undefined
    if (alpha !== undefined && !(Number.isFinite(alpha) && alpha >= 0 && alpha <= 1)) return yield* refuse("alpha is a number from 0 to 1")

    // Each metric once, in the order asked; the fields of one property together.
    const metrics: Array<MetricRequest> = []
    const byProperty = new Map<string, Array<string>>()
    for (const m of request.metrics ?? []) {
      const property = propertyOf(collection, m.property, `metric ${m.metric}`)
      if (property instanceof StatementRefused) return yield* property
      const problem = metricProblem(property, m)
      if (problem !== undefined) return yield* refuse(problem)
      if (metrics.some((seen) => columnOf(seen) === columnOf(m))) continue
      metrics.push(m)
      const field = m.metric === "topOccurrences"
        ? `topOccurrences(limit: ${m.limit ?? DEFAULT_TOP_OCCURRENCES}) { value occurs }`
        : m.metric
      const fields = byProperty.get(property.name) ?? []
      fields.push(field)
      byProperty.set(property.name, fields)
    }

    const where = yield* FilterBuilder.buildWhere(collection, request.filters ?? [])
    const shared = [
      ...(request.search === undefined ? [] : [searchArgument(request.search, request.targetVectors ?? []), `objectLimit: ${request.objectLimit}`]),
      ...(where === undefined ? [] : [`where: ${FilterBuilder.printWhere(where)}`]),
      ...(request.tenant === undefined ? [] : [`tenant: ${FilterBuilder.graphqlString(request.tenant)}`])
    ]
    const selection = [
      ...(groupBy === undefined ? [] : ["groupedBy { value }"]),
      "meta { count }",
      ...[...byProperty].map(([name, fields]) => `${name} { ${fields.join(" ")} }`)
    ].join(" ")
    const args = (extra: ReadonlyArray<string>) => {
      const all = [...extra, ...shared]
      return all.length === 0 ? "" : `(${all.join(", ")})`
    }
    const query = groupBy === undefined
      ? `{ Aggregate { ${collection.name}${args([])} { ${selection} } } }`
      : `{ Aggregate { all: ${collection.name}${args([])} { meta { count } } groups: ${collection.name}${
        args([`groupBy: [${FilterBuilder.graphqlString(groupBy.name)}]`, `limit: ${limit + 1}`])
      } { ${selection} } } }`
    return { query, columns: metrics.map(columnOf), metrics, limit }
  })

// ===== Reading =====

const record = (u: unknown): Record<string, unknown> => (typeof u === "object" && u !== null && !Array.isArray(u) ? u as Record<string, unknown> : {})

const metricValue = (value: unknown): number | string | ReadonlyArray<Occurrence> | null => {
  if (typeof value === "number" || typeof value === "string") return value
  if (Array.isArray(value)) {
    return value.map(record).map((o) => ({ value: String(o.value ?? ""), occurs: typeof o.occurs === "number" ? o.occurs : 0 }))
  }
  return null
}

const groupOf = (raw: unknown, metrics: ReadonlyArray<MetricRequest>, grouped: boolean): Group | undefined => {
  const g = record(raw)
  const count = record(g.meta).count
  if (typeof count !== "number") return undefined
  const values: Record<string, number | string | ReadonlyArray<Occurrence> | null> = {}
  for (const m of metrics) values[columnOf(m)] = metricValue(record(g[m.property])[m.metric])
  if (!grouped) return { count, metrics: values }
  const value = record(g.groupedBy).value
  return { value: typeof value === "string" ? value : null, count, metrics: values }
}

/**
 * Reads an answer of `plan`'s query.
 *
 * @category reading
 */
export const read = (
  collection: Collection,
  request: Request,
  planned: Plan,
  data: Record<string, unknown> | null | undefined
): Effect.Effect<Result, UnexpectedResponse> => {
  const aggregate = record(record(data).Aggregate)
  const grouped = request.groupBy !== undefined
  const listed = aggregate[grouped ? "groups" : collection.name]
  const whole = grouped ? aggregate["all"] : listed
  const groups = Array.isArray(listed) ? listed.map((g) => groupOf(g, planned.metrics, grouped)) : undefined
  const total = Array.isArray(whole) ? record(record(whole[0]).meta).count : undefined
  if (groups === undefined || groups.some((g) => g === undefined) || typeof total !== "number") {
    return Effect.fail(new UnexpectedResponse({ detail: "Aggregate returned no meta count" }))
  }
  const all = groups as ReadonlyArray<Group>
  return Effect.succeed({
    collection: collection.name,
    groupBy: request.groupBy,
    count: total,
    groups: grouped ? all.slice(0, planned.limit) : all,
    moreGroups: grouped && all.length > planned.limit,
    columns: planned.columns,
    query: planned.query
  })
}

/**
 * A result as a grid: the group's property (when grouped), `count`, then each metric column; one row
 * per group.
 *
 * @category reading
 */
export const grid = (result: Result): { readonly columns: ReadonlyArray<string>; readonly rows: ReadonlyArray<Record<string, unknown>> } => ({
  columns: [...(result.groupBy === undefined ? [] : [result.groupBy]), "count", ...result.columns],
  rows: result.groups.map((g) => ({
    ...(result.groupBy === undefined ? {} : { [result.groupBy]: g.value ?? null }),
    count: g.count,
    ...g.metrics
  }))
})

/**
 * A metric's value as one short cell: the most frequent values with their counts, others as they are.
 *
 * @category reading
 */
export const cellOf = (value: unknown): unknown =>
  Array.isArray(value) ? value.map((o: Occurrence) => `${o.value} (${o.occurs})`).join(", ") : value

/**
 * Runs an aggregation on a collection (the tenant already checked by the caller).
 *
 * @category requests
 */
export const run = Effect.fnUntraced(function*(
  http: WeaviateHttp,
  collection: Collection,
  request: Request
): Effect.fn.Return<Result, RequestError | FilterRefused | StatementRefused> {
  const planned = yield* plan(collection, request)
  const response = yield* http.graphql(planned.query)
  if (response.errors !== undefined && response.errors.length > 0) {
    return yield* new DatabaseRefused({ status: 200, detail: response.errors.map((e) => e.message).join("; ") })
  }
  return yield* read(collection, request, planned, response.data)
})
