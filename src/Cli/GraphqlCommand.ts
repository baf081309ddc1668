/**
 * `weaviate-mcp graphql CONN [QUERY | -] [--tenant T] [--json]`: runs a read-only GraphQL query
 * (`-` or no argument reads it from stdin). A `Get` result prints as a table per collection, any
 * other result as formatted JSON. GraphQL errors are printed on stderr after the partial data, and
 * the exit code is 1.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { DatabaseRefused } from "../Driver/DriverError.ts"
import { Driver } from "../Driver/Driver.ts"
import * as CommonOptions from "./CommonOptions.ts"
import * as HistoryCli from "./HistoryCli.ts"
import { driverLayer, formatTable, readStdin } from "./DriverCli.ts"

/** @category commands */
export const graphqlCommand = Command.make(
  "graphql",
  {
    home: CommonOptions.home,
    json: CommonOptions.json,
    connection: Args.text({ name: "CONN" }).pipe(Args.withDescription("Connection id or name")),
    query: Args.text({ name: "QUERY" }).pipe(Args.withDescription("The query, or - to read stdin"), Args.optional),
    tenant: Options.text("tenant").pipe(Options.withDescription("Tenant named for every collection in the query"), Options.optional),
    consistencyLevel: CommonOptions.consistencyLevel
  },
  (flags) =>
    HistoryCli.recording({
      command: "graphql",
      connection: flags.connection,
      tenant: Option.getOrUndefined(flags.tenant),
      consistencyLevel: Option.getOrUndefined(flags.consistencyLevel)
    }, (note) => Effect.gen(function*() {
      const text = Option.isNone(flags.query) || flags.query.value === "-" ? yield* readStdin : flags.query.value
      note.statement = text
      const driver = yield* Driver
      const result = yield* driver.graphql(flags.connection, text, {
        tenant: Option.getOrUndefined(flags.tenant),
        consistencyLevel: Option.getOrUndefined(flags.consistencyLevel)
      })
      note.rows = result.kind === "grid" ? result.tables.reduce((n, t) => n + t.rows.length, 0) : null
      note.collection = result.kind === "grid" ? result.tables[0]?.collection : undefined
      if (flags.json) {
        yield* Console.log(JSON.stringify(result.kind === "grid" ? { tables: result.tables, errors: result.errors } : { data: result.data, errors: result.errors }, null, 2))
      } else if (result.kind === "grid") {
        for (const table of result.tables) {
          if (result.tables.length > 1) yield* Console.log(`${table.collection}:`)
          yield* Console.log(formatTable(table.columns, table.rows))
          yield* Console.log(`(${table.rows.length} ${table.rows.length === 1 ? "row" : "rows"})`)
        }
      } else {
        yield* Console.log(result.json)
      }
      if (result.errors.length > 0) {
        return yield* new DatabaseRefused({ status: 200, detail: result.errors.map((e) => e.message).join("; ") })
      }
    })).pipe(Effect.provide(driverLayer(flags.home)), Effect.provide(CommonOptions.homeLayer(flags.home)))
).pipe(Command.withDescription("Run a read-only GraphQL query"))
