/**
 * The tenant tools: `create_tenants`, `set_tenant_status` (ACTIVE/INACTIVE/OFFLOADED, also named
 * HOT/COLD/FROZEN), `delete_tenants`. Writes like the structure tools (`StructureTools`): the tenants
 * are checked first (names Weaviate would refuse, tenants that exist already or not at all, offloading
 * on a server without the offload module), the user approves one line per tenant, the request is sent
 * once, and the session's tenant list is read again by the next call.
 *
 * `delete_tenants` is destructive like `drop_table`: fullAccess, `confirm`, the user's dialog every
 * time, and the approval counts the rows each tenant holds. A tenant-scoped token may only name its
 * own tenants.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Principal from "../../Auth/Principal.ts"
import type { Collection } from "../../Driver/CollectionSchema.ts"
import * as SchemaEdits from "../../Driver/SchemaEdits.ts"
import { canonicalStatus } from "../../Driver/TenantIndex.ts"
import type { Tenant } from "../../Driver/Tenants.ts"
import type { Connection } from "../../Schema/Connection.ts"
import * as InputRequired from "../../Schema/InputRequired.ts"
import { Forbidden } from "../../Schema/McpErrors.ts"
import { approveRequest, open, sendApproved, type ToolEnv } from "./ConnectionGate.ts"
import { ConnectionId, Table } from "./Parameters.ts"
import { rowsAtStake } from "./StructureTools.ts"
import * as TextTable from "./TextTable.ts"
import * as ToolDefinition from "./ToolDefinition.ts"
import * as ToolError from "./ToolError.ts"

/** Most tenants one call names. @category constants */
export const MAX_TENANTS = 100

const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const

const Names = Schema.Array(Schema.String.pipe(Schema.minLength(1))).pipe(
  Schema.minItems(1),
  Schema.maxItems(MAX_TENANTS, { message: () => `at most ${MAX_TENANTS} tenants per call` })
).annotations({ description: "Tenant names: 1 to 64 letters, digits, - or _ each." })

const Status = Schema.Literal("ACTIVE", "INACTIVE", "OFFLOADED", "HOT", "COLD", "FROZEN")

const Change = Schema.Struct({ name: Schema.String, from: Schema.optional(Schema.String), to: Schema.String })

// ===== Shared steps =====

/**
 * The step every tenant write takes before it asks for approval: the collection is multi-tenant, and
 * a tenant-scoped token names only its own tenants. Permission checks that come before approval
 * belong here.
 *
 * @category steps
 */
export const beforeApproval = Effect.fnUntraced(function*(env: ToolEnv, connection: Connection, table: string, names: ReadonlyArray<string>) {
  const collection = yield* Effect.map(env.driver.describe(connection, table), (d) => d.collection)
  if (!collection.multiTenancy) return yield* ToolError.fail("invalid_argument", `${collection.name} is not multi-tenant: it has no tenants`)
  const principal = yield* Principal.CurrentPrincipal
  const allowed = Principal.allowedTenants(principal, connection.id, collection.name)
  const outside = allowed === undefined ? [] : names.filter((name) => !allowed.includes(name))
  if (outside.length > 0) return yield* new Forbidden({ message: `Forbidden: this token may not use the tenants ${outside.join(", ")} of ${collection.name}` })
  return collection
})

/** The named tenants as Weaviate has them now (read past the cache); names it does not have are refused. */
const existing = Effect.fnUntraced(function*(env: ToolEnv, connection: Connection, collection: Collection, names: ReadonlyArray<string>) {
  const { tenants } = yield* env.driver.tenants(connection, collection.name)
  const byName = new Map(tenants.map((t) => [t.name, t]))
  const missing = names.filter((name) => !byName.has(name))
  if (missing.length > 0) {
    return yield* ToolError.fail("not_found", `${collection.name} has no tenant ${missing.map((n) => JSON.stringify(n)).join(", ")} (list_tenants shows them)`)
  }
  return names.map((name) => byName.get(name)!)
})

const refuse = (problems: ReadonlyArray<string>) => ToolError.fail("invalid_argument", problems.join("; "))

const tenantsWord = (n: number) => TextTable.count(n, "tenant")

// ===== create_tenants =====

