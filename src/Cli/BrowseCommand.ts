/**
 * `weaviate-mcp browse CONN TABLE [--filter "col op value"]… [--sort col:asc|desc]… [--limit N]
 * [--offset N] [--tenant T] [--json]`: one page of the collection grid as an aligned table. A filter
 * the database cannot run is refused with its reason (exit 1) and nothing is printed from the table.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Driver } from "../Driver/Driver.ts"
import * as FilterBuilder from "../Driver/FilterBuilder.ts"
import * as CommonOptions from "./CommonOptions.ts"
import * as HistoryCli from "./HistoryCli.ts"
import { driverLayer, formatTable } from "./DriverCli.ts"

/** @category commands */
export const browseCommand = Command.make(
  "browse",
  {
    home: CommonOptions.home,
    json: CommonOptions.json,
    connection: Args.text({ name: "CONN" }).pipe(Args.withDescription("Connection id or name")),
    table: Args.text({ name: "TABLE" }).pipe(Args.withDescription("Collection name")),
    filter: Options.text("filter").pipe(
      Options.withDescription(`"COLUMN OPERATOR VALUE", repeatable; operators: ${FilterBuilder.operators.join(", ")}, = != > >= < <=`),
      CommonOptions.repeatable
    ),
    sort: Options.text("sort").pipe(Options.withDescription("COLUMN:asc or COLUMN:desc, repeatable"), CommonOptions.repeatable),
    limit: Options.integer("limit").pipe(Options.withDescription("Rows per page (default 20)"), Options.withDefault(20)),
    offset: Options.integer("offset").pipe(Options.withDescription("First row (the grid stops at row 10,000)"), Options.withDefault(0)),
    tenant: Options.text("tenant").pipe(Options.withDescription("Tenant of a multi-tenant collection"), Options.optional),
    consistencyLevel: CommonOptions.consistencyLevel
  },
  (flags) =>
    HistoryCli.recording({
      command: "browse",
      connection: flags.connection,
      collection: flags.table,
      tenant: Option.getOrUndefined(flags.tenant),
      consistencyLevel: Option.getOrUndefined(flags.consistencyLevel),
      statement: JSON.stringify({ table: flags.table, filters: flags.filter, sort: flags.sort, limit: flags.limit, offset: flags.offset })
    }, (note) => Effect.gen(function*() {
      const filters = yield* Effect.forEach(flags.filter, (text) => FilterBuilder.parseFilterText(text))
      const sort = yield* Effect.forEach(flags.sort, (text) => FilterBuilder.parseSortText(text))
      const driver = yield* Driver
      const page = yield* driver.browse(flags.connection, flags.table, {
        filters,
        sort,
        limit: flags.limit,
        offset: flags.offset,
        tenant: Option.getOrUndefined(flags.tenant),
        consistencyLevel: Option.getOrUndefined(flags.consistencyLevel)
      })
      const names = page.columns.map((c) => c.name)
      note.rows = page.rows.length
      note.collection = page.collection
      if (flags.json) {
        return yield* Console.log(JSON.stringify(
          {
            collection: page.collection,
            columns: names,
            rows: page.rows,
            offset: page.offset,
            limit: page.limit,
            nextOffset: page.nextOffset ?? null
          },
          null,
          2
        ))
      }
      yield* Console.log(formatTable(names, page.rows))
      const last = page.offset + page.rows.length
      yield* Console.log(
        page.rows.length === 0
          ? `(no rows from offset ${page.offset})`
          : `(rows ${page.offset + 1}-${last}${page.nextOffset !== undefined ? `; next page: --offset ${page.nextOffset}` : ""})`
      )
    })).pipe(Effect.provide(driverLayer(flags.home)), Effect.provide(CommonOptions.homeLayer(flags.home)))
).pipe(Command.withDescription("Show one page of a collection"))
