/**
 * The structure tools: `create_table`, `add_column`, `update_table`, `drop_table`. Each goes the way of
 * a row write (scope `tools:write`, the connection opened for writing, the approval flow, one
 * activity line), with the change planned first (`SchemaEdits`): what Weaviate would refuse is
 * refused before anyone is asked, with the reason; the user approves a readable summary, one line per
 * property or setting, with the exact request below it; the request is sent once.
 *
 * `drop_table` is destructive, like `confirm_destructive_operation`: a fullAccess token only, `confirm`
 * repeating the table name, the user asked on their machine every time, and the approval says how
 * many rows will be lost.
 *
 * A token scoped to some tenants of a connection cannot change its structure: a collection's schema
 * is every tenant's.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Principal from "../../Auth/Principal.ts"
import type { Collection } from "../../Driver/CollectionSchema.ts"
import type { Driver } from "../../Driver/Driver.ts"
import * as SchemaEdits from "../../Driver/SchemaEdits.ts"
import { ACTIVE_STATUSES } from "../../Driver/Tenants.ts"
import type { Connection } from "../../Schema/Connection.ts"
import * as InputRequired from "../../Schema/InputRequired.ts"
import { Forbidden } from "../../Schema/McpErrors.ts"
import { approveRequest, open, sendApproved, type ToolEnv } from "./ConnectionGate.ts"
import { ConnectionId, Table } from "./Parameters.ts"
import * as TextTable from "./TextTable.ts"
import * as ToolDefinition from "./ToolDefinition.ts"
import * as ToolError from "./ToolError.ts"

const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const
const DESTRUCTIVE = { ...WRITE, destructiveHint: true } as const

// ===== Parameters =====

const propertyFields = {
  name: Schema.String.annotations({ description: "The property's name: a letter or _, then letters, digits or _." }),
  dataType: Schema.String.annotations({
    description: `The data type: ${SchemaEdits.DATA_TYPES.join(", ")}; or the name of a collection, for a reference to it.`
  }),
  description: Schema.optional(Schema.String),
  tokenization: Schema.optional(Schema.String.annotations({
    description: `text and text[] only: ${SchemaEdits.TOKENIZATIONS.slice(0, 5).join(", ")} (word when omitted).`
  })),
  indexFilterable: Schema.optional(Schema.Boolean.annotations({ description: "Usable in filters (default true)." })),
  indexSearchable: Schema.optional(Schema.Boolean.annotations({ description: "text and text[] only: usable in keyword (BM25) search (default true)." })),
  indexRangeFilters: Schema.optional(Schema.Boolean.annotations({ description: "int, number and date only: a range index for greater/less than filters." }))
}

/** Nested properties to a fixed depth (a recursive schema would need `$ref`, which the tool schemas avoid). */
const nestedLevel = (depth: number): Schema.Schema<SchemaEdits.PropertySpec, any> =>
  Schema.Struct({
    ...propertyFields,
    ...(depth > 0
      ? {
        nestedProperties: Schema.optional(Schema.Array(nestedLevel(depth - 1)).annotations({
          description: "object and object[] only: the properties inside the object."
        }))
      }
      : {})
  }) as unknown as Schema.Schema<SchemaEdits.PropertySpec, any>

/** A property of `create_table` and `add_column` (nested properties three levels deep). @category schemas */
export const Property = nestedLevel(3).annotations({ description: "A property (column), in Weaviate's own field names." })

const Tenancy = Schema.Struct({
  enabled: Schema.Boolean,
  autoTenantCreation: Schema.optional(Schema.Boolean.annotations({ description: "An insert naming an unknown tenant creates it." })),
  autoTenantActivation: Schema.optional(Schema.Boolean.annotations({ description: "A read or write of an inactive tenant activates it." }))
})

const NamedVector = Schema.Struct({
  name: Schema.String,
  vectorizer: Schema.String.annotations({ description: "A vectorizer module of this server (get_connection_status lists them), or none." }),
  source_properties: Schema.optional(Schema.Array(Schema.String).annotations({ description: "The text properties it vectorizes (default: all)." })),
  vector_index_type: Schema.optional(Schema.Literal("hnsw", "flat", "dynamic"))
})

