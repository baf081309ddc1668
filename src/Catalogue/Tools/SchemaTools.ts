/**
 * `list_tables`, `describe_table` and `search_schema`: the schema as a model needs it before it
 * writes a filter or a query.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as InputRequired from "../../Schema/InputRequired.ts"
import type { Collection, Property } from "../../Driver/CollectionSchema.ts"
import type { Connection } from "../../Schema/Connection.ts"
import { type ToolEnv, open } from "./ConnectionGate.ts"
import { ConnectionId, Table } from "./Parameters.ts"
import * as TextTable from "./TextTable.ts"
import * as ToolDefinition from "./ToolDefinition.ts"

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const

const TableSummary = Schema.Struct({
  name: Schema.String,
  description: Schema.optional(Schema.String),
  vectorizer: Schema.optional(Schema.String),
  multiTenancy: Schema.Boolean,
  properties: Schema.Number,
  count: Schema.optional(Schema.NullOr(Schema.Number)),
  unreadyShards: Schema.optional(Schema.Array(Schema.String).annotations({
    description: "Present when some shard of the collection is not READY: each such shard with its status"
  }))
})

/** One collection of `list_tables`: its summary, its shards not ready, and its row count when asked. */
const summaryOf = Effect.fnUntraced(function*(env: ToolEnv, connection: Connection, c: Collection, withCount: boolean) {
  // Tenants' shards are their tenants (list_tenants shows their state): only the others are asked.
  const unready = c.multiTenancy ? [] : yield* env.driver.unreadyShards(connection, c.name)
  const count = !withCount
    ? undefined
    : c.multiTenancy
    ? null
    : yield* env.driver.count(connection, c.name)
  return {
    name: c.name,
    ...(c.description !== undefined ? { description: c.description } : {}),
    ...(c.vectorizer !== undefined ? { vectorizer: c.vectorizer } : {}),
    multiTenancy: c.multiTenancy,
    properties: c.properties.length,
    ...(count !== undefined ? { count } : {}),
    ...(unready.length > 0 ? { unreadyShards: unready.map((u) => `${u.name} (${u.status})`) } : {})
  }
})

/** @category tools */
export const listTables = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "list_tables",
    title: "List tables",
    description: "Lists the collections (tables) of a connection with their vectorizer, multi-tenancy and number of " +
      "properties. With include_counts the row count of each collection is added (null for multi-tenant collections, " +
      "which are counted per tenant with count_rows). A collection whose shards are not all READY is flagged (unreadyShards).",
    input: Schema.Struct({
      connection_id: ConnectionId,
      include_counts: Schema.optional(Schema.Boolean.annotations({ description: "Also count the rows of each collection (slower)." }))
    }),
    output: Schema.Struct({ connection_id: Schema.String, tables: Schema.Array(TableSummary) }),
    annotations: READ,
    run: Effect.fnUntraced(function*(input) {
      const connection = yield* open(env, input.connection_id, "read")
      if (InputRequired.is(connection)) return connection
      const collections = yield* env.driver.listCollections(connection)
      const tables = yield* Effect.forEach(collections, (c) => summaryOf(env, connection, c, input.include_counts === true), {
        concurrency: 4
      })
      const columns = ["name", "vectorizer", "multiTenancy", "properties", ...(input.include_counts === true ? ["count"] : []), "description"]
      const notReady = tables.flatMap((t) => (t.unreadyShards !== undefined ? [`${t.name}: ${t.unreadyShards.join(", ")}`] : []))
      const text = tables.length === 0
        ? `${connection.name} has no collections.`
        : TextTable.render(columns, tables) + (notReady.length === 0 ? "" : `\nshards not ready: ${notReady.join("; ")}`)
      return ToolDefinition.ok({ connection_id: connection.id, tables }, text)
    })
  })

const ColumnDescription = Schema.Struct({
  name: Schema.String,
  kind: Schema.Literal("uuid", "property", "vector"),
  dataType: Schema.String,
  readOnly: Schema.Boolean,
  primaryKey: Schema.Boolean,
  operators: Schema.Array(Schema.String),
  description: Schema.optional(Schema.String),
  tokenization: Schema.optional(Schema.String),
  indexFilterable: Schema.optional(Schema.Boolean),
  indexSearchable: Schema.optional(Schema.Boolean),
  indexRangeFilters: Schema.optional(Schema.Boolean),
  nestedProperties: Schema.optional(Schema.Array(Schema.String))
})

