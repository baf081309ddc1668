/**
 * The driver: one live session (HTTP agent) per saved connection, keyed by connection id, and every
 * operation of the contract on top of it. A connection is named by id or by name, or passed already
 * resolved (`ConnectionRef`). Settings named by id or name are read from the store on each call; when they changed (a new key, another SSL mode) the session is
 * rebuilt. An authentication failure on any call drops the session, so a revoked key makes the next
 * health check fail and the connection drop; saving a new key and calling again reconnects.
 *
 * Each session also knows what the connection's database user may do (`Permissions`, Weaviate's
 * RBAC), read on `connect` or on first need and again with a new key (a new session): writes check
 * it before they ask for approval (`checkPermission`). Weaviate's 403 (`PermissionDenied`) keeps the
 * session but has the permissions read again, and is told in the same words as the check.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SynchronizedRef from "effect/SynchronizedRef"
import { Connection } from "../Schema/Connection.ts"
import * as Aggregate from "./Aggregate.ts"
import * as BatchImport from "./BatchImport.ts"
import * as ConsistencyLevel from "../Schema/ConsistencyLevel.ts"
import * as Cluster from "./Cluster.ts"
import * as CollectionSchema from "./CollectionSchema.ts"
import { type ConnectionNotFound, ConnectionStore, type StoreError } from "./ConnectionStore.ts"
import type {
  AuthenticationFailed,
  CollectionNotFound,
  ConnectionFailed,
  FilterRefused,
  PermissionDenied,
  RequestError,
  TenantForbidden
} from "./DriverError.ts"
import { MAX_TENANTS_SHOWN, StatementRefused, TenantRefused, UnexpectedResponse } from "./DriverError.ts"
import * as FilterBuilder from "./FilterBuilder.ts"
import * as GraphqlEditor from "./GraphqlEditor.ts"
import * as Permissions from "./Permissions.ts"
import * as Grid from "./Grid.ts"
import * as RestConsole from "./RestConsole.ts"
import * as RowEdits from "./RowEdits.ts"
import * as SchemaEdits from "./SchemaEdits.ts"
import * as SessionCaches from "./SessionCaches.ts"
import type * as StaleCache from "./StaleCache.ts"
import * as TenantIndex from "./TenantIndex.ts"
import * as Tenants from "./Tenants.ts"
import * as WeaviateHttp from "./WeaviateHttp.ts"

// ===== Models =====

/** The health check (`GET /v1/meta`). @category models */
export interface Health {
  readonly version: string
  readonly modules: ReadonlyArray<string>
  readonly hostname?: string
  readonly latencyMs: number
}

/** A collection with its columns and what each column can be filtered with. @category models */
export interface TableDescription {
  readonly collection: CollectionSchema.Collection
  readonly columns: ReadonlyArray<CollectionSchema.Column & { readonly operators: ReadonlyArray<FilterBuilder.Operator> }>
}

/** Errors of naming a connection. @category errors */
export type LookupError = StoreError | ConnectionNotFound

/** Errors of the tenant of a data request (`Tenants.check`). @category errors */
export type TenantError = TenantRefused | TenantForbidden

/**
 * A connection as the driver's callers name it: its id or name (looked up in the store on each
 * call), or the connection already resolved by the caller, used as it is.
 *
 * @category models
 */
export type ConnectionRef = string | Connection

/** @category models */
export interface Service {
  /** Connects (or reuses the live session), checks health and reads what the connection's user may do. */
  readonly connect: (connection: ConnectionRef) => Effect.Effect<Health, LookupError | RequestError>
  /** What the connection's database user may do (`Permissions.read`), from the session's cache. */
  readonly permissions: (connection: ConnectionRef) => Effect.Effect<StaleCache.Read<Permissions.Access>, LookupError | RequestError>
  /**
   * Fails with `PermissionDenied` when the connection's database user may not do every target
   * (Weaviate RBAC), before anything is sent; succeeds when it may, or when Weaviate does not say
   * (no RBAC, or the permissions cannot be read now: Weaviate decides when the request is sent).
   */
  readonly checkPermission: (
    connection: ConnectionRef,
    targets: Permissions.Target | ReadonlyArray<Permissions.Target>
  ) => Effect.Effect<void, LookupError | RequestError>
  /** `GET /v1/meta`; an authentication failure drops the session. */
  readonly health: (connection: ConnectionRef) => Effect.Effect<Health, LookupError | RequestError>
  /** The cluster's nodes and health (`Cluster.status`); verbose adds shard and object counts. */
  readonly cluster: (
    connection: ConnectionRef,
    options?: { readonly verbose?: boolean }
  ) => Effect.Effect<Cluster.Status, LookupError | RequestError>
  /** Checks settings that are not saved (or not yet): a fresh session, closed afterwards. */
  readonly test: (connection: Connection) => Effect.Effect<Health, RequestError>
  readonly disconnect: (connection: ConnectionRef) => Effect.Effect<void, LookupError>
  /** Whether a live session exists for a connection id. */
  readonly isConnected: (id: string) => Effect.Effect<boolean>
  /** The HTTP access of a connection (for callers that need a raw call). */
  readonly http: (connection: ConnectionRef) => Effect.Effect<WeaviateHttp.WeaviateHttp, LookupError | RequestError>

