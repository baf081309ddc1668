/**
 * `execute_query`: one statement, either a read-only GraphQL operation or one REST console line
 * (`<METHOD> <path> [body]`), at most 100 KB.
 *
 * - A console line that writes needs the `tools:write` scope and write permission on the connection,
 *   is refused before approval when the Weaviate user may not do it (RBAC, `Permissions.targetsOf`),
 *   and runs only after the approval flow says `Execute`, exactly once; the statement shown is the
 *   canonical request (dot segments resolved, see `RestConsole.parse`) with its body, and exactly
 *   that is sent.
 * - Dropping a collection (`DELETE /v1/schema/{C}`) and batch deletes by filter
 *   (`DELETE /v1/batch/objects`) are refused with `unsupported`, naming
 *   `confirm_destructive_operation`, before anyone is asked.
 * - `max_rows` cuts grids (and REST lists) with a marker; `timeout_seconds` bounds the database call
 *   and ends the request with `-33003` (docs/design.md "Decisions" 7), stopping the call.
 * - Progress is reported at 0.0 (received), 0.3 (sent to the database) and 1.0 (answered).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as InputRequired from "../../Schema/InputRequired.ts"
import { withStatementTimeout } from "../../Cancellation/Deadline.ts"
import * as GraphqlEditor from "../../Driver/GraphqlEditor.ts"
import * as RestConsole from "../../Driver/RestConsole.ts"
import { serverMessage } from "../../Driver/WeaviateHttp.ts"
import { RequestContext } from "../../Mcp/Catalogue.ts"
import * as Principal from "../../Auth/Principal.ts"
import type { Connection } from "../../Schema/Connection.ts"
import { Forbidden, RequestTimeout } from "../../Schema/McpErrors.ts"
import * as Cluster from "../../Driver/Cluster.ts"
import * as Permissions from "../../Driver/Permissions.ts"
import { approve, open, requirePermissions, type ToolEnv } from "./ConnectionGate.ts"
import { ConnectionId, intBetween, Row, Tenant } from "./Parameters.ts"
import * as TextTable from "./TextTable.ts"
import * as ToolDefinition from "./ToolDefinition.ts"
import * as ToolError from "./ToolError.ts"

/** Longest statement, in UTF-8 bytes. @category constants */
export const MAX_STATEMENT_BYTES = 100 * 1024

const REST_LINE = /^\s*(GET|HEAD|POST|PUT|PATCH|DELETE)\s+\S/i

const GridTable = Schema.Struct({
  collection: Schema.String,
  columns: Schema.Array(Schema.String),
  rows: Schema.Array(Row),
  totalRows: Schema.Number,
  truncated: Schema.Boolean
})

const Output = Schema.Struct({
  kind: Schema.Literal("graphql", "rest"),
  maxRows: Schema.Number,
  truncated: Schema.Boolean,
  tables: Schema.optional(Schema.Array(GridTable)),
  data: Schema.optional(Schema.Unknown),
  errors: Schema.optional(Schema.Array(Schema.String)),
  request: Schema.optional(Schema.Struct({ method: Schema.String, path: Schema.String })),
  status: Schema.optional(Schema.Number),
  body: Schema.optional(Schema.Unknown),
  approvedBy: Schema.optional(Schema.String)
})

const destructiveRefusal = (kind: "drop_table" | "delete_where", collection: string | undefined) =>
  ToolError.fail(
    "unsupported",
    `execute_query does not run ${kind === "drop_table" ? "collection deletion" : "batch deletes by filter"}; use ` +
      `${kind === "drop_table" ? "drop_table (or confirm_destructive_operation with operation drop_table)" : "confirm_destructive_operation with operation delete_where (or delete_all_rows)"}` +
      `${collection !== undefined ? ` with table ${JSON.stringify(collection)}` : ""}, which asks the user`
  )

const restFailure = (status: number, text: string, json: unknown) => {
  const message = `HTTP ${status}: ${serverMessage({ status, text, json })}`
  return status === 404
    ? ToolError.fail("not_found", message)
    : status === 408 || status === 504 || /deadline exceeded/i.test(message)
    ? ToolError.fail("timeout", message)
    : ToolError.fail("query_failed", message)
}

/** A list inside a REST body cut to `max` items: the body itself, or its `objects`. */
const cutBody = (json: unknown, max: number): { body: unknown; truncated: boolean; shown: number; total: number } | undefined => {
  if (Array.isArray(json)) return { body: json.slice(0, max), truncated: json.length > max, shown: Math.min(max, json.length), total: json.length }
  if (typeof json === "object" && json !== null && Array.isArray((json as { objects?: unknown }).objects)) {
    const objects = (json as { objects: Array<unknown> }).objects
    return {
      body: { ...json, objects: objects.slice(0, max) },
      truncated: objects.length > max,
      shown: Math.min(max, objects.length),
      total: objects.length
    }
  }
  return undefined
}

