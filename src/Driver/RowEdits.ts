/**
 * Row edits over REST: create (`POST /v1/objects`, with an `id` only when one was given), save
 * edited cells (`PATCH /v1/objects/{Collection}/{uuid}` with `class` in the body and only the
 * changed properties), delete (`DELETE /v1/objects/{Collection}/{uuid}`). The class-scoped routes
 * are used because real Weaviate ignores `?class=` on `/v1/objects/{uuid}` (a DELETE there removes
 * the uuid from every collection). An update or delete without a uuid is skipped and logged; no
 * request is sent. The `vector` and `uuid` columns are never written back by an update.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as ConsistencyLevel from "../Schema/ConsistencyLevel.ts"
import type { Collection } from "./CollectionSchema.ts"
import type { RequestError } from "./DriverError.ts"
import type { WeaviateHttp } from "./WeaviateHttp.ts"

/** @category models */
export interface NewRow {
  readonly id?: string | undefined
  readonly properties: Readonly<Record<string, unknown>>
  readonly vector?: ReadonlyArray<number> | undefined
}

/** @category models */
export interface RowUpdate {
  readonly uuid?: string | null | undefined
  /** The changed cells only. */
  readonly values: Readonly<Record<string, unknown>>
}

/** @category models */
export interface Skipped {
  /** Position of the row in the request. */
  readonly index: number
  readonly reason: string
}

/** @category models */
export interface EditResult {
  /** uuids written (created, updated or deleted). */
  readonly applied: ReadonlyArray<string>
  readonly skipped: ReadonlyArray<Skipped>
}

/**
 * One REST call of an edit, exactly as it will be sent; `format` renders it for the approval.
 *
 * @category models
 */
export interface EditRequest {
  readonly method: "POST" | "PATCH" | "DELETE"
  readonly path: string
  readonly query: Readonly<Record<string, string>>
  readonly body?: Readonly<Record<string, unknown>>
  /** The object's uuid when the request names one (update, delete, insert with an id). */
  readonly uuid?: string
}

/**
 * Deleting many rows at once, or the whole collection: `DELETE /v1/batch/objects` with a `where`
 * (all rows: a tautology on the id, the one filter every collection accepts), or
 * `DELETE /v1/schema/{Collection}`.
 *
 * @category models
 */
export type Destructive =
  | { readonly _tag: "drop" }
  | { readonly _tag: "deleteAll"; readonly tenant?: string | undefined }
  | { readonly _tag: "deleteWhere"; readonly where: Readonly<Record<string, unknown>>; readonly tenant?: string | undefined }

const NIL_UUID = "00000000-0000-0000-0000-000000000000"

/** Matches every object (see `Destructive`). */
const EVERY_OBJECT = {
  operator: "Or",
  operands: [
    { path: ["id"], operator: "Equal", valueText: NIL_UUID },
    { path: ["id"], operator: "NotEqual", valueText: NIL_UUID }
  ]
}

/** Most batch-delete calls one deletion makes (each deletes up to the database's result limit). */
const MAX_ROUNDS = 1000

/**
 * The one request of a destructive operation, exactly as it will be sent (and shown).
 *
 * @category planning
 */
export const planDestructive = (collection: Collection, operation: Destructive): EditRequest => {
  if (operation._tag === "drop") return { method: "DELETE", path: `/v1/schema/${encodeURIComponent(collection.name)}`, query: {} }
  const where = operation._tag === "deleteAll" ? EVERY_OBJECT : operation.where
  return {
    method: "DELETE",
    path: "/v1/batch/objects",
    query: tenantQuery(operation.tenant),
    body: { match: { class: collection.name, where }, output: "minimal" }
  }
}

/**
 * Sends a destructive request. A batch delete is repeated until a call deletes fewer objects than the
 * database's per-call limit (bounded); the answer is how many were deleted (0 for a drop).
 *
 * @category requests
 */
