/**
 * The row writes: `insert_rows`, `update_rows`, `delete_rows`. Each checks what it can before asking
 * (arguments, write permission, that the collection exists), then asks for approval with the exact
 * REST calls it will make, and on `Execute` sends each call exactly once. Results are per row: one
 * row refused by the database does not stop the others; a lost connection stops the rest, which are
 * reported as `not_attempted` (never retried, so nothing is written twice).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Redaction from "../../Base/Redaction.ts"
import type { Collection } from "../../Driver/CollectionSchema.ts"
import type { RequestError } from "../../Driver/DriverError.ts"
import * as RowEdits from "../../Driver/RowEdits.ts"
import { approve, open, type ToolEnv } from "./ConnectionGate.ts"
import { ConnectionId, Table, Tenant, Uuid } from "./Parameters.ts"
import * as TextTable from "./TextTable.ts"
import * as ToolDefinition from "./ToolDefinition.ts"

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

const objectPath = (table: string, uuid: string, tenant: string | undefined) =>
  `/v1/objects/${encodeURIComponent(table)}/${encodeURIComponent(uuid)}${tenant !== undefined ? `?tenant=${encodeURIComponent(tenant)}` : ""}`

/**
 * Runs one call per item; a database refusal fails that item, any other error stops the rest.
 */
const perRow = <A>(
  items: ReadonlyArray<A>,
  run: (item: A, row: number) => Effect.Effect<RowResult, RequestError>
) =>
  Effect.gen(function*() {
    const results: Array<RowResult> = []
    let stopped: string | undefined
    for (const [index, item] of items.entries()) {
      const row = index + 1
      if (stopped !== undefined) {
        results.push({ row, status: "not_attempted", error: stopped })
        continue
      }
      const outcome = yield* Effect.either(run(item, row))
      if (outcome._tag === "Right") {
        results.push(outcome.right)
        continue
      }
      const error = Redaction.global.redact(outcome.left.message)
      results.push({ row, status: "failed", error })
      if (outcome.left._tag !== "DatabaseRefused") stopped = `not attempted after row ${row} failed: ${error}`
    }
    return results
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

const prepare = (env: ToolEnv, connectionId: string, table: string) =>
  Effect.all({ http: env.driver.http(connectionId), collection: Effect.map(env.driver.describe(connectionId, table), (d) => d.collection) })

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

const insertBody = (collection: Collection, row: typeof NewRow.Type, tenant: string | undefined) => ({
  class: collection.name,
  properties: row.properties,
  ...(row.id !== undefined ? { id: row.id } : {}),
  ...(row.vector !== undefined ? { vector: row.vector } : {}),
  ...(tenant !== undefined ? { tenant } : {})
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
      tenant: Schema.optional(Tenant)
    }),
    output: Output,
    annotations: WRITE,
    scopes: ["tools:write"],
    run: (input, raw) =>
      Effect.gen(function*() {
        const call = { tool: "insert_rows", arguments: raw }
        const connection = yield* open(env, call, input.connection_id, "write")
        const { collection, http } = yield* prepare(env, connection.id, input.table)
        const statement = input.rows
          .map((row) => `POST /v1/objects\n${JSON.stringify(insertBody(collection, row, input.tenant))}`)
          .join("\n")
        const approvedBy = yield* approve(env, call, connection, statement)
        const results = yield* perRow(input.rows, (item, row) =>
          Effect.map(
            RowEdits.insert(http, collection, [{ id: item.id, properties: item.properties, vector: item.vector }], { tenant: input.tenant }),
            (r): RowResult => ({ row, status: "inserted", uuid: r.applied[0] ?? "" })
          ))
        return summary(collection.name, "inserted", results, approvedBy)
      })
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

const hasUuid = (uuid: string | null | undefined): uuid is string => typeof uuid === "string" && uuid.trim().length > 0
const changedValues = (values: Readonly<Record<string, unknown>>) =>
  Object.fromEntries(Object.entries(values).filter(([k]) => k !== "uuid" && k !== "vector"))

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
      tenant: Schema.optional(Tenant)
    }),
    output: Output,
    annotations: { ...WRITE, idempotentHint: true },
    scopes: ["tools:write"],
    run: (input, raw) =>
      Effect.gen(function*() {
        const call = { tool: "update_rows", arguments: raw }
        const connection = yield* open(env, call, input.connection_id, "write")
        const { collection, http } = yield* prepare(env, connection.id, input.table)
        const skip = (row: typeof RowUpdate.Type) =>
          !hasUuid(row.uuid)
            ? "the row has no uuid; update skipped"
            : Object.keys(changedValues(row.values)).length === 0
            ? "no changed property (uuid and vector are read-only)"
            : undefined
        const writes = input.rows.filter((row) => skip(row) === undefined)
        let approvedBy: string | undefined
        if (writes.length > 0) {
          const statement = writes
            .map((row) =>
              `PATCH ${objectPath(collection.name, row.uuid!, input.tenant)}\n${
                JSON.stringify({
                  class: collection.name,
                  properties: changedValues(row.values),
                  ...(input.tenant !== undefined ? { tenant: input.tenant } : {})
                })
              }`
            )
            .join("\n")
          approvedBy = yield* approve(env, call, connection, statement)
        }
        const results = yield* perRow(input.rows, (item, row): Effect.Effect<RowResult, RequestError> => {
          const reason = skip(item)
          if (reason !== undefined) return Effect.succeed({ row, status: "skipped", error: reason })
          return Effect.as(
            RowEdits.update(http, collection, [{ uuid: item.uuid, values: item.values }], { tenant: input.tenant }),
            { row, status: "updated", uuid: item.uuid! }
          )
        })
        return summary(collection.name, "updated", results, approvedBy)
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
      tenant: Schema.optional(Tenant)
    }),
    output: Output,
    annotations: { ...WRITE, destructiveHint: true, idempotentHint: true },
    scopes: ["tools:write"],
    run: (input, raw) =>
      Effect.gen(function*() {
        const call = { tool: "delete_rows", arguments: raw }
        const connection = yield* open(env, call, input.connection_id, "write")
        const { collection, http } = yield* prepare(env, connection.id, input.table)
        const statement = input.uuids.map((uuid) => `DELETE ${objectPath(collection.name, uuid, input.tenant)}`).join("\n")
        const approvedBy = yield* approve(env, call, connection, statement)
        const results = yield* perRow(input.uuids, (uuid, row) =>
          Effect.as(
            RowEdits.remove(http, collection, [uuid], { tenant: input.tenant }),
            { row, status: "deleted" as const, uuid }
          ))
        return summary(collection.name, "deleted", results, approvedBy)
      })
  })
