/**
 * What the database user behind a connection may do, as Weaviate's RBAC says: `GET
 * /v1/users/own-info` names the user, its groups, and its roles with their permissions (each an
 * `action` such as `create_data` and the resource it applies to: a collection pattern, a tenant
 * pattern, an object). The permissions are matched here as Weaviate matches them (`*` is any run of
 * characters, the whole name must match, the first letter of a collection name is upper case; a
 * request without a tenant is checked against the tenant `*`), so a write that Weaviate would
 * refuse is refused before anyone is asked to approve it.
 *
 * A server without RBAC answers own-info too, with the user and no roles, exactly as an RBAC server
 * answers for a user without roles. The two are told apart by one request that only an RBAC server
 * refuses for such a user (`GET /v1/authz/roles/{name}`: 403 naming `rbac`, where a server without
 * RBAC answers 404). A server that does not say who the connection is (own-info absent before
 * Weaviate 1.28, or 401 under anonymous access) is `NoRbac` too: nothing is checked beforehand, and
 * Weaviate's own 403 still gets the clear error.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { DatabaseRefused, PermissionDenied, type RequestError } from "./DriverError.ts"
import * as WeaviateHttp from "./WeaviateHttp.ts"

// ===== Models =====

/** One permission of a role, its resource flattened (the domain is in the action's name). @category models */
export interface Permission {
  readonly action: string
  /** Collection pattern (data, collections, tenants, nodes, backups, … domains); absent for domains without one. */
  readonly collection?: string
  /** Tenant pattern (data and tenants domains). */
  readonly tenant?: string
  /** Object pattern (data domain). */
  readonly object?: string
}

/** @category models */
export interface Role {
  readonly name: string
  readonly permissions: ReadonlyArray<Permission>
}

/**
 * What the connection's user may do: `Rbac` (Weaviate said, role by role) or `NoRbac` (Weaviate does
 * not restrict by role, or does not say; `reason` tells which).
 *
 * @category models
 */
export type Access =
  | { readonly _tag: "Rbac"; readonly user: string; readonly groups: ReadonlyArray<string>; readonly roles: ReadonlyArray<Role> }
  | { readonly _tag: "NoRbac"; readonly user?: string | undefined; readonly reason: string }

/** The actions a write tool checks. @category models */
export type Action =
  | "create_data"
  | "read_data"
  | "update_data"
  | "delete_data"
  | "create_collections"
  | "read_collections"
  | "update_collections"
  | "delete_collections"
  | "create_tenants"
  | "read_tenants"
  | "update_tenants"
  | "delete_tenants"

/** What a request needs: an action on a collection (and tenant). @category models */
export interface Target {
  readonly action: Action
  readonly collection: string
  readonly tenant?: string | undefined
}

// ===== Reading =====

/** The role name of the RBAC probe; no role is expected to have it (a 404 or a 403 is the answer). */
const PROBE_ROLE = "weaviate-mcp-rbac-probe"

const record = (u: unknown): Record<string, unknown> => (typeof u === "object" && u !== null && !Array.isArray(u) ? u as Record<string, unknown> : {})
const text = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

/** One permission of own-info: the action and the resource of its domain. */
const permissionOf = (raw: unknown): Permission | undefined => {
  const p = record(raw)
  const action = text(p["action"])
  if (action === undefined) return undefined
  for (const domain of ["data", "tenants", "collections", "nodes", "backups", "replicate", "aliases"]) {
    const resource = p[domain]
    if (resource === undefined || resource === null) continue
    const r = record(resource)
    return {
      action,
      collection: text(r["collection"]) ?? "*",
      ...(domain === "data" || domain === "tenants" ? { tenant: text(r["tenant"]) ?? "*" } : {}),
      ...(domain === "data" ? { object: text(r["object"]) ?? "*" } : {})
    }
  }
  return { action }
}

/**
 * Parses an own-info answer. `undefined` roles and an empty list are the same: no roles.
 *
 * @category parsing
 */
export const parseOwnInfo = (json: unknown): { readonly user: string; readonly groups: ReadonlyArray<string>; readonly roles: ReadonlyArray<Role> } => {
  const body = record(json)
  const roles = Array.isArray(body["roles"]) ? body["roles"] : []
  const groups = Array.isArray(body["groups"]) ? body["groups"].filter((g): g is string => typeof g === "string") : []
  return {
    user: text(body["username"]) ?? "",
    groups,
    roles: roles.map(record).map((r) => ({
      name: text(r["name"]) ?? "",
      permissions: (Array.isArray(r["permissions"]) ? r["permissions"] : []).flatMap((p) => {
        const permission = permissionOf(p)
        return permission === undefined ? [] : [permission]
      })
    })).sort((a, b) => a.name.localeCompare(b.name))
  }
}

