/**
 * Collections and their grid columns, from `GET /v1/schema`. Columns: `uuid` first (primary key,
 * read-only), the properties in schema order (arrays and objects rendered as JSON text,
 * cross-references as plain properties), `vector` last (read-only JSON array of numbers).
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { CollectionNotFound, type ConnectionFailed, type RequestError, UnexpectedResponse } from "./DriverError.ts"
import type { Request as HttpRequest, WeaviateHttp } from "./WeaviateHttp.ts"

// ===== Models =====

/** The kinds a property can filter and sort as. @category models */
export type BaseType =
  | "text"
  | "int"
  | "number"
  | "boolean"
  | "date"
  | "uuid"
  | "geoCoordinates"
  | "phoneNumber"
  | "blob"
  | "object"
  | "reference"

/** @category models */
export interface Property {
  readonly name: string
  /** As in the schema, e.g. `["text[]"]` or `["Author"]` for a cross-reference. */
  readonly dataType: ReadonlyArray<string>
  readonly baseType: BaseType
  readonly isArray: boolean
  readonly tokenization?: string
  readonly indexFilterable: boolean
  readonly indexSearchable: boolean
  readonly indexRangeFilters: boolean
  readonly description?: string
  readonly nestedProperties?: ReadonlyArray<Property>
}

/** @category models */
export interface Collection {
  readonly name: string
  readonly description?: string
  readonly vectorizer?: string
  readonly properties: ReadonlyArray<Property>
  readonly indexNullState: boolean
  readonly indexPropertyLength: boolean
  readonly indexTimestamps: boolean
  readonly multiTenancy: boolean
  /** The multi-tenancy settings (`multiTenancyConfig`). */
  readonly tenancy: Tenancy
  /** Names of named vectors (`vectorConfig`), empty for a legacy single vector. */
  readonly namedVectors: ReadonlyArray<string>
  /** Every vector of an object: each named vector, or the legacy single one (named `""`). */
  readonly vectors: ReadonlyArray<VectorIndex>
  /** The class as the schema returned it. */
  readonly raw: Record<string, unknown>
}

/** The multi-tenancy settings of a collection. @category models */
export interface Tenancy {
  readonly enabled: boolean
  /** A write to an unknown tenant creates it. */
  readonly autoTenantCreation: boolean
  /** A read or write of an inactive tenant activates it. */
  readonly autoTenantActivation: boolean
}

/** One vector index of a collection: a named vector, or the legacy single vector (name `""`). @category models */
export interface VectorIndex {
  readonly name: string
  readonly vectorizer: string
  readonly indexType: string
  readonly distance: string | undefined
}

/** @category models */
export interface Column {
  readonly name: string
  readonly kind: "uuid" | "property" | "vector"
  readonly readOnly: boolean
  readonly primaryKey: boolean
  /** The schema data type (`uuid` and `number[]` for the two fixed columns). */
  readonly dataType: string
  readonly property?: Property
}

// ===== Decoding =====

const scalarTypes: Record<string, BaseType> = {
  text: "text",
  string: "text",
  int: "int",
  number: "number",
  boolean: "boolean",
  date: "date",
  uuid: "uuid",
  geoCoordinates: "geoCoordinates",
  phoneNumber: "phoneNumber",
  blob: "blob",
  object: "object"
}

const asRecord = (u: unknown): Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u) ? (u as Record<string, unknown>) : {}

const decodeProperty = (raw: unknown): Property | undefined => {
  const p = asRecord(raw)
  if (typeof p.name !== "string") return undefined
  const dataType = Array.isArray(p.dataType) ? p.dataType.filter((t): t is string => typeof t === "string") : []
  const first = dataType[0] ?? "text"
  const isArray = first.endsWith("[]")
  const base = isArray ? first.slice(0, -2) : first
  // A cross-reference's data type names a class: it starts with an upper-case letter.
  const baseType: BaseType = /^[A-Z]/.test(first) ? "reference" : scalarTypes[base] ?? "text"
  const nested = Array.isArray(p.nestedProperties)
    ? p.nestedProperties.map(decodeProperty).filter((x): x is Property => x !== undefined)
    : undefined
  return {
    name: p.name,
    dataType,
    baseType,
    isArray: baseType === "reference" ? true : isArray,
    ...(typeof p.tokenization === "string" ? { tokenization: p.tokenization } : {}),
    indexFilterable: p.indexFilterable !== false,
    indexSearchable: p.indexSearchable !== false,
    indexRangeFilters: p.indexRangeFilters === true,
    ...(typeof p.description === "string" ? { description: p.description } : {}),
    ...(nested !== undefined ? { nestedProperties: nested } : {})
  }
}

/**
 * One class of the schema document. Index flags that are absent are false (they are `omitempty`).
 *
 * @category decoding
 */