/**
 * A tenant-scoped token may read a multi-tenant collection only with one of its tenants named as a
 * literal; cross-collection roots (`Explore`) are refused. Collections without tenants are unaffected.
 */
const checkTenantScope = Effect.fnUntraced(function*(env: ToolEnv, connection: Connection, query: GraphqlEditor.ValidQuery) {
  const principal = yield* Principal.CurrentPrincipal
  if (!Principal.isTenantScoped(principal, connection.id)) return
  const uses = GraphqlEditor.collectionsUsed(query)
  if (uses === undefined) {
    return yield* new Forbidden({ message: "Forbidden: a tenant-scoped token cannot run a query whose fragments nest this deep" })
  }
  const collections = yield* env.driver.listCollections(connection)
  for (const use of uses) {
    if (use.root !== "Get" && use.root !== "Aggregate") {
      return yield* new Forbidden({ message: `Forbidden: a tenant-scoped token cannot run ${use.root} queries` })
    }
    const collection = collections.find((c) => c.name === use.collection)
    if (collection === undefined || !collection.multiTenancy) continue
    const allowed = Principal.allowedTenants(principal, connection.id, collection.name) ?? []
    if (typeof use.tenant !== "string" || !allowed.includes(use.tenant)) {
      return yield* new Forbidden({
        message: `Forbidden: this token may read ${collection.name} only with one of its tenants named (tenant: "…")`
      })
    }
  }
})

/** A GraphQL result as the tool's answer: grids cut to `maxRows`, anything else as JSON. */
const graphqlResult = Effect.fnUntraced(function*(result: GraphqlEditor.EditorResult, maxRows: number) {
  const errors = result.errors.map((e) => e.message)
  if (result.kind === "json") {
    if (errors.length > 0 && (result.data === null || result.data === undefined)) {
      return yield* ToolError.fail("query_failed", errors.join("; "))
    }
    const text = `${result.json}${errors.length > 0 ? `\nerrors: ${errors.join("; ")}` : ""}`
    return ToolDefinition.ok({ kind: "graphql" as const, maxRows, truncated: false, data: result.data, errors }, text, "a smaller max_rows, fewer properties in the statement, or a where filter; the next rows with the after cursor")
  }
  if (errors.length > 0 && result.tables.every((t) => t.rows.length === 0)) {
    return yield* ToolError.fail("query_failed", errors.join("; "))
  }
  const tables = result.tables.map((t) => ({
    collection: t.collection,
    columns: t.columns,
    rows: t.rows.slice(0, maxRows),
    totalRows: t.rows.length,
    truncated: t.rows.length > maxRows
  }))
  const text = tables.map((t) =>
    [
      `${t.collection}:`,
      TextTable.render(t.columns, t.rows),
      ...(t.truncated ? [TextTable.truncationMarker(t.rows.length, t.totalRows)] : [])
    ].join("\n")
  ).concat(errors.length > 0 ? [`errors: ${errors.join("; ")}`] : []).join("\n\n")
  return ToolDefinition.ok(
    { kind: "graphql" as const, maxRows, truncated: tables.some((t) => t.truncated), tables, errors },
    text,
    "a smaller max_rows, fewer properties in the statement, or a where filter; the next rows with the after cursor"
  )
})

/**
 * A statement that ran out of `timeout_seconds`: when the cluster is degraded (a node died and the
 * statement most likely waited on it), the time-out says so and names the node (one `/v1/nodes`).
 */
const namingDegradedNodes = (env: ToolEnv, connection: Connection, timeout: RequestTimeout) =>
  Effect.flatMap(Effect.option(env.driver.cluster(connection)), (status) =>
    Effect.fail(
      status._tag === "Some" && status.value.health !== "healthy"
        ? new RequestTimeout({
          message: `${timeout.message}; the cluster is ${Cluster.summary(status.value)}: the statement most likely waited on ` +
            `${Cluster.troubled(status.value).join(", ") || "a node that is down"}`
        })
        : timeout
    ))

