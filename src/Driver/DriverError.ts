/**
 * The driver's errors. Each one's `message` is what a person reads; the two the contract gives a
 * prefix start with it (`Authentication failed: `, `Connection failed: `). No message ever holds an
 * API key: server texts pass through `Redaction.global` (which knows every key the driver resolved)
 * before they are put into an error.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The key was rejected, or the node wants a key while Auth Method is `None`.
 *
 * @category errors
 */
export class AuthenticationFailed extends Schema.TaggedError<AuthenticationFailed>()("AuthenticationFailed", {
  reason: Schema.String,
  status: Schema.optional(Schema.Number)
}) {
  override get message() {
    return `Authentication failed: ${this.reason}`
  }
}

/**
 * The database user behind the connection may not do this: its Weaviate roles (RBAC) do not allow
 * it. Raised before anything is sent when the permissions read from `GET /v1/users/own-info` say so
 * (`Permissions.check`), and for Weaviate's own 403 (the permissions changed since they were read),
 * with the same words. Not an authentication failure: the key was accepted.
 *
 * @category errors
 */
export class PermissionDenied extends Schema.TaggedError<PermissionDenied>()("PermissionDenied", {
  /** The Weaviate user (`username` of own-info, or as Weaviate's 403 names it), when known. */
  user: Schema.optional(Schema.String),
  /** The Weaviate action, e.g. `create_data`, when known. */
  action: Schema.optional(Schema.String),
  collection: Schema.optional(Schema.String),
  tenant: Schema.optional(Schema.String),
  /** Weaviate's own message, for a 403 whose action or collection could not be read from it. */
  detail: Schema.optional(Schema.String)
}) {
  /**
   * Weaviate's 403 (`rbac: authorization, forbidden action: user 'alice' has insufficient permissions
   * to create_data [[Domain: data, Collection: Article, Tenant: *, Object: *]]`) read into its parts;
   * what cannot be read stays in `detail`.
   */
  static fromWeaviate(detail: string): PermissionDenied {
    const user = /user '([^']*)'/.exec(detail)?.[1]
    const forbidden = /insufficient permissions to ([a-z]+_[a-z_]+) \[(.*)\]/.exec(detail)
    const collection = forbidden === null ? undefined : /Collection: ([^,\]]+)/.exec(forbidden[2]!)?.[1]?.trim()
    const tenant = forbidden === null ? undefined : /Tenant: ([^,\]]+)/.exec(forbidden[2]!)?.[1]?.trim()
    const named = collection !== undefined && collection !== "*"
    return new PermissionDenied({
      ...(user !== undefined ? { user } : {}),
      ...(forbidden !== null ? { action: forbidden[1]! } : {}),
      ...(named ? { collection, ...(tenant !== undefined ? { tenant } : {}) } : { detail })
    })
  }

  override get message() {
    const who = this.user === undefined ? "the Weaviate user of this connection" : `the Weaviate user ${JSON.stringify(this.user)}`
    if (this.action === undefined) return `${who} is not allowed to do this${this.detail === undefined ? "" : ` (HTTP 403: ${this.detail})`}`
    // An action on no collection (read_nodes, read_cluster, read_roles): Weaviate's own name for it.
    if (this.collection === undefined) return `${who} has no permission to ${this.action.replace(/_/g, " ")} (${this.action})`
    const tenant = this.tenant === undefined || this.tenant === "*" ? "" : ` (tenant ${JSON.stringify(this.tenant)})`
    return `${who} has no permission to ${actionPhrase(this.action, this.collection)}${tenant}`
  }
}

/** "create data in "Article"", "delete the collection "Article"", … */
const actionPhrase = (action: string, collection: string): string => {
  const at = action.indexOf("_")
  const verb = at < 0 ? action : action.slice(0, at)
  const domain = at < 0 ? "" : action.slice(at + 1)
  const name = JSON.stringify(collection)
  switch (domain) {
    case "data":
      return `${verb} data in ${name}`
    case "collections":
      return `${verb === "update" ? "change" : verb} the collection ${name}`
    case "tenants":
      return `${verb} tenants in ${name}`
    default:
      return domain === "" ? `${verb} (${name})` : `${verb} ${domain.replace(/_/g, " ")} of ${name}`
  }
}

/**
 * TLS or network failure (refused, reset, timed out, certificate not trusted, wrong protocol).
 *
 * @category errors
 */
export class ConnectionFailed extends Schema.TaggedError<ConnectionFailed>()("ConnectionFailed", {
  reason: Schema.String,
  /** The system error code when there is one (`ECONNREFUSED`, `DEPTH_ZERO_SELF_SIGNED_CERT`, ...). */
  code: Schema.optional(Schema.String)
}) {
  override get message() {
    return `Connection failed: ${this.reason}`
  }
}

/**
 * The database answered and refused the request (its own message is passed on), e.g. offset plus
 * limit beyond `QUERY_MAXIMUM_RESULTS`, a validation error, a GraphQL error without data.
 *
 * @category errors
 */
export class DatabaseRefused extends Schema.TaggedError<DatabaseRefused>()("DatabaseRefused", {
  status: Schema.Number,
  detail: Schema.String
}) {
  override get message() {
    return `The database refused the request (HTTP ${this.status}): ${this.detail}`
  }
}

/**
 * A filter (or a sort) that the database cannot run; refused before any request is sent.
 *
 * @category errors
 */
export class FilterRefused extends Schema.TaggedError<FilterRefused>()("FilterRefused", {
  filter: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `Filter refused (${this.filter}): ${this.reason}`
  }
}