const TableDescription = Schema.Struct({
  connection_id: Schema.String,
  name: Schema.String,
  description: Schema.optional(Schema.String),
  vectorizer: Schema.String,
  namedVectors: Schema.Array(Schema.String),
  vectors: Schema.Array(Schema.Struct({
    name: Schema.String.annotations({ description: "The named vector; \"\" for the collection's single (legacy) vector." }),
    vectorizer: Schema.String,
    indexType: Schema.String,
    distance: Schema.NullOr(Schema.String)
  })),
  multiTenancy: Schema.Boolean,
  tenancy: Schema.optional(Schema.Struct({
    autoTenantCreation: Schema.Boolean,
    autoTenantActivation: Schema.Boolean,
    tenantCount: Schema.Number
  })),
  tenants: Schema.optional(Schema.Array(Schema.String)),
  indexes: Schema.Struct({ nullState: Schema.Boolean, propertyLength: Schema.Boolean, timestamps: Schema.Boolean }),
  replication: Schema.Struct({ factor: Schema.Number, asyncEnabled: Schema.Boolean, deletionStrategy: Schema.String }),
  sharding: Schema.Struct({ desiredCount: Schema.Number, actualCount: Schema.Number }),
  shards: Schema.optional(Schema.Array(Schema.Struct({
    name: Schema.String,
    status: Schema.String.annotations({ description: "READY, READONLY, INDEXING, ... (GET /v1/schema/{class}/shards)" }),
    ready: Schema.Boolean,
    nodes: Schema.Array(Schema.String).annotations({ description: "The healthy nodes that hold a replica of this shard now." }),
    replicas: Schema.optional(Schema.Number.annotations({ description: "How many replicas Weaviate placed." })),
    objectCount: Schema.optional(Schema.Number)
  }))),
  columns: Schema.Array(ColumnDescription),
  crossReferences: Schema.Array(Schema.Struct({ property: Schema.String, targets: Schema.Array(Schema.String) }))
})

const nestedNames = (p: Property): ReadonlyArray<string> =>
  (p.nestedProperties ?? []).flatMap((n) => [`${p.name}.${n.name}`, ...nestedNames({ ...n, name: `${p.name}.${n.name}` })])

/** @category tools */
export const describeTable = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "describe_table",
    title: "Describe a table",
    description: "Describes one collection before you filter, search or write it: every column (uuid, properties with " +
      "their data types, vector), the filter operators each column accepts, index flags, the vectorizer (near_text needs " +
      "one), every vector (named vectors with their vectorizer, index type and distance), multi-tenancy with its settings and tenants, " +
      "cross-references to other collections, replication (factor, asynchronous replication, deletion strategy), sharding (desired " +
      "and actual shard count) and, for a collection without tenants, each shard's nodes and whether it is ready.",
    input: Schema.Struct({ connection_id: ConnectionId, table: Table }),
    output: TableDescription,
    annotations: READ,
    run: Effect.fnUntraced(function*(input) {
      const connection = yield* open(env, input.connection_id, "read")
      if (InputRequired.is(connection)) return connection
      const description = yield* env.driver.describe(connection, input.table)
      const c: Collection = description.collection
      const placement = yield* env.driver.placement(connection, c.name)
      const shards = placement.shards?.map((s) => ({ ...s, ready: s.status === "READY" }))
      const tenants = c.multiTenancy ? (yield* env.driver.tenants(connection, c.name)).tenants.map((t) => t.name) : undefined
      const columns = description.columns.map((column) => {
        const p = column.property
        return {
          name: column.name,
          kind: column.kind,
          dataType: column.dataType,
          readOnly: column.readOnly,
          primaryKey: column.primaryKey,
          operators: column.operators,
          ...(p?.description !== undefined ? { description: p.description } : {}),
          ...(p?.tokenization !== undefined ? { tokenization: p.tokenization } : {}),
          ...(p !== undefined
            ? { indexFilterable: p.indexFilterable, indexSearchable: p.indexSearchable, indexRangeFilters: p.indexRangeFilters }
            : {}),
          ...(p?.nestedProperties !== undefined ? { nestedProperties: nestedNames(p) } : {})
        }
      })
      const crossReferences = c.properties
        .filter((p) => p.baseType === "reference")
        .map((p) => ({ property: p.name, targets: p.dataType }))
      const result = {
        connection_id: connection.id,
        name: c.name,
        ...(c.description !== undefined ? { description: c.description } : {}),
        vectorizer: c.vectorizer ?? "none",
        namedVectors: c.namedVectors,
        vectors: c.vectors.map((v) => ({ name: v.name, vectorizer: v.vectorizer, indexType: v.indexType, distance: v.distance ?? null })),
        multiTenancy: c.multiTenancy,
        ...(tenants !== undefined
          ? {
            tenancy: {
              autoTenantCreation: c.tenancy.autoTenantCreation,
              autoTenantActivation: c.tenancy.autoTenantActivation,
              tenantCount: tenants.length
            },
            tenants: tenants.slice(0, MAX_TENANTS_LISTED)
          }
          : {}),
        indexes: { nullState: c.indexNullState, propertyLength: c.indexPropertyLength, timestamps: c.indexTimestamps },
        replication: placement.replication,
        sharding: placement.sharding,
        ...(shards !== undefined ? { shards } : {}),
        columns,
        crossReferences
      }
      const text = [
        `${c.name}${c.description !== undefined ? ` — ${c.description}` : ""}`,
        `vectorizer: ${result.vectorizer}; multi-tenancy: ${tenancyText(c, tenants)}; ` +
        `indexNullState: ${c.indexNullState}; indexPropertyLength: ${c.indexPropertyLength}; indexTimestamps: ${c.indexTimestamps}`,
        `replication: factor ${placement.replication.factor}, async replication ${placement.replication.asyncEnabled ? "on" : "off"}, ` +
        `deletion strategy ${placement.replication.deletionStrategy}; sharding: ${placement.sharding.actualCount} of ` +
        `${placement.sharding.desiredCount} desired shards`,
        ...(shards ?? []).map((s) =>
          `- shard ${s.name}: ${s.status}${s.ready ? "" : " (NOT READY)"}, on ${s.nodes.length === 0 ? "no healthy node" : s.nodes.join(", ")}` +
          `${s.replicas !== undefined && s.nodes.length < s.replicas ? ` (${s.nodes.length} of ${s.replicas} replicas)` : ""}`
        ),
        `vectors: ${
          c.vectors.map((v) => `${v.name === "" ? "vector" : `vector:${v.name}`} (${v.vectorizer}, ${v.indexType}${v.distance === undefined ? "" : `, ${v.distance}`})`).join("; ")
        }`,
        // One line per column, uncut: the operator list is what a filter is written from.
        ...columns.map((col) =>
          `- ${col.name} (${col.dataType}${col.readOnly ? ", read-only" : ""}): ${
            col.operators.length === 0 ? "not filterable" : col.operators.join(", ")
          }`
        ),
        ...(crossReferences.length > 0
          ? [`cross-references: ${crossReferences.map((r) => `${r.property} → ${r.targets.join(", ")}`).join("; ")}`]
          : [])
      ].join("\n")
      return ToolDefinition.ok(result, text)
    })
  })

