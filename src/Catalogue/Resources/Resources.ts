/**
 * The `Resources` of the catalogue over the driver (see `ResourceUri` for the URIs and TTLs).
 *
 * - `resources/list`: `weaviate://connections`, then for each connection the principal may see its
 *   `meta` and `schema` and one entry per collection. The schemas are fetched concurrently, each
 *   bounded in time; a connection that is down (or slower than the bound) still contributes its
 *   `meta` and `schema` entries, without tables, so one dead server never hides the others.
 * - `resources/read`: JSON text contents with the TTL of the URI. Reading a connection's resources
 *   checks the allowlist and AI policy, then first access.
 * - `listChanged`: whenever the saved connections change after the watch started.
 * - `watch`: a `…/schema` URI, read when the watch starts (the baseline) and then every 10 s while
 *   someone listens; emits when the schema differs from the last one seen. A poll that fails (server
 *   down) is skipped.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import type { FirstAccess } from "../../Approval/FirstAccess.ts"
import * as Cluster from "../../Driver/Cluster.ts"
import type * as CollectionSchema from "../../Driver/CollectionSchema.ts"
import { ConnectionStore } from "../../Driver/ConnectionStore.ts"
import { Driver, type TableDescription } from "../../Driver/Driver.ts"
import { type Connection, toPublic } from "../../Schema/Connection.ts"
import { InvalidParams, type McpError } from "../../Schema/McpErrors.ts"
import {
  complete,
  type Outcome,
  type ResourceContents,
  type ResourceDescriptor,
  Resources
} from "../../Mcp/Catalogue.ts"
import { CurrentPrincipal, permissionOn } from "../../Auth/Principal.ts"
import * as ConnectionAccess from "../ConnectionAccess.ts"
import * as HistoryCatalogue from "../HistoryCatalogue.ts"
import { HistoryStore } from "../../History/HistoryStore.ts"
import * as ResourceUri from "./ResourceUri.ts"
import { ResourceRef } from "./ResourceUri.ts"

// ===== Options =====

/** @category models */
export interface Options {
  /** How often a watched schema is checked. Default 10 seconds. */
  readonly schemaPollInterval?: Duration.DurationInput
  /** How long `resources/list` waits for one connection's schema, and a new watch for its baseline. Default 5 seconds. */
  readonly listSchemaTimeout?: Duration.DurationInput
  /** Rows shown in a table resource. Default 10. */
  readonly sampleRows?: number
}

// ===== Bodies =====

/** A property as shown to clients. @category rendering */
export const propertyJson = (property: CollectionSchema.Property): Record<string, unknown> => ({
  name: property.name,
  dataType: property.dataType,
  ...(property.description !== undefined ? { description: property.description } : {}),
  ...(property.tokenization !== undefined ? { tokenization: property.tokenization } : {}),
  indexFilterable: property.indexFilterable,
  indexSearchable: property.indexSearchable,
  indexRangeFilters: property.indexRangeFilters,
  ...(property.nestedProperties !== undefined ? { nestedProperties: property.nestedProperties.map(propertyJson) } : {})
})

const collectionHeader = (collection: CollectionSchema.Collection) => ({
  name: collection.name,
  ...(collection.description !== undefined ? { description: collection.description } : {}),
  ...(collection.vectorizer !== undefined ? { vectorizer: collection.vectorizer } : {}),
  namedVectors: collection.namedVectors,
  multiTenancy: collection.multiTenancy,
  indexes: {
    nullState: collection.indexNullState,
    propertyLength: collection.indexPropertyLength,
    timestamps: collection.indexTimestamps
  }
})

/** The body of a `…/schema` resource. @category rendering */
export const schemaJson = (connection: Connection, collections: ReadonlyArray<CollectionSchema.Collection>) => ({
  connectionId: connection.id,
  connectionName: connection.name,
  collections: collections.map((collection) => ({
    ...collectionHeader(collection),
    uri: ResourceUri.format(ResourceRef.Table({ connectionId: connection.id, table: collection.name })),
    properties: collection.properties.map(propertyJson)
  }))
})