/** @category tools */
export const executeQuery = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "execute_query",
    title: "Execute a query",
    description: "Runs one statement on a connection: a read-only GraphQL query (e.g. { Get { Article(limit: 5) " +
      "{ title } } } or an Aggregate) or one REST console line \"<METHOD> <path> [JSON body]\" (e.g. GET /v1/nodes). " +
      "Call describe_table first to learn the property names. REST writes (POST, PUT, PATCH, DELETE) need write access " +
      "and the user's approval; deleting a collection or deleting by filter is refused here: use " +
      "confirm_destructive_operation. At most 100 KB; max_rows cuts long results; timeout_seconds bounds the call.",
    input: Schema.Struct({
      connection_id: ConnectionId,
      query: Schema.String.pipe(Schema.minLength(1)).annotations({
        description: "One GraphQL query, or one REST line: METHOD /path, then an optional JSON body (same line or below)."
      }),
      max_rows: Schema.optional(intBetween(1, 10_000).annotations({ description: "Rows to return at most (default 100)." })),
      timeout_seconds: Schema.optional(intBetween(1, 330).annotations({
        description: "Give up after this many seconds (default 60); the call then ends with a time-out error."
      })),
      tenant: Schema.optional(Tenant.annotations({ description: "GraphQL only: the tenant for every collection of the query." }))
    }),
    output: Output,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    unmirrored: ["query"],
    run: Effect.fnUntraced(function*(input) {
      const context = yield* RequestContext
      yield* context.progress(0, "statement received")
      const bytes = Buffer.byteLength(input.query, "utf8")
      if (bytes > MAX_STATEMENT_BYTES) {
        return yield* ToolError.fail(
          "invalid_argument",
          `the statement is ${bytes.toLocaleString("en-US")} bytes; at most 100 KB (102,400 bytes) is accepted`
        )
      }
      const maxRows = input.max_rows ?? 100
      const bounded = withStatementTimeout(input.timeout_seconds ?? 60)

      if (!REST_LINE.test(input.query)) {
        // Parsed once: the validated document is what is sent (printed again only with a tenant).
        const query = yield* GraphqlEditor.validate(input.query)
        const connection = yield* open(env, input.connection_id, "read")
        if (InputRequired.is(connection)) return connection
        yield* checkTenantScope(env, connection, input.tenant === undefined ? query : GraphqlEditor.withTenant(query, input.tenant))
        yield* context.progress(0.3, `running the GraphQL query on ${connection.name}`)
        const result = yield* bounded(env.driver.graphql(connection, query, { tenant: input.tenant })).pipe(
          Effect.catchTag("RequestTimeout", (timeout) => namingDegradedNodes(env, connection, timeout))
        )
        yield* context.progress(1, "done")
        return yield* graphqlResult(result, maxRows)
      }

      if (input.tenant !== undefined) {
        return yield* ToolError.fail("invalid_argument", "tenant applies to GraphQL; add ?tenant=NAME to the REST path")
      }
      // Parsed once: the canonical request is what is classified, shown for approval and sent.
      const request = yield* RestConsole.parse(input.query)
      const classification = RestConsole.classify(request)
      if (classification.destructive !== undefined) {
        return yield* destructiveRefusal(classification.destructive, classification.collection)
      }
      if (classification.isWrite) {
        yield* Principal.requireScopes(yield* Principal.CurrentPrincipal, ["tools:read", "tools:write"])
      }
      const connection = yield* open(env, input.connection_id, classification.isWrite ? "write" : "read")
      if (InputRequired.is(connection)) return connection
      if (Principal.isTenantScoped(yield* Principal.CurrentPrincipal, connection.id)) {
        return yield* new Forbidden({
          message: "Forbidden: a tenant-scoped token cannot use the REST console on this connection (it reaches every " +
            "tenant); use GraphQL or the row tools with tenant"
        })
      }
      if (classification.isWrite) {
        yield* requirePermissions(env, connection, Permissions.targetsOf({ ...request, body: RestConsole.bodyJson(request) }))
      }
      const approvedBy = classification.isWrite ? yield* approve(env, connection, RestConsole.format(request)) : undefined
      if (InputRequired.is(approvedBy)) return approvedBy
      yield* context.progress(0.3, `sending ${request.method} ${request.path} to ${connection.name}`)
      const response = yield* bounded(env.driver.rest(connection, request))
      yield* context.progress(1, "done")
      if (!response.ok) return yield* restFailure(response.status, response.text, response.json)
      const cut = response.json === undefined ? undefined : cutBody(response.json, maxRows)
      const body = cut?.body ?? response.json ?? response.text
      const truncated = cut?.truncated ?? false
      const text = [
        `${request.method} ${request.path} → HTTP ${response.status}`,
        typeof body === "string" ? body : JSON.stringify(body, null, 2),
        ...(truncated && cut !== undefined ? [TextTable.truncationMarker(cut.shown, cut.total)] : [])
      ].join("\n")
      return ToolDefinition.ok({
        kind: "rest" as const,
        maxRows,
        truncated,
        request: { method: request.method, path: request.path },
        status: response.status,
        body,
        ...(approvedBy !== undefined ? { approvedBy } : {})
      }, text, "a smaller max_rows, or a narrower request (limit, a where filter, one object)")
    })
  })
