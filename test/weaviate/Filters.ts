/**
 * `where` filters: parsing (adapters/handlers/rest/filterext), schema validation
 * (entities/filters/filters_validator.go) and evaluation with the inverted-index semantics of
 * Weaviate (token-based text matching, NotEqual/ContainsNone as complements, IsNull and len() that
 * need their index flags), each stage with Weaviate's error texts.
 */
import { goJson, isRecord } from "./Json.ts"
import { parseRfc3339, TimeParseError } from "./Rfc3339.ts"
import { type ClassDef, type PropertyDef, baseType, findProperty, isReferenceType, isTextType, upperFirst } from "./Schema.ts"
import type { ClassState, Store, StoredObject } from "./Store.ts"
import { dropStopwords, likeRegExp, stopwordSet, tokenize, tokenizeWithWildcards } from "./Tokenizer.ts"

export interface WhereClause {
  readonly operator: string
  readonly path?: ReadonlyArray<string>
  readonly valueKind?: string
  readonly value?: unknown
  readonly operands?: ReadonlyArray<WhereClause>
}

/** filterext.Parse errors; the message already starts with `invalid where filter: `. */
export class WhereParseError extends Error {}
/** Schema validation errors (callers prefix `invalid 'where' filter: `). */
export class WhereValidationError extends Error {}
/** Errors raised while the index runs the filter (callers add the explorer/shard prefixes). */
export class WhereExecutionError extends Error {}

const COMPOUND = new Set(["And", "Or", "Not"])
const VALUE_KINDS = ["valueInt", "valueNumber", "valueBoolean", "valueString", "valueText", "valueDate", "valueGeoRange"] as const
const COMPARISONS = new Set(["Equal", "NotEqual", "GreaterThan", "GreaterThanEqual", "LessThan", "LessThanEqual"])

const parseClause = (input: unknown): WhereClause => {
  const fail = (m: string): never => {
    throw new WhereParseError(`invalid where filter: ${m}`)
  }
  if (!isRecord(input)) return fail("filter must be an object")
  const operator = String(input["operator"] ?? "")
  const path = Array.isArray(input["path"]) ? input["path"].map(String) : undefined
  if (COMPOUND.has(operator)) {
    if (path !== undefined && path.length > 0) {
      fail(`operator '${operator}' not compatible with field 'path', remove 'path' or switch to compare operator (eg. Equal, NotEqual, etc.)`)
    }
    const operands = Array.isArray(input["operands"]) ? input["operands"] : []
    if (operands.length === 0) fail(`operator '${operator}', but no operands set - add at least one operand`)
    return {
      operator,
      operands: operands.map((o, i) => {
        try {
          return parseClause(o)
        } catch (e) {
          if (e instanceof WhereParseError) fail(`operand ${i}: ${e.message}`)
          throw e
        }
      })
    }
  }
  const set = VALUE_KINDS.filter((k) => input[k] !== undefined && input[k] !== null)
  if (set.length > 1) fail(`found more than one values the clause '${goJson(input)}'`)
  if (set.length === 0) fail(`got operator '${operator}', but no value<Type> field set`)
  if (path === undefined || path.length === 0) fail("field 'path': must have at least one element")
  return { operator, path: path!, valueKind: set[0]!, value: input[set[0]!] }
}

/** A GraphQL `where` argument (already coerced by the GraphQL layer). */
export const parseWhere = (input: unknown): WhereClause => parseClause(input)

/** A REST `WhereFilter` (batch delete): `value<Type>Array` become list values of `value<Type>`. */
export const parseRestWhere = (input: unknown): WhereClause => {
  const convert = (v: unknown): unknown => {
    if (!isRecord(v)) return v
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) {
      if (k === "operands" && Array.isArray(x)) out[k] = x.map(convert)
      else if (k.endsWith("Array") && k.startsWith("value")) out[k.slice(0, -5)] = x
      else out[k] = x
    }
    return out
  }
  return parseClause(convert(input))
}

// ---------------------------------------------------------------------------------------------
// Validation

const expectedKind = (t: string): string => {
  switch (baseType(t)) {
    case "int":
      return "valueInt"
    case "number":
      return "valueNumber"
    case "boolean":
      return "valueBoolean"
    case "date":
      return "valueDate"
    case "geoCoordinates":
      return "valueGeoRange"
    default:
      return "valueText"
  }
}
const kindMatches = (kind: string, t: string): boolean => {
  const expected = expectedKind(t)
  return kind === expected || (expected === "valueText" && kind === "valueString")
}

const noSuchProp = (name: string, cls: string): string =>
  `no such prop with name '${name}' found in class '${cls}' in the schema. Check your schema files for which properties in this class are available`

const LEN = /^len\((.+)\)$/

