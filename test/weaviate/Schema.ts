/**
 * Collection (class) definitions: defaults applied at creation, name rules, data types, and the
 * auto-schema inference used when objects arrive for unknown classes or with unknown properties
 * (usecases/schema/class.go, usecases/objects/auto_schema.go).
 */
import { isRecord } from "./Json.ts"
import { isRfc3339 } from "./Rfc3339.ts"

export interface PropertyDef {
  name: string
  dataType: Array<string>
  description?: string
  tokenization?: string
  indexFilterable?: boolean
  indexSearchable?: boolean
  indexRangeFilters?: boolean
  nestedProperties?: Array<PropertyDef>
  moduleConfig?: Record<string, unknown>
}

export interface InvertedIndexConfig {
  bm25: { b: number; k1: number }
  cleanupIntervalSeconds: number
  indexNullState?: boolean
  indexPropertyLength?: boolean
  indexTimestamps?: boolean
  stopwords: { additions: Array<string> | null; preset: string; removals: Array<string> | null }
  usingBlockMaxWAND: boolean
}

export interface VectorConfigEntry {
  vectorizer: Record<string, unknown>
  vectorIndexType: string
  vectorIndexConfig: Record<string, unknown>
}

export interface ClassDef {
  class: string
  description?: string
  properties: Array<PropertyDef> | null
  vectorizer?: string
  vectorIndexType?: string
  vectorIndexConfig?: Record<string, unknown>
  vectorConfig?: Record<string, VectorConfigEntry>
  moduleConfig?: Record<string, unknown>
  invertedIndexConfig: InvertedIndexConfig
  multiTenancyConfig: { enabled: boolean; autoTenantCreation: boolean; autoTenantActivation: boolean }
  replicationConfig: Record<string, unknown>
  shardingConfig: Record<string, unknown>
}

/** Modules this instance knows; `text2vec-transformers` is the deterministic hashing vectorizer (Vectorizer.ts). */
export const VECTORIZER_MODULES: ReadonlySet<string> = new Set(["text2vec-transformers"])

export const PRIMITIVE_TYPES: ReadonlySet<string> = new Set([
  "text", "text[]", "string", "string[]", "int", "int[]", "number", "number[]", "boolean", "boolean[]",
  "date", "date[]", "uuid", "uuid[]", "geoCoordinates", "phoneNumber", "blob", "object", "object[]"
])

export const isReferenceType = (dataType: ReadonlyArray<string>): boolean => {
  const first = dataType[0] ?? ""
  return first.length > 0 && first[0] === first[0]!.toUpperCase() && first[0] !== first[0]!.toLowerCase()
}
export const isTextType = (t: string): boolean => t === "text" || t === "text[]" || t === "string" || t === "string[]"
export const baseType = (t: string): string => (t.endsWith("[]") ? t.slice(0, -2) : t)

export const upperFirst = (s: string): string => (s.length === 0 ? s : s[0]!.toUpperCase() + s.slice(1))
export const lowerFirst = (s: string): string => (s.length === 0 ? s : s[0]!.toLowerCase() + s.slice(1))

const CLASS_NAME = /^[A-Z][_0-9A-Za-z]{0,254}$/
const PROPERTY_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,230}$/

export const defaultHnswConfig = (): Record<string, unknown> => ({
  bq: { enabled: false },
  cleanupIntervalSeconds: 300,
  distance: "cosine",
  dynamicEfFactor: 8,
  dynamicEfMax: 500,
  dynamicEfMin: 100,
  ef: -1,
  efConstruction: 128,
  filterStrategy: "acorn",
  flatSearchCutoff: 40000,
  maxConnections: 32,
  multivector: { aggregation: "maxSim", enabled: false },
  pq: { enabled: false, segments: 0, trainingLimit: 100000 },
  skip: false,
  vectorCacheMaxObjects: 1000000000000
})

const defaultInverted = (): InvertedIndexConfig => ({
  bm25: { b: 0.75, k1: 1.2 },
  cleanupIntervalSeconds: 60,
  stopwords: { additions: null, preset: "en", removals: null },
  usingBlockMaxWAND: true
})

export class SchemaError extends Error {}

