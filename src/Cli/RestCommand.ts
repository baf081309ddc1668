/**
 * `weaviate-mcp rest CONN "<METHOD> <path> [body]"`: the REST console. A path without `/v1` gets it;
 * the body may follow on the same line or on the lines below. Prints the response body (JSON
 * formatted); a status outside 2xx is the database's refusal (exit 1).
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { DatabaseRefused } from "../Driver/DriverError.ts"
import { Driver } from "../Driver/Driver.ts"
import { serverMessage } from "../Driver/WeaviateHttp.ts"
import * as CommonOptions from "./CommonOptions.ts"
import * as HistoryCli from "./HistoryCli.ts"
import * as HistoryEntry from "../History/HistoryEntry.ts"
import { driverLayer, readStdin } from "./DriverCli.ts"

/** @category commands */
export const restCommand = Command.make(
  "rest",
  {
    home: CommonOptions.home,
    json: CommonOptions.json,
    connection: Args.text({ name: "CONN" }).pipe(Args.withDescription("Connection id or name")),
    statement: Args.text({ name: "STATEMENT" }).pipe(Args.withDescription(`"<METHOD> <path> [body]", or - to read stdin`))
  },
  (flags) =>
    HistoryCli.recording({ command: "rest", connection: flags.connection }, (note) => Effect.gen(function*() {
      const line = flags.statement === "-" ? yield* readStdin : flags.statement
      note.statement = line
      note.collection = HistoryEntry.collectionOfStatement(line) ?? undefined
      const driver = yield* Driver
      const result = yield* driver.rest(flags.connection, line)
      const body = result.json !== undefined ? JSON.stringify(result.json, null, 2) : result.text
      const objects = result.json as { objects?: unknown } | undefined
      note.rows = Array.isArray(result.json) ? result.json.length : Array.isArray(objects?.objects) ? objects.objects.length : null
      if (flags.json) {
        yield* Console.log(JSON.stringify({ status: result.status, body: result.json ?? (result.text === "" ? null : result.text) }, null, 2))
      } else if (body.length > 0) {
        yield* Console.log(body)
      } else {
        yield* Console.log(`(HTTP ${result.status}, no body)`)
      }
      if (!result.ok) return yield* new DatabaseRefused({ status: result.status, detail: serverMessage(result) })
    })).pipe(Effect.provide(driverLayer(flags.home)), Effect.provide(CommonOptions.homeLayer(flags.home)))
).pipe(Command.withDescription("Run a REST console statement"))