const InvertedIndex = Schema.Struct({
  indexTimestamps: Schema.optional(Schema.Boolean.annotations({ description: "Filter by creation and update time (creation only)." })),
  indexNullState: Schema.optional(Schema.Boolean.annotations({ description: "Filter with is NULL (creation only)." })),
  indexPropertyLength: Schema.optional(Schema.Boolean.annotations({ description: "Filter by a text's length (creation only)." })),
  bm25: Schema.optional(Schema.Struct({ b: Schema.optional(Schema.Number), k1: Schema.optional(Schema.Number) })),
  stopwords: Schema.optional(Schema.Struct({
    preset: Schema.optional(Schema.Literal("en", "none")),
    additions: Schema.optional(Schema.Array(Schema.String)),
    removals: Schema.optional(Schema.Array(Schema.String))
  }))
})

const Confirm = Schema.String.annotations({ description: "The table name typed again, exactly, to show intent." })

// ===== Shared steps =====

/** Refuses a plan's problems, all of them at once, before anyone is asked. */
const refuse = (problems: ReadonlyArray<string>) => ToolError.fail("invalid_argument", problems.join("; "))

/** What planning needs to know of the server: its modules (`/v1/meta`) and its collections now. */
const serverFacts = (env: ToolEnv, connection: Connection) =>
  Effect.all({
    modules: Effect.map(env.driver.health(connection), (health) => health.modules),
    collections: env.driver.listCollections(connection)
  }, { concurrency: 2 })

/**
 * The step every structure write takes before it asks for approval: a token scoped to some tenants
 * may not change the structure of the connection. Permission checks that come before approval belong
 * here.
 *
 * @category steps
 */
export const beforeApproval = Effect.fnUntraced(function*(connection: Connection, what: string) {
  const principal = yield* Principal.CurrentPrincipal
  if (Principal.allowedTenants(principal, connection.id, "") !== undefined) {
    return yield* new Forbidden({ message: `Forbidden: a tenant-scoped token cannot ${what}: the structure is every tenant's` })
  }
})

/** The destructive tools' own check, as `confirm_destructive_operation` makes it. */
const destructiveGate = Effect.fnUntraced(function*(tool: string, table: string, confirm: string) {
  if (confirm !== table) return yield* ToolError.fail("invalid_argument", `confirm must repeat the table name exactly: ${JSON.stringify(table)}`)
  const principal = yield* Principal.CurrentPrincipal
  if (!Principal.isFullAccess(principal) || Principal.isAnonymous(principal)) {
    return yield* new Forbidden({ message: `${tool} requires a fullAccess token`, data: { required: "fullAccess", access: principal.access } })
  }
})

// ===== Row counts =====

/** Most tenants whose rows a destructive approval counts one by one. @category constants */
export const MAX_TENANTS_COUNTED = 200

/** @category models */
export interface RowsAtStake {
  /** Rows counted. */
  readonly rows: number
  /** Tenants whose rows could not be counted (inactive, or beyond the bound). */
  readonly uncounted: ReadonlyArray<string>
  readonly lines: ReadonlyArray<string>
}

/**
 * The rows a destructive change will lose: the collection's count, or each named (or every) tenant's.
 * An inactive tenant's rows cannot be counted without activating it: it is named as not counted.
 *
 * @category steps
 */
