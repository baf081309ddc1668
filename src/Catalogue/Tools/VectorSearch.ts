/**
 * `vector_search`: a GraphQL `Get` with `nearText`, `nearVector`, `hybrid` or `bm25`, plus `where`
 * from the filters, built here and sent through the driver's GraphQL path (so it is validated as a
 * read-only query and mapped to a grid like any other). Every value reaches the query as a GraphQL
 * literal printed by the filter builder's escaping, so no argument can change the query's shape.
 * Whatever the database refuses (e.g. `nearText` on a collection without a text vectorizer) comes
 * back as `query_failed` with the database's own message.
 *
 * `properties` restricts the keyword side (bm25, hybrid) to those properties, as Weaviate's own
 * argument of that name does; results always carry every property.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as ConsistencyLevel from "../../Schema/ConsistencyLevel.ts"
import * as Schema from "effect/Schema"
import * as InputRequired from "../../Schema/InputRequired.ts"
import { type Collection, targetVectorsProblem } from "../../Driver/CollectionSchema.ts"
import * as FilterBuilder from "../../Driver/FilterBuilder.ts"
import * as Grid from "../../Driver/Grid.ts"
import { type ToolEnv, open } from "./ConnectionGate.ts"
import { ConnectionId, ConsistencyLevelParam, Filters, intBetween, Row, Table, Tenant, toDriverFilters } from "./Parameters.ts"
import * as TextTable from "./TextTable.ts"
import * as ToolDefinition from "./ToolDefinition.ts"
import * as ToolError from "./ToolError.ts"

const Mode = Schema.Literal("near_text", "near_vector", "hybrid", "bm25")
type Mode = typeof Mode.Type

const Combination = Schema.Literal("sum", "minimum", "average", "relativeScore", "manualWeights")

const Input = Schema.Struct({
  connection_id: ConnectionId,
  table: Table,
  mode: Mode.annotations({
    description: "near_text: semantic search by text (needs a text vectorizer on the collection); near_vector: by a " +
      "vector; hybrid: keyword + vector fused by alpha; bm25: keyword only."
  }),
  query: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "The search text (near_text, hybrid, bm25)."
  })),
  vector: Schema.optional(Schema.NonEmptyArray(Schema.Number.pipe(Schema.finite())).annotations({
    description: "The query vector (near_vector; optional for hybrid on collections without a vectorizer)."
  })),
  alpha: Schema.optional(Schema.Number.pipe(Schema.between(0, 1)).annotations({
    description: "hybrid only: 0 = pure keyword, 1 = pure vector (Weaviate's default 0.75)."
  })),
  filters: Schema.optional(Filters),
  limit: Schema.optional(intBetween(1, 100).annotations({ description: "Results to return, 1 to 100 (default 10)." })),
  properties: Schema.optional(Schema.Array(Schema.String).annotations({
    description: "bm25 and hybrid: search only these properties (e.g. [\"title\", \"body\"]; \"title^2\" boosts)."
  })),
  target_vectors: Schema.optional(Schema.NonEmptyArray(Schema.String.pipe(Schema.minLength(1))).annotations({
    description: "near_text, near_vector, hybrid: the named vector(s) to search (describe_table lists them); required " +
      "when the collection has several. near_vector compares the query vector with these."
  })),
  combination: Schema.optional(Combination.annotations({
    description: "With several target_vectors: how their distances combine (Weaviate's combinationMethod; default minimum)."
  })),
  weights: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Number.pipe(Schema.finite()) }).annotations({
    description: "manualWeights and relativeScore: the weight of each target vector, by name."
  })),
  tenant: Schema.optional(Tenant),
  consistency_level: Schema.optional(ConsistencyLevelParam)
})

const list = (values: ReadonlyArray<string | number>) =>
  `[${values.map((v) => (typeof v === "string" ? FilterBuilder.graphqlString(v) : String(v))).join(", ")}]`

const needs = (mode: Mode, input: typeof Input.Type): string | undefined =>
  mode === "near_vector"
    ? input.vector === undefined ? "near_vector needs vector" : undefined
    : input.query === undefined
    ? `${mode} needs query`
    : mode !== "hybrid" && input.alpha !== undefined
    ? "alpha applies to hybrid only"
    : undefined

/**
 * What is wrong with the target vectors for this collection, if anything: names it does not have,
 * several named vectors and none chosen, a combination or weights that do not apply.
 */
