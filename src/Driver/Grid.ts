/**
 * The collection grid. An unfiltered, unsorted page is `GET /v1/objects?class=&limit=&offset=`
 * (with `include=vector`); a filter or a sort turns it into a GraphQL `Get` with `where` and `sort`.
 * The grid offers no page past row 10,000, and a page whose offset plus limit exceeds the database's
 * `QUERY_MAXIMUM_RESULTS` is sent and reported as the database's refusal. Row counts come from
 * `Aggregate { C { meta { count } } }`. A full read (export) walks the `after` cursor and has no cap.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as ConsistencyLevel from "../Schema/ConsistencyLevel.ts"
import { serverMessage as weaviateMessage } from "./WeaviateHttp.ts"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { type Collection, type Column, columns as columnsOf, type Property } from "./CollectionSchema.ts"
import { DatabaseRefused, type FilterRefused, type RequestError, StatementRefused, UnexpectedResponse } from "./DriverError.ts"
import * as FilterBuilder from "./FilterBuilder.ts"
import * as ObjectsPage from "./ObjectsPage.ts"
import type { GraphqlResponse, WeaviateHttp } from "./WeaviateHttp.ts"

/** The grid stops offering pages at this row. @category constants */
export const PAGING_DEPTH = 10_000

/** @category constants */
export const DEFAULT_PAGE_SIZE = 50

/** A row: `uuid`, one key per property column, `vector`. @category models */
export type Row = Readonly<Record<string, unknown>>

/** @category models */
export interface PageRequest {
  readonly filters?: ReadonlyArray<FilterBuilder.Filter>
  readonly sort?: ReadonlyArray<FilterBuilder.Sort>
  readonly limit?: number
  readonly offset?: number
  readonly tenant?: string | undefined
  /** `consistency_level` (REST) / `consistencyLevel` (GraphQL `Get`); none: Weaviate's default. */
  readonly consistencyLevel?: ConsistencyLevel.ConsistencyLevel | undefined
}

/** @category models */
export interface Page {
  readonly collection: string
  readonly columns: ReadonlyArray<Column>
  readonly rows: ReadonlyArray<Row>
  readonly offset: number
  readonly limit: number
  /** The offset of the next page; absent on the last page and at row 10,000. */
  readonly nextOffset?: number
  /** Which call produced the page. */
  readonly source: "rest" | "graphql"
}

// ===== Cells =====

/**
 * A cell as text: arrays and objects as JSON, null as the empty string.
 *
 * @category rendering
 */
export const renderCell = (value: unknown): string =>
  value === null || value === undefined
    ? ""
    : typeof value === "string"
    ? value
    : value instanceof ObjectsPage.JsonText
    ? value.text
    : typeof value === "object"
    ? JSON.stringify(value)
    : String(value)

const record = (u: unknown): Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u) ? (u as Record<string, unknown>) : {}

/** A list of numbers, parsed or kept as text (`ObjectsPage.JsonText`). */
const isList = (value: unknown): value is ReadonlyArray<unknown> | ObjectsPage.JsonText =>
  Array.isArray(value) || value instanceof ObjectsPage.JsonText

const isEmptyList = (value: ReadonlyArray<unknown> | ObjectsPage.JsonText): boolean =>
  value instanceof ObjectsPage.JsonText ? value.isEmptyList : value.length === 0

/** The vector cells of an object: `vector`, or `vector:<name>` for each named vector (null when absent). */
const vectorCells = (collection: Collection, vector: unknown, vectors: unknown): Record<string, unknown> => {
  const named = record(vectors)
  if (collection.namedVectors.length === 0) {
    if (isList(vector) && !isEmptyList(vector)) return { vector }
    // A legacy object may still carry its one vector under `vectors`.
    const only = Object.values(named).filter(isList)
    return { vector: only.length === 1 ? only[0] : null }
  }
  return Object.fromEntries(collection.namedVectors.map((name) => [`vector:${name}`, isList(named[name]) ? named[name] : null]))
}