export const rowsAtStakeOf = Effect.fnUntraced(function*(
  driver: Driver["Type"],
  connection: Connection,
  collection: Collection,
  only?: ReadonlyArray<{ readonly name: string; readonly activityStatus: string }>
) {
  if (!collection.multiTenancy) {
    const rows = yield* driver.count(connection, collection.name)
    return { rows, uncounted: [], lines: [`${collection.name} holds ${TextTable.count(rows, "row")}: all will be lost.`] } satisfies RowsAtStake
  }
  const tenants = only ?? (yield* driver.tenants(connection, collection.name)).tenants
  const counted = tenants.filter((t) => ACTIVE_STATUSES.has(t.activityStatus)).slice(0, MAX_TENANTS_COUNTED)
  const counts = yield* Effect.forEach(counted, (t) => Effect.map(driver.count(connection, collection.name, { tenant: t.name }), (n) => [t.name, n] as const), {
    concurrency: 4
  })
  const byName = new Map(counts)
  const rows = counts.reduce((sum, [, n]) => sum + n, 0)
  const uncounted = tenants.filter((t) => !byName.has(t.name)).map((t) => t.name)
  const lines = [
    `${TextTable.count(rows, "row")} will be lost${tenants.length > 0 ? ` in ${TextTable.count(tenants.length, "tenant")}` : ""}:`,
    ...tenants.map((t) => {
      const n = byName.get(t.name)
      return n === undefined
        ? `  ${t.name}: ${SchemaEdits.statusLabel(t.activityStatus)}, rows not counted (only an active tenant's rows can be counted)`
        : `  ${t.name}: ${TextTable.count(n, "row")}`
    })
  ]
  return { rows, uncounted, lines } satisfies RowsAtStake
})

/** `rowsAtStakeOf` with the tools' driver. @category steps */
export const rowsAtStake = (
  env: ToolEnv,
  connection: Connection,
  collection: Collection,
  only?: ReadonlyArray<{ readonly name: string; readonly activityStatus: string }>
) => rowsAtStakeOf(env.driver, connection, collection, only)

const ok = <O>(structured: O, text: string) => ToolDefinition.ok(structured, text)

// ===== create_table =====

/**
 * The collection `create_table` creates, as the tool (with `connection_id`) and the CLI's
 * `collections create --file` (a JSON file of these fields) take it.
 *
 * @category schemas
 */
export const CreateTableArguments = Schema.Struct({
  table: Schema.String.pipe(Schema.minLength(1)).annotations({ description: "The new collection's name: an upper-case letter, then letters, digits or _." }),
  description: Schema.optional(Schema.String.annotations({ description: "What the collection holds, for people and models." })),
  properties: Schema.Array(Property).annotations({ description: "The properties (columns); more can be added later with add_column." }),
  vectorizer: Schema.optional(Schema.String.annotations({
    description: "A vectorizer module of this server (e.g. text2vec-bigram; get_connection_status lists the modules), or none: vectors are given with each row."
  })),
  vector_index_type: Schema.optional(Schema.Literal("hnsw", "flat", "dynamic").annotations({ description: "The vector index (hnsw when omitted)." })),
  named_vectors: Schema.optional(Schema.Array(NamedVector).annotations({ description: "Several vectors per row instead of one, each with its own vectorizer." })),
  multi_tenancy: Schema.optional(Tenancy.annotations({ description: "Multi-tenancy: each tenant's rows apart (create_tenants adds tenants)." })),
  replication_factor: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.greaterThanOrEqualTo(1)).annotations({
    description: "How many nodes hold each row (1 on a single node)."
  })),
  inverted_index: Schema.optional(InvertedIndex.annotations({ description: "Inverted index settings; indexTimestamps, indexNullState and indexPropertyLength can only be set here." }))
})

/** The planned collection of `create_table`'s arguments. @category conversions */
export const collectionSpec = (input: typeof CreateTableArguments.Type): SchemaEdits.CollectionSpec => ({
  name: input.table,
  description: input.description,
  properties: input.properties,
  vectorizer: input.vectorizer,
  vectorIndexType: input.vector_index_type,
  namedVectors: input.named_vectors?.map((v) => ({ name: v.name, vectorizer: v.vectorizer, sourceProperties: v.source_properties, vectorIndexType: v.vector_index_type })),
  multiTenancy: input.multi_tenancy,
  replicationFactor: input.replication_factor,
  invertedIndex: input.inverted_index
})