/** A user without roles: only an RBAC server refuses it the probe role, naming `rbac`. */
const probeRbac = (http: WeaviateHttp.WeaviateHttp, timeoutMs: number): Effect.Effect<boolean, RequestError> =>
  http.request({ method: "GET", path: `/v1/authz/roles/${PROBE_ROLE}`, timeoutMs }).pipe(
    Effect.as(false),
    // Weaviate's RBAC authorizer says `rbac: authorization, forbidden action…` (adminlist says `adminlist: …`).
    Effect.catchTag("PermissionDenied", (denied) => Effect.succeed(/\brbac: authorization\b/i.test(denied.detail ?? "") || denied.action !== undefined))
  )

/**
 * Reads what the connection's user may do. An answer that does not name the user (own-info absent,
 * 401, 403) is `NoRbac`; a server error fails, so that the next caller reads again.
 *
 * @category reading
 */
export const read = (http: WeaviateHttp.WeaviateHttp): Effect.Effect<Access, RequestError> =>
  // Bounded as the health check is (`WeaviateHttp.Timeouts`, setting healthTimeoutSeconds): a listing waits for it.
  Effect.flatMap(WeaviateHttp.Timeouts, ({ healthMs }) => readWithin(http, healthMs))

const readWithin = (http: WeaviateHttp.WeaviateHttp, timeoutMs: number): Effect.Effect<Access, RequestError> =>
  http.request({ method: "GET", path: "/v1/users/own-info", timeoutMs }).pipe(
    Effect.flatMap((response): Effect.Effect<Access, RequestError> => {
      if (response.status === 404 || response.status === 405 || response.status === 501) {
        return Effect.succeed({ _tag: "NoRbac", reason: "this Weaviate does not say what its users may do (GET /v1/users/own-info: Weaviate 1.28 or newer)" })
      }
      if (response.status !== 200) {
        return Effect.fail(new DatabaseRefused({ status: response.status, detail: `GET /v1/users/own-info answered HTTP ${response.status}` }))
      }
      const info = parseOwnInfo(response.json)
      if (info.roles.length > 0) return Effect.succeed({ _tag: "Rbac", ...info })
      return Effect.map(probeRbac(http, timeoutMs), (rbac): Access =>
        rbac ? { _tag: "Rbac", ...info } : { _tag: "NoRbac", user: info.user, reason: "RBAC is not enabled on this Weaviate: its users are not restricted by role" })
    }),
    Effect.catchTags({
      AuthenticationFailed: () =>
        Effect.succeed<Access>({ _tag: "NoRbac", reason: "this Weaviate does not say who the connection is (anonymous access: GET /v1/users/own-info answered 401)" }),
      PermissionDenied: () => Effect.succeed<Access>({ _tag: "NoRbac", reason: "this Weaviate does not let the connection read its own user (GET /v1/users/own-info answered 403)" })
    })
  )

// ===== Matching =====

const upperFirst = (name: string) => (name.length === 0 ? name : name[0]!.toUpperCase() + name.slice(1))

type Matcher = (name: string) => boolean

const always: Matcher = () => true

/**
 * The matcher of a pattern as Weaviate matches it: `*` is any run of characters, the rest a regular
 * expression that must match the whole name; a pattern without either is compared as it is, and one
 * that is no valid expression matches only itself.
 */
const matcherOf = (pattern: string | undefined): Matcher => {
  if (pattern === undefined || pattern === "*") return always
  if (!/[.*+?^${}()|[\]\\]/.test(pattern)) return (name) => name === pattern
  try {
    const compiled = new RegExp(`^(?:${pattern.replace(/\*/g, ".*")})$`)
    return (name) => compiled.test(name)
  } catch {
    return (name) => name === pattern
  }
}

/**
 * Whether a permission's pattern matches a name as Weaviate matches it.
 *
 * @category matching
 */
export const matches = (pattern: string | undefined, name: string): boolean => matcherOf(pattern)(name)

