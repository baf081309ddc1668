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
import * as Permissions from "../../Driver/Permissions.ts"
import type { Connection } from "../../Schema/Connection.ts"
import { open, permissionsOf, type ToolEnv } from "./ConnectionGate.ts"
import { ConnectionId, Table } from "./Parameters.ts"
import * as Paging from "./Paging.ts"
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
  })),
  permissions: Schema.optional(Schema.String.annotations({
    description: "Present when Weaviate restricts the connection's user by role (RBAC): what it may do with the rows, e.g. " +
      "\"read\" or \"read, create, update, delete\" (\"none\" when nothing); a write outside it is refused before approval"
  }))
})

/** Patterns whose matches are kept for one schema read (the most recent ones). @category constants */
export const MAX_PATTERNS_KEPT = 32

const kept = new WeakMap<object, Map<string, ReadonlyArray<unknown>>>()

/**
 * What `compute` finds for `key` in one schema read, computed once while that read is the cache's:
 * a page deep into the matches, or the same search again, costs a binary search, not a scan.
 */
const memo = <A>(read: object, key: string, compute: () => ReadonlyArray<A>): ReadonlyArray<A> => {
  let byKey = kept.get(read)
  if (byKey === undefined) kept.set(read, byKey = new Map())
  const found = byKey.get(key)
  if (found !== undefined) return found as ReadonlyArray<A>
  const value = compute()
  if (byKey.size >= MAX_PATTERNS_KEPT) byKey.delete(byKey.keys().next().value!)
  byKey.set(key, value)
  return value
}

/** The first position of `sorted` (by `key`) whose key is after `last`. */
export const positionAfter = <A>(sorted: ReadonlyArray<A>, key: (a: A) => string, last: string | undefined): number => {
  if (last === undefined) return 0
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (key(sorted[mid]!) <= last) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** What the connection's Weaviate user may do, when Weaviate restricts it by role (RBAC); else undefined. */
const rbacOf = (env: ToolEnv, connection: Connection) =>
  permissionsOf(env, connection).pipe(
    Effect.map((read) => (read.value._tag === "Rbac" ? read.value : undefined)),
    // Permissions that cannot be read now leave the listing as it was without RBAC.
    Effect.orElseSucceed(() => undefined)
  )

/** The data verbs of a collection as list_tables shows them. */
const verbsText = (access: Permissions.Access, collection: string) => Permissions.dataVerbs(access, collection).join(", ") || "none"

/** One collection of `list_tables`: its summary, its shards not ready, its row count when asked, its permissions under RBAC. */
const summaryOf = Effect.fnUntraced(function*(
  env: ToolEnv,
  connection: Connection,
  c: Collection,
  unready: ReadonlyArray<{ readonly name: string; readonly status: string }>,
  withCount: boolean,
  access: Permissions.Access | undefined
) {
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
    ...(unready.length > 0 ? { unreadyShards: unready.map((u) => `${u.name} (${u.status})`) } : {}),
    ...(access !== undefined ? { permissions: verbsText(access, c.name) } : {})
  }
})

const PageFields = {
  total: Schema.Number.annotations({ description: "How many match in all (the page holds at most limit of them)." }),
  nextCursor: Schema.optional(Schema.String.annotations({ description: "Present while more remain: pass it back as cursor, with the same other arguments." })),
  stale: Schema.optional(Schema.Boolean.annotations({
    description: "Present (true) when the schema was served from a cache older than its time to live while a fresh read runs."
  }))
}

