/**
 * The prompts of the catalogue, each rendered from the live schema of a connection so the model
 * works from the real collections, columns, types and filter operators:
 *
 * | prompt | arguments (required*) |
 * |---|---|
 * | `explain_schema` | connection_id* |
 * | `explain_table` | connection_id*, table* |
 * | `question_to_graphql` | connection_id*, question*, table |
 * | `review_query` | connection_id*, query* |
 * | `data_quality_audit` | connection_id*, table*, column |
 * | `tune_hybrid_search` | connection_id*, table*, query*, property |
 * | `aggregate_table` | connection_id*, table*, question, group_by, metric |
 * | `design_collection` | connection_id*, description*, name, vectorizer |
 * | `plan_column` | connection_id*, table*, data_type, column |
 *
 * `prompts/get` checks, in order: the prompt exists and every required argument is given
 * (`InvalidParams`); the connection exists (by id or name) and the principal may read it
 * (`InvalidParams` / `Forbidden`); first access (`input_required` or the dialog); then the table
 * and column named exist (`InvalidParams`).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { FirstAccess } from "../../Approval/FirstAccess.ts"
import * as Aggregate from "../../Driver/Aggregate.ts"
import * as CollectionSchema from "../../Driver/CollectionSchema.ts"
import { ConnectionStore } from "../../Driver/ConnectionStore.ts"
import { HistoryStore } from "../../History/HistoryStore.ts"
import { Driver } from "../../Driver/Driver.ts"
import * as GraphqlEditor from "../../Driver/GraphqlEditor.ts"
import * as RestConsole from "../../Driver/RestConsole.ts"
import * as SchemaEdits from "../../Driver/SchemaEdits.ts"
import type { Connection } from "../../Schema/Connection.ts"
import { InvalidParams, type McpError } from "../../Schema/McpErrors.ts"
import { complete, type PromptDescriptor, type PromptResult, Prompts } from "../../Mcp/Catalogue.ts"
import * as ConnectionAccess from "../ConnectionAccess.ts"
import * as HistoryCatalogue from "../HistoryCatalogue.ts"
import { schemaJson } from "../Resources/Resources.ts"
import * as ResourceUri from "../Resources/ResourceUri.ts"
import * as SchemaText from "./SchemaText.ts"

// ===== Arguments =====

/** @category models */
export interface PromptArgument {
  readonly name: string
  readonly description: string
  readonly required: boolean
}

const connectionId: PromptArgument = {
  name: "connection_id",
  description: "The id (or name) of a saved Weaviate connection.",
  required: true
}
const table = (required: boolean, what = "The collection to work on."): PromptArgument => ({
  name: "table",
  description: `${what} Collection names are case-sensitive; the first letter is upper-case.`,
  required
})

/** Argument names whose values are property names of the table argument (for completion). @category constants */
export const PROPERTY_ARGUMENTS: ReadonlySet<string> = new Set(["column", "property"])

/** The argument whose values are the properties Weaviate can group by (for completion). @category constants */
export const GROUP_BY_ARGUMENT = "group_by"

/** The argument whose values are `property:metric` of the table argument, by type (for completion). @category constants */
export const METRIC_ARGUMENT = "metric"
/** Argument names whose values are vectorizer modules of the server (for completion). @category constants */
export const VECTORIZER_ARGUMENTS: ReadonlySet<string> = new Set(["vectorizer"])

/** Argument names whose values are data types (for completion). @category constants */
export const DATA_TYPE_ARGUMENTS: ReadonlySet<string> = new Set(["data_type"])

