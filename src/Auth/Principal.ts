/**
 * Who is calling: a token principal (from `tokens.json` or the handshake file's bridge token) or the
 * anonymous loopback principal (`serve --auth off`). The MCP core authenticates every request and
 * provides the result as `CurrentPrincipal` to every handler.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Forbidden } from "../Schema/McpErrors.ts"
import {
  type AccessLevel,
  type AiPolicy,
  defaultScopes,
  type EffectivePermission,
  effectivePermission,
  type Scope
} from "../Schema/Policy.ts"

// ===== Models =====

/**
 * The tenants a tenant-scoped token may use: by connection id, then by collection, the tenant names.
 * A connection listed here restricts every multi-tenant collection of it to the tenants listed for
 * it (none when the collection is not listed); collections without tenants are unaffected.
 *
 * @category models
 */
export type TenantMap = Readonly<Record<string, Readonly<Record<string, ReadonlyArray<string>>>>>

/**
 * A caller identified by a bearer token. `connections` is the allowlist (`none` = every connection);
 * `tenants` restricts multi-tenant collections (absent = every tenant); `expiresAt` is in epoch
 * milliseconds (`none` = never).
 *
 * @category models
 */
export class TokenPrincipal extends Data.TaggedClass("TokenPrincipal")<{
  readonly id: string
  readonly name: string
  readonly access: AccessLevel
  readonly scopes: ReadonlyArray<Scope>
  readonly connections: Option.Option<ReadonlyArray<string>>
  readonly expiresAt: Option.Option<number>
  /** `store` for tokens from `tokens.json`, `bridge` for the handshake file's rotating token. */
  readonly source: "store" | "bridge"
  readonly tenants?: TenantMap | undefined
}> {}

/**
 * The caller when authentication is off: loopback only, readWrite scopes, every connection, and every
 * write confirmed on the user's machine.
 *
 * @category models
 */
export class AnonymousPrincipal extends Data.TaggedClass("AnonymousPrincipal")<{}> {
  readonly id = "anonymous"
  readonly name = "anonymous"
  readonly access: AccessLevel = "readWrite"
  readonly scopes: ReadonlyArray<Scope> = defaultScopes.readWrite
  readonly connections: Option.Option<ReadonlyArray<string>> = Option.none()
  readonly expiresAt: Option.Option<number> = Option.none()
}

/** @category models */
export type Principal = TokenPrincipal | AnonymousPrincipal

/**
 * Whether the principal's token is tenant-scoped on a connection (its multi-tenant collections are
 * limited to listed tenants there).
 *
 * @category predicates
 */
export const isTenantScoped = (principal: Principal, connectionId: string): boolean =>
  principal._tag === "TokenPrincipal" && principal.tenants?.[connectionId] !== undefined

/**
 * The tenants a principal may use on a connection's collection: `undefined` when it is not
 * restricted there, else the allowed tenant names (possibly none).
 *
 * @category combinators
 */
export const allowedTenants = (principal: Principal, connectionId: string, collection: string): ReadonlyArray<string> | undefined => {
  const tenants = principal._tag === "TokenPrincipal" ? principal.tenants : undefined
  const onConnection = tenants?.[connectionId]
  return onConnection === undefined ? undefined : onConnection[collection] ?? []
}

/** @category constructors */
export const anonymous: AnonymousPrincipal = new AnonymousPrincipal()

/**
 * The principal of the request being handled; the MCP core provides it to every handler.
 *
 * @category context
 */