/** @category tools */
export const createTable = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "create_table",
    title: "Create a collection",
    description: "Creates a collection (table): its properties (name, dataType, description, tokenization, indexFilterable, " +
      "indexSearchable, nested properties for object), its vectorizer (a module this server has, or none with vectors given " +
      "per row) or named vectors each with its own vectorizer and source properties, multi-tenancy (autoTenantCreation, " +
      "autoTenantActivation), the replication factor and the inverted index settings only creation can set. What Weaviate would " +
      "refuse (invalid or reserved names, a property named twice, an unknown data type, a vectorizer module this server lacks) " +
      "is refused at once with the reason. The user approves the collection, one property a line, first.",
    input: Schema.Struct({ connection_id: ConnectionId, ...CreateTableArguments.fields }),
    output: Schema.Struct({ table: Schema.String, created: Schema.Boolean, properties: Schema.Number, approvedBy: Schema.String }),
    annotations: WRITE,
    scopes: ["tools:write"],
    run: Effect.fnUntraced(function*(input) {
      const connection = yield* open(env, input.connection_id, "write")
      if (InputRequired.is(connection)) return connection
      yield* beforeApproval(connection, "create a collection")
      const plan = SchemaEdits.planCreate(collectionSpec(input), yield* serverFacts(env, connection))
      if ("problems" in plan) return yield* refuse(plan.problems)
      const approvedBy = yield* approveRequest(env, connection, SchemaEdits.statementOf(plan), plan.request)
      if (InputRequired.is(approvedBy)) return approvedBy
      yield* sendApproved(env, connection, plan.request)
      return ok(
        { table: input.table, created: true, properties: input.properties.length, approvedBy },
        `Created the collection ${input.table} with ${input.properties.length} ${input.properties.length === 1 ? "property" : "properties"}.`
      )
    })
  })

// ===== add_column =====

/** @category tools */
export const addColumn = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "add_column",
    title: "Add a property",
    description: "Adds one property (column) to an existing collection. " + SchemaEdits.ADD_COLUMN_NOTE + " A name already " +
      "used (ignoring case), an invalid or reserved name or an unknown data type is refused at once with the reason. The user " +
      "approves the property first.",
    input: Schema.Struct({ connection_id: ConnectionId, table: Table, property: Property.annotations({ description: "The new property, in Weaviate's own field names." }) }),
    output: Schema.Struct({ table: Schema.String, added: Schema.String, approvedBy: Schema.String }),
    annotations: WRITE,
    scopes: ["tools:write"],
    run: Effect.fnUntraced(function*(input) {
      const connection = yield* open(env, input.connection_id, "write")
      if (InputRequired.is(connection)) return connection
      yield* beforeApproval(connection, "add a property")
      const facts = yield* serverFacts(env, connection)
      const collection = yield* Effect.map(env.driver.describe(connection, input.table), (d) => d.collection)
      const plan = SchemaEdits.planAddProperty(collection, input.property, facts)
      if ("problems" in plan) return yield* refuse(plan.problems)
      const approvedBy = yield* approveRequest(env, connection, SchemaEdits.statementOf(plan), plan.request)
      if (InputRequired.is(approvedBy)) return approvedBy
      yield* sendApproved(env, connection, plan.request)
      return ok(
        { table: collection.name, added: input.property.name, approvedBy },
        `Added the property ${input.property.name} (${input.property.dataType}) to ${collection.name}. ${SchemaEdits.ADD_COLUMN_NOTE}`
      )
    })
  })

// ===== update_table =====

