/**
 * The read path shared by GraphQL `Get`/`Aggregate` and the REST list: filters, vector/BM25/hybrid
 * ranking, sorting, cursor and offset paging, `QUERY_MAXIMUM_RESULTS`, with the messages and the
 * order of checks of usecases/traverser and adapters/repos/db/search.go.
 */
import { compileWhere, parseWhere, type Predicate, validateWhere, WhereExecutionError, WhereParseError, WhereValidationError } from "./Filters.ts"
import { isRecord } from "./Json.ts"
import { isUuid } from "./PropertyValues.ts"
import { parseRfc3339 } from "./Rfc3339.ts"
import { type ClassDef, baseType, findProperty, isReferenceType } from "./Schema.ts"
import { bm25, distance, distanceMetric, formatFloat32, fuse, VectorLengthError } from "./Search.ts"
import { type ClassState, type Store, type StoredObject, TenantError } from "./Store.ts"
import { TEST_VECTORIZER, vectorizeText } from "./Vectorizer.ts"

export interface QueryLimits {
  /** QUERY_MAXIMUM_RESULTS */
  readonly maxResults: number
  /** QUERY_DEFAULTS_LIMIT (REST, and GraphQL when only `offset` is given) */
  readonly defaultLimit: number
  /** QUERY_DEFAULTS_LIMIT_GRAPHQL */
  readonly defaultGraphqlLimit: number
}

export const DEFAULT_LIMITS: QueryLimits = { maxResults: 10_000, defaultLimit: 10, defaultGraphqlLimit: 100 }

/** An error whose message is the complete text Weaviate reports. */
export class QueryError extends Error {}

export interface GetRequest {
  readonly limit?: number | undefined
  readonly offset?: number | undefined
  readonly after?: string | undefined
  readonly autocut?: number | undefined
  readonly sort?: unknown
  readonly where?: unknown
  readonly nearVector?: Record<string, unknown> | undefined
  readonly nearObject?: Record<string, unknown> | undefined
  readonly nearText?: Record<string, unknown> | undefined
  readonly bm25?: Record<string, unknown> | undefined
  readonly hybrid?: Record<string, unknown> | undefined
  readonly tenant?: string | undefined
}

export interface Hit {
  readonly obj: StoredObject
  readonly distance?: number
  readonly certainty?: number
  readonly score?: string
  readonly explainScore?: string
}

export const maxResultsMessage = (offset: number, limit: number, max: number): string =>
  `query maximum results exceeded: the total limit calculated from the provided offset '${offset}' and limit '${limit}' exceeds the configured value for QUERY_MAXIMUM_RESULTS '${max}'. If you've supplied a negative offset or limit, this may be an underflow error`

// ---------------------------------------------------------------------------------------------
// Sorting

export interface SortKey {
  readonly path: ReadonlyArray<string>
  readonly order: string
}

const INTERNAL_SORT = new Set(["_id", "id", "_creationTimeUnix", "_lastUpdateTimeUnix"])

export const normalizeSort = (sort: unknown): Array<SortKey> => {
  const list = sort === undefined || sort === null ? [] : Array.isArray(sort) ? sort : [sort]
  return list.map((s) => {
    const r = isRecord(s) ? s : {}
    const path = Array.isArray(r["path"]) ? r["path"].map(String) : []
    return { path, order: r["order"] === "desc" ? "desc" : "asc" }
  })
}

/** `sort parameter at position N: ...` or undefined when valid. */
export const validateSort = (def: ClassDef, keys: ReadonlyArray<SortKey>): string | undefined => {
  for (const [i, k] of keys.entries()) {
    const at = `sort parameter at position ${i}: `
    if (k.path.length === 0) return `${at}path parameter cannot be empty`
    if (k.path.length > 1) return `${at}sorting by reference not supported, path must have exactly one argument`
    const name = k.path[0]!
    if (INTERNAL_SORT.has(name)) continue
    const prop = findProperty(def, name)
    if (prop === undefined) {
      return `${at}no such prop with name '${name}' found in class '${def.class}' in the schema. Check your schema files for which properties in this class are available`
    }
    if (isReferenceType(prop.dataType)) {
      return `${at}sorting by reference not supported, property ${JSON.stringify(prop.name)} is a ref prop to the class ${JSON.stringify(prop.dataType[0])}`
    }
    if (baseType(prop.dataType[0]!) === "uuid") {
      return `${at}prop ${JSON.stringify(prop.name)} is of type uuid/uuid[]: sorting by uuid is currently not supported - filter by it instead`
    }
  }
  return undefined
}

type SortValue = string | number | boolean | ReadonlyArray<string | number | boolean> | undefined