/** One permission, compiled: its collection (first letter upper case, as Weaviate stores it) and tenant matchers. */
interface Grant {
  readonly collection: Matcher
  /** Absent for domains without tenants. */
  readonly tenant: Matcher | undefined
}

/** The permissions of a user by action, compiled once per read (a listing checks every collection of a page). */
const indexes = new WeakMap<Access, ReadonlyMap<string, ReadonlyArray<Grant>>>()

const indexOf = (access: Extract<Access, { _tag: "Rbac" }>): ReadonlyMap<string, ReadonlyArray<Grant>> => {
  let index = indexes.get(access)
  if (index === undefined) {
    const built = new Map<string, Array<Grant>>()
    for (const role of access.roles) {
      for (const p of role.permissions) {
        const grants = built.get(p.action) ?? []
        grants.push({
          collection: matcherOf(p.collection === undefined ? undefined : upperFirst(p.collection)),
          tenant: p.tenant === undefined ? undefined : matcherOf(p.tenant)
        })
        built.set(p.action, grants)
      }
    }
    indexes.set(access, index = built)
  }
  return index
}

/**
 * Whether some permission grants a target (a request without a tenant is checked as Weaviate does,
 * against `*`); `anyTenant` asks whether it is granted for some tenant at least.
 */
const granted = (access: Extract<Access, { _tag: "Rbac" }>, target: Target, anyTenant = false): boolean => {
  const grants = indexOf(access).get(target.action)
  if (grants === undefined) return false
  const collection = upperFirst(target.collection)
  const tenant = target.tenant ?? "*"
  const collectionOnly = anyTenant || target.action.endsWith("_collections")
  return grants.some((g) => g.collection(collection) && (collectionOnly || g.tenant === undefined || g.tenant(tenant)))
}

/**
 * Whether the user may do `target` (always, without RBAC: Weaviate has the last word anyway).
 *
 * @category matching
 */
export const allows = (access: Access, target: Target): boolean => access._tag === "NoRbac" || granted(access, target)

/**
 * Fails with `PermissionDenied` when the user may not do `target`: the one check every write calls
 * before it asks for approval.
 *
 * @category matching
 */
export const check = (access: Access, target: Target): Effect.Effect<void, PermissionDenied> =>
  allows(access, target) ? Effect.void : Effect.fail(denied(access, target))

/** The refusal of a target, with the user's name when it is known. @category matching */
export const denied = (access: Access | undefined, target: Target): PermissionDenied =>
  new PermissionDenied({
    ...(access?.user !== undefined && access.user !== "" ? { user: access.user } : {}),
    action: target.action,
    collection: target.collection,
    ...(target.tenant !== undefined ? { tenant: target.tenant } : {})
  })

/**
 * Weaviate's 403 of a request whose targets are known, in the words of `check` (the user from the
 * 403 itself, else from what was read); a 403 that already names its action is kept.
 *
 * @category matching
 */
export const explain = (error: PermissionDenied, access: Access | undefined, targets: ReadonlyArray<Target>): PermissionDenied => {
  if (error.action !== undefined && error.collection !== undefined) return error
  const target = targets.find((t) => access === undefined || !allows(access, t)) ?? targets[0]
  if (target === undefined) return error
  const refusal = denied(access, target)
  return error.user !== undefined ? new PermissionDenied({ ...refusal, user: error.user }) : refusal
}

/**
 * Whether Weaviate's 403 says something the permissions read before did not: they allowed the
 * refused action (or the refusal names none). Then they changed since, and are read again; a 403 for
 * an action no role had (a read of the nodes without `read_nodes`) tells nothing new.
 *
 * @category matching
 */
export const contradicts = (access: Access | undefined, error: PermissionDenied): boolean => {
  if (access === undefined) return false
  // Without RBAC a 403 (adminlist) is expected; one in RBAC's words means RBAC was turned on since.
  if (access._tag === "NoRbac") return error.action !== undefined || /\brbac: authorization\b/i.test(error.detail ?? "")
  if (error.action === undefined) return true
  const action = error.action
  if (error.collection === undefined) return access.roles.some((role) => role.permissions.some((p) => p.action === action))
  return allows(access, { action: action as Action, collection: error.collection, tenant: error.tenant })
}

// ===== What a request needs =====

/** A path segment percent-decoded (as it is, when it is no valid escape: such a path names nothing we check). */
const decoded = (segment: string) => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

const collectionOf = (u: unknown) => (typeof u === "string" && u.length > 0 ? u : undefined)