/** @category constants */
export const descriptors: ReadonlyArray<PromptDescriptor & { readonly arguments: ReadonlyArray<PromptArgument> }> = [
  {
    name: "explain_schema",
    title: "Explain the schema",
    description: "Explains every collection of a connection, how they relate and how they can be searched, from the live schema.",
    arguments: [connectionId]
  },
  {
    name: "explain_table",
    title: "Explain a table",
    description: "Explains one collection: its columns, types, filter operators, indexes, vectorizer and a few sample rows.",
    arguments: [connectionId, table(true)]
  },
  {
    name: "question_to_graphql",
    title: "Question to GraphQL",
    description: "Turns a question in plain words into one read-only Weaviate GraphQL query over the real schema.",
    arguments: [
      connectionId,
      { name: "question", description: "What you want to know, in plain words.", required: true },
      table(false, "Optional: the collection the question is about (default: all).")
    ]
  },
  {
    name: "review_query",
    title: "Review a query",
    description:
      "Reviews a GraphQL query or a REST console line against the live schema: names, types, operators, performance and safety.",
    arguments: [
      connectionId,
      { name: "query", description: "A GraphQL operation or a REST console line such as `GET /v1/schema`.", required: true }
    ]
  },
  {
    name: "data_quality_audit",
    title: "Data quality audit",
    description: "Plans and runs a data quality audit of a collection: completeness, validity, duplicates, outliers.",
    arguments: [
      connectionId,
      table(true),
      { name: "column", description: "Optional: one property to focus on.", required: false }
    ]
  },
  {
    name: "tune_hybrid_search",
    title: "Tune hybrid search",
    description: "Tunes a hybrid search (alpha, properties, fusion) for a query on a collection, from its vectorizer and searchable properties.",
    arguments: [
      connectionId,
      table(true),
      { name: "query", description: "The search text to tune for.", required: true },
      { name: "property", description: "Optional: the text property to weight in the keyword part.", required: false }
    ]
  },
  {
    name: "aggregate_table",
    title: "Aggregate a table",
    description: "Answers a counting or statistics question about a collection (how many per status, average price per category) with the aggregate tool, from the metrics its property types allow.",
    arguments: [
      connectionId,
      table(true),
      { name: "question", description: "Optional: what to measure, in plain words.", required: false },
      { name: GROUP_BY_ARGUMENT, description: "Optional: the property to group by.", required: false },
      { name: METRIC_ARGUMENT, description: "Optional: one metric as property:metric, e.g. price:mean.", required: false }
    ]
  },
  {
    name: "design_collection",
    title: "Design a collection",
    description: "Designs a collection from a description of the data (properties, types, tokenization, vectorizer, tenancy) " +
      "and shows the create_table call for the user to approve.",
    arguments: [
      connectionId,
      { name: "description", description: "The data in plain words: what one record is, its fields, how it will be searched.", required: true },
      { name: "name", description: "Optional: the collection's name (an upper-case letter, then letters, digits or _).", required: false },
      { name: "vectorizer", description: "Optional: the vectorizer module to use (one this server has), or none.", required: false }
    ]
  },
  {
    name: "plan_column",
    title: "Plan a new column",
    description: "Plans one property to add to a collection with add_column: its name, data type, tokenization and indexes, " +
      "and what adding it means for the rows already there.",
    arguments: [
      connectionId,
      table(true),
      { name: "data_type", description: "Optional: the data type it should have (text, int, number, date, …).", required: false },
      { name: "column", description: "Optional: an existing property to model it on.", required: false }
    ]
  }
]

// ===== Rendering =====

type Args = Readonly<Record<string, string>>

interface RenderInput {
  readonly connection: Connection
  readonly collections: ReadonlyArray<CollectionSchema.Collection>
  readonly args: Args
  readonly driver: Driver["Type"]
}

const user = (text: string) => ({ role: "user", content: { type: "text", text } })

const embeddedSchema = (connection: Connection, collections: ReadonlyArray<CollectionSchema.Collection>) => ({
  role: "user",
  content: {
    type: "resource",
    resource: {
      uri: ResourceUri.format(ResourceUri.ResourceRef.Schema({ connectionId: connection.id })),
      mimeType: ResourceUri.MIME_TYPE,
      text: JSON.stringify(schemaJson(connection, collections), null, 2)
    }
  }
})

const findTable = (collections: ReadonlyArray<CollectionSchema.Collection>, name: string) => {
  const found = collections.find((c) => c.name === name) ?? collections.find((c) => c.name.toLowerCase() === name.toLowerCase())
  return found === undefined
    ? Effect.fail(
      new InvalidParams({
        message: `Unknown table ${JSON.stringify(name)}; the collections are: ${collections.map((c) => c.name).join(", ") || "(none)"}`,
        data: { table: name }
      })
    )
    : Effect.succeed(found)
}

