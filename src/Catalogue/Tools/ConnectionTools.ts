/**
 * `list_connections` and `get_connection_status`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as InputRequired from "../../Schema/InputRequired.ts"
import * as Principal from "../../Auth/Principal.ts"
import * as Cluster from "../../Driver/Cluster.ts"
import * as OidcSignIn from "../../Driver/OidcSignIn.ts"
import * as Permissions from "../../Driver/Permissions.ts"
import { open, permissionsOf, type ToolEnv } from "./ConnectionGate.ts"
import { ConnectionId } from "./Parameters.ts"
import * as TextTable from "./TextTable.ts"
import * as ToolDefinition from "./ToolDefinition.ts"

const ClusterNode = Schema.Struct({
  name: Schema.String,
  status: Schema.String,
  version: Schema.optional(Schema.String),
  shardCount: Schema.optional(Schema.Number),
  objectCount: Schema.optional(Schema.Number)
})

/** What the connection's Weaviate user may do, as get_connection_status reports it. @category models */
export const PermissionsField = Schema.Struct({
  rbac: Schema.Boolean.annotations({ description: "Whether Weaviate restricts this user by role (RBAC); false: Weaviate does not say, nothing is checked beforehand." }),
  user: Schema.optional(Schema.String.annotations({ description: "The Weaviate user behind the connection's key." })),
  groups: Schema.optional(Schema.Array(Schema.String)),
  roles: Schema.Array(Schema.String),
  summary: Schema.String.annotations({ description: "What the user may do, e.g. \"read: all collections; write: Article, Ticket; no schema changes\"." })
})

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const

const ConnectionSummary = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  url: Schema.String,
  permission: Schema.Literal("read", "write"),
  aiPolicy: Schema.Literal("readOnly", "readWrite"),
  safeMode: Schema.Literal("silent", "confirm", "readOnly"),
  connected: Schema.Boolean
})

/** @category tools */
export const listConnections = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "list_connections",
    title: "List connections",
    description: "Lists the saved Weaviate connections this token may use, with the permission it has on each " +
      "(read or write) and the connection's Safe Mode. Start here: every other tool takes a connection_id from this list.",
    // Effect renders an empty struct as "any non-nullish value"; a tool's input is an object.
    input: Schema.Struct({}).annotations({ jsonSchema: { type: "object", properties: {}, additionalProperties: false } }),
    output: Schema.Struct({ connections: Schema.Array(ConnectionSummary) }),
    annotations: READ,
    run: Effect.fnUntraced(function*() {
      const principal = yield* Principal.CurrentPrincipal
      const all = yield* env.store.list
      const connections = yield* Effect.forEach(
        all.filter((c) => Principal.canSeeConnection(principal, c)),
        (c) =>
          Effect.map(env.driver.isConnected(c.id), (connected) => ({
            id: c.id,
            name: c.name,
            url: c.baseUrl,
            permission: Principal.permissionOn(principal, c) as "read" | "write",
            aiPolicy: c.aiPolicy as "readOnly" | "readWrite",
            safeMode: c.safeMode,
            connected
          }))
      )
      const text = connections.length === 0
        ? "No connections are available to this token."
        : TextTable.render(["id", "name", "url", "permission", "safeMode", "connected"], connections)
      return ToolDefinition.ok({ connections }, text)
    })
  })