export const sendDestructive = Effect.fnUntraced(function*(
  http: WeaviateHttp,
  request: EditRequest
): Effect.fn.Return<number, RequestError> {
  const send = http.requestOk({
    method: request.method,
    path: request.path,
    query: request.query,
    ...(request.body !== undefined ? { body: { json: request.body } } : {})
  })
  if (request.path !== "/v1/batch/objects") return yield* Effect.as(send, 0)
  let deleted = 0
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const response = yield* send
    const results = (response.json as { results?: { successful?: unknown; limit?: unknown } } | undefined)?.results
    const successful = typeof results?.successful === "number" ? results.successful : 0
    const limit = typeof results?.limit === "number" ? results.limit : Number.POSITIVE_INFINITY
    deleted += successful
    if (successful === 0 || successful < limit) break
  }
  return deleted
})

/** One row of an edit: the request that writes it, or why no request is sent. @category models */
export type Step =
  | { readonly index: number; readonly request: EditRequest }
  | { readonly index: number; readonly skipped: string }

/** An edit of one collection, planned before anything is sent. @category models */
export interface Plan {
  readonly collection: string
  readonly steps: ReadonlyArray<Step>
}

/** What a caller asks for; `planFor` turns it into requests. @category models */
export type Edit = (
  | { readonly _tag: "insert"; readonly rows: ReadonlyArray<NewRow>; readonly tenant?: string | undefined }
  | { readonly _tag: "update"; readonly rows: ReadonlyArray<RowUpdate>; readonly tenant?: string | undefined }
  | { readonly _tag: "delete"; readonly uuids: ReadonlyArray<string | null | undefined>; readonly tenant?: string | undefined }
) & {
  /** `consistency_level` of every request; none: Weaviate's default. */
  readonly consistencyLevel?: ConsistencyLevel.ConsistencyLevel | undefined
}

/** Options of a row edit. @category models */
export interface EditOptions {
  readonly tenant?: string | undefined
  readonly consistencyLevel?: ConsistencyLevel.ConsistencyLevel | undefined
}

const objectPath = (collection: Collection, uuid: string) =>
  `/v1/objects/${encodeURIComponent(collection.name)}/${encodeURIComponent(uuid)}`

const hasUuid = (uuid: string | null | undefined): uuid is string => typeof uuid === "string" && uuid.trim().length > 0

const READ_ONLY_COLUMNS = new Set(["uuid", "vector"])

const tenantQuery = (tenant: string | undefined, level?: ConsistencyLevel.ConsistencyLevel): Readonly<Record<string, string>> => ({
  ...(tenant === undefined ? {} : { tenant }),
  ...ConsistencyLevel.query(level)
})

/**
 * The requests of an edit, one per row: `POST /v1/objects` for a new row (with its `id` only when one
 * was given), a `PATCH` of only the changed properties, or a `DELETE`, both on the class-scoped route.
 * An update or delete without a uuid, or an update that changes nothing, is a skipped step.
 *
 * @category planning
 */
export const planFor = (collection: Collection, edit: Edit): Plan => {
  const tenant = edit.tenant
  const inBody = tenant === undefined ? {} : { tenant }
  switch (edit._tag) {
    case "insert":
      return {
        collection: collection.name,
        steps: edit.rows.map((row, index): Step => ({
          index,
          request: {
            method: "POST",
            path: "/v1/objects",
            query: ConsistencyLevel.query(edit.consistencyLevel),
            body: {
              class: collection.name,
              properties: row.properties,
              ...(hasUuid(row.id) ? { id: row.id } : {}),
              ...(row.vector !== undefined ? { vector: row.vector } : {}),
              ...inBody
            },
            ...(hasUuid(row.id) ? { uuid: row.id } : {})
          }
        }))
      }
    case "update":
      return {
        collection: collection.name,
        steps: edit.rows.map((row, index): Step => {
          if (!hasUuid(row.uuid)) return { index, skipped: "the row has no uuid; update skipped" }
          const properties = Object.fromEntries(Object.entries(row.values).filter(([k]) => !READ_ONLY_COLUMNS.has(k)))
          if (Object.keys(properties).length === 0) return { index, skipped: "no changed property (uuid and vector are read-only)" }
          return {
            index,
            request: {
              method: "PATCH",
              path: objectPath(collection, row.uuid),
              query: tenantQuery(tenant, edit.consistencyLevel),
              body: { class: collection.name, properties, ...inBody },
              uuid: row.uuid
            }
          }
        })
      }
    case "delete":
      return {
        collection: collection.name,
        steps: edit.uuids.map((uuid, index): Step =>
          hasUuid(uuid)
            ? { index, request: { method: "DELETE", path: objectPath(collection, uuid), query: tenantQuery(tenant, edit.consistencyLevel), uuid } }
            : { index, skipped: "the row has no uuid; delete skipped" }
        )
      }
  }
}