/**
 * What a REST request needs from RBAC, as far as it can be told from its method, path and body:
 * object writes (`create_data`, `update_data`, `delete_data`; a batch needs create and update),
 * schema writes (`*_collections`) and tenant writes (`*_tenants`). Empty when it cannot be told:
 * such a request is not checked beforehand (Weaviate's 403 still gets the clear error).
 *
 * @category requests
 */
export const targetsOf = (request: {
  readonly method: string
  readonly path: string
  readonly query?: Readonly<Record<string, string | undefined>> | undefined
  readonly body?: unknown
}): ReadonlyArray<Target> => {
  const [pathname, search] = request.path.split("?", 2) as [string, string | undefined]
  const query = { ...Object.fromEntries(new URLSearchParams(search ?? "")), ...request.query }
  const segments = pathname.split("/").filter((s) => s.length > 0).map(decoded)
  const route = (segments[0]?.toLowerCase() === "v1" ? segments.slice(1) : segments)
  const at = (i: number) => route[i]?.toLowerCase()
  const body = record(request.body)
  const tenant = collectionOf(query["tenant"]) ?? collectionOf(body["tenant"])
  const method = request.method.toUpperCase()
  const one = (action: Action, collection: string | undefined, t: string | undefined = tenant): ReadonlyArray<Target> =>
    collection === undefined ? [] : [{ action, collection, ...(t !== undefined ? { tenant: t } : {}) }]
  if (at(0) === "objects") {
    // /v1/objects, /v1/objects/{C}/{id}[/references/{p}], and the deprecated /v1/objects/{id}
    const named = route.length >= 3 ? route[1] : collectionOf(body["class"])
    if (method === "POST" && route.length === 1) return one("create_data", collectionOf(body["class"]))
    if (method === "DELETE" && route.length <= 3) return one("delete_data", named)
    if (method === "PUT" || method === "PATCH" || method === "POST" || method === "DELETE") return one("update_data", named)
    return []
  }
  if (at(0) === "batch" && at(1) === "objects") {
    if (method === "DELETE") return one("delete_data", collectionOf(record(body["match"])["class"]))
    if (method !== "POST") return []
    const objects = Array.isArray(body["objects"]) ? body["objects"].map(record) : []
    const seen = new Map<string, Target>()
    for (const object of objects) {
      const collection = collectionOf(object["class"])
      if (collection === undefined) continue
      const t = collectionOf(object["tenant"])
      for (const action of ["update_data", "create_data"] as const) seen.set(`${action}\u0000${collection}\u0000${t ?? ""}`, { action, collection, ...(t !== undefined ? { tenant: t } : {}) })
    }
    return [...seen.values()]
  }
  if (at(0) === "schema") {
    if (route.length === 1) return method === "POST" ? one("create_collections", collectionOf(body["class"]), undefined) : []
    const collection = route[1]!
    if (route.length === 2) {
      return method === "DELETE" ? one("delete_collections", collection, undefined) : method === "PUT" ? one("update_collections", collection, undefined) : []
    }
    if (at(2) === "properties" && method === "POST") return one("update_collections", collection, undefined)
    if (at(2) === "tenants") {
      const names = Array.isArray(request.body) ? request.body : []
      const tenants = names.flatMap((n) => {
        const name = typeof n === "string" ? n : collectionOf(record(n)["name"])
        return name === undefined ? [] : [name]
      })
      const action: Action | undefined = method === "POST" ? "create_tenants" : method === "PUT" ? "update_tenants" : method === "DELETE" ? "delete_tenants" : undefined
      if (action === undefined) return []
      return tenants.length === 0 ? one(action, collection, undefined) : tenants.map((t) => ({ action, collection, tenant: t }))
    }
  }
  return []
}

// ===== Summaries =====

const DATA_VERBS = ["read", "create", "update", "delete"] as const

/** The collection patterns of the permissions with one of `actions`, with the verbs each allows. */
const byCollection = (access: Extract<Access, { _tag: "Rbac" }>, actions: ReadonlyArray<string>) => {
  const found = new Map<string, Set<string>>()
  for (const role of access.roles) {
    for (const p of role.permissions) {
      if (!actions.includes(p.action)) continue
      const key = `${p.collection ?? "*"}\u0000${p.tenant ?? "*"}`
      const verbs = found.get(key) ?? new Set()
      verbs.add(p.action.split("_")[0]!)
      found.set(key, verbs)
    }
  }
  return found
}