/** @category tools */
export const listTables = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "list_tables",
    title: "List tables",
    description: "Lists the collections (tables) of a connection with their vectorizer, multi-tenancy and number of " +
      "properties, 100 per page in name order (limit, cursor; pattern narrows by name). With include_counts the row count of each " +
      "collection of the page is added (null for multi-tenant collections, which are counted per tenant with count_rows). " +
      "A collection whose shards are not all READY is flagged (unreadyShards). When Weaviate restricts the connection's user by " +
      "role (RBAC), each collection says what that user may do with its rows (permissions).",
    input: Schema.Struct({
      connection_id: ConnectionId,
      include_counts: Schema.optional(Schema.Boolean.annotations({ description: "Also count the rows of each collection of the page (slower)." })),
      pattern: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({
        description: "Only collections whose names match: a case-insensitive substring, or a wildcard pattern with * and ? (as search_schema)."
      })),
      limit: Schema.optional(Paging.Limit),
      cursor: Schema.optional(Paging.Cursor)
    }),
    output: Schema.Struct({ connection_id: Schema.String, tables: Schema.Array(TableSummary), ...PageFields }),
    annotations: READ,
    run: Effect.fnUntraced(function*(input) {
      const connection = yield* open(env, input.connection_id, "read")
      if (InputRequired.is(connection)) return connection
      const after = yield* Paging.after("list_tables", { connection: connection.id, pattern: input.pattern }, input.cursor)
      const [read, access] = yield* Effect.all([env.driver.catalog(connection), rbacOf(env, connection)], { concurrency: 2 })
      const pattern = input.pattern
      const matching = pattern === undefined
        ? read.value.collections
        : memo(read.value, `tables\u0000${pattern}`, () => read.value.collections.filter((c) => namePattern(pattern).test(c.name)))
      const limit = input.limit ?? Paging.DEFAULT_PAGE
      const from = positionAfter(matching, (c) => c.name, after)
      const page = matching.slice(from, from + limit)
      // Tenants' shards are their tenants (list_tenants shows their state): only the others are asked, all in one request.
      const unready = page.some((c) => !c.multiTenancy) ? (yield* env.driver.shardReadiness(connection)).value : new Map()
      const tables = yield* Effect.forEach(
        page,
        (c) => summaryOf(env, connection, c, c.multiTenancy ? [] : unready?.get(c.name) ?? [], input.include_counts === true, access),
        { concurrency: 4 }
      )
      const nextCursor = from + limit < matching.length ? Paging.encode({ connection: connection.id, pattern: input.pattern }, page[page.length - 1]!.name) : undefined
      // Under RBAC: one line when every collection of the page allows the same, else a column.
      const allowed = new Set(tables.map((t) => t.permissions))
      const permissionsColumn = access !== undefined && allowed.size > 1
      const columns = ["name", "vectorizer", "multiTenancy", "properties", ...(input.include_counts === true ? ["count"] : []), ...(permissionsColumn ? ["permissions"] : []), "description"]
      const notReady = tables.flatMap((t) => (t.unreadyShards !== undefined ? [`${t.name}: ${t.unreadyShards.join(", ")}`] : []))
      const text = [
        matching.length === 0
          ? input.pattern === undefined ? `${connection.name} has no collections.` : `No collection of ${connection.name} matches ${JSON.stringify(input.pattern)}.`
          : tables.length === 0 ? "No more collections after the cursor." : TextTable.render(columns, tables),
        ...(notReady.length === 0 ? [] : [`shards not ready: ${notReady.join("; ")}`]),
        ...(access === undefined || tables.length === 0
          ? []
          : [`permissions of the Weaviate user ${JSON.stringify(access.user)} (RBAC)${permissionsColumn ? ": per collection above" : ` on these collections: ${tables[0]!.permissions}`}; writes beyond them are refused before approval`]),
        ...(unready === undefined ? ["[shard readiness unknown: Weaviate did not list its nodes to this key]"] : []),
        ...(nextCursor === undefined ? [] : [Paging.moreLine(tables.length, matching.length, "collections", "pattern", nextCursor)]),
        Paging.staleLine(read, "the schema")
      ].filter((line) => line !== "").join("\n")
      return ToolDefinition.ok(
        { connection_id: connection.id, tables, total: matching.length, ...(nextCursor === undefined ? {} : { nextCursor }), ...(read.stale ? { stale: true } : {}) },
        text,
        "pattern, or a smaller limit and the cursor"
      )
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
  crossReferences: Schema.Array(Schema.Struct({ property: Schema.String, targets: Schema.Array(Schema.String) })),
  permissions: Schema.optional(Schema.Struct({
    user: Schema.String,
    data: Schema.Array(Schema.String).annotations({ description: "read, create, update, delete: what the user may do with the rows (\"(some tenants)\" when only some)" }),
    actions: Schema.Array(Schema.String).annotations({ description: "Every Weaviate action the user may take on this collection (read_data, update_collections, create_tenants, …)" })
  }).annotations({ description: "Present when Weaviate restricts the connection's user by role (RBAC); a write outside it is refused before approval." }))
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
      "and actual shard count), for a collection without tenants, each shard's nodes and whether it is ready, and, when Weaviate " +
      "restricts the connection's user by role (RBAC), what that user may do with this collection.",
    input: Schema.Struct({ connection_id: ConnectionId, table: Table }),
    output: TableDescription,
    annotations: READ,
    run: Effect.fnUntraced(function*(input) {
      const connection = yield* open(env, input.connection_id, "read")
      if (InputRequired.is(connection)) return connection
      const [description, access] = yield* Effect.all([env.driver.describe(connection, input.table), rbacOf(env, connection)], { concurrency: 2 })
      const c: Collection = description.collection
      const placement = yield* env.driver.placement(connection, c.name)
      const shards = placement.shards?.map((s) => ({ ...s, ready: s.status === "READY" }))
      // The first names and the count, from the tenant cache (list_tenants pages the rest).
      const index = c.multiTenancy ? (yield* env.driver.tenantIndex(connection, c.name)).read.value : undefined
      const tenants = index === undefined ? undefined : Array.from({ length: Math.min(index.size, MAX_TENANTS_LISTED) }, (_, i) => index.name(i))
      const tenantCount = index?.size ?? 0
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
              tenantCount
            },
            tenants: tenants.slice(0, MAX_TENANTS_LISTED)
          }
          : {}),
        indexes: { nullState: c.indexNullState, propertyLength: c.indexPropertyLength, timestamps: c.indexTimestamps },
        replication: placement.replication,
        sharding: placement.sharding,
        ...(shards !== undefined ? { shards } : {}),
        columns,
        crossReferences,
        ...(access !== undefined
          ? { permissions: { user: access.user, data: Permissions.dataVerbs(access, c.name), actions: Permissions.actionsOn(access, c.name) } }
          : {})
      }
      const text = [
        `${c.name}${c.description !== undefined ? ` — ${c.description}` : ""}`,
        `vectorizer: ${result.vectorizer}; multi-tenancy: ${tenancyText(c, tenants, tenantCount)}; ` +
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
          : []),
        ...(result.permissions !== undefined ? [permissionsText(result.permissions)] : [])
      ].join("\n")
      return ToolDefinition.ok(result, text, "search_schema finds columns by name; list_tenants pages the tenants")
    })
  })

