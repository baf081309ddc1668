/**
 * What one connection's session keeps of a big database so that listings cost the same whatever its
 * size: the whole schema (`GET /v1/schema`), the shard status of every collection (one
 * `GET /v1/nodes?output=verbose`), and the tenants of the collections asked about
 * (`GET /v1/schema/{C}/tenants`, kept as a `TenantIndex`). Each is a `StaleCache`: served stale while
 * it is read again in the background, one read at a time.
 *
 * A request the database did not answer clears them all (`clear`): the next listing waits for a
 * fresh read, and fails if the server is gone, instead of hiding it behind a cached schema.
 * The permissions of the connection's user (`GET /v1/users/own-info`, `Permissions.read`) are kept
 * too, read again after their own time to live and at once after Weaviate refused a request with 403
 * (`clearPermissions`: they changed since they were read).
 *
 * Our own writes clear what they may change (`afterRequest`): a write under `/v1/schema` clears the
 * schema and shard status, and the tenants of the collection it names; an object write clears the
 * schema unless every property it names is known (Weaviate's auto-schema), and the tenants of
 * collections that create tenants on insert. Changes made elsewhere show once the cache is older than
 * its time to live, and a listing older than that says so.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as CollectionSchema from "./CollectionSchema.ts"
import * as Permissions from "./Permissions.ts"
import { type RequestError, UnexpectedResponse } from "./DriverError.ts"
import * as StaleCache from "./StaleCache.ts"
import * as TenantIndex from "./TenantIndex.ts"
import type { Tenant } from "./Tenants.ts"
import type * as WeaviateHttp from "./WeaviateHttp.ts"

/**
 * How long a collection's tenant list is reused before it is read again in the background
 * (milliseconds). Default 10,000: reading a million tenants takes seconds, so it is read less often
 * than the schema. A schema cache time of 0 turns it off too.
 *
 * @category cache
 */
export class TenantCacheTtl extends Context.Reference<TenantCacheTtl>()("weaviate-mcp/SessionCaches/TenantCacheTtl", {
  defaultValue: () => 10_000
}) {}

/**
 * How long the shard status of every collection (`GET /v1/nodes?output=verbose`) is reused
 * (milliseconds). Default 2,000, as the schema's; its own setting because a shard's status changes
 * without any schema change (a full disk makes it READONLY). A schema cache time of 0 turns it off too.
 *
 * @category cache
 */
export class ShardStatusTtl extends Context.Reference<ShardStatusTtl>()("weaviate-mcp/SessionCaches/ShardStatusTtl", {
  defaultValue: () => 2_000
}) {}

/**
 * How long the permissions of a connection's user are reused before they are read again in the
 * background (milliseconds). Default 60,000: roles change rarely, and a 403 from Weaviate has them
 * read again at once. Independent of the schema cache time.
 *
 * @category cache
 */
export class PermissionsTtl extends Context.Reference<PermissionsTtl>()("weaviate-mcp/SessionCaches/PermissionsTtl", {
  defaultValue: () => 60_000
}) {}

/** The collections whose tenant lists one session keeps at most (the least recently used goes). @category constants */
export const MAX_TENANT_LISTS = 16

/** The schema, sorted by name, with each collection by name. @category models */
export interface Catalog {
  readonly collections: ReadonlyArray<CollectionSchema.Collection>
  readonly byName: ReadonlyMap<string, CollectionSchema.Collection>
}

/** One shard that is not `READY` (on some node). @category models */
export interface UnreadyShard {
  readonly name: string
  readonly status: string
}

/** @category models */
export type ShardReadiness = ReadonlyMap<string, ReadonlyArray<UnreadyShard>> | undefined