const findProperty = (collection: CollectionSchema.Collection, name: string) => {
  const found = collection.properties.find((p) => p.name === name)
  return found === undefined
    ? Effect.fail(
      new InvalidParams({
        message: `Table ${collection.name} has no property ${JSON.stringify(name)}; its properties are: ${
          collection.properties.map((p) => p.name).join(", ")
        }`,
        data: { property: name }
      })
    )
    : Effect.succeed(found)
}

const MAX_ROW_TEXT = 400

const sampleRows = (input: RenderInput, collection: CollectionSchema.Collection, limit: number) =>
  collection.multiTenancy
    ? Effect.succeed("(multi-tenant: rows are read per tenant)")
    : Effect.map(input.driver.browse(input.connection.id, collection.name, { limit }), (page) =>
      page.rows.length === 0
        ? "(no rows)"
        : page.rows.map((row) => {
          const { vector: _vector, ...rest } = row
          const line = JSON.stringify(rest)
          // Long texts would crowd out the schema: a sample row shows its shape, not all its words.
          return `- ${line.length > MAX_ROW_TEXT ? `${line.slice(0, MAX_ROW_TEXT)}…` : line}`
        }).join("\n"))

const rowCount = (input: RenderInput, collection: CollectionSchema.Collection) =>
  collection.multiTenancy
    ? Effect.succeed("per tenant")
    : Effect.map(input.driver.count(input.connection.id, collection.name), (n) => n.toLocaleString("en-US"))

const where = (input: RenderInput) => `the Weaviate connection "${input.connection.name}" (id ${input.connection.id})`