/**
 * A REST object (`GET /v1/objects`) as a grid row.
 *
 * @category rows
 */
export const rowFromObject = (collection: Collection, object: unknown): Row => {
  const o = record(object)
  const properties = record(o.properties)
  const row: Record<string, unknown> = { uuid: typeof o.id === "string" ? o.id : null }
  for (const p of collection.properties) row[p.name] = properties[p.name] ?? null
  return Object.assign(row, vectorCells(collection, o.vector, o.vectors))
}

const refsFromGraphql = (property: Property, value: unknown): unknown => {
  if (!Array.isArray(value)) return value ?? null
  const target = property.dataType[0]
  return value.map((item) => {
    const id = record(record(item)._additional).id
    return { beacon: `weaviate://localhost/${target}/${String(id)}`, href: `/v1/objects/${target}/${String(id)}` }
  })
}

/**
 * A GraphQL `Get` item (selected by `selection`) as a grid row.
 *
 * @category rows
 */
export const rowFromGraphql = (collection: Collection, item: unknown): Row => {
  const o = record(item)
  const additional = record(o._additional)
  const row: Record<string, unknown> = { uuid: typeof additional.id === "string" ? additional.id : null }
  for (const p of collection.properties) {
    row[p.name] = p.baseType === "reference" ? refsFromGraphql(p, o[p.name]) : o[p.name] ?? null
  }
  return Object.assign(row, vectorCells(collection, additional.vector, additional.vectors))
}

// ===== GraphQL selection =====

const IDENTIFIER = /^[_A-Za-z][_0-9A-Za-z]*$/

const selectProperty = (p: Property, depth: number): string | undefined => {
  if (!IDENTIFIER.test(p.name) || depth > 8) return undefined
  switch (p.baseType) {
    case "geoCoordinates":
      return `${p.name} { latitude longitude }`
    case "phoneNumber":
      return `${p.name} { input internationalFormatted countryCode nationalFormatted national valid defaultCountry }`
    case "object": {
      const nested = (p.nestedProperties ?? []).map((n) => selectProperty(n, depth + 1)).filter((s) => s !== undefined)
      return nested.length === 0 ? undefined : `${p.name} { ${nested.join(" ")} }`
    }
    case "reference": {
      // Multi-target references cannot name their class in a row; they stay out of filtered pages.
      const target = p.dataType[0]!
      return p.dataType.length === 1 && IDENTIFIER.test(target)
        ? `${p.name} { ... on ${target} { _additional { id } } }`
        : undefined
    }
    default:
      return p.name
  }
}

/**
 * The fields a grid page selects: every property and `_additional { id vector }`, or
 * `_additional { id vectors { <name> … } }` for named vectors (or the `_additional` fields given).
 *
 * @category graphql
 */
export const selection = (collection: Collection, additional?: string): string => {
  const names = collection.namedVectors.filter((name) => IDENTIFIER.test(name))
  return [
    ...collection.properties.map((p) => selectProperty(p, 0)).filter((s) => s !== undefined),
    additional !== undefined
      ? `_additional { ${additional} }`
      : names.length === 0
      ? "_additional { id vector }"
      : `_additional { id vectors { ${names.join(" ")} } }`
  ].join(" ")
}

const classArguments = (args: ReadonlyArray<readonly [string, string | undefined]>) => {
  const present = args.filter((a): a is readonly [string, string] => a[1] !== undefined)
  return present.length === 0 ? "" : `(${present.map(([k, v]) => `${k}: ${v}`).join(", ")})`
}

/** The message of GraphQL errors, or `undefined` when there are none. */
const graphqlFailure = (response: GraphqlResponse): DatabaseRefused | undefined =>
  response.errors !== undefined && response.errors.length > 0
    ? new DatabaseRefused({ status: 200, detail: response.errors.map((e) => e.message).join("; ") })
    : undefined

// ===== Requests =====