const tableJson = (
  connection: Connection,
  description: TableDescription,
  data: { readonly rowCount: number; readonly sampleRows: ReadonlyArray<unknown> } | undefined
) => ({
  connectionId: connection.id,
  ...collectionHeader(description.collection),
  columns: description.columns.map((column) => ({
    name: column.name,
    kind: column.kind,
    dataType: column.dataType,
    primaryKey: column.primaryKey,
    readOnly: column.readOnly,
    operators: column.operators,
    ...(column.property !== undefined
      ? {
        indexFilterable: column.property.indexFilterable,
        indexSearchable: column.property.indexSearchable,
        indexRangeFilters: column.property.indexRangeFilters,
        ...(column.property.tokenization !== undefined ? { tokenization: column.property.tokenization } : {})
      }
      : {})
  })),
  // Rows of a multi-tenant collection live per tenant, which a URI does not name.
  ...(data === undefined
    ? { note: "Multi-tenant collection: rows and counts are per tenant (use browse_table or count_rows with a tenant)." }
    : data)
})

const withoutVector = (row: Readonly<Record<string, unknown>>) => {
  const { vector: _vector, ...rest } = row
  return rest
}

/** The fingerprint of a schema, for change detection. */
const schemaDigest = (collections: ReadonlyArray<CollectionSchema.Collection>) =>
  JSON.stringify(collections.map((collection) => collection.raw))

const jsonContents = (uri: string, value: unknown, ttlMs: number): ResourceContents => ({
  contents: [{ uri, mimeType: ResourceUri.MIME_TYPE, text: JSON.stringify(value, null, 2) }],
  ttlMs
})

// ===== Service =====

const parse = (uri: string) => Either.match(ResourceUri.parse(uri), { onLeft: Effect.fail, onRight: Effect.succeed })

/** What the three parts of the service share. */
interface Deps {
  readonly store: ConnectionStore["Type"]
  readonly driver: Driver["Type"]
  readonly access: ConnectionAccess.ConnectionAccess
  readonly pollInterval: Duration.Duration
  readonly listTimeout: Duration.Duration
  readonly sampleSize: number
  readonly history: Option.Option<HistoryStore["Type"]>
}

/** `resources/list`: the connections resource, then each visible connection's meta, schema and tables. */
const makeList = ({ access, driver, listTimeout }: Deps) => {
  const connectionEntries = Effect.fnUntraced(function*(connection: Connection) {
    const ref = { connectionId: connection.id }
    const fixed: Array<ResourceDescriptor> = [
      {
        uri: ResourceUri.format(ResourceRef.Meta(ref)),
        name: `${connection.name}/meta`,
        title: `${connection.name}: server metadata`,
        description: `Connection ${connection.name} (${connection.id}) and the server's version, modules and latency.`,
        mimeType: ResourceUri.MIME_TYPE
      },
      {
        uri: ResourceUri.format(ResourceRef.Schema(ref)),
        name: `${connection.name}/schema`,
        title: `${connection.name}: schema`,
        description: `Every collection of ${connection.name} with properties, types and index flags (subscribable).`,
        mimeType: ResourceUri.MIME_TYPE
      }
    ]
    const collections = yield* driver.listCollections(connection).pipe(
      Effect.timeout(listTimeout),
      Effect.orElseSucceed((): ReadonlyArray<CollectionSchema.Collection> => [])
    )
    const tables = collections.map((collection): ResourceDescriptor => ({
      uri: ResourceUri.format(ResourceRef.Table({ connectionId: connection.id, table: collection.name })),
      name: `${connection.name}/${collection.name}`,
      title: `${connection.name}: table ${collection.name}`,
      description: collection.description ?? `Collection ${collection.name} of ${connection.name}: columns, filter operators, row count.`,
      mimeType: ResourceUri.MIME_TYPE
    }))
    return [...fixed, ...tables]
  })

  const list = Effect.gen(function*() {
    const connections = yield* access.visible
    const perConnection = yield* Effect.forEach(connections, connectionEntries, { concurrency: 8 })
    const head: ResourceDescriptor = {
      uri: ResourceUri.CONNECTIONS_URI,
      name: "connections",
      title: "Saved connections",
      description: "The Weaviate connections this token may use, with their AI policy and Safe Mode (never their keys).",
      mimeType: ResourceUri.MIME_TYPE
    }
    return [head, ...perConnection.flat()]
  }).pipe(Effect.withSpan("Resources.list"))

  return list
}

