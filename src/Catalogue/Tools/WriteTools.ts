/**
 * The row writes: `insert_rows`, `update_rows`, `delete_rows`. Each checks what it can before asking
 * (arguments, write permission, that the collection exists, that the Weaviate user may write it),
 * has the driver plan the REST calls
 * (`RowEdits.planFor`), asks for approval with exactly those calls, and on `Execute` sends each
 * planned call exactly once. Results are per row: one
 * row refused by the database does not stop the others; a lost connection stops the rest, which are
 * reported as `not_attempted` (never retried, so nothing is written twice). Weaviate's 403 (its
 * permissions changed since they were read) stops the rest too, and the call is an error (`denied`)
 * that says which rows were written before it.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as ConsistencyLevel from "../../Schema/ConsistencyLevel.ts"
import * as Schema from "effect/Schema"
import * as InputRequired from "../../Schema/InputRequired.ts"
import * as Redaction from "../../Base/Redaction.ts"
import type { PermissionDenied, RequestError } from "../../Driver/DriverError.ts"
import * as RowEdits from "../../Driver/RowEdits.ts"
import type { LookupError } from "../../Driver/Driver.ts"
import { approve, open, requirePermission, type ToolEnv } from "./ConnectionGate.ts"
import { ConnectionId, ConsistencyLevelParam, Table, Tenant, Uuid } from "./Parameters.ts"
import * as TextTable from "./TextTable.ts"
import * as ToolDefinition from "./ToolDefinition.ts"
import * as ToolError from "./ToolError.ts"

/** Most rows one call may write. @category constants */
export const MAX_ROWS = 1000

const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const

const RowResult = Schema.Struct({
  row: Schema.Number.annotations({ description: "The row's number in the call's list, counting from 1." }),
  status: Schema.Literal("inserted", "updated", "deleted", "skipped", "failed", "not_attempted"),
  uuid: Schema.optional(Schema.String),
  error: Schema.optional(Schema.String)
})
type RowResult = typeof RowResult.Type

const Output = Schema.Struct({
  table: Schema.String,
  applied: Schema.Number,
  failed: Schema.Number,
  skipped: Schema.Number,
  results: Schema.Array(RowResult),
  approvedBy: Schema.optional(Schema.String)
})

const batch = <A, I>(item: Schema.Schema<A, I>, what: string) =>
  Schema.Array(item).pipe(
    Schema.minItems(1),
    Schema.maxItems(MAX_ROWS, { message: () => `at most ${MAX_ROWS.toLocaleString("en-US")} ${what} per call` })
  )

/**
 * Sends each planned request in order; a skipped step is reported, a database refusal fails its row,
 * any other error stops the rest (`not_attempted`, never retried).
 */
const perStep = Effect.fnUntraced(function*(
  steps: ReadonlyArray<RowEdits.Step>,
  send: (request: RowEdits.EditRequest, row: number) => Effect.Effect<RowResult, RequestError | LookupError>
) {
  const results: Array<RowResult> = []
  let stopped: string | undefined
  let denied: PermissionDenied | undefined
  for (const step of steps) {
    const row = step.index + 1
    if ("skipped" in step) {
      results.push({ row, status: "skipped", error: step.skipped })
      continue
    }
    if (stopped !== undefined) {
      results.push({ row, status: "not_attempted", error: stopped })
      continue
    }
    const outcome = yield* Effect.either(send(step.request, row))
    if (outcome._tag === "Right") {
      results.push(outcome.right)
      continue
    }
    const error = Redaction.global.redact(outcome.left.message)
    results.push({ row, status: "failed", error })
    if (outcome.left._tag === "PermissionDenied") denied ??= outcome.left
    if (outcome.left._tag !== "DatabaseRefused") stopped = `not attempted after row ${row} failed: ${error}`
  }
  return { results, denied }
})

const summary = (table: string, verb: string, results: ReadonlyArray<RowResult>, approvedBy: string | undefined) => {
  const count = (...statuses: ReadonlyArray<RowResult["status"]>) => results.filter((r) => statuses.includes(r.status)).length
  const applied = count("inserted", "updated", "deleted")
  const failed = count("failed", "not_attempted")
  const skipped = count("skipped")
  const structured = { table, applied, failed, skipped, results, ...(approvedBy !== undefined ? { approvedBy } : {}) }
  const problems = results.filter((r) => r.status !== "inserted" && r.status !== "updated" && r.status !== "deleted")
  const text = [
    `${table}: ${TextTable.count(applied, "row")} ${verb}${failed > 0 ? `, ${failed} failed` : ""}${skipped > 0 ? `, ${skipped} skipped` : ""}`,
    // One line per problem, uncut: the database's reason is what the model acts on.
    ...problems.map((r) => `row ${r.row}: ${r.status}${r.uuid !== undefined ? ` (${r.uuid})` : ""}: ${r.error ?? ""}`)
  ].join("\n")
  return ToolDefinition.ok(structured, text)
}

/**
 * A write tool's run: open the connection for writing, plan the edit, ask once for exactly the
 * planned requests (nothing to send: nothing to ask), then send them.
 */