const normalizeProperty = (raw: unknown, vectorizer: string | undefined, nested: boolean): PropertyDef => {
  if (!isRecord(raw)) throw new SchemaError("property must be an object")
  const name = String(raw["name"] ?? "")
  if (!PROPERTY_NAME.test(name)) {
    throw new SchemaError(
      `'${name}' is not a valid property name. Property names in Weaviate are restricted to valid GraphQL names, which must be “/[_A-Za-z][_0-9A-Za-z]{0,230}/”.`
    )
  }
  const dataType = Array.isArray(raw["dataType"]) ? raw["dataType"].map(String) : []
  if (dataType.length === 0) throw new SchemaError(`property '${name}': invalid dataType: dataType must have at least one element`)
  const reference = isReferenceType(dataType)
  if (!reference) {
    if (dataType.length !== 1 || !PRIMITIVE_TYPES.has(dataType[0]!)) {
      throw new SchemaError(`property '${name}': invalid dataType: [${dataType.join(" ")}]: unknown primitive data type '${dataType[0]}'`)
    }
  }
  const t = dataType[0]!
  const text = !reference && isTextType(t)
  const prop: PropertyDef = { name: lowerFirst(name), dataType: t === "string" ? ["text"] : t === "string[]" ? ["text[]"] : dataType }
  if (typeof raw["description"] === "string") prop.description = raw["description"]
  if (raw["tokenization"] !== undefined && raw["tokenization"] !== "") {
    if (!text) throw new SchemaError(`tokenization is not allowed for data type '${t}'`)
    const tk = String(raw["tokenization"])
    if (!["word", "lowercase", "whitespace", "field", "trigram", "gse", "kagome_ja", "kagome_kr"].includes(tk)) {
      throw new SchemaError(`tokenization '${tk}' is not allowed for data type '${t}'`)
    }
    prop.tokenization = tk
  } else if (text) {
    prop.tokenization = "word"
  }
  prop.indexFilterable = typeof raw["indexFilterable"] === "boolean" ? raw["indexFilterable"] : true
  prop.indexSearchable = text ? (typeof raw["indexSearchable"] === "boolean" ? raw["indexSearchable"] : true) : false
  prop.indexRangeFilters = typeof raw["indexRangeFilters"] === "boolean" ? raw["indexRangeFilters"] : false
  if (t === "object" || t === "object[]") {
    const nestedRaw = Array.isArray(raw["nestedProperties"]) ? raw["nestedProperties"] : []
    if (nestedRaw.length === 0) throw new SchemaError(`property '${name}': At least one nested property is required for data type object/object[]`)
    prop.nestedProperties = nestedRaw.map((n) => normalizeProperty(n, undefined, true))
  }
  if (!nested) {
    if (isRecord(raw["moduleConfig"])) prop.moduleConfig = raw["moduleConfig"]
    else if (vectorizer !== undefined && vectorizer !== "none") {
      prop.moduleConfig = { [vectorizer]: { skip: false, vectorizePropertyName: false } }
    }
  }
  return prop
}