/**
 * A request as the approval shows it: the method and path with its query, then the JSON body on the
 * next line.
 *
 * @category formatting
 */
export const format = (request: EditRequest): string => {
  const query = new URLSearchParams(request.query).toString()
  const line = `${request.method} ${request.path}${query.length > 0 ? `?${query}` : ""}`
  return request.body === undefined ? line : `${line}\n${JSON.stringify(request.body)}`
}

/**
 * Sends one request; answers the uuid written (for an insert, the one the database assigned or kept).
 *
 * @category requests
 */
export const send = Effect.fnUntraced(function*(
  http: WeaviateHttp,
  request: EditRequest
): Effect.fn.Return<string, RequestError> {
  const response = yield* http.requestOk({
    method: request.method,
    path: request.path,
    query: request.query,
    ...(request.body !== undefined ? { body: { json: request.body } } : {})
  })
  const id = (response.json as { id?: unknown } | undefined)?.id
  return request.method === "POST" && typeof id === "string" ? id : request.uuid ?? ""
})

/**
 * Sends a plan's requests in order; skipped steps are logged and reported, without a request.
 *
 * @category requests
 */
export const apply = Effect.fnUntraced(function*(
  http: WeaviateHttp,
  plan: Plan
): Effect.fn.Return<EditResult, RequestError> {
  const applied: Array<string> = []
  const skipped: Array<Skipped> = []
  for (const step of plan.steps) {
    if ("skipped" in step) {
      yield* Effect.logWarning(`${plan.collection}: row ${step.index}: ${step.skipped}`)
      skipped.push({ index: step.index, reason: step.skipped })
      continue
    }
    applied.push(yield* send(http, step.request))
  }
  return { applied, skipped }
})

/**
 * Creates rows, one `POST /v1/objects` each; returns the uuids the database assigned or kept.
 *
 * @category requests
 */
export const insert = (
  http: WeaviateHttp,
  collection: Collection,
  rows: ReadonlyArray<NewRow>,
  options: EditOptions = {}
): Effect.Effect<EditResult, RequestError> =>
  apply(http, planFor(collection, { _tag: "insert", rows, tenant: options.tenant, consistencyLevel: options.consistencyLevel }))

/**
 * Saves edited cells; rows without a uuid are skipped (and logged) without a request.
 *
 * @category requests
 */
export const update = (
  http: WeaviateHttp,
  collection: Collection,
  rows: ReadonlyArray<RowUpdate>,
  options: EditOptions = {}
): Effect.Effect<EditResult, RequestError> =>
  apply(http, planFor(collection, { _tag: "update", rows, tenant: options.tenant, consistencyLevel: options.consistencyLevel }))

/**
 * Deletes rows by uuid; an empty uuid is skipped (and logged) without a request.
 *
 * @category requests
 */
export const remove = (
  http: WeaviateHttp,
  collection: Collection,
  uuids: ReadonlyArray<string | null | undefined>,
  options: EditOptions = {}
): Effect.Effect<EditResult, RequestError> =>
  apply(http, planFor(collection, { _tag: "delete", uuids, tenant: options.tenant, consistencyLevel: options.consistencyLevel }))
