/**
 * `weaviate-mcp tenants CONN TABLE [--json]`: the tenants of a multi-tenant collection with their
 * activity status, in name order. A collection without tenants is a usage error naming it.
 *
 * `tenants create|activate|deactivate|offload|delete CONN TABLE NAME…` change them as the tenant tools
 * do (`TenantWriteTools`): checked first, sent once; `delete` cannot be undone and is confirmed on a
 * terminal (`--yes` elsewhere); Safe Mode `readOnly` refuses them all. `CONN` and `TABLE` of the
 * listing are optional only so that the parser reaches these subcommands (it reads the parent's
 * arguments first); the listing still needs both.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { rowsAtStakeOf } from "../Catalogue/Tools/StructureTools.ts"
import { Driver } from "../Driver/Driver.ts"
import * as SchemaEdits from "../Driver/SchemaEdits.ts"
import { canonicalStatus } from "../Driver/TenantIndex.ts"
import { ACTIVE_STATUSES } from "../Driver/Tenants.ts"
import { UsageError } from "./CliErrors.ts"
import * as CommonOptions from "./CommonOptions.ts"
import { driverLayer, formatTable } from "./DriverCli.ts"
import * as StructureCli from "./StructureCli.ts"

type Change = "create" | "activate" | "deactivate" | "offload" | "delete"

const TARGET: Record<Exclude<Change, "create" | "delete">, string> = { activate: "HOT", deactivate: "COLD", offload: "FROZEN" }

/** One tenant change: checked (names, existence, the offload module), confirmed when destructive, sent once. */
const changeTenants = Effect.fnUntraced(function*(change: Change, flags: {
  readonly connection: string
  readonly table: string
  readonly names: ReadonlyArray<string>
  readonly inactive: boolean
  readonly yes: boolean
  readonly json: boolean
}) {
  const connection = yield* StructureCli.writable(flags.connection)
  const driver = yield* Driver
  const { collection, tenants } = yield* driver.tenants(connection, flags.table)
  const problems = [...SchemaEdits.tenantNameProblems(flags.names)]
  const byName = new Map(tenants.map((t) => [t.name, t]))
  if (change === "create") {
    for (const name of flags.names) if (byName.has(name)) problems.push(`tenant ${JSON.stringify(name)}: ${collection.name} has it already`)
  } else {
    const missing = flags.names.filter((name) => !byName.has(name))
    if (missing.length > 0) problems.push(`${collection.name} has no tenant ${missing.map((n) => JSON.stringify(n)).join(", ")}`)
  }
  if (change === "offload" && !(yield* driver.health(connection)).modules.includes(SchemaEdits.OFFLOAD_MODULE)) {
    problems.push(`offloading tenants needs the ${SchemaEdits.OFFLOAD_MODULE} module, which this server does not have`)
  }
  if (problems.length > 0) return yield* new StructureCli.ChangeRefused({ reason: problems.join("; ") })
  const lines = (verb: string) => [verb, ...flags.names.map((name) => `  ${name}`)]
  if (change === "delete") {
    const stake = yield* rowsAtStakeOf(driver, connection, collection, flags.names.map((name) => byName.get(name)!))
    const plan: SchemaEdits.Plan = {
      summary: [`Delete ${flags.names.length} ${flags.names.length === 1 ? "tenant" : "tenants"} of ${collection.name} with all their rows`, ...stake.lines, "This cannot be undone."],
      request: SchemaEdits.deleteTenantsRequest(collection.name, flags.names)
    }
    yield* StructureCli.confirmDestructive(plan, { yes: flags.yes, name: collection.name, command: `tenants delete ${collection.name}` })
    yield* StructureCli.send(connection, plan.request)
    return yield* flags.json
      ? Console.log(JSON.stringify({ table: collection.name, deleted: flags.names, rowsLost: stake.rows }, null, 2))
      : Console.log(lines(`Deleted from ${collection.name} (${stake.rows} ${stake.rows === 1 ? "row" : "rows"} counted):`).join("\n"))
  }
  const status = change === "create" ? (flags.inactive ? "COLD" : "HOT") : TARGET[change]
  yield* StructureCli.send(connection, SchemaEdits.tenantsRequest(collection.name, change === "create" ? "POST" : "PUT", flags.names, status))
  const done = change === "create" ? `Created in ${collection.name}, ${SchemaEdits.statusLabel(status)}:` : `${collection.name}: set to ${SchemaEdits.statusLabel(status)}:`
  yield* flags.json
    ? Console.log(JSON.stringify({ table: collection.name, tenants: flags.names, status: canonicalStatus(status) }, null, 2))
    : Console.log(lines(done).join("\n"))
})