/** @category tools */
export const getConnectionStatus = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "get_connection_status",
    title: "Connection status",
    description: "Checks a connection's health through GET /v1/meta (Weaviate version, enabled modules, round-trip latency) " +
      "and its cluster through GET /v1/nodes: every node with its status and version, and the cluster's health: healthy, " +
      "degraded (a node unhealthy, or missing against the Raft members or the shard placement, named in the text) or " +
      "unavailable. include_shards adds each node's shard and object counts. It also names the Weaviate user behind the " +
      "connection, its roles and what they allow (RBAC), or says that Weaviate does not restrict it by role. Fails with " +
      "not_connected when the database cannot be reached or rejects the key.",
    input: Schema.Struct({
      connection_id: ConnectionId,
      include_shards: Schema.optional(Schema.Boolean.annotations({
        description: "Also report each node's shards and object counts (GET /v1/nodes?output=verbose); default false"
      }))
    }),
    output: Schema.Struct({
      connection_id: Schema.String,
      name: Schema.String,
      url: Schema.String,
      connected: Schema.Boolean,
      version: Schema.String,
      modules: Schema.Array(Schema.String),
      latencyMs: Schema.Number,
      cluster: Schema.Struct({
        health: Schema.Literal("healthy", "degraded", "unavailable"),
        summary: Schema.String,
        nodes: Schema.Array(ClusterNode),
        problems: Schema.Array(Schema.Struct({ node: Schema.String, reason: Schema.Literal("unhealthy", "missing"), detail: Schema.String })),
        members: Schema.optional(Schema.Array(Schema.String))
      }),
      permissions: Schema.optional(PermissionsField),
      signIn: Schema.optional(Schema.Struct({
        method: Schema.Literal("oidcClientCredentials", "oidcPassword", "oidcToken"),
        subject: Schema.String,
        issuer: Schema.String,
        clientId: Schema.String,
        expiresAt: Schema.NullOr(Schema.String),
        renewable: Schema.Boolean
      }).annotations({ description: "Under OIDC: who the connection signs in as and when its token expires (never the token)" }))
    }),
    annotations: READ,
    run: Effect.fnUntraced(function*(input) {
      const connection = yield* open(env, input.connection_id, "read")
      if (InputRequired.is(connection)) return connection
      // The health check first: its own time-out answers for a database that does not answer at all.
      const health = yield* env.driver.health(connection)
      const [cluster, access] = yield* Effect.all([
        // A user without `read_nodes` (RBAC) still gets the rest of the status.
        Cluster.unknownWhenDenied(env.driver.cluster(connection, { verbose: input.include_shards === true })),
        // Permissions that cannot be read now are left out, not guessed.
        Effect.option(Effect.map(permissionsOf(env, connection), (read) => read.value))
      ], { concurrency: 2 })
      const signedIn = (yield* env.driver.http(connection)).identity()
      const result = {
        connection_id: connection.id,
        name: connection.name,
        url: connection.baseUrl,
        connected: true,
        version: health.version,
        modules: health.modules,
        latencyMs: health.latencyMs,
        cluster: {
          health: cluster.health,
          summary: Cluster.summary(cluster),
          nodes: cluster.nodes.map((n) => ({
            name: n.name,
            status: n.status,
            ...(n.version !== undefined ? { version: n.version } : {}),
            ...(n.shardCount !== undefined ? { shardCount: n.shardCount } : {}),
            ...(n.objectCount !== undefined ? { objectCount: n.objectCount } : {})
          })),
          problems: cluster.problems,
          ...(cluster.members !== undefined ? { members: cluster.members } : {})
        },
        ...(access._tag === "Some" ? { permissions: Permissions.toJson(access.value) } : {}),
        ...(signedIn !== undefined ? { signIn: OidcSignIn.signInJson(signedIn) } : {})
      }
      const nodeRows = result.cluster.nodes.map((n) => ({
        node: n.name,
        status: n.status,
        version: n.version ?? "",
        ...(input.include_shards === true ? { shards: String(n.shardCount ?? ""), objects: String(n.objectCount ?? "") } : {})
      }))
      return ToolDefinition.ok(
        result,
        `${connection.name} (${connection.baseUrl}) is connected: Weaviate ${health.version}, ` +
          `modules: ${health.modules.length === 0 ? "none" : health.modules.join(", ")}, latency ${health.latencyMs} ms\n` +
          (signedIn !== undefined ? `${OidcSignIn.signInLine(signedIn)}\n` : "") +
          `cluster ${result.cluster.summary}\n` +
          (access._tag === "Some" ? `permissions: ${Permissions.line(access.value)}\n` : "") +
          (nodeRows.length === 0
            ? ""
            : TextTable.render(input.include_shards === true ? ["node", "status", "version", "shards", "objects"] : ["node", "status", "version"], nodeRows))
      )
    })
  })