const renderers: Readonly<Record<string, (input: RenderInput) => Effect.Effect<PromptResult, McpError | { readonly _tag: string; readonly message: string }>>> = {
  explain_schema: (input) =>
    Effect.succeed({
      description: `The schema of ${input.connection.name}, explained`,
      messages: [
        user(
          [
            `Explain the schema of ${where(input)} to me.`,
            "For each collection say what it holds, which properties can be filtered, sorted or searched by keyword, and how it is vectorized. " +
            "Point out cross-references between collections, multi-tenant collections, and properties that cannot be filtered. " +
            "Finish with three questions this data could answer and the tool (browse_table, vector_search, execute_query) you would use for each.",
            "",
            `## Live schema (${input.collections.length} collections)`,
            SchemaText.schemaBlocks(input.collections)
          ].join("\n")
        ),
        embeddedSchema(input.connection, input.collections)
      ]
    }),

  explain_table: Effect.fnUntraced(function*(input) {
    const collection = yield* findTable(input.collections, input.args["table"]!)
    const [count, rows] = yield* Effect.all([rowCount(input, collection), sampleRows(input, collection, 3)], { concurrency: 2 })
    return {
      description: `Table ${collection.name} of ${input.connection.name}, explained`,
      messages: [
        user(
          [
            `Explain the table ${collection.name} of ${where(input)}.`,
            "Describe what a row represents, what each column means and its type, which columns can be filtered and with which operators, " +
            "which are keyword-searchable, how the vector is produced, and any limits (multi-tenancy, unindexed columns). " +
            "Then give two example filters and one vector or hybrid search that would be useful on this table.",
            "",
            SchemaText.collectionBlock(collection),
            "",
            `rows: ${count}`,
            "sample rows:",
            rows,
            "",
            SchemaText.graphqlOperatorHint
          ].join("\n")
        )
      ]
    }
  }),

  question_to_graphql: Effect.fnUntraced(function*(input) {
    const scope = input.args["table"] === undefined
      ? input.collections
      : [yield* findTable(input.collections, input.args["table"])]
    return {
      description: "A question turned into a read-only Weaviate GraphQL query",
      messages: [
        user(
          [
            `Write one read-only GraphQL query for ${where(input)} that answers this question:`,
            "",
            `> ${input.args["question"]!.split("\n").join("\n> ")}`,
            "",
            "Rules: a single `query` operation using `Get` (rows) or `Aggregate` (counts, statistics); no mutations. " +
            "Use only the collections and properties below, with the exact spelling. Filter with `where` on filterable properties only, " +
            "with operators the column accepts. Use `nearText` only on a collection with a vectorizer, `bm25`/`hybrid` only on searchable text properties. " +
            "Cross-references are read with `... on OtherCollection { property }`. Always set a `limit`. " +
            "Answer with the query in a ```graphql block, then explain it in two sentences. It will be run with the execute_query tool.",
            "",
            SchemaText.graphqlOperatorHint,
            "",
            "## Live schema",
            SchemaText.schemaBlocks(scope)
          ].join("\n")
        )
      ]
    }
  }),

  review_query: (input) =>
    Effect.sync(() => {
      const query = input.args["query"]!
      const isRest = /^\s*(GET|POST|PUT|PATCH|DELETE|HEAD)\s/i.test(query)
      const verdict = isRest
        ? Either.match(RestConsole.parse(query), {
          onLeft: (error) => `The server would refuse it: ${error.message}`,
          onRight: (request) => {
            const kind = RestConsole.classify(request)
            return kind.destructive !== undefined
              ? `A destructive write (${kind.destructive}${kind.collection !== undefined ? ` of ${kind.collection}` : ""}): execute_query refuses it; it needs confirm_destructive_operation and the user's confirmation.`
              : kind.isWrite
              ? "A write: it needs the tools:write scope and the user's approval."
              : "A read: it can run with execute_query."
          }
        })
        : Either.match(GraphqlEditor.validate(query), {
          onLeft: (error) => `The server would refuse it: ${error.message}`,
          onRight: () => "A valid read-only GraphQL query (one operation): it can run with execute_query."
        })
      const mentioned = input.collections.filter((c) => new RegExp(`\\b${c.name}\\b`).test(query))
      return {
        description: "A query reviewed against the live schema",
        messages: [
          user(
            [
              `Review this ${isRest ? "REST console line" : "GraphQL query"} for ${where(input)}:`,
              "",
              "```" + (isRest ? "http" : "graphql"),
              query,
              "```",
              "",
              `Server-side check: ${verdict}`,
              "",
              "Check that every collection and property exists with this exact spelling, that each filter uses an operator its column accepts " +
              "and a value of the right type, that filtered properties are indexed, that a limit bounds the result, and whether it writes. " +
              "List the problems found, then give a corrected version.",
              "",
              SchemaText.graphqlOperatorHint,
              "",
              mentioned.length > 0
                ? `## Collections the query names\n${SchemaText.schemaBlocks(mentioned)}`
                : `## The query names no known collection. The collections are: ${input.collections.map((c) => c.name).join(", ") || "(none)"}`
            ].join("\n")
          )
        ]
      }
    }),

  data_quality_audit: Effect.fnUntraced(function*(input) {
    const collection = yield* findTable(input.collections, input.args["table"]!)
    const focus = input.args["column"] === undefined ? undefined : yield* findProperty(collection, input.args["column"])
    const [count, rows] = yield* Effect.all([rowCount(input, collection), sampleRows(input, collection, 5)], { concurrency: 2 })
    const nullNote = collection.indexNullState
      ? "The null-state index is on: `is NULL` / `is not NULL` filters work, so count_rows can measure missing values per column."
      : "The null-state index is off: `is NULL` filters are refused; estimate missing values from browsed rows instead."
    const lengthNote = collection.indexPropertyLength
      ? "The property-length index is on: `is empty` / `is not empty` work on text and array columns."
      : "The property-length index is off: `is empty` filters are refused."
    return {
      description: `A data quality audit of ${collection.name}`,
      messages: [
        user(
          [
            `Audit the data quality of the table ${collection.name} in ${where(input)}${focus !== undefined ? `, focusing on the column ${focus.name}` : ""}.`,
            "Check completeness (missing and empty values per column), validity (values of the expected type and range, dates in a sensible period), " +
            "uniqueness (duplicate rows or keys), consistency (categories spelled differently, dangling cross-references) and outliers in numbers. " +
            "Use count_rows with filters to measure, browse_table to look at examples, and report a table of findings with counts and a fix for each.",
            "",
            SchemaText.collectionBlock(collection),
            "",
            `rows: ${count}`,
            nullNote,
            lengthNote,
            ...(focus !== undefined ? [`focus column: ${focus.name}: ${SchemaText.typeOf(focus)}; ${SchemaText.indexing(focus)}`] : []),
            "sample rows:",
            rows
          ].join("\n")
        )
      ]
    }
  }),

  tune_hybrid_search: Effect.fnUntraced(function*(input) {
    const collection = yield* findTable(input.collections, input.args["table"]!)
    const focus = input.args["property"] === undefined ? undefined : yield* findProperty(collection, input.args["property"])
    const searchable = collection.properties.filter((p) => p.baseType === "text" && p.indexSearchable)
    const vectorNote = collection.vectorizer !== undefined && collection.vectorizer !== "none"
      ? `Vectorizer ${collection.vectorizer}: the query text is vectorized by the server, so hybrid and near_text work with text alone.`
      : collection.namedVectors.length > 0
      ? `Named vectors: ${collection.namedVectors.join(", ")}; pick the target vector.`
      : "No vectorizer: the vector part of hybrid needs an explicit vector (vector_search with mode near_vector or hybrid with a vector); with text only, hybrid degrades to keyword search."
    return {
      description: `Hybrid search tuning on ${collection.name}`,
      messages: [
        user(
          [
            `Tune a hybrid search on the table ${collection.name} of ${where(input)} for the query:`,
            "",
            `> ${input.args["query"]!}`,
            "",
            "Run vector_search with mode hybrid at alpha 0 (keyword only), 0.25, 0.5, 0.75 and 1 (vector only), with limit 10, " +
            "and compare the results: which alpha ranks the relevant rows first, whether the keyword part should search fewer properties, " +
            "and whether a filter should narrow the candidates. Also run bm25 alone to see the keyword baseline. " +
            "Recommend alpha, the properties (optionally boosted as `name^2`), the fusion type (rankedFusion or relativeScoreFusion) and any filter, with reasons.",
            "",
            vectorNote,
            `Keyword-searchable text properties: ${
              searchable.length === 0
                ? "none (bm25 and the keyword part of hybrid find nothing)"
                : searchable.map((p) => `${p.name} (tokenization ${p.tokenization ?? "word"})`).join(", ")
            }.`,
            ...(focus !== undefined
              ? [`Weight the property ${focus.name} (${SchemaText.typeOf(focus)}; ${SchemaText.indexing(focus)}) in the keyword part.`]
              : []),
            "",
            SchemaText.collectionBlock(collection)
          ].join("\n")
        )
      ]
    }
  }),

  aggregate_table: Effect.fnUntraced(function*(input) {
    const collection = yield* findTable(input.collections, input.args["table"]!)
    const groupBy = input.args[GROUP_BY_ARGUMENT] === undefined ? undefined : yield* findProperty(collection, input.args[GROUP_BY_ARGUMENT])
    if (groupBy !== undefined && !Aggregate.canGroupBy(groupBy)) {
      return yield* new InvalidParams({ message: `Weaviate cannot group by ${groupBy.name} (${SchemaText.typeOf(groupBy)})`, data: { group_by: groupBy.name } })
    }
    const metric = input.args[METRIC_ARGUMENT]
    const problem = metric === undefined ? undefined : Aggregate.metricTextProblem(collection, metric)
    if (problem !== undefined) return yield* new InvalidParams({ message: problem, data: { metric } })
    const aggregatable = collection.properties.filter((p) => Aggregate.metricsOf(p).length > 0)
    const call = {
      connection_id: input.connection.id,
      table: collection.name,
      ...(groupBy !== undefined ? { group_by: groupBy.name } : {}),
      ...(metric !== undefined ? { metrics: [{ property: metric.split(":")[0], metric: metric.split(":")[1] }] } : {}),
      ...(collection.multiTenancy ? { tenant: "<tenant>" } : {})
    }
    return {
      description: `Aggregation of ${collection.name}`,
      messages: [
        user(
          [
            `Answer with the aggregate tool on the table ${collection.name} of ${where(input)}` +
            (input.args["question"] !== undefined ? ` this question:\n\n> ${input.args["question"]}\n` : "."),
            "Pick group_by (one property: a row per value) and the metrics (each {property, metric}) that answer it; add filters " +
            "(browse_table's) to narrow the rows, and near_text or hybrid with object_limit to aggregate a search's best matches. " +
            "Report the grid and the count of the whole set, then answer in one or two sentences.",
            "",
            "Metrics by property (a metric outside its property's list is refused):",
            ...(aggregatable.length === 0
              ? ["(no property of this collection can be aggregated; group_by and the row count still work)"]
              : aggregatable.map((p) => `- ${p.name} (${SchemaText.typeOf(p)}): ${Aggregate.metricsOf(p).join(", ")}`)),
            `Properties to group by: ${collection.properties.filter(Aggregate.canGroupBy).map((p) => p.name).join(", ") || "none"}.`,
            ...(collection.multiTenancy ? ["The collection is multi-tenant: pass tenant (list_tenants names them)."] : []),
            "",
            `A call to start from:\n${JSON.stringify({ name: "aggregate", arguments: call })}`
          ].join("\n")
        )
      ]
    }
  }),

  design_collection: Effect.fnUntraced(function*(input) {
    const { modules } = yield* input.driver.health(input.connection.id)
    const vectorizers = modules.filter(SchemaEdits.isVectorizerModule)
    const asked = input.args["vectorizer"]
    const name = input.args["name"]
    const vectorizerLine = asked !== undefined
      ? asked === "none" || vectorizers.includes(asked)
        ? `Use the vectorizer ${asked}.`
        : `The vectorizer ${asked} is not a module of this server; choose one of those below or none.`
      : "Choose the vectorizer from the modules below (or none, when the rows come with their own vectors)."
    const example = {
      connection_id: input.connection.id,
      table: name ?? "Ticket",
      description: "Support tickets",
      properties: [
        { name: "title", dataType: "text", description: "One-line summary" },
        { name: "status", dataType: "text", tokenization: "field", indexSearchable: false },
        { name: "price", dataType: "number", indexRangeFilters: true }
      ],
      vectorizer: asked ?? vectorizers[0] ?? "none"
    }
    return {
      description: "A collection designed from a description of the data, as a create_table call",
      messages: [
        user(
          [
            `Design a Weaviate collection for ${where(input)} to hold this data:`,
            "",
            `> ${input.args["description"]!.split("\n").join("\n> ")}`,
            "",
            `${name !== undefined ? `Name it ${name}. ` : ""}${vectorizerLine}`,
            "Give each property the narrowest data type, a description, tokenization field for codes and categories (word for prose), " +
            "indexSearchable false on text never searched by keyword, indexRangeFilters on numbers and dates compared with greater/less than, " +
            "object with nestedProperties for structured values, and a reference (the other collection's name as the data type) for links. " +
            "Use multi-tenancy when each customer's rows must stay apart. Explain each choice in one line, then show the create_table call " +
            "as JSON in a ```json block. Call create_table only after the user has read it: the user approves it again before anything is created.",
            "",
            `Names: a collection name matches ${SchemaEdits.COLLECTION_NAME.source}; a property name matches ${SchemaEdits.PROPERTY_NAME.source} ` +
            `and is not one of ${SchemaEdits.RESERVED_PROPERTY_NAMES.join(", ")}; names are unique ignoring case.`,
            `Data types: ${SchemaEdits.DATA_TYPES.join(", ")}, or a collection name for a reference.`,
            `Vectorizer modules of this server: ${vectorizers.length === 0 ? "none" : vectorizers.join(", ")}.`,
            `Collections already there (names taken): ${input.collections.map((c) => c.name).join(", ") || "(none)"}.`,
            "",
            "The shape of the call:",
            "```json",
            JSON.stringify({ tool: "create_table", arguments: example }, null, 2),
            "```"
          ].join("\n")
        )
      ]
    }
  }),

  plan_column: Effect.fnUntraced(function*(input) {
    const collection = yield* findTable(input.collections, input.args["table"]!)
    const model = input.args["column"] === undefined ? undefined : yield* findProperty(collection, input.args["column"])
    const type = input.args["data_type"]
    const typeLine = type === undefined
      ? ""
      : SchemaEdits.DATA_TYPES.includes(type) || input.collections.some((c) => c.name === type)
      ? `It should be of type ${type}.`
      : `${type} is not a data type Weaviate has; choose one below.`
    return {
      description: `A new column for ${collection.name}, planned as an add_column call`,
      messages: [
        user(
          [
            `Plan one new property for the table ${collection.name} of ${where(input)}.`,
            ...(typeLine !== "" ? [typeLine] : []),
            ...(model !== undefined ? [`Model it on ${model.name}: ${SchemaText.typeOf(model)}; ${SchemaText.indexing(model)}.`] : []),
            `Weaviate cannot rename or drop a property once added, and the rows already stored (${yield* rowCount(input, collection)}) ` +
            "are not re-indexed for it: filters on it find only rows written afterwards. Choose the name with care, then show the add_column " +
            "call as JSON in a ```json block; the user approves it before the property is added.",
            `Data types: ${SchemaEdits.DATA_TYPES.join(", ")}, or a collection name for a reference.`,
            "",
            SchemaText.collectionBlock(collection)
          ].join("\n")
        )
      ]
    }
  })
}