  readonly listCollections: (connection: ConnectionRef) => Effect.Effect<ReadonlyArray<CollectionSchema.Collection>, LookupError | RequestError>
  /** The whole schema from the session's cache (`SessionCaches`), stale while it is read again. */
  readonly catalog: (connection: ConnectionRef) => Effect.Effect<StaleCache.Read<SessionCaches.Catalog>, LookupError | RequestError>
  /** Every collection's shards that are not `READY`, from one cached `GET /v1/nodes?output=verbose` (undefined: Weaviate did not say). */
  readonly shardReadiness: (connection: ConnectionRef) => Effect.Effect<StaleCache.Read<SessionCaches.ShardReadiness>, LookupError | RequestError>
  /**
   * The tenants of a multi-tenant collection the caller may see (`Tenants.TenantScope`), from the
   * session's compact cache: pages, prefixes and completions without reading them again.
   */
  readonly tenantIndex: (
    connection: ConnectionRef,
    table: string
  ) => Effect.Effect<
    { readonly collection: CollectionSchema.Collection; readonly read: StaleCache.Read<TenantIndex.TenantIndex> },
    LookupError | RequestError | CollectionNotFound | TenantError
  >
  /** One tenant by its exact name (`GET /v1/schema/{C}/tenants/{name}`, no listing); none when absent or not visible. */
  readonly tenant: (
    connection: ConnectionRef,
    table: string,
    name: string
  ) => Effect.Effect<
    { readonly collection: CollectionSchema.Collection; readonly tenant: Option.Option<Tenants.Tenant> },
    LookupError | RequestError | CollectionNotFound | TenantError
  >
  readonly describe: (connection: ConnectionRef, table: string) => Effect.Effect<TableDescription, LookupError | RequestError | CollectionNotFound>
  /** Replication, sharding, and each shard's nodes and readiness (`Cluster.placement`). */
  readonly placement: (connection: ConnectionRef, table: string) => Effect.Effect<Cluster.Placement, LookupError | RequestError | CollectionNotFound>
  /** The shards of a collection that are not `READY` (`GET /v1/schema/{class}/shards`). */
  readonly unreadyShards: (
    connection: ConnectionRef,
    table: string
  ) => Effect.Effect<ReadonlyArray<{ readonly name: string; readonly status: string }>, LookupError | RequestError | CollectionNotFound>
  readonly browse: (
    connection: ConnectionRef,
    table: string,
    request?: Grid.PageRequest
  ) => Effect.Effect<Grid.Page, LookupError | RequestError | CollectionNotFound | TenantError | FilterRefused | StatementRefused>
  readonly count: (
    connection: ConnectionRef,
    table: string,
    options?: { readonly filters?: ReadonlyArray<FilterBuilder.Filter>; readonly tenant?: string | undefined }
  ) => Effect.Effect<number, LookupError | RequestError | CollectionNotFound | TenantError | FilterRefused>
  readonly getRow: (
    connection: ConnectionRef,
    table: string,
    uuid: string,
    options?: { readonly includeVector?: boolean; readonly tenant?: string | undefined; readonly consistencyLevel?: ConsistencyLevel.ConsistencyLevel | undefined }
  ) => Effect.Effect<Option.Option<Grid.Row>, LookupError | RequestError | CollectionNotFound | TenantError>
  /** Every row through the `after` cursor (export); not capped at 10,000. */
  readonly readAll: (
    connection: ConnectionRef,
    table: string,
    options?: Grid.ReadAllOptions
  ) => Stream.Stream<Grid.Row, LookupError | RequestError | CollectionNotFound | TenantError>
  /**
   * Writes every row of a stream (the grid's shape: `uuid`, properties, `vector` or `vector:<name>`)
   * through `POST /v1/batch/objects` (`BatchImport`): one result per batch, with each rejected row's
   * position (1-based) and reason.
   */
  readonly writeAll: <E, R>(
    connection: ConnectionRef,
    table: string,
    rows: Stream.Stream<Grid.Row, E, R>,
    options?: BatchImport.WriteOptions
  ) => Stream.Stream<BatchImport.BatchResult, E | LookupError | RequestError | CollectionNotFound | TenantError, R>
  readonly insertRows: (
    connection: ConnectionRef,
    table: string,
    rows: ReadonlyArray<RowEdits.NewRow>,
    options?: RowEdits.EditOptions
  ) => Effect.Effect<RowEdits.EditResult, LookupError | RequestError | CollectionNotFound | TenantError>
  readonly updateRows: (
    connection: ConnectionRef,
    table: string,
    rows: ReadonlyArray<RowEdits.RowUpdate>,
    options?: RowEdits.EditOptions
  ) => Effect.Effect<RowEdits.EditResult, LookupError | RequestError | CollectionNotFound | TenantError>
  readonly deleteRows: (
    connection: ConnectionRef,
    table: string,
    uuids: ReadonlyArray<string | null | undefined>,
    options?: RowEdits.EditOptions
  ) => Effect.Effect<RowEdits.EditResult, LookupError | RequestError | CollectionNotFound | TenantError>
  /** Plans an edit of a collection (its schema read now): the exact requests, and the skipped rows. */
  readonly planRowEdits: (
    connection: ConnectionRef,
    table: string,
    edit: RowEdits.Edit
  ) => Effect.Effect<RowEdits.Plan, LookupError | RequestError | CollectionNotFound | TenantError>
  /** The tenants of a multi-tenant collection the caller may see (`Tenants.TenantScope`), sorted by name. */
  readonly tenants: (
    connection: ConnectionRef,
    table: string
  ) => Effect.Effect<
    { readonly collection: CollectionSchema.Collection; readonly tenants: ReadonlyArray<Tenants.Tenant> },
    LookupError | RequestError | CollectionNotFound | TenantError
  >
  /** The collection and the checked tenant of a request built by the caller (vector search, batch delete). */
  readonly resolveTenant: (
    connection: ConnectionRef,
    table: string,
    tenant: string | undefined,
    purpose: Tenants.Purpose
  ) => Effect.Effect<
    { readonly collection: CollectionSchema.Collection; readonly tenant: string | undefined },
    LookupError | RequestError | CollectionNotFound | TenantError
  >
  /**
   * Plans a batch deletion or a drop: the collection (tenant checked for a deletion) and the one
   * request that will be sent. Filters are refused here, before anything is sent.
   */
  readonly planDestructive: (
    connection: ConnectionRef,
    table: string,
    operation:
      | { readonly _tag: "drop" }
      | { readonly _tag: "deleteAll"; readonly tenant?: string | undefined }
      | { readonly _tag: "deleteWhere"; readonly filters: ReadonlyArray<FilterBuilder.Filter>; readonly tenant?: string | undefined }
  ) => Effect.Effect<
    { readonly collection: CollectionSchema.Collection; readonly request: RowEdits.EditRequest },
    LookupError | RequestError | CollectionNotFound | TenantError | FilterRefused | StatementRefused
  >
  /** Sends a planned destructive request; answers how many rows were deleted. */
  readonly sendDestructive: (connection: ConnectionRef, request: RowEdits.EditRequest) => Effect.Effect<number, LookupError | RequestError>
  /** Sends one planned request exactly as planned; answers the uuid written. */
  readonly sendRowEdit: (connection: ConnectionRef, request: RowEdits.EditRequest) => Effect.Effect<string, LookupError | RequestError>
  /** Sends one planned structure change (collections, properties, tenants) exactly as planned; answers Weaviate's JSON. */
  readonly sendSchemaEdit: (connection: ConnectionRef, request: SchemaEdits.SchemaRequest) => Effect.Effect<unknown, LookupError | RequestError>
  readonly graphql: (
    connection: ConnectionRef,
    query: string | GraphqlEditor.ValidQuery,
    options?: { readonly tenant?: string | undefined; readonly consistencyLevel?: ConsistencyLevel.ConsistencyLevel | undefined }
  ) => Effect.Effect<GraphqlEditor.EditorResult, LookupError | RequestError | StatementRefused>
  readonly rest: (
    connection: ConnectionRef,
    statement: string | RestConsole.ConsoleRequest
  ) => Effect.Effect<RestConsole.ConsoleResult, LookupError | AuthenticationFailed | PermissionDenied | ConnectionFailed | StatementRefused>
  /** A typed `Aggregate` of a collection (`Aggregate`): grouped or not, its tenant checked like any read. */
  readonly aggregate: (
    connection: ConnectionRef,
    table: string,
    request: Aggregate.Request
  ) => Effect.Effect<Aggregate.Result, LookupError | RequestError | CollectionNotFound | TenantError | FilterRefused | StatementRefused>
}