/** @category tools */
export const createTenants = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "create_tenants",
    title: "Create tenants",
    description: `Creates up to ${MAX_TENANTS} tenants in a multi-tenant collection, each ACTIVE (HOT, the default) or ` +
      "INACTIVE (COLD). Names Weaviate would refuse and tenants that exist already are refused at once. The user approves " +
      "the tenants, one a line, first.",
    input: Schema.Struct({
      connection_id: ConnectionId,
      table: Table,
      tenants: Names,
      status: Schema.optional(Schema.Literal("ACTIVE", "INACTIVE", "HOT", "COLD").annotations({ description: "The initial status: ACTIVE (default) or INACTIVE." }))
    }),
    output: Schema.Struct({ table: Schema.String, created: Schema.Array(Schema.String), status: Schema.String, approvedBy: Schema.String }),
    annotations: WRITE,
    scopes: ["tools:write"],
    run: Effect.fnUntraced(function*(input) {
      const connection = yield* open(env, input.connection_id, "write")
      if (InputRequired.is(connection)) return connection
      const collection = yield* beforeApproval(env, connection, input.table, input.tenants)
      const problems = [...SchemaEdits.tenantNameProblems(input.tenants)]
      const { tenants } = yield* env.driver.tenants(connection, collection.name)
      const taken = new Set(tenants.map((t) => t.name))
      for (const name of input.tenants) if (taken.has(name)) problems.push(`tenant ${JSON.stringify(name)}: ${collection.name} has it already`)
      if (problems.length > 0) return yield* refuse(problems)
      const status = input.status ?? "ACTIVE"
      const plan: SchemaEdits.Plan = {
        summary: [
          `Create ${tenantsWord(input.tenants.length)} in ${collection.name}, ${SchemaEdits.statusLabel(status)}:`,
          ...input.tenants.map((name) => `  ${name}`)
        ],
        request: SchemaEdits.tenantsRequest(collection.name, "POST", input.tenants, status)
      }
      const approvedBy = yield* approveRequest(env, connection, SchemaEdits.statementOf(plan), plan.request)
      if (InputRequired.is(approvedBy)) return approvedBy
      yield* sendApproved(env, connection, plan.request)
      return ToolDefinition.ok(
        { table: collection.name, created: input.tenants, status: canonicalStatus(status), approvedBy },
        `Created ${tenantsWord(input.tenants.length)} in ${collection.name} (${SchemaEdits.statusLabel(status)}): ${input.tenants.join(", ")}.`
      )
    })
  })

// ===== set_tenant_status =====

const STATUS_NOTE: Readonly<Record<string, string>> = {
  HOT: "Active tenants can be read and written.",
  COLD: "Rows are kept; an inactive tenant cannot be read or written until it is activated again.",
  FROZEN: "Rows move to cloud storage (the offload module); an offloaded tenant must be activated before use."
}

/** @category tools */
export const setTenantStatus = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "set_tenant_status",
    title: "Activate, deactivate or offload tenants",
    description: "Sets the activity status of up to 100 tenants: ACTIVE (HOT: readable and writable), INACTIVE (COLD: rows " +
      "kept on disk, not readable until activated) or OFFLOADED (FROZEN: rows moved to cloud storage; needs the offload-s3 " +
      "module, and is refused when this server lacks it). This is how an inactive tenant is activated. The user approves " +
      "each change, one tenant a line, first.",
    input: Schema.Struct({
      connection_id: ConnectionId,
      table: Table,
      tenants: Names,
      status: Status.annotations({ description: "ACTIVE, INACTIVE or OFFLOADED (HOT, COLD, FROZEN are the same three)." })
    }),
    output: Schema.Struct({ table: Schema.String, status: Schema.String, tenants: Schema.Array(Change), approvedBy: Schema.String }),
    annotations: { ...WRITE, idempotentHint: true },
    scopes: ["tools:write"],
    run: Effect.fnUntraced(function*(input) {
      const connection = yield* open(env, input.connection_id, "write")
      if (InputRequired.is(connection)) return connection
      const collection = yield* beforeApproval(env, connection, input.table, input.tenants)
      const problems = SchemaEdits.tenantNameProblems(input.tenants)
      if (problems.length > 0) return yield* refuse(problems)
      const target = canonicalStatus(input.status)
      if (target === "FROZEN") {
        const { modules } = yield* env.driver.health(connection)
        if (!modules.includes(SchemaEdits.OFFLOAD_MODULE)) {
          return yield* ToolError.fail("unsupported", `offloading tenants needs the ${SchemaEdits.OFFLOAD_MODULE} module, which this server does not have (GET /v1/meta lists its modules)`)
        }
      }
      const found: ReadonlyArray<Tenant> = yield* existing(env, connection, collection, input.tenants)
      const changes = found.map((t) => ({ name: t.name, from: canonicalStatus(t.activityStatus), to: target }))
      const plan: SchemaEdits.Plan = {
        summary: [
          `Set ${tenantsWord(changes.length)} of ${collection.name} to ${SchemaEdits.statusLabel(target)}:`,
          ...changes.map((c) => `  ${c.name}: ${SchemaEdits.statusLabel(c.from)} → ${SchemaEdits.statusLabel(c.to)}`),
          ...(STATUS_NOTE[target] !== undefined ? [STATUS_NOTE[target]!] : [])
        ],
        request: SchemaEdits.tenantsRequest(collection.name, "PUT", input.tenants, target)
      }
      const approvedBy = yield* approveRequest(env, connection, SchemaEdits.statementOf(plan), plan.request)
      if (InputRequired.is(approvedBy)) return approvedBy
      yield* sendApproved(env, connection, plan.request)
      return ToolDefinition.ok(
        { table: collection.name, status: target, tenants: changes, approvedBy },
        [`${collection.name}: ${tenantsWord(changes.length)} set to ${SchemaEdits.statusLabel(target)}`, ...plan.summary.slice(1)].join("\n")
      )
    })
  })

