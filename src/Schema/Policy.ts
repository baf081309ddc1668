/**
 * The policy vocabulary shared by principals, connections and approvals.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** A token's access level. @category schemas */
export const AccessLevel = Schema.Literal("readOnly", "readWrite", "fullAccess")
export type AccessLevel = typeof AccessLevel.Type

/** Token scopes. @category schemas */
export const Scope = Schema.Literal("tools:read", "tools:write", "resources:read", "history:read", "admin")
export type Scope = typeof Scope.Type

/** Default scopes of each access level. @category constants */
export const defaultScopes: Record<AccessLevel, ReadonlyArray<Scope>> = {
  readOnly: ["tools:read", "resources:read", "history:read"],
  readWrite: ["tools:read", "resources:read", "history:read", "tools:write"],
  fullAccess: ["tools:read", "resources:read", "history:read", "tools:write", "admin"]
}

/** Per-connection Safe Mode: how writes are confirmed. @category schemas */
export const SafeMode = Schema.Literal("silent", "confirm", "readOnly")
export type SafeMode = typeof SafeMode.Type

/** Per-connection AI policy: what AI clients may do with the connection. @category schemas */
export const AiPolicy = Schema.Literal("blocked", "readOnly", "readWrite")
export type AiPolicy = typeof AiPolicy.Type

/** What a principal may do on a connection: the lower of the token's and the connection's. @category models */
export type EffectivePermission = "none" | "read" | "write"

/** @category combinators */
export const effectivePermission = (access: AccessLevel, policy: AiPolicy): EffectivePermission => {
  if (policy === "blocked") return "none"
  if (policy === "readOnly" || access === "readOnly") return "read"
  return "write"
}