export class CurrentPrincipal extends Context.Tag("weaviate-mcp/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

/** The fields of a connection that decide what a principal may do with it. @category models */
export interface ConnectionAccess {
  readonly id: string
  readonly aiPolicy: AiPolicy
}

// ===== Scopes =====

/**
 * The scopes each MCP method needs before its own checks (the contract's methods table); a tool call
 * also needs the tool's own scope. Methods not listed need none.
 *
 * @category constants
 */
export const methodScopes: Readonly<Record<string, ReadonlyArray<Scope>>> = {
  "tools/list": ["tools:read"],
  "tools/call": ["tools:read"],
  "resources/list": ["resources:read"],
  "resources/read": ["resources:read"],
  "resources/templates/list": ["resources:read"],
  "prompts/list": ["resources:read"],
  "prompts/get": ["resources:read"],
  "completion/complete": ["resources:read"]
}

/** @category combinators */
export const scopesForMethod = (method: string): ReadonlyArray<Scope> => methodScopes[method] ?? []

/** The scopes of `required` the principal lacks. @category combinators */
export const missingScopes = (principal: Principal, required: Iterable<Scope>): ReadonlyArray<Scope> => {
  const missing: Array<Scope> = []
  for (const scope of required) {
    if (!principal.scopes.includes(scope) && !missing.includes(scope)) missing.push(scope)
  }
  return missing
}

/** @category predicates */
export const hasScopes = (principal: Principal, required: Iterable<Scope>): boolean =>
  missingScopes(principal, required).length === 0

const dedupe = <A>(items: Iterable<A>): ReadonlyArray<A> => Array.from(new Set(items))

/**
 * The 403 of a failed scope check. `requiredScopes` and the challenge's `scope` list every scope the
 * operation needs (RFC 6750 §3), not only the missing ones.
 *
 * @category errors
 */
export const insufficientScope = (required: Iterable<Scope>): Forbidden => {
  const requiredScopes = dedupe(required)
  return new Forbidden({
    message: `Insufficient scope: requires ${requiredScopes.join(" ")}`,
    data: { requiredScopes },
    headers: { "www-authenticate": `Bearer error="insufficient_scope", scope="${requiredScopes.join(" ")}"` }
  })
}

/** Fails with `Forbidden` (-33007, 403, `insufficient_scope`) unless the principal has every scope. @category combinators */
export const requireScopes = (principal: Principal, required: Iterable<Scope>): Effect.Effect<void, Forbidden> => {
  const all = dedupe(required)
  return hasScopes(principal, all) ? Effect.void : Effect.fail(insufficientScope(all))
}

// ===== Connections =====

const allowlisted = (principal: Principal, connectionId: string): boolean =>
  Option.match(principal.connections, { onNone: () => true, onSome: (ids) => ids.includes(connectionId) })

/**
 * What the principal may do on a connection: `none` outside its allowlist or on a blocked connection,
 * else the lower of the token's access level and the connection's AI policy.
 *
 * @category combinators
 */
export const permissionOn = (principal: Principal, connection: ConnectionAccess): EffectivePermission =>
  allowlisted(principal, connection.id) ? effectivePermission(principal.access, connection.aiPolicy) : "none"

/** Whether the connection exists for this principal at all (`list_connections`, `resources/list`). @category predicates */
export const canSeeConnection = (principal: Principal, connection: ConnectionAccess): boolean =>
  permissionOn(principal, connection) !== "none"

/**
 * Fails with `Forbidden` (-33007) unless the principal may `read` (or `write`) on the connection.
 *
 * @category combinators
 */
export const requireConnection = (
  principal: Principal,
  connection: ConnectionAccess,
  needed: "read" | "write"
): Effect.Effect<void, Forbidden> => {
  const permission = permissionOn(principal, connection)
  if (permission === "write" || (permission === "read" && needed === "read")) return Effect.void
  const reason = !allowlisted(principal, connection.id)
    ? "not in the token's connection allowlist"
    : connection.aiPolicy === "blocked"
    ? "blocked for AI clients"
    : "read-only for this principal"
  return Effect.fail(
    new Forbidden({
      message: `Connection ${connection.id} is ${reason}`,
      data: { connectionId: connection.id, permission, required: needed }
    })
  )
}

/**
 * The principal as first access sees it: a stored token's explicit allowlist is the user's consent
 * to those connections, given when they created the token (`tokens create --connections`).
 *
 * @category conversions
 */
export const toFirstAccessPrincipal = (principal: Principal) => ({
  id: principal.id,
  name: principal.name,
  granted: principal._tag === "TokenPrincipal" && principal.source === "store" ? Option.getOrUndefined(principal.connections) : undefined
})

/** @category predicates */
export const isAnonymous = (principal: Principal): principal is AnonymousPrincipal => principal._tag === "AnonymousPrincipal"

/** The fields the approval flow and the activity log need (`src/Approval/ApprovalFlow.ts` `Principal`). @category conversions */
export const toApprovalPrincipal = (principal: Principal) => ({
  id: principal.id,
  name: principal.name,
  accessLevel: principal.access,
  anonymous: isAnonymous(principal)
})

/** Whether an accepted `input_required` form may replace the local dialog. @category predicates */
export const isFullAccess = (principal: Principal): boolean => principal.access === "fullAccess"