// ===== Health =====

/**
 * Reads `/v1/meta` (it requires authentication when a key is configured, unlike the readiness
 * endpoints) and measures the round trip.
 *
 * @category requests
 */
export const checkHealth = Effect.fnUntraced(function*(http: WeaviateHttp.WeaviateHttp) {
  const started = performance.now()
  const response = yield* http.requestOk({ method: "GET", path: "/v1/meta" })
  const latencyMs = Math.round((performance.now() - started) * 10) / 10
  const meta = response.json as { version?: unknown; modules?: unknown; hostname?: unknown } | undefined
  if (typeof meta !== "object" || meta === null || typeof meta.version !== "string") {
    return yield* new UnexpectedResponse({ detail: "GET /v1/meta did not return a version" })
  }
  const modules = typeof meta.modules === "object" && meta.modules !== null ? Object.keys(meta.modules) : []
  return {
    version: meta.version,
    modules,
    ...(typeof meta.hostname === "string" ? { hostname: meta.hostname } : {}),
    latencyMs
  } satisfies Health
})

// ===== Object reads and writes =====

/** The call's consistency level, else the connection's default (else none: Weaviate's). */
const level = (options: { readonly consistencyLevel?: ConsistencyLevel.ConsistencyLevel | undefined } | undefined, connection: Connection) =>
  ConsistencyLevel.effective(options?.consistencyLevel, connection)