const sortValue = (def: ClassDef, o: StoredObject, name: string): SortValue => {
  if (name === "_id" || name === "id") return o.id
  if (name === "_creationTimeUnix") return o.creationTimeUnix
  if (name === "_lastUpdateTimeUnix") return o.lastUpdateTimeUnix
  const prop = findProperty(def, name)
  const v = o.properties[prop?.name ?? name]
  const t = baseType(prop?.dataType[0] ?? "text")
  const one = (x: unknown): string | number | boolean =>
    t === "date" && typeof x === "string" ? parseRfc3339(x) : typeof x === "string" ? x.toLowerCase() : (x as number | boolean)
  if (v === undefined || v === null) return undefined
  return Array.isArray(v) ? v.map(one) : one(v)
}

const compareValues = (a: SortValue, b: SortValue): number => {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? -1 : 1
  if (Array.isArray(a) || Array.isArray(b)) {
    const xa = Array.isArray(a) ? a : [a]
    const xb = Array.isArray(b) ? b : [b]
    for (let i = 0; i < Math.min(xa.length, xb.length); i++) {
      const c = compareValues(xa[i], xb[i])
      if (c !== 0) return c
    }
    return xa.length - xb.length
  }
  return a < b ? -1 : a > b ? 1 : 0
}

export const sortObjects = <T extends { readonly obj: StoredObject }>(def: ClassDef, items: Array<T>, keys: ReadonlyArray<SortKey>): Array<T> => {
  if (keys.length === 0) return items
  const decorated = items.map((item, index) => ({ item, index, vals: keys.map((k) => sortValue(def, item.obj, k.path[0]!)) }))
  decorated.sort((x, y) => {
    for (const [i, k] of keys.entries()) {
      const c = compareValues(x.vals[i], y.vals[i])
      if (c !== 0) return k.order === "desc" ? -c : c
    }
    return x.index - y.index
  })
  return decorated.map((d) => d.item)
}

// ---------------------------------------------------------------------------------------------
// The Get pipeline

const num = (v: unknown): number | undefined => (typeof v === "number" ? v : undefined)

interface Target {
  readonly name: string | undefined
  readonly vectorizer: string
}

const vectorTarget = (def: ClassDef, requested: unknown): Target => {
  if (def.vectorConfig === undefined) return { name: undefined, vectorizer: def.vectorizer ?? "none" }
  const names = Object.keys(def.vectorConfig)
  const wanted = Array.isArray(requested) && requested.length > 0 ? String(requested[0]) : names.length === 1 ? names[0] : undefined
  if (wanted === undefined || !names.includes(wanted)) {
    throw new QueryError(
      wanted === undefined
        ? `multiple target vectors are present in class ${def.class}, please specify the target vector with targetVectors: [${names.join(", ")}]`
        : `target vector ${JSON.stringify(wanted)} not found in class ${def.class}`
    )
  }
  return { name: wanted, vectorizer: Object.keys(def.vectorConfig[wanted]!.vectorizer)[0] ?? "none" }
}

const objectVector = (o: StoredObject, target: Target): ReadonlyArray<number> | undefined =>
  target.name === undefined ? o.vector : o.vectors?.[target.name]

export interface Matched {
  readonly hits: Array<Hit>
}