/** `resources/read`: the body of each kind of resource, after access and first access. */
const makeRead = ({ access, driver, history, sampleSize, store }: Deps) => {
  const connectionsBody = Effect.gen(function*() {
    const principal = yield* CurrentPrincipal
    const connections = yield* access.visible
    return {
      connections: connections.map((connection) => ({
        ...toPublic(connection),
        permission: permissionOn(principal, connection),
        resources: {
          meta: ResourceUri.format(ResourceRef.Meta({ connectionId: connection.id })),
          schema: ResourceUri.format(ResourceRef.Schema({ connectionId: connection.id }))
        }
      }))
    }
  })

  const metaBody = (connection: Connection) =>
    // A user without `read_nodes` (RBAC) reaches the server all the same.
    Effect.zip(driver.health(connection), Cluster.unknownWhenDenied(driver.cluster(connection))).pipe(
      Effect.map(([health, cluster]) => ({ connection: toPublic(connection), reachable: true, health, cluster })),
      // Metadata describes the connection even when its server is down: say so rather than fail.
      Effect.catchAll((error) =>
        Effect.succeed({ connection: toPublic(connection), reachable: false, error: ConnectionAccess.toMcpError(error).message })
      )
    )

  const tableBody = Effect.fnUntraced(function*(connection: Connection, table: string) {
    const description = yield* driver.describe(connection, table)
    const name = description.collection.name
    if (description.collection.multiTenancy) return tableJson(connection, description, undefined)
    const [rowCount, page] = yield* Effect.all([
      driver.count(connection, name),
      driver.browse(connection, name, { limit: sampleSize })
    ], { concurrency: 2 })
    return tableJson(connection, description, { rowCount, sampleRows: page.rows.map(withoutVector) })
  })

  const rowBody = Effect.fnUntraced(function*(connection: Connection, table: string, uuid: string, tenant: string | undefined) {
    const row = yield* driver.getRow(connection, table, uuid, { includeVector: true, tenant })
    return yield* Option.match(row, {
      onNone: () => Effect.fail(new InvalidParams({ message: `Unknown row ${uuid} in table ${table}`, data: { uuid } })),
      onSome: (value) =>
        Effect.succeed({ connectionId: connection.id, table, ...(tenant === undefined ? {} : { tenant }), row: value })
    })
  })

  const driverFailure = (error: { readonly _tag: string; readonly message: string }): McpError =>
    error._tag === "InvalidParams" ? (error as InvalidParams) : ConnectionAccess.toMcpError(error)

  const bodyOf = (ref: Exclude<ResourceRef, { _tag: "Connections" }>, connection: Connection): Effect.Effect<unknown, McpError> => {
    switch (ref._tag) {
      case "Meta":
        return metaBody(connection)
      case "Schema":
        return driver.listCollections(connection).pipe(
          Effect.map((collections) => schemaJson(connection, collections)),
          Effect.mapError(driverFailure)
        )
      case "Table":
        return Effect.mapError(tableBody(connection, ref.table), driverFailure)
      case "Row":
        return Effect.mapError(rowBody(connection, ref.table, ref.uuid, ref.tenant), driverFailure)
    }
  }

  const read = Effect.fnUntraced(function*(uri: string) {
    const historyRef = Option.isSome(history) ? HistoryCatalogue.parse(uri) : undefined
    if (historyRef !== undefined && Option.isSome(history)) {
      return yield* HistoryCatalogue.read({ store, access, history: history.value }, uri, yield* historyRef)
    }
    const ref = yield* parse(uri)
    if (ref._tag === "Connections") return complete(jsonContents(uri, yield* connectionsBody, ResourceUri.ttlMs.Connections))
    const connection = yield* access.readable(ref.connectionId)
    const gate = yield* access.firstAccess(connection, { uri })
    if (gate._tag === "InputRequired") return gate as Outcome<never>
    const body = yield* ConnectionAccess.withTenantScope(bodyOf(ref, connection))
    return complete(jsonContents(uri, body, ResourceUri.ttlMs[ref._tag]))
  })

  return read
}