/** Runs `f` on a collection and its checked tenant (the driver's `withTenant`). */
type WithTenant = <A, E, R>(
  name: ConnectionRef,
  table: string,
  tenant: string | undefined,
  purpose: Tenants.Purpose,
  f: (http: WeaviateHttp.WeaviateHttp, collection: CollectionSchema.Collection, tenant: string | undefined, connection: Connection) => Effect.Effect<A, E, R>
) => Effect.Effect<A, E | LookupError | RequestError | CollectionNotFound | TenantError, R>

/**
 * The object reads and writes, each at its consistency level, each failure explained by the cluster's
 * state (`Cluster.explain`).
 */
const objectOperations = (
  withTenant: WithTenant
): Pick<Service, "browse" | "count" | "getRow" | "readAll" | "insertRows" | "updateRows" | "deleteRows" | "aggregate"> => ({
  browse: (name, table, request) =>
    withTenant(name, table, request?.tenant, "read", (h, c, tenant, connection) =>
      Grid.page(h, c, { ...request, tenant, consistencyLevel: level(request, connection) }).pipe(
        Cluster.explain(h, { write: false, level: level(request, connection) })
      )),
  count: (name, table, options) =>
    withTenant(name, table, options?.tenant, "read", (h, c, tenant) =>
      Grid.count(h, c, { ...options, tenant }).pipe(Cluster.explain(h, { write: false }))),
  getRow: (name, table, uuid, options) =>
    withTenant(name, table, options?.tenant, "read", (h, c, tenant, connection) =>
      Grid.getRow(h, c, uuid, { ...options, tenant, consistencyLevel: level(options, connection) }).pipe(
        Cluster.explain(h, { write: false, level: level(options, connection) })
      )),
  readAll: (name, table, options) =>
    Stream.unwrap(
      withTenant(name, table, options?.tenant, "read", (h, c, tenant, connection) =>
        Effect.succeed(Grid.readAll(h, c, { ...options, tenant, consistencyLevel: level(options, connection) })))
    ),
  insertRows: (name, table, rows, options) =>
    withTenant(name, table, options?.tenant, "insert", (h, c, tenant, connection) =>
      RowEdits.insert(h, c, rows, { tenant, consistencyLevel: level(options, connection) }).pipe(
        Cluster.explain(h, { write: true, level: level(options, connection) })
      )),
  updateRows: (name, table, rows, options) =>
    withTenant(name, table, options?.tenant, "write", (h, c, tenant, connection) =>
      RowEdits.update(h, c, rows, { tenant, consistencyLevel: level(options, connection) }).pipe(
        Cluster.explain(h, { write: true, level: level(options, connection) })
      )),
  deleteRows: (name, table, uuids, options) =>
    withTenant(name, table, options?.tenant, "write", (h, c, tenant, connection) =>
      RowEdits.remove(h, c, uuids, { tenant, consistencyLevel: level(options, connection) }).pipe(
        Cluster.explain(h, { write: true, level: level(options, connection) })
      )),
  aggregate: (name, table, request) =>
    withTenant(name, table, request.tenant, "read", (h, c, tenant) =>
      Aggregate.run(h, c, { ...request, tenant }).pipe(Cluster.explain(h, { write: false })))
})

/** A GraphQL statement at its consistency level: only replicated collections take the argument (the schema says which). */
const graphqlOn = (
  http: WeaviateHttp.WeaviateHttp,
  connection: Connection,
  query: string | GraphqlEditor.ValidQuery,
  options: { readonly tenant?: string | undefined; readonly consistencyLevel?: ConsistencyLevel.ConsistencyLevel | undefined } | undefined
) => {
  const consistencyLevel = level(options, connection)
  const explained = Cluster.explain(http, { write: false, level: consistencyLevel })
  if (consistencyLevel === undefined) return explained(GraphqlEditor.run(http, query, options))
  return Effect.flatMap(CollectionSchema.list(http), (collections) => {
    const replicated = new Set(collections.filter((c) => ConsistencyLevel.replicated(c.raw)).map((c) => c.name))
    return explained(GraphqlEditor.run(http, query, { ...options, consistencyLevel, replicated: (name) => replicated.has(name) }))
  })
}

// ===== Service =====

/** Runs `f` on the connection's session (the driver's `withSession`). */
type WithSession = <A, E, R>(
  ref: ConnectionRef,
  f: (session: Session, connection: Connection) => Effect.Effect<A, E, R>
) => Effect.Effect<A, E | LookupError | RequestError, R>

const notMultiTenant = (collection: CollectionSchema.Collection) =>
  Effect.fail<RequestError | TenantError>(new TenantRefused({ collection: collection.name, reason: "not_multi_tenant" }))

