/**
 * Tenants of multi-tenant collections: listing them (`GET /v1/schema/{C}/tenants`), and checking the
 * tenant of a data request before it is sent. A multi-tenant collection used without a tenant, a
 * tenant on a collection without tenants, an unknown tenant and an inactive one are refused with
 * `TenantRefused` before any data request; what Weaviate would do by itself (automatic tenant
 * creation on insert, automatic activation) is left to it.
 *
 * Which tenants a caller may use is a policy of the caller (`TenantScope`, default: every tenant):
 * the catalogue provides the one of the request's token. Tenants outside it are invisible in
 * listings and refusals, and `TenantForbidden` when named.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { Collection } from "./CollectionSchema.ts"
import { type RequestError, TenantForbidden, TenantRefused, UnexpectedResponse } from "./DriverError.ts"
import type { WeaviateHttp } from "./WeaviateHttp.ts"

/** @category models */
export interface Tenant {
  readonly name: string
  /** `HOT`/`ACTIVE`, `COLD`/`INACTIVE`, `FROZEN`/`OFFLOADED`, or a transition (`FREEZING`, `UNFREEZING`). */
  readonly activityStatus: string
}

/** The statuses in which a tenant's rows can be read and written. @category constants */
export const ACTIVE_STATUSES: ReadonlySet<string> = new Set(["HOT", "ACTIVE"])

/**
 * The tenants a caller may use: `allowed(connectionId, collection)` is `undefined` when the caller is
 * not restricted there, else the tenants it may use (possibly none).
 *
 * @category services
 */
export class TenantScope extends Context.Reference<TenantScope>()("weaviate-mcp/TenantScope", {
  defaultValue: (): { readonly allowed: (connectionId: string, collection: string) => ReadonlyArray<string> | undefined } => ({
    allowed: () => undefined
  })
}) {}

/** What a request does with the tenant: an insert may create it (automatic tenant creation). @category models */
export type Purpose = "read" | "write" | "insert"

const record = (u: unknown): Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u) ? (u as Record<string, unknown>) : {}

const path = (collection: Collection) => `/v1/schema/${encodeURIComponent(collection.name)}/tenants`

const byName = (a: Tenant, b: Tenant) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

const decode = (u: unknown): Tenant | undefined => {
  const t = record(u)
  return typeof t.name === "string"
    ? { name: t.name, activityStatus: typeof t.activityStatus === "string" ? t.activityStatus : "HOT" }
    : undefined
}

/**
 * Every tenant of a multi-tenant collection, sorted by name.
 *
 * @category requests
 */
export const listAll = Effect.fnUntraced(function*(
  http: WeaviateHttp,
  collection: Collection
): Effect.fn.Return<ReadonlyArray<Tenant>, RequestError> {
  const response = yield* http.requestOk({ method: "GET", path: path(collection) })
  if (!Array.isArray(response.json)) return yield* new UnexpectedResponse({ detail: `GET ${path(collection)} did not return a list` })
  return response.json.map(decode).filter((t): t is Tenant => t !== undefined).sort(byName)
})

/**
 * The tenants the caller may see (`TenantScope`), sorted by name.
 *
 * @category requests
 */
export const visible = Effect.fnUntraced(function*(http: WeaviateHttp, connectionId: string, collection: Collection) {
  const allowed = (yield* TenantScope).allowed(connectionId, collection.name)
  const all = yield* listAll(http, collection)
  return allowed === undefined ? all : all.filter((t) => allowed.includes(t.name))
})

/**
 * One tenant (`GET /v1/schema/{C}/tenants/{name}`); `None` when the collection has no such tenant.
 *
 * @category requests
 */
export const getOne = Effect.fnUntraced(function*(http: WeaviateHttp, collection: Collection, name: string) {
  const response = yield* http.request({ method: "GET", path: `${path(collection)}/${encodeURIComponent(name)}` })
  if (response.status === 404) return Option.none<Tenant>()
  if (response.status < 200 || response.status >= 300) {
    // An older server without the single-tenant route: look it up in the list.
    return Option.fromNullable((yield* listAll(http, collection)).find((t) => t.name === name))
  }
  return Option.fromNullable(decode(response.json))
})

/**
 * The tenant a data request may use, checked before the request is sent: `undefined` for a
 * collection without tenants (a tenant there is refused), the tenant itself for a multi-tenant one.
 *
 * @category requests
 */
export const check = Effect.fnUntraced(function*(
  http: WeaviateHttp,
  connectionId: string,
  collection: Collection,
  tenant: string | undefined,
  purpose: Purpose
): Effect.fn.Return<string | undefined, RequestError | TenantRefused | TenantForbidden> {
  if (!collection.multiTenancy) {
    if (tenant !== undefined) return yield* new TenantRefused({ collection: collection.name, reason: "not_multi_tenant", tenant })
    return undefined
  }
  if (tenant === undefined) {
    const tenants = (yield* visible(http, connectionId, collection)).map((t) => t.name)
    return yield* new TenantRefused({ collection: collection.name, reason: "required", tenants })
  }
  const allowed = (yield* TenantScope).allowed(connectionId, collection.name)
  if (allowed !== undefined && !allowed.includes(tenant)) return yield* new TenantForbidden({ collection: collection.name, tenant })
  const found = yield* getOne(http, collection, tenant)
  if (Option.isNone(found)) {
    if (purpose === "insert" && collection.tenancy.autoTenantCreation) return tenant
    return yield* new TenantRefused({ collection: collection.name, reason: "not_found", tenant })
  }
  if (!ACTIVE_STATUSES.has(found.value.activityStatus) && !collection.tenancy.autoTenantActivation) {
    return yield* new TenantRefused({ collection: collection.name, reason: "not_active", tenant, status: found.value.activityStatus })
  }
  return tenant
})