/** describe_table's line on what the connection's Weaviate user may do here. */
const permissionsText = (p: { readonly user: string; readonly data: ReadonlyArray<string>; readonly actions: ReadonlyArray<string> }) => {
  const schema = p.actions.filter((a) => a.endsWith("_collections") && a !== "read_collections")
  const tenants = p.actions.filter((a) => a.endsWith("_tenants") && a !== "read_tenants")
  return `permissions of the Weaviate user ${JSON.stringify(p.user)} (RBAC): rows: ${p.data.length === 0 ? "none" : p.data.join(", ")}; ` +
    `${schema.length === 0 ? "no schema changes" : `schema: ${schema.join(", ")}`}${tenants.length === 0 ? "" : `; tenants: ${tenants.join(", ")}`}; ` +
    "writes beyond them are refused before approval"
}

/** Tenant names describe_table's structuredContent lists; list_tenants pages through all of them. @category constants */
export const MAX_TENANTS_LISTED = 100

/** Tenant names describe_table's text shows. @category constants */
export const MAX_TENANTS_SHOWN = 20

const tenancyText = (c: Collection, tenants: ReadonlyArray<string> | undefined, total: number) => {
  if (!c.multiTenancy || tenants === undefined) return "off"
  const shown = tenants.slice(0, MAX_TENANTS_SHOWN)
  const names = total === 0
    ? "none"
    : `${shown.join(", ")}${total > shown.length ? ` … [${shown.length} of ${total} shown; list_tenants pages them all, prefix or status narrows]` : ""}`
  return `on (${total} tenants: ${names}; automatic creation ${c.tenancy.autoTenantCreation ? "on" : "off"}, ` +
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

type SchemaMatch = { collection: string; property?: string; dataType?: string }

/** A match's place in the order of matches: its collection, then its property path ("" for the collection itself). */
const matchKey = (m: SchemaMatch) => `${m.collection}\u0000${m.property ?? ""}`

/** Every match of `regex` in the schema, in `matchKey` order. */
const matchesOf = (collections: ReadonlyArray<Collection>, regex: RegExp): Array<SchemaMatch> => {
  const matches: Array<SchemaMatch> = []
  for (const c of collections) {
    const own: Array<SchemaMatch> = []
    if (regex.test(c.name)) own.push({ collection: c.name })
    for (const p of flatten(c.properties, "")) {
      if (regex.test(p.leaf)) own.push({ collection: c.name, property: p.path, dataType: p.dataType })
    }
    own.sort((a, b) => (matchKey(a) < matchKey(b) ? -1 : matchKey(a) > matchKey(b) ? 1 : 0))
    matches.push(...own)
  }
  return matches
}

/** @category tools */
export const searchSchema = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "search_schema",
    title: "Search the schema",
    description: "Finds collections and properties whose names match a pattern: a case-insensitive substring " +
      "(\"price\"), or a wildcard pattern with * and ? matched against the whole name (\"*Id\"). 100 matches per page " +
      "by collection, then property (limit, cursor).",
    input: Schema.Struct({
      connection_id: ConnectionId,
      pattern: Schema.String.pipe(Schema.minLength(1)).annotations({ description: "Substring or wildcard pattern (* and ?)." }),
      limit: Schema.optional(Paging.Limit),
      cursor: Schema.optional(Paging.Cursor)
    }),
    output: Schema.Struct({
      pattern: Schema.String,
      matches: Schema.Array(Schema.Struct({
        collection: Schema.String,
        property: Schema.optional(Schema.String),
        dataType: Schema.optional(Schema.String)
      })),
      ...PageFields
    }),
    annotations: READ,
    run: Effect.fnUntraced(function*(input) {
      const connection = yield* open(env, input.connection_id, "read")
      if (InputRequired.is(connection)) return connection
      const scope = { connection: connection.id, pattern: input.pattern }
      const after = yield* Paging.after("search_schema", scope, input.cursor)
      const read = yield* env.driver.catalog(connection)
      const all = memo(read.value, `schema\u0000${input.pattern}`, () => matchesOf(read.value.collections, namePattern(input.pattern)))
      const limit = input.limit ?? Paging.DEFAULT_PAGE
      const from = positionAfter(all, matchKey, after)
      const matches = all.slice(from, from + limit)
      const nextCursor = from + limit < all.length ? Paging.encode(scope, matchKey(matches[matches.length - 1]!)) : undefined
      const text = [
        all.length === 0
          ? `Nothing matches ${JSON.stringify(input.pattern)}.`
          : matches.length === 0 ? "No more matches after the cursor." : TextTable.render(["collection", "property", "dataType"], matches),
        ...(nextCursor === undefined ? [] : [Paging.moreLine(matches.length, all.length, "matches", "a longer pattern", nextCursor)]),
        Paging.staleLine(read, "the schema")
      ].filter((line) => line !== "").join("\n")
      return ToolDefinition.ok(
        { pattern: input.pattern, matches, total: all.length, ...(nextCursor === undefined ? {} : { nextCursor }), ...(read.stale ? { stale: true } : {}) },
        text,
        "a longer pattern, or a smaller limit and the cursor"
      )
    })
  })