// ===== delete_tenants =====

/** @category tools */
export const deleteTenants = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "delete_tenants",
    title: "Delete tenants (asks the user)",
    description: "Deletes up to 100 tenants of a multi-tenant collection with all their rows. Destructive, like " +
      "confirm_destructive_operation: needs a fullAccess token, confirm must repeat the table name exactly, and the user is " +
      "asked on their machine every time, told how many rows each tenant holds. This cannot be undone.",
    input: Schema.Struct({
      connection_id: ConnectionId,
      table: Table,
      tenants: Names,
      confirm: Schema.String.annotations({ description: "The table name typed again, exactly, to show intent." })
    }),
    output: Schema.Struct({
      table: Schema.String,
      deleted: Schema.Array(Schema.String),
      rowsLost: Schema.Number,
      tenantsNotCounted: Schema.optional(Schema.Array(Schema.String)),
      approvedBy: Schema.String
    }),
    annotations: { ...WRITE, destructiveHint: true },
    scopes: ["tools:write", "admin"],
    run: Effect.fnUntraced(function*(input) {
      if (input.confirm !== input.table) return yield* ToolError.fail("invalid_argument", `confirm must repeat the table name exactly: ${JSON.stringify(input.table)}`)
      const principal = yield* Principal.CurrentPrincipal
      if (!Principal.isFullAccess(principal) || Principal.isAnonymous(principal)) {
        return yield* new Forbidden({ message: "delete_tenants requires a fullAccess token", data: { required: "fullAccess", access: principal.access } })
      }
      const connection = yield* open(env, input.connection_id, "write")
      if (InputRequired.is(connection)) return connection
      const collection = yield* beforeApproval(env, connection, input.table, input.tenants)
      const found = yield* existing(env, connection, collection, input.tenants)
      const stake = yield* rowsAtStake(env, connection, collection, found)
      const plan: SchemaEdits.Plan = {
        summary: [`Delete ${tenantsWord(found.length)} of ${collection.name} with all their rows`, ...stake.lines, "This cannot be undone."],
        request: SchemaEdits.deleteTenantsRequest(collection.name, input.tenants)
      }
      const approvedBy = yield* approveRequest(env, connection, SchemaEdits.statementOf(plan), plan.request, { destructive: true })
      if (InputRequired.is(approvedBy)) return approvedBy
      yield* sendApproved(env, connection, plan.request)
      return ToolDefinition.ok(
        {
          table: collection.name,
          deleted: input.tenants,
          rowsLost: stake.rows,
          ...(stake.uncounted.length > 0 ? { tenantsNotCounted: stake.uncounted } : {}),
          approvedBy
        },
        `Deleted ${tenantsWord(found.length)} of ${collection.name} and their ${TextTable.count(stake.rows, "row")}${
          stake.uncounted.length > 0 ? ` (and the rows of ${TextTable.count(stake.uncounted.length, "inactive tenant")}, not counted)` : ""
        }: ${input.tenants.join(", ")}.`
      )
    })
  })