const validateLeaf = (c: WhereClause, def: ClassDef, store: Store): void => {
  const path = c.path ?? []
  const first = path[0]!
  const kind = c.valueKind!
  const fail = (m: string): never => {
    throw new WhereValidationError(m)
  }
  const len = LEN.exec(first)
  if (len !== null) {
    if (findProperty(def, len[1]!) === undefined) fail(noSuchProp(len[1]!, def.class))
    if (kind !== "valueInt") fail(`Filtering for property length requires IntValue, got ${JSON.stringify(kind)} instead`)
    if (!COMPARISONS.has(c.operator)) {
      fail(`Filtering for property length supports operators (not) equal and greater/less than (equal), got ${c.operator} instead`)
    }
    if (typeof c.value === "number" && c.value < 0) fail(`Can only filter for positive property length got ${c.value} instead`)
    return
  }
  if (first === "id" || first === "_id") {
    if (kind !== "valueText" && kind !== "valueString") fail(`using ["_id"] to filter by uuid: must use "valueText" to specify the id`)
    return
  }
  if (first === "_creationTimeUnix" || first === "_lastUpdateTimeUnix") {
    if (kind !== "valueDate" && kind !== "valueText" && kind !== "valueString") {
      fail(`using ["${first}"] to filter by timestamp: must use "valueText" or "valueDate" to specify the timestamp`)
    }
    return
  }
  const prop = findProperty(def, first)
  if (prop === undefined) return fail(noSuchProp(first, def.class))
  if (isReferenceType(prop.dataType)) {
    if (path.length === 1) {
      if (kind !== "valueInt") fail(`data type filter cannot use ${JSON.stringify(kind)} on type "cref", use "valueInt" instead`)
      return
    }
    if (path.length < 3) fail(`filtering by reference: path must have the form [refProp, TargetClass, property]`)
    const target = upperFirst(path[1]!)
    if (!prop.dataType.map(upperFirst).includes(target)) {
      fail(`class ${JSON.stringify(target)} is not a target of reference property ${JSON.stringify(prop.name)}`)
    }
    const targetClass = store.getClass(target)
    if (targetClass === undefined) fail(`class ${JSON.stringify(target)} does not exist in the schema`)
    validateLeaf({ ...c, path: path.slice(2) }, targetClass!.def, store)
    return
  }
  const t = prop.dataType[0]!
  if (t === "object" || t === "object[]") {
    fail("filtering on nested properties is a preview feature, disabled by default; set WEAVIATE_PREVIEW_NESTED_FILTERING=true to enable")
  }
  if (c.operator === "IsNull") {
    if (kind !== "valueBoolean") fail(`operator IsNull requires a booleanValue, got ${kind} instead`)
    return
  }
  if (!kindMatches(kind, t)) {
    fail(`data type filter cannot use ${JSON.stringify(kind)} on type ${JSON.stringify(baseType(t))}, use ${JSON.stringify(expectedKind(t))} instead`)
  }
}

export const validateWhere = (c: WhereClause, def: ClassDef, store: Store): void => {
  if (c.operands === undefined) return validateLeaf(c, def, store)
  const errors: Array<string> = []
  c.operands.forEach((o, i) => {
    try {
      validateWhere(o, def, store)
    } catch (e) {
      if (e instanceof WhereValidationError) errors.push(`child operand at position ${i}: ${e.message}`)
      else throw e
    }
  })
  if (errors.length > 0) throw new WhereValidationError(errors.join(", "))
}

// ---------------------------------------------------------------------------------------------
// Execution

export type Predicate = (o: StoredObject) => boolean

interface Ctx {
  readonly store: Store
  readonly tenant: string | undefined
}

const goScalarType = (kind: string): string =>
  kind === "valueInt" ? "int64" : kind === "valueNumber" ? "float64" : kind === "valueBoolean" ? "bool" : "string"

const parseDate = (s: unknown): number => {
  try {
    return parseRfc3339(String(s))
  } catch (e) {
    if (e instanceof TimeParseError) throw new WhereExecutionError(`trying parse time as RFC3339 string: ${e.message}`)
    throw e
  }
}

const values = (o: StoredObject, name: string): Array<unknown> => {
  const v = o.properties[name]
  return v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]
}

const cmp = (op: string, a: number | string | boolean, b: number | string | boolean): boolean => {
  switch (op) {
    case "Equal":
      return a === b
    case "GreaterThan":
      return a > b
    case "GreaterThanEqual":
      return a >= b
    case "LessThan":
      return a < b
    case "LessThanEqual":
      return a <= b
    default:
      return false
  }
}

const ONLY_STOPWORDS =
  "invalid search term, only stopwords provided. Stopwords can be configured in class.invertedIndexConfig.stopwords"