/** "all collections", "Article, Ticket (create, update)", or `none`. */
const listed = (found: Map<string, Set<string>>, allVerbs: number, none: string): string => {
  if (found.size === 0) return none
  const everything = found.get("*\u0000*")
  if (everything !== undefined && everything.size === allVerbs) return "all collections"
  return [...found.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, verbs]) => {
      const [pattern, tenant] = key.split("\u0000") as [string, string]
      const notes = [...(verbs.size === allVerbs ? [] : [[...verbs].join(", ")]), ...(tenant === "*" ? [] : [`tenant ${tenant}`])]
      return `${pattern === "*" ? "all collections" : pattern}${notes.length === 0 ? "" : ` (${notes.join("; ")})`}`
    })
    .join(", ")
}

/**
 * One line of what the user may do: "read: all collections; write: Article, Ticket; no schema
 * changes" (and tenant changes when it may make some).
 *
 * @category summaries
 */
export const summary = (access: Access): string => {
  if (access._tag === "NoRbac") return `not restricted by role: ${access.reason}`
  if (access.roles.length === 0) return "no roles: this user may do nothing"
  const read = listed(byCollection(access, ["read_data"]), 1, "none")
  const write = listed(byCollection(access, ["create_data", "update_data", "delete_data"]), 3, "none")
  const schema = byCollection(access, ["create_collections", "update_collections", "delete_collections"])
  const tenants = byCollection(access, ["create_tenants", "update_tenants", "delete_tenants"])
  return [
    `read: ${read}`,
    `write: ${write}`,
    schema.size === 0 ? "no schema changes" : `schema changes: ${listed(schema, 3, "none")}`,
    ...(tenants.size === 0 ? [] : [`tenant changes: ${listed(tenants, 3, "none")}`])
  ].join("; ")
}

/**
 * The data verbs (`read`, `create`, `update`, `delete`) the user may use on a collection, in that
 * order; a verb allowed only for some tenants is marked `(some tenants)`. Every verb without RBAC.
 *
 * @category summaries
 */
export const dataVerbs = (access: Access, collection: string): ReadonlyArray<string> =>
  DATA_VERBS.flatMap((verb) => {
    const action = `${verb}_data` as Action
    if (allows(access, { action, collection })) return [verb]
    if (access._tag === "Rbac" && granted(access, { action, collection }, true)) {
      return [`${verb} (some tenants)`]
    }
    return []
  })

/**
 * Every action the user may take on a collection (any tenant for the tenant-scoped ones), in
 * Weaviate's names.
 *
 * @category summaries
 */
export const actionsOn = (access: Access, collection: string): ReadonlyArray<Action> => {
  const all: ReadonlyArray<Action> = [
    "read_data", "create_data", "update_data", "delete_data",
    "read_collections", "create_collections", "update_collections", "delete_collections",
    "read_tenants", "create_tenants", "update_tenants", "delete_tenants"
  ]
  if (access._tag === "NoRbac") return all
  return all.filter((action) =>
    granted(access, { action, collection }, true)
  )
}

/**
 * The permissions as the tools' structured answers (and `status --json`) carry them.
 *
 * @category summaries
 */
export const toJson = (access: Access): Report => ({
  rbac: access._tag === "Rbac",
  ...(access.user !== undefined && access.user !== "" ? { user: access.user } : {}),
  ...(access._tag === "Rbac" && access.groups.length > 0 ? { groups: access.groups } : {}),
  roles: access._tag === "Rbac" ? access.roles.map((r) => r.name) : [],
  summary: summary(access)
})

/** @category models */
export interface Report {
  readonly rbac: boolean
  readonly user?: string
  readonly groups?: ReadonlyArray<string>
  readonly roles: ReadonlyArray<string>
  readonly summary: string
}

/**
 * The user, its roles and the summary, in one line: `Weaviate user "alice" (roles: reader): read:
 * all collections; write: none; no schema changes`.
 *
 * @category summaries
 */
export const line = (access: Access | Report): string => {
  const report = "_tag" in access ? toJson(access) : access
  const who = report.user === undefined ? "Weaviate user unknown" : `Weaviate user ${JSON.stringify(report.user)}`
  return `${who}${report.rbac ? ` (roles: ${report.roles.length === 0 ? "none" : report.roles.join(", ")})` : ""}: ${report.summary}`
}