export const decodeCollection = (raw: unknown): Collection | undefined => {
  const c = asRecord(raw)
  if (typeof c.class !== "string") return undefined
  const inverted = asRecord(c.invertedIndexConfig)
  const properties = Array.isArray(c.properties)
    ? c.properties.map(decodeProperty).filter((x): x is Property => x !== undefined)
    : []
  const tenancy = asRecord(c.multiTenancyConfig)
  const named = asRecord(c.vectorConfig)
  const indexOf = (name: string, config: Record<string, unknown>, vectorizer: unknown): VectorIndex => {
    const distance = asRecord(config.vectorIndexConfig).distance
    return {
      name,
      vectorizer: typeof vectorizer === "string" ? vectorizer : Object.keys(asRecord(vectorizer))[0] ?? "none",
      indexType: typeof config.vectorIndexType === "string" ? config.vectorIndexType : "hnsw",
      distance: typeof distance === "string" ? distance : undefined
    }
  }
  const vectors = Object.keys(named).length > 0
    ? Object.entries(named).map(([name, config]) => indexOf(name, asRecord(config), asRecord(config).vectorizer))
    : [indexOf("", c, c.vectorizer)]
  return {
    name: c.class,
    ...(typeof c.description === "string" ? { description: c.description } : {}),
    ...(typeof c.vectorizer === "string" ? { vectorizer: c.vectorizer } : {}),
    properties,
    indexNullState: inverted.indexNullState === true,
    indexPropertyLength: inverted.indexPropertyLength === true,
    indexTimestamps: inverted.indexTimestamps === true,
    multiTenancy: tenancy.enabled === true,
    tenancy: {
      enabled: tenancy.enabled === true,
      autoTenantCreation: tenancy.autoTenantCreation === true,
      autoTenantActivation: tenancy.autoTenantActivation === true
    },
    namedVectors: Object.keys(named).sort(),
    vectors: [...vectors].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    raw: c
  }
}

/**
 * The collections sorted by name: Weaviate answers `GET /v1/schema` in no fixed order (two reads of
 * an unchanged schema differ), and lists, completions and paging cursors need a stable one.
 *
 * @category decoding
 */
