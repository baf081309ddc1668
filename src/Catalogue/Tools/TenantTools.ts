/**
 * `list_tenants`: the tenants of a multi-tenant collection with their activity status, 100 per page
 * in name order. The cursor names the last tenant of the page, so tenants added or removed between
 * pages neither repeat nor shift the rest. A tenant-scoped token sees only its own tenants.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as InputRequired from "../../Schema/InputRequired.ts"
import { ACTIVE_STATUSES } from "../../Driver/Tenants.ts"
import { open, type ToolEnv } from "./ConnectionGate.ts"
import { ConnectionId, Table } from "./Parameters.ts"
import * as TextTable from "./TextTable.ts"
import * as ToolDefinition from "./ToolDefinition.ts"
import * as ToolError from "./ToolError.ts"

/** Tenants per page. @category constants */
export const PAGE_SIZE = 100

const encodeCursor = (after: string) => Buffer.from(JSON.stringify({ after }), "utf8").toString("base64url")

const decodeCursor = (cursor: string): string | undefined => {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { after?: unknown }
    return typeof value.after === "string" ? value.after : undefined
  } catch {
    return undefined
  }
}

/** @category tools */
export const listTenants = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "list_tenants",
    title: "List tenants",
    description: "Lists the tenants of a multi-tenant collection with their activity status (HOT/ACTIVE can be read " +
      "and written; COLD/INACTIVE and FROZEN/OFFLOADED must be activated first), 100 per page in name order. Pass " +
      "nextCursor back as cursor for the next page. Every row tool takes one of these names as tenant.",
    input: Schema.Struct({
      connection_id: ConnectionId,
      table: Table,
      cursor: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({
        description: "The nextCursor of the previous page; omit for the first page."
      }))
    }),
    output: Schema.Struct({
      table: Schema.String,
      tenants: Schema.Array(Schema.Struct({ name: Schema.String, activityStatus: Schema.String, active: Schema.Boolean })),
      total: Schema.Number,
      nextCursor: Schema.optional(Schema.String)
    }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: Effect.fnUntraced(function*(input) {
      const after = input.cursor === undefined ? undefined : decodeCursor(input.cursor)
      if (input.cursor !== undefined && after === undefined) {
        return yield* ToolError.fail("invalid_argument", "cursor is not a nextCursor of list_tenants")
      }
      const connection = yield* open(env, input.connection_id, "read")
      if (InputRequired.is(connection)) return connection
      const { collection, tenants } = yield* env.driver.tenants(connection, input.table)
      const rest = after === undefined ? tenants : tenants.filter((t) => t.name > after)
      const page = rest.slice(0, PAGE_SIZE).map((t) => ({ ...t, active: ACTIVE_STATUSES.has(t.activityStatus) }))
      const nextCursor = rest.length > PAGE_SIZE ? encodeCursor(page[page.length - 1]!.name) : undefined
      const text = [
        `${collection.name}: ${TextTable.count(tenants.length, "tenant")}`,
        TextTable.render(["name", "activityStatus"], page),
        ...(nextCursor === undefined ? [] : [`more tenants: call again with cursor ${nextCursor}`])
      ].join("\n")
      return ToolDefinition.ok(
        { table: collection.name, tenants: page, total: tenants.length, ...(nextCursor === undefined ? {} : { nextCursor }) },
        text
      )
    })
  })