/** A leaf with a single (scalar) value against a primitive property; `op` is a positive operator. */
const scalarPredicate = (def: ClassDef, prop: PropertyDef, op: string, kind: string, value: unknown): Predicate => {
  const t = baseType(prop.dataType[0]!)
  if (Array.isArray(value)) throw new WhereExecutionError(`value type should be ${goScalarType(kind)} but is []${goScalarType(kind)}`)
  if (isTextType(t)) {
    const tokenization = prop.tokenization ?? "word"
    const stop = stopwordSet(def.invertedIndexConfig.stopwords)
    const raw = String(value)
    const objTokens = (o: StoredObject): Set<string> =>
      new Set(values(o, prop.name).flatMap((s) => (typeof s === "string" ? tokenize(tokenization, s) : [])))
    if (op === "Like") {
      const all = tokenizeWithWildcards(tokenization, raw)
      const patterns = dropStopwords(tokenization, all, stop).map(likeRegExp)
      if (all.length > 0 && patterns.length === 0) throw new WhereExecutionError(ONLY_STOPWORDS)
      return (o) => {
        const tokens = [...objTokens(o)]
        return patterns.length > 0 && patterns.every((re) => tokens.some((tk) => re.test(tk)))
      }
    }
    const all = tokenize(tokenization, raw)
    const wanted = dropStopwords(tokenization, all, stop)
    if (all.length > 0 && wanted.length === 0) throw new WhereExecutionError(ONLY_STOPWORDS)
    if (op === "Equal") {
      return (o) => {
        const tokens = objTokens(o)
        return wanted.length > 0 && wanted.every((w) => tokens.has(w))
      }
    }
    return (o) => {
      const tokens = [...objTokens(o)]
      return wanted.length > 0 && wanted.every((w) => tokens.some((tk) => cmp(op, tk, w)))
    }
  }
  if (op === "Like") return () => false
  if (t === "date") {
    const v = parseDate(value)
    return (o) => values(o, prop.name).some((x) => typeof x === "string" && cmp(op, parseRfc3339(x), v))
  }
  if (t === "uuid") {
    const v = String(value).toLowerCase()
    return (o) => values(o, prop.name).some((x) => typeof x === "string" && cmp(op, x, v))
  }
  if (t === "geoCoordinates") return () => false
  return (o) => values(o, prop.name).some((x) => (typeof x === "number" || typeof x === "boolean") && cmp(op, x, value as number | boolean))
}

const haversine = (lat1: number, lon1: number, lat2: number, lon2: number): number => {
  const r = (d: number) => (d * Math.PI) / 180
  const a = Math.sin(r(lat2 - lat1) / 2) ** 2 + Math.cos(r(lat1)) * Math.cos(r(lat2)) * Math.sin(r(lon2 - lon1) / 2) ** 2
  return 2 * 6_371_000 * Math.asin(Math.sqrt(a))
}

interface Compiled {
  readonly predicate: Predicate
  /** Fetch-phase error (with its nesting prefixes), raised after all extraction succeeded. */
  readonly fetchError: string | undefined
}

const combineSetOps = (op: string, kind: string, value: unknown, single: (v: unknown) => Predicate): Predicate => {
  if (!Array.isArray(value)) throw new WhereExecutionError(`value type should be []${goScalarType(kind)} but is ${goScalarType(kind)}`)
  const preds = value.map(single)
  if (op === "ContainsAll") return (o) => preds.length > 0 && preds.every((p) => p(o))
  if (op === "ContainsAny") return (o) => preds.some((p) => p(o))
  return (o) => !preds.some((p) => p(o))
}