/** @category tools */
export const updateTable = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "update_table",
    title: "Change a collection's settings",
    description: "Changes a collection's description and its mutable settings, named by their path in the collection's " +
      "document (describe_table shows it): invertedIndexConfig.bm25.b/k1, invertedIndexConfig.stopwords.preset/additions/removals, " +
      "replicationConfig.factor/asyncEnabled/deletionStrategy, multiTenancyConfig.autoTenantCreation/autoTenantActivation, " +
      "vectorIndexConfig.ef/dynamicEfMin/dynamicEfMax/dynamicEfFactor/flatSearchCutoff/vectorCacheMaxObjects/filterStrategy " +
      "(vectorConfig.NAME.vectorIndexConfig.… for a named vector). Settings Weaviate fixes at creation (vectorizer, vector index " +
      "type, distance, efConstruction, maxConnections, sharding, indexTimestamps, indexNullState, indexPropertyLength, " +
      "multi-tenancy itself, properties) are refused, named. The user approves each change, old value → new, first.",
    input: Schema.Struct({
      connection_id: ConnectionId,
      table: Table,
      description: Schema.optional(Schema.String.annotations({ description: "The collection's new description." })),
      settings: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
        description: "New values by path, e.g. {\"vectorIndexConfig.ef\": 128, \"replicationConfig.asyncEnabled\": true}."
      }))
    }),
    output: Schema.Struct({ table: Schema.String, changed: Schema.Array(Schema.String), approvedBy: Schema.String }),
    annotations: { ...WRITE, idempotentHint: true },
    scopes: ["tools:write"],
    run: Effect.fnUntraced(function*(input) {
      const connection = yield* open(env, input.connection_id, "write")
      if (InputRequired.is(connection)) return connection
      yield* beforeApproval(connection, "change a collection's settings")
      const collection = yield* Effect.map(env.driver.describe(connection, input.table), (d) => d.collection)
      const current = yield* Effect.flatMap(env.driver.http(connection), (http) => SchemaEdits.readDocument(http, collection.name))
      const plan = SchemaEdits.planUpdate(current, { description: input.description, settings: input.settings })
      if ("problems" in plan) return yield* refuse(plan.problems)
      const approvedBy = yield* approveRequest(env, connection, SchemaEdits.statementOf(plan), plan.request)
      if (InputRequired.is(approvedBy)) return approvedBy
      yield* sendApproved(env, connection, plan.request)
      const changed = [...(input.description !== undefined ? ["description"] : []), ...Object.keys(input.settings ?? {})]
      return ok({ table: collection.name, changed, approvedBy }, [`Changed ${collection.name}:`, ...plan.summary.slice(1)].join("\n"))
    })
  })

// ===== drop_table =====

/** @category tools */
export const dropTable = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "drop_table",
    title: "Drop a collection (asks the user)",
    description: "Drops a collection with all its rows (and every tenant's). Destructive, like confirm_destructive_operation: " +
      "needs a fullAccess token, confirm must repeat the table name exactly, and the user is asked on their machine every " +
      "time, told how many rows will be lost. This cannot be undone.",
    input: Schema.Struct({ connection_id: ConnectionId, table: Table, confirm: Confirm }),
    output: Schema.Struct({
      table: Schema.String,
      dropped: Schema.Boolean,
      rowsLost: Schema.Number,
      tenantsNotCounted: Schema.optional(Schema.Array(Schema.String)),
      approvedBy: Schema.String
    }),
    annotations: DESTRUCTIVE,
    // `admin` comes only with fullAccess, so `tools/list` shows the tool to the tokens that may call it.
    scopes: ["tools:write", "admin"],
    run: Effect.fnUntraced(function*(input) {
      yield* destructiveGate("drop_table", input.table, input.confirm)
      const connection = yield* open(env, input.connection_id, "write")
      if (InputRequired.is(connection)) return connection
      yield* beforeApproval(connection, "drop a collection")
      const collection = yield* Effect.map(env.driver.describe(connection, input.table), (d) => d.collection)
      const stake = yield* rowsAtStake(env, connection, collection)
      const plan: SchemaEdits.Plan = {
        summary: [`Drop the collection ${collection.name} with all its rows`, ...stake.lines, "This cannot be undone."],
        request: { method: "DELETE", path: `/v1/schema/${encodeURIComponent(collection.name)}` }
      }
      const approvedBy = yield* approveRequest(env, connection, SchemaEdits.statementOf(plan), plan.request, { destructive: true })
      if (InputRequired.is(approvedBy)) return approvedBy
      yield* sendApproved(env, connection, plan.request)
      return ok(
        {
          table: collection.name,
          dropped: true,
          rowsLost: stake.rows,
          ...(stake.uncounted.length > 0 ? { tenantsNotCounted: stake.uncounted } : {}),
          approvedBy
        },
        `Dropped the collection ${collection.name} and its ${TextTable.count(stake.rows, "row")}${
          stake.uncounted.length > 0 ? ` (and the rows of ${TextTable.count(stake.uncounted.length, "inactive tenant")}, not counted)` : ""
        }.`
      )
    })
  })