/**
 * A statement refused before sending: a GraphQL mutation or subscription, more than one operation,
 * a syntax error, or a REST console line that is not `<METHOD> <path> [body]`.
 *
 * @category errors
 */
export class StatementRefused extends Schema.TaggedError<StatementRefused>()("StatementRefused", {
  reason: Schema.String
}) {
  override get message() {
    return `Statement refused: ${this.reason}`
  }
}

/**
 * A collection (or a column of it) that the schema does not have.
 *
 * @category errors
 */
export class CollectionNotFound extends Schema.TaggedError<CollectionNotFound>()("CollectionNotFound", {
  collection: Schema.String
}) {
  override get message() {
    return `Collection not found: ${this.collection}`
  }
}

/**
 * The database answered with something that is not what its API promises.
 *
 * @category errors
 */
export class UnexpectedResponse extends Schema.TaggedError<UnexpectedResponse>()("UnexpectedResponse", {
  detail: Schema.String
}) {
  override get message() {
    return `Unexpected response from the database: ${this.detail}`
  }
}

/**
 * Weaviate could not reach as many replicas as the consistency level asks (`cannot achieve
 * consistency level`, `cannot reach enough replicas`). `nodes` are the nodes the cluster's status
 * named as unhealthy or missing when this happened. A write may have been applied on the replicas
 * that answered: Weaviate does not roll it back.
 *
 * @category errors
 */
export class ConsistencyNotReached extends Schema.TaggedError<ConsistencyNotReached>()("ConsistencyNotReached", {
  level: Schema.String,
  write: Schema.Boolean,
  nodes: Schema.Array(Schema.String),
  detail: Schema.String
}) {
  override get message() {
    const who = this.nodes.length === 0 ? "a replica did not answer" : `${this.nodes.join(", ")} did not answer (the cluster is degraded)`
    const what = this.write
      ? `Write at consistency level ${this.level} failed: ${who}. Weaviate may have applied the write on the nodes that were up; ` +
        "it is not rolled back, so read the row before retrying (a retry at QUORUM may succeed)"
      : `Read at consistency level ${this.level} failed: ${who}; a read at ONE or QUORUM may succeed`
    return `${what}. Weaviate: ${this.detail}`
  }
}

/**
 * A request failed (no answer in time, or the connection closed) while the cluster is degraded: a
 * node died and the request waited on it. `reason` is the request's own failure.
 *
 * @category errors
 */
export class ClusterDegraded extends Schema.TaggedError<ClusterDegraded>()("ClusterDegraded", {
  nodes: Schema.Array(Schema.String),
  status: Schema.String,
  reason: Schema.String,
  code: Schema.optional(Schema.String)
}) {
  override get message() {
    return `The cluster is degraded (${this.status}): the request failed, most likely waiting on ${this.nodes.join(", ")}: ` +
      `${this.reason}. Until Weaviate notices the node is down (about 20 s), requests that need it wait; retry then, or read at ONE or QUORUM`
  }
}

/** Every error a call to the database can end with. @category errors */
export type RequestError = AuthenticationFailed | PermissionDenied | ConnectionFailed | DatabaseRefused | UnexpectedResponse | ConsistencyNotReached | ClusterDegraded

/**
 * A tenant that cannot be used: none given for a multi-tenant collection (the message lists at most
 * 20 of the tenants the caller may see), one given for a collection without tenants, one that does
 * not exist, or one that is not active (its state named).
 *
 * @category errors
 */
export class TenantRefused extends Schema.TaggedError<TenantRefused>()("TenantRefused", {
  collection: Schema.String,
  reason: Schema.Literal("required", "not_multi_tenant", "not_found", "not_active"),
  tenant: Schema.optional(Schema.String),
  /** `required`: the tenants the caller may use, sorted (the message shows the first 20). */
  tenants: Schema.optional(Schema.Array(Schema.String)),
  /** `not_active`: the tenant's activity status. */
  status: Schema.optional(Schema.String)
}) {
  override get message() {
    switch (this.reason) {
      case "required": {
        const tenants = this.tenants ?? []
        const shown = tenants.slice(0, MAX_TENANTS_SHOWN)
        const list = tenants.length === 0 ? "none yet" : `${shown.join(", ")}${tenants.length > shown.length ? " …" : ""}`
        return `${this.collection} is multi-tenant; pass tenant (tenants: ${list})`
      }
      case "not_multi_tenant":
        return this.tenant === undefined
          ? `${this.collection} is not multi-tenant: it has no tenants`
          : `${this.collection} is not multi-tenant; leave tenant out`
      case "not_found":
        return `${this.collection} has no tenant ${JSON.stringify(this.tenant ?? "")} (list_tenants shows them)`
      case "not_active":
        return `tenant ${JSON.stringify(this.tenant ?? "")} of ${this.collection} is ${this.status ?? "not active"}, not active: ` +
          "activate it with set_tenant_status (status ACTIVE) or weaviate-mcp tenants activate before reading or writing its rows"
    }
  }
}

/** How many tenant names a `required` refusal shows. @category constants */
export const MAX_TENANTS_SHOWN = 20

/**
 * A tenant the caller's token does not cover (a tenant-scoped token); the endpoint answers -33007.
 *
 * @category errors
 */
export class TenantForbidden extends Schema.TaggedError<TenantForbidden>()("TenantForbidden", {
  collection: Schema.String,
  tenant: Schema.String
}) {
  override get message() {
    return `Forbidden: this token may not use tenant ${JSON.stringify(this.tenant)} of ${this.collection}`
  }
}