/** The tenant list from the session's cache, and one tenant by exact name, each within the caller's tenant scope. */
const tenantOperations = (withSession: WithSession): Pick<Service, "tenantIndex" | "tenant"> => ({
  tenantIndex: (name, table) =>
    withSession(name, (session, connection) =>
      Effect.flatMap(session.schema.get(session.http, table), (collection) =>
        collection.multiTenancy
          ? Effect.flatMap(session.caches.tenants(collection), (read) =>
            Effect.map(Tenants.TenantScope, (scope) => ({ collection, read: scoped(read, scope.allowed(connection.id, collection.name)) })))
          : notMultiTenant(collection))),
  tenant: (name, table, tenant) =>
    withSession(name, (session, connection) =>
      Effect.flatMap(session.schema.get(session.http, table), (collection) =>
        collection.multiTenancy
          ? Effect.flatMap(Tenants.TenantScope, (scope) => {
            const allowed = scope.allowed(connection.id, collection.name)
            if (allowed !== undefined && !allowed.includes(tenant)) return Effect.succeed({ collection, tenant: Option.none<Tenants.Tenant>() })
            return Effect.map(Tenants.getOne(session.http, collection, tenant), (found) => ({ collection, tenant: found }))
          })
          : notMultiTenant(collection)))
})

/**
 * `Tenants.check`, with the tenants a refusal for a missing tenant names taken from the session's
 * tenant cache: naming the first few never costs a listing of every tenant.
 */
const checkTenant = (
  session: Session,
  connection: Connection,
  collection: CollectionSchema.Collection,
  tenant: string | undefined,
  purpose: Tenants.Purpose
): Effect.Effect<string | undefined, RequestError | TenantError> =>
  collection.multiTenancy && tenant === undefined
    ? Effect.flatMap(session.caches.tenants(collection), (read) =>
      Effect.flatMap(Tenants.TenantScope, (scope) => {
        const index = scoped(read, scope.allowed(connection.id, collection.name)).value
        // One more than the refusal shows, so that it can say there are more.
        const names = Array.from({ length: Math.min(index.size, MAX_TENANTS_SHOWN + 1) }, (_, i) => index.name(i))
        return Effect.fail(new TenantRefused({ collection: collection.name, reason: "required", tenants: names }))
      }))
    : Tenants.check(session.http, connection.id, collection, tenant, purpose)

/** The part of a tenant list a tenant-scoped caller may see (its allowed names that exist). */
const scoped = (read: StaleCache.Read<TenantIndex.TenantIndex>, allowed: ReadonlyArray<string> | undefined): StaleCache.Read<TenantIndex.TenantIndex> => {
  if (allowed === undefined) return read
  const index = read.value
  const visible = allowed.flatMap((name) => {
    const i = index.find(name)
    return i < 0 ? [] : [{ name, activityStatus: index.status(i) }]
  })
  return { ...read, value: TenantIndex.make(visible) }
}

/** `writeAll` once the collection and the tenant are checked: the vector lengths already there, then the batches. */
const writeAllTo = <E, R>(rows: Stream.Stream<Grid.Row, E, R>, options: BatchImport.WriteOptions | undefined) =>
(http: WeaviateHttp.WeaviateHttp, collection: CollectionSchema.Collection, tenant: string | undefined) =>
  Effect.map(BatchImport.vectorLengths(http, collection, tenant), (vectorLengths) =>
    BatchImport.writeAll(http, collection, BatchImport.itemsOfRows(rows), { ...options, tenant, vectorLengths }))

interface Session {
  readonly id: string
  readonly fingerprint: string
  readonly http: WeaviateHttp.WeaviateHttp
  /** The collections this session read (`CollectionSchema.CacheTtl`), cleared by its own schema writes. */
  readonly schema: CollectionSchema.Cache
  /** The whole schema, the shard status and the tenant lists, likewise cleared by its own writes. */
  readonly caches: SessionCaches.SessionCaches
  readonly scope: Scope.CloseableScope
}

/**
 * The session's HTTP, telling the caches of every request that may change a schema (after it was
 * sent), and of every request the database did not answer (`ConnectionFailed`): a listing is then
 * read again before it is served, so a server that went away is not hidden behind a cached schema.
 */
const watched = (
  http: WeaviateHttp.WeaviateHttp,
  listeners: ReadonlyArray<(request: WeaviateHttp.Request) => void>,
  unanswered: () => void
): WeaviateHttp.WeaviateHttp => {
  const told = <A, E>(request: WeaviateHttp.Request, sent: Effect.Effect<A, E>) => {
    const checked = Effect.tapError(sent, (error) =>
      (error as { readonly _tag?: unknown })._tag === "ConnectionFailed" ? Effect.sync(unanswered) : Effect.void)
    return CollectionSchema.mayChangeSchema(request) ? Effect.ensuring(checked, Effect.sync(() => listeners.forEach((listener) => listener(request)))) : checked
  }
  return { ...http, request: (request) => told(request, http.request(request)), requestOk: (request) => told(request, http.requestOk(request)) }
}