// ===== Service =====

const missingArguments = (descriptor: (typeof descriptors)[number], args: Args) =>
  descriptor.arguments.filter((a) => a.required && (args[a.name] === undefined || args[a.name]!.trim() === "")).map((a) => a.name)

/** @category constructors */
export const make = Effect.gen(function*() {
  const driver = yield* Driver
  const access = yield* ConnectionAccess.make
  const store = yield* ConnectionStore
  const history = yield* Effect.serviceOption(HistoryStore)

  const get = Effect.fnUntraced(function*(name: string, args: Args) {
    if (name === HistoryCatalogue.PROMPT && Option.isSome(history)) return yield* HistoryCatalogue.get({ store, access, history: history.value }, args)
    const descriptor = descriptors.find((d) => d.name === name)
    if (descriptor === undefined) {
      return yield* new InvalidParams({
        message: `Unknown prompt ${JSON.stringify(name)}; the prompts are: ${descriptors.map((d) => d.name).join(", ")}`,
        data: { name }
      })
    }
    const missing = missingArguments(descriptor, args)
    if (missing.length > 0) {
      return yield* new InvalidParams({
        message: `Prompt ${name} is missing required argument${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}`,
        data: { missing }
      })
    }
    // Optional arguments given as empty strings count as absent.
    const given: Args = Object.fromEntries(Object.entries(args).filter(([, v]) => v.trim() !== ""))
    const connection = yield* access.readable(given["connection_id"]!, { byName: true })
    const gate = yield* access.firstAccess(connection, { name, arguments: args })
    if (gate._tag === "InputRequired") return gate
    const collections = yield* Effect.mapError(driver.listCollections(connection), ConnectionAccess.toMcpError)
    const result = yield* Effect.mapError(
      renderers[name]!({ connection, collections, args: given, driver }),
      (error): McpError => error._tag === "InvalidParams" ? (error as InvalidParams) : ConnectionAccess.toMcpError(error)
    )
    return complete(result)
  })

  // With a query history (the daemon's), its prompt too.
  return Prompts.of({ all: Option.isSome(history) ? [...descriptors, HistoryCatalogue.prompt] : descriptors, get })
})

/** @category layers */
export const layer: Layer.Layer<Prompts, never, Driver | ConnectionStore | FirstAccess> = Layer.effect(Prompts, make)

/** @category layers */
export const PromptsLive = layer

