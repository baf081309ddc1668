/**
 * `confirm_destructive_operation`: drop a collection, delete all its rows, or delete the rows that
 * match filters. Only a `fullAccess` token may call it (otherwise `-33007`, like a missing scope),
 * `confirm` must repeat the table name exactly, and the user is asked on their machine every time,
 * even after the client's form was accepted (the approval flow's destructive rule).
 *
 * Deletes go through `DELETE /v1/batch/objects`; Weaviate deletes at most `QUERY_MAXIMUM_RESULTS`
 * objects per call, so the same approved statement is repeated until a call deletes fewer than the
 * limit (bounded), and the total is reported.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as InputRequired from "../../Schema/InputRequired.ts"
import * as RowEdits from "../../Driver/RowEdits.ts"
import { Forbidden } from "../../Schema/McpErrors.ts"
import * as Principal from "../../Auth/Principal.ts"
import * as Permissions from "../../Driver/Permissions.ts"
import { approve, open, requirePermissions, type ToolEnv } from "./ConnectionGate.ts"
import { ConnectionId, Filters, Table, Tenant, toDriverFilters } from "./Parameters.ts"
import { rowsAtStake } from "./StructureTools.ts"
import * as TextTable from "./TextTable.ts"
import * as ToolDefinition from "./ToolDefinition.ts"
import * as ToolError from "./ToolError.ts"

const Operation = Schema.Literal("drop_table", "delete_all_rows", "delete_where")

/** @category tools */
export const confirmDestructiveOperation = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "confirm_destructive_operation",
    title: "Destructive operation (asks the user)",
    description: "Drops a collection (drop_table), deletes all its rows (delete_all_rows) or the rows matching filters " +
      "(delete_where). Needs a fullAccess token; confirm must repeat the table name exactly; the user is asked on their " +
      "machine every time and may refuse. This cannot be undone.",
    input: Schema.Struct({
      connection_id: ConnectionId,
      operation: Operation.annotations({ description: "drop_table, delete_all_rows or delete_where." }),
      table: Table,
      filters: Schema.optional(Filters.annotations({ description: "delete_where only: the rows to delete (at least one filter)." })),
      confirm: Schema.String.annotations({ description: "The table name typed again, exactly, to show intent." }),
      tenant: Schema.optional(Tenant)
    }),
    output: Schema.Struct({
      operation: Operation,
      table: Schema.String,
      dropped: Schema.optional(Schema.Boolean),
      deleted: Schema.optional(Schema.Number),
      approvedBy: Schema.String
    }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    // `admin` comes only with fullAccess, so `tools/list` shows the tool to the tokens that may call it.
    scopes: ["tools:write", "admin"],
    run: Effect.fnUntraced(function*(input) {
      if (input.confirm !== input.table) {
        return yield* ToolError.fail("invalid_argument", `confirm must repeat the table name exactly: ${JSON.stringify(input.table)}`)
      }
      const filters = toDriverFilters(input.filters)
      if (input.operation === "delete_where" && filters.length === 0) {
        return yield* ToolError.fail("invalid_argument", "delete_where needs at least one filter (delete_all_rows deletes every row)")
      }
      if (input.operation !== "delete_where" && filters.length > 0) {
        return yield* ToolError.fail("invalid_argument", `${input.operation} takes no filters; use delete_where`)
      }
      const principal = yield* Principal.CurrentPrincipal
      if (!Principal.isFullAccess(principal) || Principal.isAnonymous(principal)) {
        return yield* new Forbidden({
          message: "confirm_destructive_operation requires a fullAccess token",
          data: { required: "fullAccess", access: principal.access }
        })
      }
      const connection = yield* open(env, input.connection_id, "write")
      if (InputRequired.is(connection)) return connection
      // Dropping a collection drops every tenant; the row deletions are per tenant, checked first.
      const { collection, request } = yield* env.driver.planDestructive(
        connection,
        input.table,
        input.operation === "drop_table"
          ? { _tag: "drop" }
          : input.operation === "delete_all_rows"
          ? { _tag: "deleteAll", tenant: input.tenant }
          : { _tag: "deleteWhere", filters, tenant: input.tenant }
      )
      if (input.operation === "drop_table" && collection.multiTenancy && Principal.allowedTenants(principal, connection.id, collection.name) !== undefined) {
        return yield* new Forbidden({ message: `Forbidden: a tenant-scoped token cannot drop ${collection.name}, which holds every tenant's rows` })
      }
      // A drop needs delete_collections, a deletion delete_data (on its tenant): refused before the user is asked.
      yield* requirePermissions(env, connection, Permissions.targetsOf(request))
      // The user approves exactly the request that is sent; a drop says first how many rows it loses.
      const lost = input.operation === "drop_table" ? [...(yield* rowsAtStake(env, connection, collection)).lines, ""] : []
      const approvedBy = yield* approve(env, connection, [...lost, RowEdits.format(request)].join("\n"), { destructive: true })
      if (InputRequired.is(approvedBy)) return approvedBy
      const deleted = yield* env.driver.sendDestructive(connection, request)
      if (input.operation === "drop_table") {
        return ToolDefinition.ok(
          { operation: input.operation, table: collection.name, dropped: true, approvedBy },
          `Dropped the collection ${collection.name} and all its rows.`
        )
      }
      return ToolDefinition.ok(
        { operation: input.operation, table: collection.name, deleted, approvedBy },
        `Deleted ${TextTable.count(deleted, "row")} from ${collection.name}${input.operation === "delete_where" ? " matching the filters" : ""}.`
      )
    })
  })