/** What the connection's user may do: read on `connect` and from the session's cache, and checked. */
const permissionOperations = (
  withSession: WithSession,
  health: Service["health"]
): Pick<Service, "connect" | "permissions" | "checkPermission"> => {
  const permissions = (name: ConnectionRef) => withSession(name, (session) => session.caches.permissions)

  // Outside `withSession`: the check's own refusal is no sign that the permissions changed.
  const checkPermission = (name: ConnectionRef, targets: Permissions.Target | ReadonlyArray<Permissions.Target>) =>
    Effect.flatMap(
      permissions(name).pipe(
        Effect.map((read): Permissions.Access | undefined => read.value),
        // Permissions that cannot be read now (a server error) are not guessed: Weaviate decides.
        Effect.catchTags({ DatabaseRefused: () => Effect.succeed(undefined), UnexpectedResponse: () => Effect.succeed(undefined) })
      ),
      (access) =>
        access === undefined
          ? Effect.void
          : Effect.forEach(Array.isArray(targets) ? targets : [targets as Permissions.Target], (target) => Permissions.check(access, target), { discard: true })
    )

  return {
    connect: (name) => Effect.zipLeft(health(name), Effect.ignore(permissions(name)), { concurrent: true }),
    permissions,
    checkPermission
  }
}

/** After Weaviate's 403 for something the permissions allowed: they changed since, read them again. */
const rereadPermissions = (session: Session) => (error: unknown) =>
  isPermissionDenied(error) && Permissions.contradicts(session.caches.peekPermissions(), error)
    ? Effect.sync(session.caches.clearPermissions)
    : Effect.void

/** Sending planned writes exactly as planned, Weaviate's 403 in the words of `checkPermission`. */
const sendOperations = (withSession: WithSession): Pick<Service, "sendDestructive" | "sendRowEdit" | "sendSchemaEdit"> => ({
  sendDestructive: (name, request) =>
    withSession(name, (session) =>
      RowEdits.sendDestructive(session.http, request).pipe(Cluster.explain(session.http, { write: true }), explainedIn(session, Permissions.targetsOf(request)))),
  sendRowEdit: (name, request) =>
    withSession(name, (session) =>
      RowEdits.send(session.http, request).pipe(
        Cluster.explain(session.http, { write: true, level: request.query["consistency_level"] }),
        explainedIn(session, Permissions.targetsOf(request))
      )),
  // Through the session like a row write: Weaviate's 403 in the words of `checkPermission`, and
  // permissions that said otherwise read again at once (`withSession`).
  sendSchemaEdit: (name, request) =>
    withSession(name, (session) => SchemaEdits.send(session.http, request).pipe(explainedIn(session, Permissions.targetsOf(request))))
})

/** What a console request needs (`Permissions.targetsOf`); a statement not parsed yet: nothing known. */
const consoleTargets = (statement: string | RestConsole.ConsoleRequest) =>
  typeof statement === "string" ? [] : Permissions.targetsOf({ ...statement, body: RestConsole.bodyJson(statement) })

/** Weaviate's 403 of a planned request (its `targets`), in the words of `checkPermission`. */
const explainedIn = (session: Session, targets: ReadonlyArray<Permissions.Target>) => <A, E, R>(sent: Effect.Effect<A, E, R>) =>
  Effect.catchAll(sent, (error) => Effect.fail(isPermissionDenied(error) ? Permissions.explain(error, session.caches.peekPermissions(), targets) : error))

const isPermissionDenied = (error: unknown): error is PermissionDenied =>
  typeof error === "object" && error !== null && (error as { _tag?: unknown })._tag === "PermissionDenied"

const encodeConnection = Schema.encodeSync(Connection)

const encodedSettings = new WeakMap<Connection, string>()

/** Settings that make a session: any change rebuilds it. A connection's encoding is kept per object. */
const fingerprintOf = (connection: Connection) => {
  let encoded = encodedSettings.get(connection)
  if (encoded === undefined) {
    // The tokens of an oidcToken connection change as the session renews and saves them: not a new session.
    const { oidcAccessToken: _access, oidcRefreshToken: _refresh, ...settings } = encodeConnection(connection)
    encoded = JSON.stringify(settings)
    encodedSettings.set(connection, encoded)
  }
  // The variable is read on every call: a changed environment variable rebuilds the session too.
  return connection.apiKeyEnv === undefined ? encoded : `${encoded}\n${process.env[connection.apiKeyEnv] ?? ""}`
}

/**
 * The live sessions, one per connection id: reused while the connection's settings are unchanged,
 * rebuilt when they change, all closed with the driver's scope.
 */