const write = Effect.fnUntraced(function*(
  env: ToolEnv,
  input: { readonly connection_id: string; readonly table: string },
  edit: RowEdits.Edit,
  done: { readonly verb: string; readonly status: "inserted" | "updated" | "deleted" }
) {
  const connection = yield* open(env, input.connection_id, "write")
  if (InputRequired.is(connection)) return connection
  const plan = yield* env.driver.planRowEdits(connection, input.table, edit)
  const requests = plan.steps.flatMap((step) => ("request" in step ? [step.request] : []))
  // The write's consistency level heads the statement the user approves (it is in each request's query too).
  const level = ConsistencyLevel.effective(edit.consistencyLevel, connection)
  const statement = [...(level !== undefined ? [`consistency level: ${level}`] : []), ...requests.map(RowEdits.format)].join("\n")
  if (requests.length > 0) yield* requirePermission(env, connection, ACTION[edit._tag], plan.collection, edit.tenant)
  const approvedBy = requests.length > 0 ? yield* approve(env, connection, statement) : undefined
  if (InputRequired.is(approvedBy)) return approvedBy
  const { denied, results } = yield* perStep(plan.steps, (request, row) =>
    Effect.map(env.driver.sendRowEdit(connection, request), (uuid): RowResult => ({ row, status: done.status, uuid })))
  if (denied !== undefined) return yield* deniedMidway(denied, plan.collection, done.verb, results)
  return summary(plan.collection, done.verb, results, approvedBy)
})

/** The Weaviate action of each row edit. */
const ACTION = { insert: "create_data", update: "update_data", delete: "delete_data" } as const

/**
 * Weaviate refused a row with 403 (the permissions changed since they were read): the call is the
 * error `denied`, in the words of the check before approval, and says what was written before it.
 */
const deniedMidway = (denied: PermissionDenied, table: string, verb: string, results: ReadonlyArray<RowResult>) => {
  const applied = results.filter((r) => r.status === "inserted" || r.status === "updated" || r.status === "deleted")
  return ToolError.fail(
    "denied",
    applied.length === 0
      ? `${denied.message} (Weaviate refused it: nothing was written)`
      : `${denied.message} (Weaviate refused it after ${TextTable.count(applied.length, "row")} of ${table} ${applied.length === 1 ? "was" : "were"} ${verb}: ` +
        `${applied.slice(0, ROWS_NAMED).map((r) => `row ${r.row}${r.uuid !== undefined ? ` (${r.uuid})` : ""}`).join(", ")}` +
        `${applied.length > ROWS_NAMED ? ` and ${applied.length - ROWS_NAMED} more` : ""}; the rest was not attempted)`
  )
}

/** The written rows a refusal midway names (1,000 rows with their uuids would not fit an error's text). */
const ROWS_NAMED = 20

// ===== insert_rows =====

const NewRow = Schema.Struct({
  properties: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
    description: "Property values by name, typed as describe_table says (dates as RFC 3339 text)."
  }),
  id: Schema.optional(Uuid.annotations({ description: "The uuid to give the object; omitted: the database assigns one." })),
  vector: Schema.optional(Schema.NonEmptyArray(Schema.Number.pipe(Schema.finite())).annotations({
    description: "The object's vector; omitted: the collection's vectorizer makes one (if it has one)."
  }))
})

/** @category tools */
export const insertRows = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "insert_rows",
    title: "Insert rows",
    description: "Inserts up to 1,000 objects into a collection, each with its property values and optionally its own " +
      "uuid and vector. The user approves the exact rows first. Returns a result per row (inserted with its uuid, or " +
      "failed with the database's reason).",
    input: Schema.Struct({
      connection_id: ConnectionId,
      table: Table,
      rows: batch(NewRow, "rows"),
      tenant: Schema.optional(Tenant),
      consistency_level: Schema.optional(ConsistencyLevelParam)
    }),
    output: Output,
    annotations: WRITE,
    scopes: ["tools:write"],
    run: (input) =>
      write(env, input, {
        _tag: "insert",
        rows: input.rows.map((row) => ({ id: row.id, properties: row.properties, vector: row.vector })),
        tenant: input.tenant,
        consistencyLevel: input.consistency_level
      }, { verb: "inserted", status: "inserted" })
  })

// ===== update_rows =====

const RowUpdate = Schema.Struct({
  uuid: Schema.optional(Schema.NullOr(Schema.String)).annotations({
    description: "The uuid of the object to change; a row without one is skipped and reported."
  }),
  values: Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({
    description: "Only the properties to change (uuid and vector cannot be changed; null removes a value)."
  })
})

/** @category tools */
export const updateRows = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "update_rows",
    title: "Update rows",
    description: "Changes property values of up to 1,000 objects, each named by uuid (a PATCH of only the given " +
      "properties). A row without a uuid is skipped and reported, never guessed. The user approves the exact changes first.",
    input: Schema.Struct({
      connection_id: ConnectionId,
      table: Table,
      rows: batch(RowUpdate, "rows"),
      tenant: Schema.optional(Tenant),
      consistency_level: Schema.optional(ConsistencyLevelParam)
    }),
    output: Output,
    annotations: { ...WRITE, idempotentHint: true },
    scopes: ["tools:write"],
    run: (input) =>
      write(env, input, { _tag: "update", rows: input.rows, tenant: input.tenant, consistencyLevel: input.consistency_level }, {
        verb: "updated",
        status: "updated"
      })
  })

// ===== delete_rows =====

/** @category tools */
export const deleteRows = (env: ToolEnv) =>
  ToolDefinition.make({
    name: "delete_rows",
    title: "Delete rows",
    description: "Deletes up to 1,000 objects of a collection by uuid (one DELETE per object, scoped to the collection). " +
      "The user approves the exact deletions first. To empty a collection or delete by filter use confirm_destructive_operation.",
    input: Schema.Struct({
      connection_id: ConnectionId,
      table: Table,
      uuids: batch(Uuid, "uuids"),
      tenant: Schema.optional(Tenant),
      consistency_level: Schema.optional(ConsistencyLevelParam)
    }),
    output: Output,
    annotations: { ...WRITE, destructiveHint: true, idempotentHint: true },
    scopes: ["tools:write"],
    run: (input) =>
      write(env, input, { _tag: "delete", uuids: input.uuids, tenant: input.tenant, consistencyLevel: input.consistency_level }, {
        verb: "deleted",
        status: "deleted"
      })
  })