const targetProblem = (input: typeof Input.Type, collection: Collection): string | undefined => {
  const targets: ReadonlyArray<string> = input.target_vectors ?? []
  if (input.mode === "bm25" && targets.length > 0) return "target_vectors apply to near_text, near_vector and hybrid, not bm25"
  const named = input.mode === "bm25" ? undefined : targetVectorsProblem(collection, targets)
  if (named !== undefined) return named
  if (input.combination !== undefined && targets.length < 2) return "combination applies to two or more target_vectors"
  if (input.weights !== undefined && input.combination !== "manualWeights" && input.combination !== "relativeScore") {
    return "weights apply to the combinations manualWeights and relativeScore"
  }
  if (input.weights !== undefined && Object.keys(input.weights).some((k) => !targets.includes(k))) {
    return "weights name only the target_vectors"
  }
  if (input.combination === "manualWeights" && targets.some((t) => input.weights?.[t] === undefined)) {
    return "manualWeights needs a weight for every target vector"
  }
  return undefined
}

/** The target vectors of a search: `targetVectors`, or `targets` with the combination and weights. */
const targetsArgument = (input: typeof Input.Type): string => {
  const targets: ReadonlyArray<string> = input.target_vectors ?? []
  if (targets.length === 0) return ""
  if (input.combination === undefined && input.weights === undefined) return `, targetVectors: ${list(targets)}`
  const weights = input.weights === undefined
    ? ""
    : `, weights: {${Object.entries(input.weights).map(([k, w]) => `${k}: ${w}`).join(", ")}}`
  return `, targets: {targetVectors: ${list(targets)}${input.combination === undefined ? "" : `, combinationMethod: ${input.combination}`}${weights}}`
}

/** The search argument of `Get`. @category graphql */
export const searchArgument = (input: typeof Input.Type): string => {
  const query = FilterBuilder.graphqlString(input.query ?? "")
  const properties = input.properties !== undefined && input.properties.length > 0 ? `, properties: ${list(input.properties)}` : ""
  const targets = targetsArgument(input)
  switch (input.mode) {
    case "near_text":
      return `nearText: {concepts: [${query}]${targets}}`
    case "near_vector":
      return `nearVector: {vector: ${list(input.vector ?? [])}${targets}}`
    case "hybrid":
      return `hybrid: {query: ${query}${input.alpha !== undefined ? `, alpha: ${input.alpha}` : ""}${
        input.vector !== undefined ? `, vector: ${list(input.vector)}` : ""
      }${properties}${targets}}`
    case "bm25":
      return `bm25: {query: ${query}${properties}}`
  }
}

/** @category tools */
export const vectorSearch = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "vector_search",
    title: "Vector search",
    description: "Searches a collection by meaning or keywords: near_text (text, needs a vectorizer — describe_table " +
      "shows it), near_vector (a vector), hybrid (text + vector, weighted by alpha) or bm25 (keywords). Optional filters " +
      "narrow the candidates. With named vectors, target_vectors chooses which (several combine by combination). " +
      "Multi-tenant collections need tenant. Results come best first with their distance (near_*) or score (hybrid, bm25).",
    input: Input,
    output: Schema.Struct({
      table: Schema.String,
      mode: Mode,
      query: Schema.String,
      columns: Schema.Array(Schema.String),
      rows: Schema.Array(Row)
    }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    unmirrored: ["query"],
    run: Effect.fnUntraced(function*(input) {
      const missing = needs(input.mode, input)
      if (missing !== undefined) return yield* ToolError.fail("invalid_argument", missing)
      const connection = yield* open(env, input.connection_id, "read")
      if (InputRequired.is(connection)) return connection
      const { collection, tenant } = yield* env.driver.resolveTenant(connection, input.table, input.tenant, "read")
      const problem = targetProblem(input, collection)
      if (problem !== undefined) return yield* ToolError.fail("invalid_argument", problem)
      const where = yield* FilterBuilder.buildWhere(collection, toDriverFilters(input.filters))
      const measure = input.mode === "near_text" || input.mode === "near_vector" ? "distance" : "score"
      const selection = Grid.selection(collection, `id ${measure}`)
      const args = [
        searchArgument(input),
        ...(where !== undefined ? [`where: ${FilterBuilder.printWhere(where)}`] : []),
        `limit: ${input.limit ?? 10}`,
        ...(tenant !== undefined ? [`tenant: ${FilterBuilder.graphqlString(tenant)}`] : []),
        ...(ConsistencyLevel.replicated(collection.raw)
          ? [ConsistencyLevel.graphqlArgument(ConsistencyLevel.effective(input.consistency_level, connection))].filter((a) => a !== undefined)
          : [])
      ]
      const query = `{ Get { ${collection.name}(${args.join(", ")}) { ${selection} } } }`
      const result = yield* env.driver.graphql(connection, query)
      if (result.errors.length > 0) {
        return yield* ToolError.fail("query_failed", result.errors.map((e) => e.message).join("; "))
      }
      const table = result.kind === "grid" ? result.tables[0] : undefined
      const columns = table?.columns ?? []
      const rows = table?.rows ?? []
      return ToolDefinition.ok(
        { table: collection.name, mode: input.mode, query, columns, rows },
        `${TextTable.render(columns, rows)}\n${TextTable.count(rows.length, "result")} (${input.mode})`,
        "a smaller limit, or filters"
      )
    })
  })