const makeSessions = (store: ConnectionStore["Type"]) => Effect.gen(function*() {
  const sessions = yield* SynchronizedRef.make(new Map<string, Session>())
  const ttlMs = yield* CollectionSchema.CacheTtl
  const permissionsTtlMs = yield* SessionCaches.PermissionsTtl
  const tenantTtlMs = ttlMs <= 0 ? 0 : yield* SessionCaches.TenantCacheTtl
  const shardTtlMs = ttlMs <= 0 ? 0 : yield* SessionCaches.ShardStatusTtl

  const close = (session: Session) => Scope.close(session.scope, Exit.void)

  yield* Effect.addFinalizer(() =>
    Effect.flatMap(SynchronizedRef.getAndSet(sessions, new Map()), (map) => Effect.forEach(map.values(), close))
  )

  const open = (connection: Connection) =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const http = yield* WeaviateHttp.make(connection, {
        // A rotated refresh token is saved at once: the one saved before is spent.
        onTokensRotated: (t) => Effect.ignore(store.update(connection.id, { oidcAccessToken: t.accessToken, oidcRefreshToken: t.refreshToken }))
      }).pipe(
        Scope.extend(scope),
        Effect.onError((cause) => Scope.close(scope, Exit.failCause(cause)))
      )
      const schema = CollectionSchema.makeCache(ttlMs)
      // The caches read through the watched HTTP too: what they send is never a write.
      const listeners: Array<(request: WeaviateHttp.Request) => void> = [schema.afterRequest]
      let caches: SessionCaches.SessionCaches | undefined
      const session = watched(http, listeners, () => caches?.clear())
      caches = SessionCaches.make(session, { ttlMs, shardTtlMs, tenantTtlMs, permissionsTtlMs, scope })
      listeners.push(caches.afterRequest)
      return { id: connection.id, fingerprint: fingerprintOf(connection), http: session, schema, caches, scope } satisfies Session
    })

  const drop = (id: string) =>
    SynchronizedRef.modifyEffect(sessions, (map) => {
      const session = map.get(id)
      if (session === undefined) return Effect.succeed([undefined, map] as const)
      const next = new Map(map)
      next.delete(id)
      return Effect.as(close(session), [undefined, next] as const)
    })

  /**
   * The connection's session. A live session whose settings are unchanged (nearly every call) is read
   * without taking the lock; opening, rebuilding and closing take it, so two calls never open two.
   */
  const sessionFor = (connection: Connection) =>
    Effect.flatMap(SynchronizedRef.get(sessions), (current) => {
      const existing = current.get(connection.id)
      return existing !== undefined && existing.fingerprint === fingerprintOf(connection) ? Effect.succeed(existing) : sessionLocked(connection)
    })

  const sessionLocked = (connection: Connection) =>
    SynchronizedRef.modifyEffect(sessions, (map) => {
      const existing = map.get(connection.id)
      const fingerprint = fingerprintOf(connection)
      if (existing !== undefined && existing.fingerprint === fingerprint) {
        return Effect.succeed([existing, map] as const)
      }
      return Effect.gen(function*() {
        if (existing !== undefined) yield* close(existing)
        const session = yield* open(connection)
        const next = new Map(map)
        next.set(connection.id, session)
        return [session, next] as const
      })
    })

  return { sessions, drop, sessionFor }
})

type WithCollection = <A, E, R>(
  name: ConnectionRef,
  table: string,
  f: (http: WeaviateHttp.WeaviateHttp, collection: CollectionSchema.Collection, connection: Connection) => Effect.Effect<A, E, R>
) => Effect.Effect<A, E | LookupError | RequestError | CollectionNotFound, R>

/** What is read or planned before a write or a tenant read: a table's description, tenants, row edits and destructive operations. */
const planOperations = (
  withTenant: WithTenant,
  withCollection: WithCollection
): Pick<Service, "describe" | "planRowEdits" | "tenants" | "resolveTenant" | "planDestructive"> => ({
  describe: (name, table) =>
    withCollection(name, table, (_, collection) =>
      Effect.succeed<TableDescription>({
        collection,
        columns: CollectionSchema.columns(collection).map((column) => ({
          ...column,
          operators: FilterBuilder.operatorsFor(collection, column.name)
        }))
      })),
  planRowEdits: (name, table, edit) =>
    withTenant(name, table, edit.tenant, edit._tag === "insert" ? "insert" : "write", (_, c, tenant, connection) =>
      Effect.succeed(RowEdits.planFor(c, { ...edit, tenant, consistencyLevel: level(edit, connection) }))),
  tenants: (name, table) =>
    withCollection(name, table, (h, collection, connection) =>
      collection.multiTenancy
        ? Effect.map(Tenants.visible(h, connection.id, collection), (tenants) => ({ collection, tenants }))
        : Effect.fail<RequestError | TenantError>(new TenantRefused({ collection: collection.name, reason: "not_multi_tenant" }))),
  resolveTenant: (name, table, tenant, purpose) =>
    withTenant(name, table, tenant, purpose, (_, collection, checked) => Effect.succeed({ collection, tenant: checked })),
  planDestructive: (name, table, operation) =>
    operation._tag === "drop"
      ? withCollection(name, table, (_, c) => Effect.succeed({ collection: c, request: RowEdits.planDestructive(c, operation) }))
      : withTenant(name, table, operation.tenant, "write", (_, c, tenant) =>
        operation._tag === "deleteAll"
          ? Effect.succeed({ collection: c, request: RowEdits.planDestructive(c, { _tag: "deleteAll", tenant }) })
          : Effect.flatMap(FilterBuilder.buildWhere(c, operation.filters), (where) =>
            // No filter would match every row: a deletion by filter needs one.
            where === undefined
              ? Effect.fail(new StatementRefused({ reason: "a deletion by filter needs at least one filter" }))
              : Effect.succeed({
                collection: c,
                request: RowEdits.planDestructive(c, { _tag: "deleteWhere", where: FilterBuilder.toRestWhere(where), tenant })
              })))
})