/** Tenant names describe_table lists; list_tenants pages through all of them. */
const MAX_TENANTS_LISTED = 100

const tenancyText = (c: Collection, tenants: ReadonlyArray<string> | undefined) => {
  if (!c.multiTenancy || tenants === undefined) return "off"
  const shown = tenants.slice(0, 20)
  const names = tenants.length === 0 ? "none" : `${shown.join(", ")}${tenants.length > shown.length ? ` … (${tenants.length} in all, list_tenants pages them)` : ""}`
  return `on (${tenants.length} tenants: ${names}; automatic creation ${c.tenancy.autoTenantCreation ? "on" : "off"}, ` +
    `automatic activation ${c.tenancy.autoTenantActivation ? "on" : "off"})`
}

/**
 * A name pattern: case-insensitive, `*` and `?` wildcards; without wildcards it matches anywhere in
 * the name.
 *
 * @category combinators
 */
export const namePattern = (pattern: string): RegExp => {
  const escaped = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")
  return /[*?]/.test(pattern) ? new RegExp(`^${escaped}$`, "i") : new RegExp(escaped, "i")
}

const flatten = (
  properties: ReadonlyArray<Property>,
  prefix: string
): ReadonlyArray<{ path: string; leaf: string; dataType: string }> =>
  properties.flatMap((p) => [
    { path: `${prefix}${p.name}`, leaf: p.name, dataType: p.dataType.join(",") },
    ...flatten(p.nestedProperties ?? [], `${prefix}${p.name}.`)
  ])

/** @category tools */
export const searchSchema = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "search_schema",
    title: "Search the schema",
    description: "Finds collections and properties whose names match a pattern: a case-insensitive substring " +
      "(\"price\"), or a wildcard pattern with * and ? matched against the whole name (\"*Id\").",
    input: Schema.Struct({
      connection_id: ConnectionId,
      pattern: Schema.String.pipe(Schema.minLength(1)).annotations({ description: "Substring or wildcard pattern (* and ?)." })
    }),
    output: Schema.Struct({
      pattern: Schema.String,
      matches: Schema.Array(Schema.Struct({
        collection: Schema.String,
        property: Schema.optional(Schema.String),
        dataType: Schema.optional(Schema.String)
      }))
    }),
    annotations: READ,
    run: Effect.fnUntraced(function*(input) {
      const connection = yield* open(env, input.connection_id, "read")
      if (InputRequired.is(connection)) return connection
      const collections = yield* env.driver.listCollections(connection)
      const regex = namePattern(input.pattern)
      const matches: Array<{ collection: string; property?: string; dataType?: string }> = []
      for (const c of collections) {
        if (regex.test(c.name)) matches.push({ collection: c.name })
        for (const p of flatten(c.properties, "")) {
          if (regex.test(p.leaf)) matches.push({ collection: c.name, property: p.path, dataType: p.dataType })
        }
      }
      const text = matches.length === 0
        ? `Nothing matches ${JSON.stringify(input.pattern)}.`
        : TextTable.render(["collection", "property", "dataType"], matches)
      return ToolDefinition.ok({ pattern: input.pattern, matches }, text)
    })
  })