export const decodeSchema = (raw: unknown): ReadonlyArray<Collection> => {
  const classes = asRecord(raw).classes
  if (!Array.isArray(classes)) return []
  return classes
    .map(decodeCollection)
    .filter((x): x is Collection => x !== undefined)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

// ===== Columns =====

/**
 * The grid columns of a collection.
 *
 * @category combinators
 */
export const columns = (collection: Collection): ReadonlyArray<Column> => [
  { name: "uuid", kind: "uuid", readOnly: true, primaryKey: true, dataType: "uuid" },
  ...collection.properties
    .filter((p) => p.name !== "uuid" && p.name !== "vector")
    .map((property): Column => ({
      name: property.name,
      kind: "property",
      readOnly: false,
      primaryKey: false,
      dataType: property.dataType.join(","),
      property
    })),
  ...vectorColumns(collection).map((name): Column => ({ name, kind: "vector", readOnly: true, primaryKey: false, dataType: "number[]" }))
]

/**
 * The vector columns, last in the grid: `vector`, or `vector:<name>` for each named vector.
 *
 * @category combinators
 */
export const vectorColumns = (collection: Collection): ReadonlyArray<string> =>
  collection.namedVectors.length === 0 ? ["vector"] : collection.namedVectors.map((name) => `vector:${name}`)

/**
 * Why a vector search of `collection` through `targets` (its named vectors; `[]` for none named)
 * cannot be sent: a name it does not have, or several named vectors and none chosen. The words of
 * `vector_search` and `aggregate`.
 *
 * @category validation
 */
export const targetVectorsProblem = (collection: Collection, targets: ReadonlyArray<string>): string | undefined => {
  const named = collection.namedVectors
  const unknown = targets.filter((t) => !named.includes(t))
  if (unknown.length > 0) {
    return named.length === 0
      ? `${collection.name} has no named vectors; leave target_vectors out`
      : `${collection.name} has no named vector ${unknown.join(", ")} (it has ${named.join(", ")})`
  }
  if (targets.length === 0 && named.length > 1) return `${collection.name} has several named vectors (${named.join(", ")}); pass target_vectors`
  return undefined
}

// ===== Requests =====

/**
 * All collections, in schema order.
 *
 * @category requests
 */
export const list = Effect.fnUntraced(function*(http: WeaviateHttp) {
  const response = yield* http.requestOk({ method: "GET", path: "/v1/schema" })
  if (typeof response.json !== "object" || response.json === null) {
    return yield* new UnexpectedResponse({ detail: "GET /v1/schema did not return a schema document" })
  }
  return decodeSchema(response.json)
})

/**
 * One collection by name: `GET /v1/schema/{name}` (one class, not the whole schema); when that does
 * not answer with the class (another case, an older server), the whole schema is read and the name
 * matched exactly, then case-insensitively, as Weaviate upper-cases the first letter.
 *
 * @category requests
 */
export const get = (
  http: WeaviateHttp,
  name: string
): Effect.Effect<Collection, RequestError | CollectionNotFound> =>
  Effect.flatMap(http.request({ method: "GET", path: `/v1/schema/${encodeURIComponent(name)}` }), (response) => {
    const one = response.status === 200 ? decodeCollection(response.json) : undefined
    if (one !== undefined && one.name === name) return Effect.succeed(one)
    return Effect.flatMap(list(http), (collections) => {
      const found = collections.find((c) => c.name === name) ??
        collections.find((c) => c.name.toLowerCase() === name.toLowerCase())
      return found === undefined ? Effect.fail(new CollectionNotFound({ collection: name })) : Effect.succeed(found)
    })
  })

// ===== Cache =====

/**
 * How long a collection read from the schema is reused (milliseconds; `0` = read it on every call).
 * The driver reads it once when it is built. Default 2,000: a tool call, and the next few, cost one
 * request to Weaviate instead of two, while a change made elsewhere shows within 2 s.
 *
 * @category cache
 */
export class CacheTtl extends Context.Reference<CacheTtl>()("weaviate-mcp/CollectionSchema/CacheTtl", {
  defaultValue: () => 2_000
}) {}

/**
 * The collections one connection's session has read, each reused for `ttlMs`. Only found collections
 * are kept (a missing one is asked again). `afterRequest` is told of every request the session sends:
 * a change to the schema (any write under `/v1/schema`) clears the cache, and so does an object write
 * that may add properties (Weaviate's auto-schema), unless every property it names is already known.
 *
 * @category cache
 */
export interface Cache {
  readonly get: (http: WeaviateHttp, name: string) => Effect.Effect<Collection, RequestError | CollectionNotFound>
  readonly afterRequest: (request: HttpRequest) => void
  readonly clear: () => void
}

interface CacheEntry {
  readonly collection: Collection
  readonly at: number
  /** The property names, for checking object writes against (auto-schema). */
  readonly names: ReadonlySet<string>
}

/** The failures a cached collection is served through: no answer in time, or a connection closed without one. */
const STALE_ON: ReadonlySet<string> = new Set(["TIMEOUT", "UND_ERR_SOCKET", "ECONNRESET", "EPIPE"])

/** @category cache */
export const makeCache = (ttlMs: number): Cache => {
  const entries = new Map<string, CacheEntry>()
  // Bumped by every clear: a read that started before our own schema write answers its caller but is
  // not kept, so the next call never sees the collection as it was before the write.
  let generation = 0
  const clear = () => {
    generation++
    entries.clear()
  }
  const cached = (http: WeaviateHttp, name: string) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const entry = entries.get(name)
      if (entry !== undefined && now - entry.at < ttlMs && now >= entry.at) return Effect.succeed(entry.collection)
      const started = generation
      return get(http, name).pipe(
        Effect.tap((collection) =>
          Effect.sync(() => {
            if (started !== generation) return
            const entry: CacheEntry = { collection, at: now, names: new Set(collection.properties.map((p) => p.name)) }
            entries.set(name, entry)
            if (collection.name !== name) entries.set(collection.name, entry)
          })
        ),
        // Stale if the read cannot be answered: on a cluster that lost a node, schema reads wait for
        // Raft (seen: 15 s and more) while reads and writes at ONE or QUORUM still work. A collection
        // read before serves then; it is read again on the next call.
        Effect.catchIf(
          (error): error is ConnectionFailed => entry !== undefined && error._tag === "ConnectionFailed" && STALE_ON.has(error.code ?? ""),
          () => Effect.succeed(entry!.collection)
        )
      )
    })
  return {
    get: ttlMs <= 0 ? get : cached,
    clear,
    afterRequest: (request) => {
      if (!mayChangeSchema(request)) return
      if (request.path.toLowerCase().startsWith("/v1/schema")) return clear()
      if (entries.size > 0 && !knownProperties(entries, request)) clear()
    }
  }
}

/**
 * Whether a request may change a collection's schema: reads (`GET`, `HEAD`, GraphQL) never do, so the
 * cache need not hear of them.
 *
 * @category cache
 */
export const mayChangeSchema = (request: HttpRequest): boolean =>
  request.method !== "GET" && request.method !== "HEAD" && request.path.toLowerCase() !== "/v1/graphql"

/** Whether an object write only names properties the cached collections already have (no auto-schema change). */
const knownProperties = (
  entries: ReadonlyMap<string, CacheEntry>,
  request: HttpRequest
): boolean => {
  const path = request.path.toLowerCase()
  if (!path.startsWith("/v1/objects") && !path.startsWith("/v1/batch/objects")) return false
  if (request.method === "DELETE") return true
  const json = request.body !== undefined && "json" in request.body ? request.body.json : undefined
  const objects = path.startsWith("/v1/batch/objects")
    ? (json as { readonly objects?: unknown } | undefined)?.objects
    : [json]
  if (!Array.isArray(objects)) return false
  return objects.every((object) => {
    if (typeof object !== "object" || object === null) return false
    const { class: className, properties } = object as { readonly class?: unknown; readonly properties?: unknown }
    const entry = typeof className === "string" ? entries.get(className) : undefined
    if (entry === undefined) return false
    if (properties === undefined) return true
    if (typeof properties !== "object" || properties === null) return false
    return Object.keys(properties).every((key) => entry.names.has(key))
  })
}