/** Validates a class from `POST /v1/schema` and applies Weaviate's creation defaults. */
export const normalizeClass = (raw: unknown, existing: (name: string) => boolean): ClassDef => {
  if (!isRecord(raw)) throw new SchemaError("class must be an object")
  const name = upperFirst(String(raw["class"] ?? ""))
  if (!CLASS_NAME.test(name)) throw new SchemaError(`'${String(raw["class"] ?? "")}' is not a valid class name`)
  if (existing(name)) throw new SchemaError(`class name ${name} already exists`)
  const vectorConfigRaw = isRecord(raw["vectorConfig"]) ? raw["vectorConfig"] : undefined
  let vectorizer: string | undefined
  let vectorConfig: Record<string, VectorConfigEntry> | undefined
  if (vectorConfigRaw !== undefined && Object.keys(vectorConfigRaw).length > 0) {
    vectorConfig = {}
    for (const [vname, entry] of Object.entries(vectorConfigRaw)) {
      const e = isRecord(entry) ? entry : {}
      const vec = isRecord(e["vectorizer"]) ? e["vectorizer"] : { none: {} }
      for (const m of Object.keys(vec)) {
        if (m !== "none" && !VECTORIZER_MODULES.has(m)) throw new SchemaError(`target vector "${vname}": vectorizer: no module with name "${m}" present`)
      }
      vectorConfig[vname] = {
        vectorizer: vec,
        vectorIndexType: typeof e["vectorIndexType"] === "string" ? e["vectorIndexType"] : "hnsw",
        vectorIndexConfig: { ...defaultHnswConfig(), ...(isRecord(e["vectorIndexConfig"]) ? e["vectorIndexConfig"] : {}) }
      }
    }
  } else {
    vectorizer = typeof raw["vectorizer"] === "string" && raw["vectorizer"] !== "" ? raw["vectorizer"] : "none"
    if (vectorizer !== "none" && !VECTORIZER_MODULES.has(vectorizer)) {
      throw new SchemaError(`vectorizer: no module with name "${vectorizer}" present`)
    }
  }
  const seen = new Set<string>()
  const propsRaw = Array.isArray(raw["properties"]) ? raw["properties"] : []
  const properties = propsRaw.map((p) => {
    const prop = normalizeProperty(p, vectorizer, false)
    if (seen.has(prop.name.toLowerCase())) {
      throw new SchemaError(`class "${name}": conflict for property "${prop.name}": already in use or provided multiple times`)
    }
    seen.add(prop.name.toLowerCase())
    if (isReferenceType(prop.dataType)) {
      for (const target of prop.dataType) {
        if (upperFirst(target) !== name && !existing(upperFirst(target))) {
          throw new SchemaError(`property '${prop.name}': invalid dataType: reference property to nonexistent class`)
        }
      }
    }
    return prop
  })
  const inv = isRecord(raw["invertedIndexConfig"]) ? raw["invertedIndexConfig"] : {}
  const invertedIndexConfig = defaultInverted()
  if (isRecord(inv["bm25"])) {
    invertedIndexConfig.bm25 = {
      b: typeof inv["bm25"]["b"] === "number" ? inv["bm25"]["b"] : 0.75,
      k1: typeof inv["bm25"]["k1"] === "number" ? inv["bm25"]["k1"] : 1.2
    }
  }
  if (isRecord(inv["stopwords"])) {
    const sw = inv["stopwords"]
    invertedIndexConfig.stopwords = {
      additions: Array.isArray(sw["additions"]) ? sw["additions"].map(String) : null,
      preset: typeof sw["preset"] === "string" && sw["preset"] !== "" ? sw["preset"] : "en",
      removals: Array.isArray(sw["removals"]) ? sw["removals"].map(String) : null
    }
  }
  for (const flag of ["indexNullState", "indexPropertyLength", "indexTimestamps"] as const) {
    if (inv[flag] === true) invertedIndexConfig[flag] = true
  }
  if (typeof inv["cleanupIntervalSeconds"] === "number") invertedIndexConfig.cleanupIntervalSeconds = inv["cleanupIntervalSeconds"]
  const mt = isRecord(raw["multiTenancyConfig"]) ? raw["multiTenancyConfig"] : {}
  const def: ClassDef = {
    class: name,
    properties: properties.length > 0 ? properties : propsRaw.length === 0 && raw["properties"] === undefined ? null : properties,
    invertedIndexConfig,
    multiTenancyConfig: {
      enabled: mt["enabled"] === true,
      autoTenantCreation: mt["autoTenantCreation"] === true,
      autoTenantActivation: mt["autoTenantActivation"] === true
    },
    replicationConfig: { asyncEnabled: false, deletionStrategy: "TimeBasedResolution", factor: 1 },
    shardingConfig:
      mt["enabled"] === true
        ? { virtualPerPhysical: 0, desiredCount: 0, actualCount: 0, desiredVirtualCount: 0, actualVirtualCount: 0, key: "", strategy: "", function: "" }
        : { virtualPerPhysical: 128, desiredCount: 1, actualCount: 1, desiredVirtualCount: 128, actualVirtualCount: 128, key: "_id", strategy: "hash", function: "murmur3" }
  }
  if (typeof raw["description"] === "string") def.description = raw["description"]
  if (vectorConfig !== undefined) def.vectorConfig = vectorConfig
  else {
    def.vectorizer = vectorizer!
    def.vectorIndexType = typeof raw["vectorIndexType"] === "string" ? raw["vectorIndexType"] : "hnsw"
    def.vectorIndexConfig = { ...defaultHnswConfig(), ...(isRecord(raw["vectorIndexConfig"]) ? raw["vectorIndexConfig"] : {}) }
  }
  if (isRecord(raw["moduleConfig"])) def.moduleConfig = raw["moduleConfig"]
  else if (vectorizer !== undefined && vectorizer !== "none") def.moduleConfig = { [vectorizer]: { poolingStrategy: "masked_mean", vectorizeClassName: true } }
  return def
}

export const findProperty = (def: ClassDef, name: string): PropertyDef | undefined =>
  (def.properties ?? []).find((p) => p.name === name) ?? (def.properties ?? []).find((p) => p.name === lowerFirst(name))