/** @category models */
export interface SessionCaches {
  readonly catalog: StaleCache.StaleCache<Catalog, RequestError>["get"]
  /**
   * The shards not `READY`, by collection (collections whose shards are all ready are absent);
   * undefined when Weaviate does not say (a key without the permission to read `/v1/nodes`).
   */
  readonly unreadyShards: StaleCache.StaleCache<ShardReadiness, RequestError>["get"]
  readonly tenants: (collection: CollectionSchema.Collection) => Effect.Effect<StaleCache.Read<TenantIndex.TenantIndex>, RequestError>
  /** What the connection's user may do (`Permissions.read`). */
  readonly permissions: StaleCache.StaleCache<Permissions.Access, RequestError>["get"]
  /** The permissions held now, without reading (undefined before the first read). */
  readonly peekPermissions: () => Permissions.Access | undefined
  /** Drops the permissions (Weaviate answered 403: they changed since they were read). */
  readonly clearPermissions: () => void
  readonly afterRequest: (request: WeaviateHttp.Request) => void
  /** Drops everything (the database did not answer a request: what it holds is read again before it is served). */
  readonly clear: () => void
}

const record = (u: unknown): Record<string, unknown> => (typeof u === "object" && u !== null && !Array.isArray(u) ? u as Record<string, unknown> : {})

/** Parses a raw answer (read unscrubbed: a tenant list can be tens of megabytes). */
const parsed = (what: string, text: string | undefined): Effect.Effect<unknown, UnexpectedResponse> =>
  Effect.try({ try: () => JSON.parse(text ?? "") as unknown, catch: () => new UnexpectedResponse({ detail: `${what} did not return JSON` }) })

const readCatalog = (http: WeaviateHttp.WeaviateHttp): Effect.Effect<Catalog, RequestError> =>
  Effect.map(CollectionSchema.list(http), (collections) => ({ collections, byName: new Map(collections.map((c) => [c.name, c])) }))

/**
 * Every shard of every collection on every node that is not READY (`vectorIndexingStatus` is the
 * shard's status, as `GET /v1/schema/{C}/shards` reports it). A key that may not read the nodes gets
 * `undefined`: the listing goes on without readiness rather than failing (or dropping the session).
 */
const readUnready = (http: WeaviateHttp.WeaviateHttp): Effect.Effect<ShardReadiness, RequestError> =>
  Effect.flatMap(
    http.request({ method: "GET", path: "/v1/nodes", query: { output: "verbose" }, raw: true }).pipe(
      Effect.catchTags({ AuthenticationFailed: () => Effect.succeed(undefined), PermissionDenied: () => Effect.succeed(undefined) })
    ),
    (response): Effect.Effect<ShardReadiness, RequestError> => response === undefined || response.status !== 200 ? Effect.succeed(undefined) : Effect.map(parsed("GET /v1/nodes", response.text), (json) => {
      const unready = new Map<string, Array<UnreadyShard>>()
      const nodes = record(json)["nodes"]
      for (const node of Array.isArray(nodes) ? nodes.map(record) : []) {
        const shards = node["shards"]
        for (const shard of Array.isArray(shards) ? shards.map(record) : []) {
          const status = typeof shard["vectorIndexingStatus"] === "string" ? shard["vectorIndexingStatus"] : "READY"
          if (status === "READY") continue
          const collection = String(shard["class"] ?? "")
          const list = unready.get(collection) ?? []
          const name = String(shard["name"] ?? "")
          if (!list.some((s) => s.name === name && s.status === status)) list.push({ name, status })
          unready.set(collection, list)
        }
      }
      return unready as ReadonlyMap<string, ReadonlyArray<UnreadyShard>>
    }))

const readTenants = (http: WeaviateHttp.WeaviateHttp, collection: CollectionSchema.Collection) => {
  const path = `/v1/schema/${encodeURIComponent(collection.name)}/tenants`
  return Effect.flatMap(http.requestOk({ method: "GET", path, raw: true }), (response) =>
    Effect.flatMap(parsed(`GET ${path}`, response.text), (json) => {
      if (!Array.isArray(json)) return Effect.fail(new UnexpectedResponse({ detail: `GET ${path} did not return a list` }))
      const tenants: Array<Tenant> = []
      for (const t of json) {
        const r = record(t)
        if (typeof r["name"] === "string") tenants.push({ name: r["name"], activityStatus: typeof r["activityStatus"] === "string" ? r["activityStatus"] : "HOT" })
      }
      return Effect.succeed(TenantIndex.make(tenants))
    }))
}