/**
 * @category services
 */
export class Driver extends Context.Tag("weaviate-mcp/Driver")<Driver, Service>() {
  static readonly make: Effect.Effect<Service, never, ConnectionStore | Scope.Scope> = Effect.gen(function*() {
    const store = yield* ConnectionStore
    const { drop, sessionFor, sessions } = yield* makeSessions(store)

    const resolve = (ref: ConnectionRef) => typeof ref === "string" ? store.get(ref) : Effect.succeed(ref)

    const http = (ref: ConnectionRef) => Effect.map(Effect.flatMap(resolve(ref), sessionFor), (session) => session.http)

    /** Runs `f` on the connection's session; an authentication failure drops it, a 403 may have its permissions read again. */
    const withSession = <A, E, R>(ref: ConnectionRef, f: (session: Session, connection: Connection) => Effect.Effect<A, E, R>) =>
      Effect.flatMap(resolve(ref), (connection) =>
        sessionFor(connection).pipe(
          Effect.flatMap((session) => Effect.tapError(f(session, connection), rereadPermissions(session))),
          Effect.tapError((error) =>
            typeof error === "object" && error !== null && (error as { _tag?: unknown })._tag === "AuthenticationFailed"
              ? drop(connection.id)
              : Effect.void
          )
        ))

    const withHttp = <A, E, R>(ref: ConnectionRef, f: (http: WeaviateHttp.WeaviateHttp, connection: Connection) => Effect.Effect<A, E, R>) =>
      withSession(ref, (session, connection) => f(session.http, connection))

    /** Runs `f` on a collection of the connection (read through the session's schema cache). */
    const withCollection = <A, E, R>(
      name: ConnectionRef,
      table: string,
      f: (http: WeaviateHttp.WeaviateHttp, collection: CollectionSchema.Collection, connection: Connection) => Effect.Effect<A, E, R>
    ) =>
      withSession(name, ({ http: h, schema }, connection) =>
        Effect.flatMap(schema.get(h, table), (collection) => f(h, collection, connection)))

    /** Runs `f` on a collection and the tenant checked for it (`Tenants.check`), before any data request. */
    const withTenant = <A, E, R>(
      name: ConnectionRef,
      table: string,
      tenant: string | undefined,
      purpose: Tenants.Purpose,
      f: (
        http: WeaviateHttp.WeaviateHttp,
        collection: CollectionSchema.Collection,
        tenant: string | undefined,
        connection: Connection
      ) => Effect.Effect<A, E, R>
    ) =>
      withSession(name, (session, connection) =>
        Effect.flatMap(session.schema.get(session.http, table), (collection) =>
          Effect.flatMap(checkTenant(session, connection, collection, tenant, purpose), (checked) => f(session.http, collection, checked, connection))))

    const health = (name: ConnectionRef) => withHttp(name, (h) => checkHealth(h))

    const test = (connection: Connection) => Effect.scoped(Effect.flatMap(WeaviateHttp.make(connection), checkHealth))

    return Driver.of({
      ...permissionOperations(withSession, health),
      health,
      cluster: Effect.fn("Driver.cluster")((name: ConnectionRef, options?: { readonly verbose?: boolean }) =>
        withHttp(name, (h) => Cluster.status(h, options))
      ),
      test,
      disconnect: (name) => Effect.flatMap(resolve(name), (connection) => drop(connection.id)),
      isConnected: (id) => Effect.map(SynchronizedRef.get(sessions), (map) => map.has(id)),
      http,
      listCollections: (name: ConnectionRef) => withHttp(name, (h) => CollectionSchema.list(h)),
      catalog: (name) => withSession(name, (session) => session.caches.catalog),
      shardReadiness: (name) => withSession(name, (session) => session.caches.unreadyShards),
      ...tenantOperations(withSession),
      ...planOperations(withTenant, withCollection),
      placement: (name, table) => withCollection(name, table, (h, c) => Cluster.placement(h, c)),
      unreadyShards: (name, table) =>
        withCollection(name, table, (h, c) => Effect.map(Cluster.shards(h, c.name), (list) => list.filter((s) => s.status !== "READY"))),
      ...objectOperations(withTenant),
      writeAll: (name, table, rows, options) => Stream.unwrap(withTenant(name, table, options?.tenant, "insert", writeAllTo(rows, options))),
      ...sendOperations(withSession),
      graphql: (name, query, options) => withSession(name, (session, connection) => graphqlOn(session.http, connection, query, options)),
      rest: (name, statement) =>
        withSession(name, (session) => RestConsole.run(session.http, statement).pipe(explainedIn(session, consoleTargets(statement))))
    })
  })

  static readonly layer: Layer.Layer<Driver, never, ConnectionStore> = Layer.scoped(Driver, Driver.make)
}
