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

const objectPath = (collection: Collection, uuid: string) =>
  `/v1/objects/${encodeURIComponent(collection.name)}/${encodeURIComponent(uuid)}`

const hasUuid = (uuid: string | null | undefined): uuid is string => typeof uuid === "string" && uuid.trim().length > 0

const READ_ONLY_COLUMNS = new Set(["uuid", "vector"])

/**
 * Creates rows, one `POST /v1/objects` each; returns the uuids the database assigned or kept.
 *
 * @category requests
 */
export const insert = Effect.fn("RowEdits.insert")(function*(
  http: WeaviateHttp,
  collection: Collection,
  rows: ReadonlyArray<NewRow>,
  options: { readonly tenant?: string | undefined } = {}
): Effect.fn.Return<EditResult, RequestError> {
  const applied: Array<string> = []
  for (const row of rows) {
    const body = {
      class: collection.name,
      properties: row.properties,
      ...(hasUuid(row.id) ? { id: row.id } : {}),
      ...(row.vector !== undefined ? { vector: row.vector } : {}),
      ...(options.tenant !== undefined ? { tenant: options.tenant } : {})
    }
    const response = yield* http.requestOk({ method: "POST", path: "/v1/objects", body: { json: body } })
    const id = (response.json as { id?: unknown } | undefined)?.id
    applied.push(typeof id === "string" ? id : row.id ?? "")
  }
  return { applied, skipped: [] }
})

/**
 * Saves edited cells; rows without a uuid are skipped (and logged) without a request.
 *
 * @category requests
 */
export const update = Effect.fn("RowEdits.update")(function*(
  http: WeaviateHttp,
  collection: Collection,
  rows: ReadonlyArray<RowUpdate>,
  options: { readonly tenant?: string | undefined } = {}
): Effect.fn.Return<EditResult, RequestError> {
  const applied: Array<string> = []
  const skipped: Array<Skipped> = []
  for (const [index, row] of rows.entries()) {
    if (!hasUuid(row.uuid)) {
      const reason = "the row has no uuid; update skipped"
      yield* Effect.logWarning(`${collection.name}: row ${index}: ${reason}`)
      skipped.push({ index, reason })
      continue
    }
    const properties = Object.fromEntries(Object.entries(row.values).filter(([k]) => !READ_ONLY_COLUMNS.has(k)))
    if (Object.keys(properties).length === 0) {
      skipped.push({ index, reason: "no changed property (uuid and vector are read-only)" })
      continue
    }
    yield* http.requestOk({
      method: "PATCH",
      path: objectPath(collection, row.uuid),
      query: { tenant: options.tenant },
      body: {
        json: { class: collection.name, properties, ...(options.tenant !== undefined ? { tenant: options.tenant } : {}) }
      }
    })
    applied.push(row.uuid)
  }
  return { applied, skipped }
})

/**
 * Deletes rows by uuid; an empty uuid is skipped (and logged) without a request.
 *
 * @category requests
 */
export const remove = Effect.fn("RowEdits.remove")(function*(
  http: WeaviateHttp,
  collection: Collection,
  uuids: ReadonlyArray<string | null | undefined>,
  options: { readonly tenant?: string | undefined } = {}
): Effect.fn.Return<EditResult, RequestError> {
  const applied: Array<string> = []
  const skipped: Array<Skipped> = []
  for (const [index, uuid] of uuids.entries()) {
    if (!hasUuid(uuid)) {
      const reason = "the row has no uuid; delete skipped"
      yield* Effect.logWarning(`${collection.name}: row ${index}: ${reason}`)
      skipped.push({ index, reason })
      continue
    }
    yield* http.requestOk({ method: "DELETE", path: objectPath(collection, uuid), query: { tenant: options.tenant } })
    applied.push(uuid)
  }
  return { applied, skipped }
})
