/**
 * `list_tenants`: the tenants of a multi-tenant collection with their activity status, 100 per page
 * in name order, from the session's tenant cache (`Driver.tenantIndex`): a page deep into the list
 * costs what the first does. `prefix` and `status` narrow the list; `name` reads one tenant straight
 * from Weaviate (`GET /v1/schema/{C}/tenants/{name}`), without any listing, and so does a prefix that
 * only one tenant starts with. The cursor names the last tenant of the page, so tenants added or
 * removed between pages neither repeat nor shift the rest. A tenant-scoped token sees only its own
 * tenants.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as InputRequired from "../../Schema/InputRequired.ts"
import type { Connection } from "../../Schema/Connection.ts"
import { canonicalStatus as canonical, type TenantIndex } from "../../Driver/TenantIndex.ts"
import { ACTIVE_STATUSES } from "../../Driver/Tenants.ts"
import { open, type ToolEnv } from "./ConnectionGate.ts"
import * as Paging from "./Paging.ts"
import { ConnectionId, Table } from "./Parameters.ts"
import * as TextTable from "./TextTable.ts"
import * as ToolDefinition from "./ToolDefinition.ts"
import * as ToolError from "./ToolError.ts"

/** Tenants per page when `limit` is not given. @category constants */
export const PAGE_SIZE = Paging.DEFAULT_PAGE

const TenantRow = Schema.Struct({ name: Schema.String, activityStatus: Schema.String, active: Schema.Boolean })

type Row = typeof TenantRow.Type

const row = (name: string, activityStatus: string): Row => ({ name, activityStatus, active: ACTIVE_STATUSES.has(activityStatus) })

interface Page {
  readonly rows: ReadonlyArray<Row>
  readonly total: number
  /** the last name of the page when more follow */
  readonly last: string | undefined
}

/** A page of the index: names in `[from, to)` after `after`, with `status` when given. */
export const pageOf = (index: TenantIndex, options: {
  readonly prefix?: string | undefined
  readonly status?: string | undefined
  readonly after?: string | undefined
  readonly limit: number
}): Page => {
  const [from, to] = options.prefix === undefined ? [0, index.size] as const : index.prefixRange(options.prefix)
  const start = options.after === undefined ? from : Math.max(from, index.seek(options.after, false))
  const rows: Array<Row> = []
  if (options.status === undefined) {
    for (let i = start; i < to && rows.length < options.limit; i++) rows.push(row(index.name(i), index.status(i)))
    return { rows, total: to - from, last: start + rows.length < to ? rows[rows.length - 1]?.name : undefined }
  }
  const code = index.statusCode(options.status)
  let total = 0
  let more = false
  // A status is one byte a tenant: counting it over the range is a scan of bytes, not of names.
  for (let i = from; i < to; i++) {
    if (index.statusCodeAt(i) !== code) continue
    total++
    if (i < start) continue
    if (rows.length < options.limit) rows.push(row(index.name(i), index.status(i)))
    else more = true
  }
  return { rows, total, last: more ? rows[rows.length - 1]?.name : undefined }
}

/** The answer for one tenant by exact name, or none. */
const exact = Effect.fnUntraced(function*(env: ToolEnv, connection: Connection, table: string, name: string, status: string | undefined) {
  const { collection, tenant } = yield* env.driver.tenant(connection, table, name)
  const found = Option.filter(tenant, (t) => status === undefined || canonical(t.activityStatus) === canonical(status))
  return { collection, page: { rows: Option.match(found, { onNone: () => [], onSome: (t) => [row(t.name, t.activityStatus)] }), total: Option.isSome(found) ? 1 : 0, last: undefined } }
})

/** @category tools */
export const listTenants = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "list_tenants",
    title: "List tenants",
    description: "Lists the tenants of a multi-tenant collection with their activity status (HOT/ACTIVE can be read " +
      "and written; COLD/INACTIVE and FROZEN/OFFLOADED must be activated first, with set_tenant_status), 100 per page in name order. Pass " +
      "nextCursor back as cursor for the next page; prefix and status narrow the list; name finds one tenant at once. " +
      "Every row tool takes one of these names as tenant.",
    input: Schema.Struct({
      connection_id: ConnectionId,
      table: Table,
      cursor: Schema.optional(Paging.Cursor),
      limit: Schema.optional(Paging.Limit),
      prefix: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({
        description: "Only tenants whose names start with this (case-sensitive, as tenant names are)."
      })),
      status: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({
        description: "Only tenants in this activity status: HOT, COLD, FROZEN (ACTIVE, INACTIVE, OFFLOADED are the same three)."
      })),
      name: Schema.optional(Schema.String.pipe(Schema.minLength(1)).annotations({
        description: "One tenant by its exact name, read from Weaviate directly (no listing): the page holds it or nothing."
      }))
    }),
    output: Schema.Struct({
      table: Schema.String,
      tenants: Schema.Array(TenantRow),
      total: Schema.Number,
      nextCursor: Schema.optional(Schema.String),
      stale: Schema.optional(Schema.Boolean.annotations({
        description: "Present (true) when the list was served from a cache older than its time to live while a fresh read runs."
      }))
    }),
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: Effect.fnUntraced(function*(input) {
      if (input.name !== undefined && (input.cursor !== undefined || input.prefix !== undefined)) {
        return yield* ToolError.fail("invalid_argument", "name looks up one tenant: pass it without cursor or prefix")
      }
      const connection = yield* open(env, input.connection_id, "read")
      if (InputRequired.is(connection)) return connection
      const scope = { connection: connection.id, table: input.table, prefix: input.prefix, status: input.status === undefined ? undefined : canonical(input.status) }
      const after = yield* Paging.after("list_tenants", scope, input.cursor)
      const limit = input.limit ?? PAGE_SIZE
      const { collection, page, stale } = input.name !== undefined
        ? { ...(yield* exact(env, connection, input.table, input.name, input.status)), stale: undefined }
        : yield* Effect.flatMap(env.driver.tenantIndex(connection, input.table), ({ collection, read }) => {
          const page = pageOf(read.value, { prefix: input.prefix, status: input.status, after, limit })
          // A prefix that only one tenant starts with: that tenant as Weaviate has it now.
          return input.prefix !== undefined && page.total === 1 && after === undefined
            ? Effect.map(exact(env, connection, input.table, page.rows[0]!.name, input.status), (one) => ({ ...one, stale: undefined }))
            : Effect.succeed({ collection, page, stale: read.stale ? read : undefined })
        })
      const nextCursor = page.last === undefined ? undefined : Paging.encode(scope, page.last)
      const narrowed = input.name !== undefined || input.prefix !== undefined || input.status !== undefined
      const text = [
        `${collection.name}: ${TextTable.count(page.total, narrowed ? "matching tenant" : "tenant")}`,
        TextTable.render(["name", "activityStatus"], page.rows),
        ...(nextCursor === undefined ? [] : [Paging.moreLine(page.rows.length, page.total, "tenants", "prefix or status", nextCursor)]),
        stale === undefined ? "" : Paging.staleLine(stale, "the tenant list")
      ].filter((line) => line !== "").join("\n")
      return ToolDefinition.ok(
        {
          table: collection.name,
          tenants: page.rows,
          total: page.total,
          ...(nextCursor === undefined ? {} : { nextCursor }),
          ...(stale === undefined ? {} : { stale: true })
        },
        text,
        "prefix or status, or a smaller limit and the cursor"
      )
    })
  })