/** Notifications: the list changes with the saved connections; a schema resource is polled for changes. */
const makeNotifications = ({ access, driver, listTimeout, pollInterval, store }: Deps) => {
  // After a store read fails the list is read again every second; the first list read then counts
  // as a change (nothing says what changed meanwhile), which only makes a client list again.
  const relisted: Stream.Stream<void> = store.changes.pipe(
    Stream.retry(Schedule.spaced(Duration.seconds(1))),
    Stream.orDie,
    Stream.as(undefined)
  )

  // The store's first list is read after it listens for saves: once it is in, no change is lost.
  const listChanged = Stream.peel(store.changes, Sink.head()).pipe(
    Effect.map(([, later]) => later.pipe(Stream.as(undefined), Stream.catchAll(() => relisted))),
    Effect.orElseSucceed(() => relisted)
  )

  const watch = Effect.fnUntraced(function*(uri: string) {
    const ref = yield* parse(uri)
    if (ref._tag !== "Schema") {
      return yield* new InvalidParams({ message: `Only …/schema resources can be subscribed to, not ${JSON.stringify(uri)}`, data: { uri } })
    }
    const connection = yield* access.readable(ref.connectionId)
    const digest = driver.listCollections(connection.id).pipe(Effect.map(schemaDigest), Effect.option)
    // The baseline is read before the watch counts as started, so a change made once it has is seen
    // at the next poll. A server that does not answer in time leaves it unknown, and its first
    // answer is then reported: it may differ from what the client last read.
    const baseline = yield* digest.pipe(Effect.timeout(listTimeout), Effect.orElseSucceed(Option.none))
    // Each poll re-checks access: a connection removed or blocked since ends the subscription;
    // a store that cannot be read this time is skipped like a server that is down.
    return Stream.fromSchedule(Schedule.spaced(pollInterval)).pipe(
      Stream.mapEffect(() =>
        access.readable(ref.connectionId).pipe(
          Effect.zipRight(digest),
          Effect.catchTag("InternalError", () => Effect.succeedNone)
        )
      ),
      Stream.filterMap((x) => x),
      Stream.mapAccum(baseline, (last, next) => [Option.some(next), Option.isNone(last) || last.value !== next] as const),
      Stream.filter((changed) => changed),
      Stream.as(undefined)
    )
  })

  return { listChanged, watch }
}

/** @category constructors */
export const make = Effect.fnUntraced(function*(options: Options = {}) {
  const deps: Deps = {
    store: yield* ConnectionStore,
    driver: yield* Driver,
    access: yield* ConnectionAccess.make,
    pollInterval: Duration.decode(options.schemaPollInterval ?? Duration.seconds(10)),
    listTimeout: Duration.decode(options.listSchemaTimeout ?? Duration.seconds(5)),
    sampleSize: options.sampleRows ?? 10,
    history: yield* Effect.serviceOption(HistoryStore)
  }
  const { listChanged, watch } = makeNotifications(deps)
  // With a query history (the daemon's), its template too.
  const templates = Option.isSome(deps.history) ? [...ResourceUri.templates, HistoryCatalogue.template] : ResourceUri.templates
  return Resources.of({ list: makeList(deps), templates, read: makeRead(deps), listChanged, watch })
})

/** @category layers */
export const layer = (options: Options = {}): Layer.Layer<Resources, never, Driver | ConnectionStore | FirstAccess> =>
  Layer.effect(Resources, make(options))

/** The resources with their defaults. @category layers */
export const ResourcesLive: Layer.Layer<Resources, never, Driver | ConnectionStore | FirstAccess> = layer()