const checkPaging = (limit: number, offset: number) =>
  !Number.isSafeInteger(limit) || limit < 1
    ? Effect.fail(new StatementRefused({ reason: "the limit is a whole number of at least 1" }))
    : !Number.isSafeInteger(offset) || offset < 0
    ? Effect.fail(new StatementRefused({ reason: "the offset is a whole number of at least 0" }))
    : Effect.void

/**
 * One page of the grid.
 *
 * @category requests
 */
export const page = Effect.fnUntraced(function*(
  http: WeaviateHttp,
  collection: Collection,
  request: PageRequest = {}
): Effect.fn.Return<Page, RequestError | FilterRefused | StatementRefused> {
  const limit = request.limit ?? DEFAULT_PAGE_SIZE
  const offset = request.offset ?? 0
  yield* checkPaging(limit, offset)
  // Refusals happen here, before any request.
  const where = yield* FilterBuilder.buildWhere(collection, request.filters ?? [])
  const sort = yield* FilterBuilder.buildSort(collection, request.sort ?? [])
  const columns = columnsOf(collection)
  const finish = (rows: ReadonlyArray<Row>, source: "rest" | "graphql"): Page => {
    const next = offset + limit
    return {
      collection: collection.name,
      columns,
      rows,
      offset,
      limit,
      source,
      ...(rows.length === limit && next < PAGING_DEPTH ? { nextOffset: next } : {})
    }
  }
  if (where === undefined && sort === undefined) {
    const response = yield* http.requestOk({
      method: "GET",
      path: "/v1/objects",
      query: {
        class: collection.name,
        limit: String(limit),
        offset: String(offset),
        include: "vector",
        tenant: request.tenant,
        ...ConsistencyLevel.query(request.consistencyLevel)
      }
    })
    const objects = record(response.json).objects
    if (objects !== undefined && !Array.isArray(objects)) {
      return yield* new UnexpectedResponse({ detail: "GET /v1/objects did not return a list of objects" })
    }
    return finish((objects ?? []).map((o) => rowFromObject(collection, o)), "rest")
  }
  const args = classArguments([
    ["where", where === undefined ? undefined : FilterBuilder.printWhere(where)],
    ["sort", sort],
    ["limit", String(limit)],
    ["offset", String(offset)],
    ["tenant", request.tenant === undefined ? undefined : FilterBuilder.graphqlString(request.tenant)],
    ["consistencyLevel", ConsistencyLevel.replicated(collection.raw) ? request.consistencyLevel : undefined]
  ])
  const response = yield* http.graphql(`{ Get { ${collection.name}${args} { ${selection(collection)} } } }`)
  const failure = graphqlFailure(response)
  if (failure !== undefined) return yield* failure
  const items = record(record(response.data).Get)[collection.name]
  return finish(Array.isArray(items) ? items.map((i) => rowFromGraphql(collection, i)) : [], "graphql")
})

/**
 * The number of rows (matching the filters), via `Aggregate`.
 *
 * @category requests
 */
export const count = Effect.fnUntraced(function*(
  http: WeaviateHttp,
  collection: Collection,
  options: { readonly filters?: ReadonlyArray<FilterBuilder.Filter>; readonly tenant?: string | undefined } = {}
): Effect.fn.Return<number, RequestError | FilterRefused> {
  const where = yield* FilterBuilder.buildWhere(collection, options.filters ?? [])
  const args = classArguments([
    ["where", where === undefined ? undefined : FilterBuilder.printWhere(where)],
    ["tenant", options.tenant === undefined ? undefined : FilterBuilder.graphqlString(options.tenant)]
  ])
  const response = yield* http.graphql(`{ Aggregate { ${collection.name}${args} { meta { count } } } }`)
  const failure = graphqlFailure(response)
  if (failure !== undefined) return yield* failure
  const groups = record(record(response.data).Aggregate)[collection.name]
  const value = Array.isArray(groups) ? record(record(groups[0]).meta).count : undefined
  if (typeof value !== "number") return yield* new UnexpectedResponse({ detail: "Aggregate returned no meta count" })
  return value
})