/** Runs a Get against a class; throws QueryError with the complete Weaviate message. */
export const runGet = (store: Store, cls: ClassState, req: GetRequest, limits: QueryLimits): Array<Hit> => {
  const def = cls.def
  const lower = def.class.toLowerCase()
  // 1. filter extraction (resolver)
  let where
  if (req.where !== undefined && req.where !== null) {
    try {
      where = parseWhere(req.where)
    } catch (e) {
      if (e instanceof WhereParseError) throw new QueryError(`could not extract filters: ${e.message}`)
      throw e
    }
  }
  const sortKeys = normalizeSort(req.sort)
  if (req.bm25 !== undefined && sortKeys.length > 0) throw new QueryError("bm25 search is not compatible with sort")
  if (req.hybrid !== undefined && sortKeys.length > 0) throw new QueryError("hybrid search is not compatible with sort")
  const alpha = num(req.hybrid?.["alpha"]) ?? 0.75
  if (req.hybrid !== undefined && (alpha < 0 || alpha > 1)) throw new QueryError("alpha should be between 0.0 and 1.0")
  const searches = [req.nearVector, req.nearObject, req.nearText].filter((x) => x !== undefined).length
  if (searches > 1) throw new QueryError("parameters which are conflicting")
  // 2. traverser validation
  const sortError = validateSort(def, sortKeys)
  if (sortError !== undefined) throw new QueryError(`invalid 'sort' parameter: ${sortError}`)
  if (where !== undefined) {
    try {
      validateWhere(where, def, store)
    } catch (e) {
      if (e instanceof WhereValidationError) throw new QueryError(`invalid 'where' filter: ${e.message}`)
      throw e
    }
  }
  const isVector = searches > 0 || (req.hybrid !== undefined && alpha > 0)
  const prefix = isVector ? "explorer: get class: vector search: " : "explorer: list class: search: "
  // 3. pagination
  if (req.after !== undefined) {
    const reason =
      req.limit === undefined
        ? "limit parameter must be set"
        : (req.offset ?? 0) > 0 || sortKeys.length > 0
          ? "offset,sort cannot be set with after and limit parameters"
          : where !== undefined
            ? "where cannot be set with after and limit parameters"
            : req.after !== "" && !isUuid(req.after)
              ? `after parameter '${req.after}' is not a valid uuid: invalid UUID length: ${String(req.after).length}`
              : undefined
    if (reason !== undefined) throw new QueryError(`cursor api: invalid 'after' parameter: ${reason}`)
  }
  const offset = req.offset ?? 0
  const limit =
    req.limit ?? (req.offset === undefined && req.autocut === undefined ? limits.defaultGraphqlLimit : limits.defaultLimit)
  if (req.limit === 0) throw new QueryError(`${prefix}invalid pagination params: invalid default limit: 0`)
  // As the real server checks paging: hybrid compares the limit alone, without a prefix; bm25
  // reports it on the vector-search path.
  if (req.hybrid !== undefined) {
    if (limit > limits.maxResults) throw new QueryError(`invalid pagination params: ${maxResultsMessage(offset, limit, limits.maxResults)}`)
  } else if (offset + limit > limits.maxResults) {
    const pagingPrefix = req.bm25 !== undefined ? "explorer: get class: vector search: " : prefix
    throw new QueryError(`${pagingPrefix}invalid pagination params: ${maxResultsMessage(offset, limit, limits.maxResults)}`)
  }
  // 4. tenant / index
  let key: string
  try {
    key = store.partitionKey(cls, req.tenant, false)
  } catch (e) {
    if (e instanceof TenantError) throw new QueryError(`${prefix}object search at index ${lower}: ${e.message}`)
    throw e
  }
  const shardPrefix = `${prefix}object search at index ${lower}: local shard object search ${cls.shardLabel}: `
  let predicate: Predicate | undefined
  if (where !== undefined) {
    try {
      predicate = compileWhere(where, cls, store, cls.multiTenant ? key : undefined)
    } catch (e) {
      if (e instanceof WhereExecutionError) throw new QueryError(`${shardPrefix}${e.message}`)
      throw e
    }
  }
  // 5. candidates in index order: docID order when filtered, UUID order otherwise
  let candidates: Array<StoredObject>
  if (predicate !== undefined) {
    candidates = [...(cls.partitions.get(key)?.values() ?? [])].filter(predicate)
  } else {
    candidates = cls.inUuidOrder(key)
    if (req.after !== undefined && req.after !== "") {
      const after = req.after.toLowerCase()
      candidates = candidates.filter((o) => o.id > after)
    }
  }
  // 6. ranking
  let hits: Array<Hit>
  const vectorSearch = (query: ReadonlyArray<number>, target: Target, params: Record<string, unknown>) => {
    const metric = distanceMetric(def, target.name)
    const maxDistance = num(params["distance"])
    const certainty = num(params["certainty"])
    const ranked: Array<{ obj: StoredObject; distance: number }> = []
    for (const o of candidates) {
      const v = objectVector(o, target)
      if (v === undefined) continue
      let d: number
      try {
        d = distance(metric, v, query)
      } catch (e) {
        if (e instanceof VectorLengthError) {
          throw new QueryError(
            `explorer: get class: concurrentTargetVectorSearch): explorer: get class: vector search: object vector search at index ${lower}: ` +
              `shard ${cls.shardLabel}: vector search: knn search: distance between entrypoint and query node: ${v.length} vs ${query.length}: vector lengths don't match`
          )
        }
        throw e
      }
      if (maxDistance !== undefined && d > maxDistance) continue
      if (certainty !== undefined && 1 - d / 2 < certainty) continue
      ranked.push({ obj: o, distance: d })
    }
    return ranked.sort((a, b) => a.distance - b.distance)
  }
  const withDistance = (r: { obj: StoredObject; distance: number }, metric: string): Hit =>
    metric === "cosine" ? { obj: r.obj, distance: r.distance, certainty: Math.fround(1 - r.distance / 2), score: "0" } : { obj: r.obj, distance: r.distance, score: "0" }
  const vectorizeQuery = (target: Target, text: string): ReadonlyArray<number> => {
    if (target.vectorizer !== TEST_VECTORIZER) {
      throw new QueryError(`VectorFromInput was called without vectorizer on class ${def.class} for input ${text}`)
    }
    return vectorizeText(text)
  }
  if (req.nearVector !== undefined) {
    const target = vectorTarget(def, req.nearVector["targetVectors"])
    const vector = Array.isArray(req.nearVector["vector"]) ? req.nearVector["vector"].map(Number) : []
    hits = vectorSearch(vector, target, req.nearVector).map((r) => withDistance(r, distanceMetric(def, target.name)))
  } else if (req.nearText !== undefined) {
    const target = vectorTarget(def, req.nearText["targetVectors"])
    const concepts = Array.isArray(req.nearText["concepts"]) ? req.nearText["concepts"].map(String) : []
    hits = vectorSearch(vectorizeQuery(target, concepts.join(" ")), target, req.nearText).map((r) =>
      withDistance(r, distanceMetric(def, target.name))
    )
  } else if (req.nearObject !== undefined) {
    const target = vectorTarget(def, req.nearObject["targetVectors"])
    const id = typeof req.nearObject["id"] === "string" ? req.nearObject["id"] : undefined
    const source =
      id !== undefined ? store.getObject(cls, key, id) : store.resolveBeacon(req.nearObject["beacon"], cls.multiTenant ? key : undefined)
    const v = source === undefined ? undefined : objectVector(source, target)
    if (v === undefined) throw new QueryError(`${prefix}nearObject params: vector not found for object ${id ?? String(req.nearObject["beacon"])}`)
    hits = vectorSearch(v, target, req.nearObject).map((r) => withDistance(r, distanceMetric(def, target.name)))
  } else if (req.bm25 !== undefined) {
    const props = Array.isArray(req.bm25["properties"]) ? req.bm25["properties"].map(String) : undefined
    hits = bm25(def, candidates, String(req.bm25["query"] ?? ""), props).map((s) => ({ obj: s.obj, score: formatFloat32(s.score), explainScore: `, BM25F_${String(req.bm25?.["query"] ?? "")}_frequency:1` }))
  } else if (req.hybrid !== undefined) {
    const query = String(req.hybrid["query"] ?? "")
    const props = Array.isArray(req.hybrid["properties"]) ? req.hybrid["properties"].map(String) : undefined
    const keyword = alpha < 1 ? bm25(def, candidates, query, props) : []
    let vectorHits: Array<{ obj: StoredObject; distance: number }> = []
    if (alpha > 0) {
      const target = vectorTarget(def, req.hybrid["targetVectors"])
      const given = Array.isArray(req.hybrid["vector"]) && req.hybrid["vector"].length > 0 ? req.hybrid["vector"].map(Number) : undefined
      vectorHits = vectorSearch(given ?? vectorizeQuery(target, query), target, {})
    }
    hits = fuse(keyword, vectorHits, alpha, String(req.hybrid["fusionType"] ?? "relativeScoreFusion")).map((f) => ({
      obj: f.obj,
      score: formatFloat32(f.score),
      explainScore: f.explain
    }))
  } else {
    hits = candidates.map((obj) => ({ obj, score: "0" }))
  }
  hits = sortObjects(def, hits, sortKeys)
  return hits.slice(offset, offset + limit)
}

/** The objects an Aggregate counts: `where`, `tenant`, and vector/hybrid searches limited by `objectLimit`. */
export const matchForAggregate = (
  store: Store,
  cls: ClassState,
  req: GetRequest & { readonly objectLimit?: number | undefined },
  limits: QueryLimits
): Array<StoredObject> => {
  // a tenant problem is reported bare by Aggregate
  try {
    store.partitionKey(cls, req.tenant, false)
  } catch (e) {
    if (e instanceof TenantError) throw new QueryError(e.message)
    throw e
  }
  const searching = req.nearVector !== undefined || req.nearObject !== undefined || req.nearText !== undefined || req.hybrid !== undefined
  const limit = searching ? (req.objectLimit ?? req.limit ?? limits.maxResults) : limits.maxResults
  if (searching) {
    return runGet(store, cls, { ...req, limit, offset: 0 }, { ...limits, maxResults: Math.max(limits.maxResults, limit) }).map((h) => h.obj)
  }
  // a plain count is not capped by QUERY_MAXIMUM_RESULTS
  return runGet(store, cls, { ...req, limit: Math.max(1, cls.count()), offset: 0 }, { ...limits, maxResults: Number.MAX_SAFE_INTEGER }).map((h) => h.obj)
}