/** The collection a `/v1/schema/{C}…` path names, if any. */
const namedCollection = (path: string): string | undefined => {
  const parts = path.split("/")
  return parts.length >= 4 && parts[3] !== "" ? decodeURIComponent(parts[3]!) : undefined
}

/** Whether an object write names only collections and properties the schema already has (no auto-schema change). */
const knownProperties = (catalog: Catalog | undefined, request: WeaviateHttp.Request): boolean => {
  if (catalog === undefined) return true
  if (request.method === "DELETE") return true
  const json = request.body !== undefined && "json" in request.body ? request.body.json : undefined
  const objects = request.path.toLowerCase().startsWith("/v1/batch/objects") ? record(json)["objects"] : [json]
  if (!Array.isArray(objects)) return false
  return objects.every((object) => {
    const { class: className, properties } = record(object)
    const collection = typeof className === "string" ? catalog.byName.get(className) : undefined
    if (collection === undefined) return false
    if (properties === undefined) return true
    return Object.keys(record(properties)).every((key) => collection.properties.some((p) => p.name === key))
  })
}

/**
 * The caches of one session, reading through `http` within `scope`.
 *
 * @category constructors
 */
export const make = (
  http: WeaviateHttp.WeaviateHttp,
  options: {
    readonly ttlMs: number
    readonly shardTtlMs: number
    readonly tenantTtlMs: number
    readonly permissionsTtlMs?: number
    readonly scope: Scope.Scope
  }
): SessionCaches => {
  const catalog = StaleCache.make(readCatalog(http), { ttlMs: options.ttlMs, scope: options.scope })
  const permissions = StaleCache.make(Permissions.read(http), {
    ttlMs: options.permissionsTtlMs ?? 60_000,
    scope: options.scope
  })
  const unready = StaleCache.make(readUnready(http), { ttlMs: options.shardTtlMs, scope: options.scope })
  // Insertion order is recency: a list read is moved to the end; the first goes past the bound.
  const tenantLists = new Map<string, { readonly collection: CollectionSchema.Collection; readonly cache: StaleCache.StaleCache<TenantIndex.TenantIndex, RequestError> }>()

  const tenants = (collection: CollectionSchema.Collection) =>
    Effect.suspend(() => {
      let entry = tenantLists.get(collection.name)
      if (entry !== undefined) tenantLists.delete(collection.name)
      entry ??= { collection, cache: StaleCache.make(readTenants(http, collection), { ttlMs: options.tenantTtlMs, scope: options.scope }) }
      tenantLists.set(collection.name, entry)
      if (tenantLists.size > MAX_TENANT_LISTS) tenantLists.delete(tenantLists.keys().next().value!)
      return entry.cache.get
    })

  const afterRequest = (request: WeaviateHttp.Request) => {
    if (!CollectionSchema.mayChangeSchema(request)) return
    const path = request.path.toLowerCase()
    if (path.startsWith("/v1/schema")) {
      catalog.clear()
      unready.clear()
      const named = namedCollection(request.path)
      if (named !== undefined) {
        for (const [name, entry] of tenantLists) if (name.toLowerCase() === named.toLowerCase()) entry.cache.clear()
      }
      return
    }
    if (!path.startsWith("/v1/objects") && !path.startsWith("/v1/batch/objects")) return
    if (!knownProperties(catalog.peek(), request)) catalog.clear()
    // An insert may create its tenant (automatic tenant creation).
    for (const entry of tenantLists.values()) if (entry.collection.tenancy.autoTenantCreation) entry.cache.clear()
  }

  const clear = () => {
    catalog.clear()
    unready.clear()
    permissions.clear()
    for (const entry of tenantLists.values()) entry.cache.clear()
  }

  return {
    catalog: catalog.get,
    unreadyShards: unready.get,
    tenants,
    permissions: permissions.get,
    peekPermissions: permissions.peek,
    clearPermissions: permissions.clear,
    afterRequest,
    clear
  }
}
