/**
 * `browse_table`, `count_rows` and `get_row`: the grid of the contract. The grid stops at row
 * 10,000 (offset plus limit never goes past it); vectors are left out of pages (they are long and
 * rarely useful to read) — `get_row` with `include_vector` shows one.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as InputRequired from "../../Schema/InputRequired.ts"
import { PAGING_DEPTH } from "../../Driver/Grid.ts"
import { type ToolEnv, open } from "./ConnectionGate.ts"
import { ConnectionId, ConsistencyLevelParam, Filters, intBetween, Row, Sort, Table, Tenant, toDriverFilters, Uuid } from "./Parameters.ts"
import * as TextTable from "./TextTable.ts"
import * as ToolDefinition from "./ToolDefinition.ts"
import * as ToolError from "./ToolError.ts"

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const

/** @category tools */
export const browseTable = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "browse_table",
    title: "Browse a table",
    description: "Reads one page of a collection's rows, optionally filtered and sorted. Filters use the operators " +
      "describe_table lists per column. Paging uses offset and limit; the result gives nextOffset while more rows remain. " +
      "The grid stops at row 10,000: read further with execute_query (GraphQL with the after cursor).",
    input: Schema.Struct({
      connection_id: ConnectionId,
      table: Table,
      filters: Schema.optional(Filters),
      sort: Schema.optional(Schema.Array(Sort).annotations({ description: "Sort order, first entry first. Omit for uuid order." })),
      limit: Schema.optional(intBetween(1, 1000).annotations({ description: "Rows per page, 1 to 1,000 (default 50)." })),
      offset: Schema.optional(intBetween(0, PAGING_DEPTH - 1).annotations({ description: "Rows to skip (default 0); below 10,000." })),
      tenant: Schema.optional(Tenant),
      consistency_level: Schema.optional(ConsistencyLevelParam)
    }),
    output: Schema.Struct({
      table: Schema.String,
      columns: Schema.Array(Schema.String),
      rows: Schema.Array(Row),
      offset: Schema.Number,
      limit: Schema.Number,
      nextOffset: Schema.optional(Schema.Number),
      endOfGrid: Schema.Boolean
    }),
    annotations: READ,
    run: Effect.fnUntraced(function*(input) {
      const connection = yield* open(env, input.connection_id, "read")
      if (InputRequired.is(connection)) return connection
      const offset = input.offset ?? 0
      const limit = Math.min(input.limit ?? 50, PAGING_DEPTH - offset)
      const page = yield* env.driver.browse(connection, input.table, {
        filters: toDriverFilters(input.filters),
        sort: input.sort ?? [],
        limit,
        offset,
        tenant: input.tenant,
        consistencyLevel: input.consistency_level
      })
      const columns = page.columns.filter((c) => c.kind !== "vector").map((c) => c.name)
      const rows = page.rows.map((row) => Object.fromEntries(columns.map((c) => [c, row[c] ?? null])))
      const endOfGrid = page.nextOffset === undefined && rows.length === limit && offset + limit >= PAGING_DEPTH
      const result = {
        table: page.collection,
        columns,
        rows,
        offset,
        limit,
        ...(page.nextOffset !== undefined ? { nextOffset: page.nextOffset } : {}),
        endOfGrid
      }
      const footer = page.nextOffset !== undefined
        ? `rows ${offset + 1}–${offset + rows.length}; more rows: call again with offset ${page.nextOffset}`
        : endOfGrid
        ? "[the grid stops at row 10,000; use execute_query with a GraphQL after cursor to read further]"
        : `rows ${rows.length === 0 ? 0 : offset + 1}–${offset + rows.length}; no more rows`
      return ToolDefinition.ok(result, `${TextTable.render(columns, rows)}\n${footer}`, "a smaller limit or filters; the next rows with offset")
    })
  })

/** @category tools */
export const countRows = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "count_rows",
    title: "Count rows",
    description: "Counts the rows of a collection, optionally only those matching filters (Aggregate meta count).",
    input: Schema.Struct({
      connection_id: ConnectionId,
      table: Table,
      filters: Schema.optional(Filters),
      tenant: Schema.optional(Tenant)
    }),
    output: Schema.Struct({ table: Schema.String, count: Schema.Number }),
    annotations: READ,
    run: Effect.fnUntraced(function*(input) {
      const connection = yield* open(env, input.connection_id, "read")
      if (InputRequired.is(connection)) return connection
      const count = yield* env.driver.count(connection, input.table, {
        filters: toDriverFilters(input.filters),
        tenant: input.tenant
      })
      const filtered = (input.filters ?? []).length > 0 ? " matching the filters" : ""
      return ToolDefinition.ok({ table: input.table, count }, `${input.table}: ${TextTable.count(count, "row")}${filtered}`)
    })
  })

/** @category tools */
export const getRow = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "get_row",
    title: "Get a row",
    description: "Reads one object of a collection by uuid, with every property; include_vector adds its vector (every " +
      "named vector, as vector:<name>). Multi-tenant collections need tenant.",
    input: Schema.Struct({
      connection_id: ConnectionId,
      table: Table,
      uuid: Uuid,
      include_vector: Schema.optional(Schema.Boolean.annotations({ description: "Also return the vector (default false)." })),
      tenant: Schema.optional(Tenant),
      consistency_level: Schema.optional(ConsistencyLevelParam)
    }),
    output: Schema.Struct({ table: Schema.String, row: Row }),
    annotations: READ,
    run: Effect.fnUntraced(function*(input) {
      const connection = yield* open(env, input.connection_id, "read")
      if (InputRequired.is(connection)) return connection
      const includeVector = input.include_vector === true
      const found = yield* env.driver.getRow(connection, input.table, input.uuid, {
        includeVector,
        tenant: input.tenant,
        consistencyLevel: input.consistency_level
      })
      if (Option.isNone(found)) return yield* ToolError.fail("not_found", `${input.table} has no row with uuid ${input.uuid}`)
      // Every vector column: `vector`, or `vector:<name>` for each named vector.
      const row = includeVector ? found.value : Object.fromEntries(Object.entries(found.value).filter(([k]) => k !== "vector" && !k.startsWith("vector:")))
      const text = Object.entries(row).map(([k, v]) => `${k}: ${TextTable.cell(v, k)}`).join("\n")
      return ToolDefinition.ok({ table: input.table, row }, text, "include_vector false, or execute_query for chosen properties")
    })
  })