/** The vectorizer module for the class's legacy vector or any named vector ("none" when none). */
export const classVectorizers = (def: ClassDef): Array<string> =>
  def.vectorConfig !== undefined
    ? Object.values(def.vectorConfig).flatMap((v) => Object.keys(v.vectorizer))
    : [def.vectorizer ?? "none"]

export const hasTextVectorizer = (def: ClassDef): boolean => classVectorizers(def).some((m) => m.startsWith("text2vec-"))

const ansic = (d: Date): string => {
  const days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
  const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
  const p = (n: number) => String(n).padStart(2, "0")
  return `${days[d.getUTCDay()]} ${months[d.getUTCMonth()]} ${String(d.getUTCDate()).padStart(2, " ")} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} ${d.getUTCFullYear()}`
}

const BEACON = /^weaviate:\/\/localhost\/(?:([A-Za-z_][A-Za-z0-9_]*)\/)?([0-9a-fA-F-]{36})$/
export const parseBeacon = (beacon: unknown): { className: string | undefined; id: string } | undefined => {
  if (typeof beacon !== "string") return undefined
  const m = BEACON.exec(beacon)
  return m === null ? undefined : { className: m[1], id: m[2]!.toLowerCase() }
}

/** Auto-schema type inference for a value of an unknown property (undefined = cannot infer). */
export const inferProperty = (name: string, value: unknown, now: Date): PropertyDef | undefined => {
  const describe = `This property was generated by Weaviate's auto-schema feature on ${ansic(now)}`
  const scalarType = (v: unknown): string | undefined =>
    typeof v === "string" ? (isRfc3339(v) ? "date" : "text") : typeof v === "number" ? "number" : typeof v === "boolean" ? "boolean" : undefined
  const withDefaults = (dataType: string, extra: Partial<PropertyDef> = {}): PropertyDef => {
    const text = isTextType(dataType)
    const p: PropertyDef = { name, dataType: [dataType], description: describe }
    if (text) p.tokenization = "word"
    p.indexFilterable = true
    p.indexSearchable = text
    p.indexRangeFilters = false
    return { ...p, ...extra }
  }
  const nestedOf = (obj: Record<string, unknown>): Array<PropertyDef> =>
    Object.entries(obj).flatMap(([k, v]) => {
      const p = inferProperty(k, v, now)
      if (p === undefined) return []
      delete p.description
      return [p]
    })
  if (value === null || value === undefined) return undefined
  const scalar = scalarType(value)
  if (scalar !== undefined) return withDefaults(scalar)
  if (Array.isArray(value)) {
    if (value.length === 0) return undefined
    const first = value[0]
    if (isRecord(first)) {
      const ref = parseBeacon(first["beacon"])
      if (ref !== undefined && ref.className !== undefined) {
        return { name, dataType: [upperFirst(ref.className)], description: describe, indexFilterable: true, indexSearchable: false, indexRangeFilters: false }
      }
      const merged: Record<string, unknown> = {}
      for (const item of value) if (isRecord(item)) Object.assign(merged, item)
      return withDefaults("object[]", { nestedProperties: nestedOf(merged) })
    }
    const t = scalarType(first)
    return t === undefined ? undefined : withDefaults(`${t}[]`)
  }
  if (isRecord(value)) {
    if (typeof value["latitude"] === "number" && typeof value["longitude"] === "number" && Object.keys(value).length === 2) {
      return withDefaults("geoCoordinates")
    }
    return withDefaults("object", { nestedProperties: nestedOf(value) })
  }
  return undefined
}

/** Class created by auto-schema: a named vector `default` with vectorizer `none`. */
export const autoSchemaClass = (name: string): ClassDef => {
  const def = normalizeClass({ class: name, vectorConfig: { default: { vectorizer: { none: {} }, vectorIndexType: "hnsw" } } }, () => false)
  def.properties = []
  return def
}

/** A property added with `POST /v1/schema/{className}/properties`. */
export const newProperty = (def: ClassDef, raw: unknown, classExists: (name: string) => boolean): PropertyDef => {
  const prop = normalizeProperty(raw, def.vectorizer, false)
  if ((def.properties ?? []).some((p) => p.name.toLowerCase() === prop.name.toLowerCase())) {
    throw new SchemaError(`class "${def.class}": conflict for property "${prop.name}": already in use or provided multiple times`)
  }
  if (isReferenceType(prop.dataType)) {
    for (const target of prop.dataType) {
      if (upperFirst(target) !== def.class && !classExists(upperFirst(target))) {
        throw new SchemaError(`property '${prop.name}': invalid dataType: reference property to nonexistent class`)
      }
    }
  }
  return prop
}