/**
 * One row by uuid; `None` when it does not exist.
 *
 * @category requests
 */
export const getRow = Effect.fnUntraced(function*(
  http: WeaviateHttp,
  collection: Collection,
  uuid: string,
  options: {
    readonly includeVector?: boolean
    readonly tenant?: string | undefined
    readonly consistencyLevel?: ConsistencyLevel.ConsistencyLevel | undefined
  } = {}
): Effect.fn.Return<Option.Option<Row>, RequestError> {
  const response = yield* http.request({
    method: "GET",
    path: `/v1/objects/${encodeURIComponent(collection.name)}/${encodeURIComponent(uuid)}`,
    query: {
      include: options.includeVector === false ? undefined : "vector",
      tenant: options.tenant,
      ...ConsistencyLevel.query(options.consistencyLevel)
    }
  })
  if (response.status === 404) return Option.none()
  if (response.status < 200 || response.status >= 300) {
    return yield* new DatabaseRefused({ status: response.status, detail: http.scrub(weaviateMessage(response)) })
  }
  return Option.some(rowFromObject(collection, response.json))
})

/** Options of a full read. @category models */
export interface ReadAllOptions {
  readonly pageSize?: number
  readonly tenant?: string | undefined
  /** Start after this uuid (the cursor an interrupted read printed); from the first row without it. */
  readonly after?: string | undefined
  /** Ask for the vectors (default true); without them a row's vector cells are null. */
  readonly includeVector?: boolean
  /** Weaviate's `consistency_level` (`ONE`, `QUORUM`, `ALL`). */
  readonly consistencyLevel?: ConsistencyLevel.ConsistencyLevel | undefined
  /**
   * Vector cells as `JsonText` (the text Weaviate sent) instead of lists of numbers: for writing rows
   * out again (`export`), where parsing and printing the numbers would only give back the same text.
   */
  readonly vectorText?: boolean
}

/**
 * Every row of a collection through the `after` cursor (no offset, so no `QUERY_MAXIMUM_RESULTS` cap),
 * as stored: the pages are not redacted (see `WeaviateHttp`'s `raw`).
 *
 * @category requests
 */
export const readAll = (
  http: WeaviateHttp,
  collection: Collection,
  options: ReadAllOptions = {}
): Stream.Stream<Row, RequestError> => {
  const pageSize = Math.max(1, Math.min(options.pageSize ?? 500, 10_000))
  const include = options.includeVector === false ? undefined : "vector"
  return Stream.paginateChunkEffect(options.after ?? "" as string | undefined, (after) =>
    http.requestOk({
      method: "GET",
      path: "/v1/objects",
      query: {
        class: collection.name,
        limit: String(pageSize),
        after,
        include,
        tenant: options.tenant,
        ...ConsistencyLevel.query(options.consistencyLevel)
      },
      // The rows as stored: redaction is for messages, and would rewrite a row that merely looks
      // like a secret ("password: …"), so an export would not give back what was imported.
      raw: true
    }).pipe(
      Effect.flatMap((response) => {
        const page = ObjectsPage.parse(response.text, { vectorText: options.vectorText === true })
        if (page === undefined) return Effect.fail(new UnexpectedResponse({ detail: "GET /v1/objects did not return JSON" }))
        const objects = page.objects ?? []
        if (!Array.isArray(objects)) {
          return Effect.fail(new UnexpectedResponse({ detail: "GET /v1/objects did not return a list of objects" }))
        }
        const rows = objects.map((o) => rowFromObject(collection, o))
        const last = rows.length > 0 ? rows[rows.length - 1]!.uuid : undefined
        // The cursor must move forward; a short page is the last one.
        const next = rows.length === pageSize && typeof last === "string" && last !== after
          ? Option.some<string | undefined>(last)
          : Option.none()
        return Effect.succeed([Chunk.fromIterable(rows), next] as const)
      })
    ))
}
