/**
 * `weaviate-mcp tenants CONN TABLE [--json]`: the tenants of a multi-tenant collection with their
 * activity status, in name order. A collection without tenants is a usage error naming it.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { Driver } from "../Driver/Driver.ts"
import { ACTIVE_STATUSES } from "../Driver/Tenants.ts"
import * as CommonOptions from "./CommonOptions.ts"
import { driverLayer, formatTable } from "./DriverCli.ts"

/** @category commands */
export const tenantsCommand = Command.make(
  "tenants",
  {
    home: CommonOptions.home,
    json: CommonOptions.json,
    connection: Args.text({ name: "CONN" }).pipe(Args.withDescription("Connection id or name")),
    table: Args.text({ name: "TABLE" }).pipe(Args.withDescription("Multi-tenant collection name"))
  },
  (flags) =>
    Effect.gen(function*() {
      const driver = yield* Driver
      const { collection, tenants } = yield* driver.tenants(flags.connection, flags.table)
      const rows = tenants.map((t) => ({ name: t.name, activityStatus: t.activityStatus, active: ACTIVE_STATUSES.has(t.activityStatus) }))
      if (flags.json) return yield* Console.log(JSON.stringify({ collection: collection.name, tenants: rows }, null, 2))
      if (rows.length === 0) return yield* Console.log(`${collection.name} has no tenants yet.`)
      yield* Console.log(formatTable(["name", "activityStatus"], rows))
      yield* Console.log(`(${rows.length} ${rows.length === 1 ? "tenant" : "tenants"}; ${rows.filter((r) => r.active).length} active)`)
    }).pipe(Effect.provide(driverLayer(flags.home)))
).pipe(Command.withDescription("List the tenants of a multi-tenant collection"))