const changeCommand = (change: Change, description: string) =>
  Command.make(
    change,
    {
      home: CommonOptions.home,
      json: CommonOptions.json,
      connection: Args.text({ name: "CONN" }).pipe(Args.withDescription("Connection id or name")),
      table: Args.text({ name: "TABLE" }).pipe(Args.withDescription("Multi-tenant collection name")),
      names: Args.text({ name: "NAME" }).pipe(Args.atLeast(1), Args.withDescription("Tenant names")),
      ...(change === "create" ? { inactive: Options.boolean("inactive").pipe(Options.withDescription("Create them INACTIVE (COLD)")) } : {}),
      ...(change === "delete" ? { yes: Options.boolean("yes").pipe(Options.withDescription("Confirm without asking (required when not on a terminal)")) } : {})
    },
    (flags) =>
      changeTenants(change, {
        connection: flags.connection,
        table: flags.table,
        names: flags.names,
        inactive: (flags as { inactive?: boolean }).inactive === true,
        yes: (flags as { yes?: boolean }).yes === true,
        json: flags.json
      }).pipe(Effect.provide(driverLayer(flags.home)))
  ).pipe(Command.withDescription(description))

/** @category commands */
export const tenantsCommand = Command.make(
  "tenants",
  {
    home: CommonOptions.home,
    json: CommonOptions.json,
    connection: Args.text({ name: "CONN" }).pipe(Args.withDescription("Connection id or name"), Args.optional),
    table: Args.text({ name: "TABLE" }).pipe(Args.withDescription("Multi-tenant collection name"), Args.optional)
  },
  (flags) =>
    Effect.gen(function*() {
      if (Option.isNone(flags.connection) || Option.isNone(flags.table)) {
        return yield* new UsageError({ message: "tenants CONN TABLE lists the tenants (or: tenants create|activate|deactivate|offload|delete CONN TABLE NAME…)" })
      }
      const driver = yield* Driver
      const { collection, tenants } = yield* driver.tenants(flags.connection.value, flags.table.value)
      const rows = tenants.map((t) => ({ name: t.name, activityStatus: t.activityStatus, active: ACTIVE_STATUSES.has(t.activityStatus) }))
      if (flags.json) return yield* Console.log(JSON.stringify({ collection: collection.name, tenants: rows }, null, 2))
      if (rows.length === 0) return yield* Console.log(`${collection.name} has no tenants yet.`)
      yield* Console.log(formatTable(["name", "activityStatus"], rows))
      yield* Console.log(`(${rows.length} ${rows.length === 1 ? "tenant" : "tenants"}; ${rows.filter((r) => r.active).length} active)`)
    }).pipe(Effect.provide(driverLayer(flags.home)))
).pipe(
  Command.withDescription("List the tenants of a multi-tenant collection, or create, activate, deactivate, offload or delete them"),
  Command.withSubcommands([
    changeCommand("create", "Create tenants (ACTIVE; --inactive for INACTIVE)"),
    changeCommand("activate", "Activate tenants (ACTIVE/HOT): their rows can be read and written again"),
    changeCommand("deactivate", "Deactivate tenants (INACTIVE/COLD): rows kept, not readable until activated"),
    changeCommand("offload", "Offload tenants (OFFLOADED/FROZEN; needs the offload-s3 module)"),
    changeCommand("delete", "Delete tenants and their rows (asks on a terminal; --yes elsewhere)")
  ])
)