const compileLeaf = (c: WhereClause, def: ClassDef, ctx: Ctx): Compiled => {
  const path = c.path ?? []
  const first = path[0]!
  const op = c.operator
  const positive = op === "NotEqual" ? "Equal" : op
  const negate = (p: Predicate): Predicate => (op === "NotEqual" ? (o) => !p(o) : p)
  const len = LEN.exec(first)
  if (len !== null) {
    const prop = findProperty(def, len[1]!)!
    const fetchError = def.invertedIndexConfig.indexPropertyLength
      ? undefined
      : `Property length must be indexed to be filterable! add \`IndexPropertyLength: true\` to the invertedIndexConfig in ${def.class}.  Geo-coordinates, phone numbers and data blobs are not supported by property length.`
    const n = Number(c.value)
    const length = (o: StoredObject): number => {
      const v = o.properties[prop.name]
      return typeof v === "string" ? [...v].length : Array.isArray(v) ? v.length : 0
    }
    return { predicate: negate((o) => cmp(positive, length(o), n)), fetchError }
  }
  if (first === "id" || first === "_id") {
    const single = (v: unknown): Predicate => {
      const s = String(v).toLowerCase()
      if (positive === "Like") {
        const re = likeRegExp(s)
        return (o) => re.test(o.id)
      }
      return (o) => cmp(positive, o.id, s)
    }
    if (op.startsWith("Contains")) return { predicate: combineSetOps(op, c.valueKind!, c.value, single), fetchError: undefined }
    return { predicate: negate(single(c.value)), fetchError: undefined }
  }
  if (first === "_creationTimeUnix" || first === "_lastUpdateTimeUnix") {
    const ms = c.valueKind === "valueDate" ? parseDate(c.value) : Number(c.value)
    const fetchError = def.invertedIndexConfig.indexTimestamps
      ? undefined
      : `Timestamps must be indexed to be filterable! Add \`IndexTimestamps: true\` to the InvertedIndexConfig in ${def.class}`
    const get = (o: StoredObject) => (first === "_creationTimeUnix" ? o.creationTimeUnix : o.lastUpdateTimeUnix)
    return { predicate: negate((o) => cmp(positive, get(o), ms)), fetchError }
  }
  const prop = findProperty(def, first)!
  if (isReferenceType(prop.dataType)) {
    const refs = (o: StoredObject): Array<unknown> => values(o, prop.name)
    if (path.length === 1) {
      const n = Number(c.value)
      return { predicate: negate((o) => cmp(positive, refs(o).length, n)), fetchError: undefined }
    }
    const target = ctx.store.getClass(path[1]!)!
    const inner = compileLeaf({ ...c, path: path.slice(2) }, target.def, ctx)
    return {
      predicate: (o) =>
        refs(o).some((r) => {
          const t = ctx.store.resolveBeacon(isRecord(r) ? r["beacon"] : undefined, ctx.tenant)
          return t !== undefined && t.class === target.name && inner.predicate(t)
        }),
      fetchError: inner.fetchError
    }
  }
  if (prop.indexFilterable === false && op !== "IsNull") {
    return {
      predicate: () => false,
      fetchError: `Filtering by property '${prop.name}' requires inverted index. Is \`indexFilterable\` option of property '${prop.name}' enabled? Set it to \`true\` or leave empty`
    }
  }
  if (op === "IsNull") {
    const fetchError = def.invertedIndexConfig.indexNullState
      ? undefined
      : "Nullstate must be indexed to be filterable! Add `indexNullState: true` to the invertedIndexConfig"
    const isNull = (o: StoredObject): boolean => {
      const v = o.properties[prop.name]
      return v === undefined || v === null || (typeof v === "string" && v.length === 0) || (Array.isArray(v) && v.length === 0)
    }
    const want = c.value === true
    return { predicate: (o) => isNull(o) === want, fetchError }
  }
  if (op === "WithinGeoRange") {
    const g = isRecord(c.value) ? c.value : {}
    const gc = isRecord(g["geoCoordinates"]) ? g["geoCoordinates"] : {}
    const max = Number(isRecord(g["distance"]) ? g["distance"]["max"] : 0)
    return {
      predicate: (o) => {
        const v = o.properties[prop.name]
        return isRecord(v) && haversine(Number(gc["latitude"]), Number(gc["longitude"]), Number(v["latitude"]), Number(v["longitude"])) <= max
      },
      fetchError: undefined
    }
  }
  if (op.startsWith("Contains")) {
    return { predicate: combineSetOps(op, c.valueKind!, c.value, (v) => scalarPredicate(def, prop, "Equal", c.valueKind!, v)), fetchError: undefined }
  }
  return { predicate: negate(scalarPredicate(def, prop, positive, c.valueKind!, c.value)), fetchError: undefined }
}

const compileClause = (c: WhereClause, def: ClassDef, ctx: Ctx): Compiled => {
  if (c.operands === undefined) return compileLeaf(c, def, ctx)
  const children = c.operands.map((o) => compileClause(o, def, ctx))
  const failing = children.findIndex((ch) => ch.fetchError !== undefined)
  const fetchError =
    failing < 0
      ? undefined
      : c.operator === "Not"
        ? `nested NOT query: ${children[failing]!.fetchError}`
        : `nested AND/OR query: nested child ${failing}: ${children[failing]!.fetchError}`
  const preds = children.map((ch) => ch.predicate)
  const predicate: Predicate =
    c.operator === "And"
      ? (o) => preds.every((p) => p(o))
      : c.operator === "Or"
        ? (o) => preds.some((p) => p(o))
        : (o) => !preds.some((p) => p(o))
  return { predicate, fetchError }
}

/** A predicate for a validated filter; throws WhereExecutionError with the index's message. */
export const compileWhere = (c: WhereClause, cls: ClassState, store: Store, tenant: string | undefined): Predicate => {
  const compiled = compileClause(c, cls.def, { store, tenant })
  if (compiled.fetchError !== undefined) {
    throw new WhereExecutionError(`resolve doc ids for prop/value pair: ${compiled.fetchError}`)
  }
  return compiled.predicate
}
