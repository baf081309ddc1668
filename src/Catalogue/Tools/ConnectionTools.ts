/**
 * `list_connections` and `get_connection_status`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as InputRequired from "../../Schema/InputRequired.ts"
import * as Principal from "../../Auth/Principal.ts"
import { type ToolEnv, open } from "./ConnectionGate.ts"
import { ConnectionId } from "./Parameters.ts"
import * as TextTable from "./TextTable.ts"
import * as ToolDefinition from "./ToolDefinition.ts"

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
    run: () =>
      Effect.gen(function*() {
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
    description: "Checks a connection's health through GET /v1/meta: Weaviate version, enabled modules (vectorizers) " +
      "and round-trip latency. Fails with not_connected when the database cannot be reached or rejects the key.",
    input: Schema.Struct({ connection_id: ConnectionId }),
    output: Schema.Struct({
      connection_id: Schema.String,
      name: Schema.String,
      url: Schema.String,
      connected: Schema.Boolean,
      version: Schema.String,
      modules: Schema.Array(Schema.String),
      latencyMs: Schema.Number
    }),
    annotations: READ,
    run: (input) =>
      Effect.gen(function*() {
        const connection = yield* open(env, input.connection_id, "read")
        if (InputRequired.is(connection)) return connection
        const health = yield* env.driver.health(connection)
        const result = {
          connection_id: connection.id,
          name: connection.name,
          url: connection.baseUrl,
          connected: true,
          version: health.version,
          modules: health.modules,
          latencyMs: health.latencyMs
        }
        return ToolDefinition.ok(
          result,
          `${connection.name} (${connection.baseUrl}) is connected: Weaviate ${health.version}, ` +
            `modules: ${health.modules.length === 0 ? "none" : health.modules.join(", ")}, latency ${health.latencyMs} ms`
        )
      })
  })
