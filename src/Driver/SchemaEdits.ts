/**
 * Changes to the structure of a database: collections (`POST /v1/schema`, `PUT` and `DELETE
 * /v1/schema/{C}`), properties (`POST /v1/schema/{C}/properties`) and tenants (`POST`, `PUT`, `DELETE
 * /v1/schema/{C}/tenants`). Each change is planned first: checked against what Weaviate would refuse
 * (its rules in `entities/schema/validation.go`, `usecases/schema/class.go`, `usecases/schema/tenant.go`
 * and the vector index's `ValidateUserConfigUpdate`), so a refusal comes with its reason before anyone
 * is asked to approve; then described readably (one line per property, per setting, per tenant) for
 * the approval, with the exact request below it; then sent once.
 *
 * The requests go through the session's HTTP, which tells the session's caches of every write under
 * `/v1/schema` (`SessionCaches.afterRequest`): the next read sees the change.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { Collection } from "./CollectionSchema.ts"
import type { RequestError } from "./DriverError.ts"
import { canonicalStatus } from "./TenantIndex.ts"
import type { WeaviateHttp } from "./WeaviateHttp.ts"

// ===== Names and types =====

/** Collection names: an upper-case letter, then letters, digits and `_` (`ClassNameRegexCore`). @category rules */
export const COLLECTION_NAME = /^[A-Z][_0-9A-Za-z]{0,254}$/
/** Property names (`PropertyNameRegex`). @category rules */
export const PROPERTY_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,230}$/
/** Nested property names (`NestedPropertyNameRegex`). @category rules */
export const NESTED_PROPERTY_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/
/** Named vector names (`TargetVectorNameRegex`). @category rules */
export const VECTOR_NAME = /^[_A-Za-z][_0-9A-Za-z]{0,229}$/
/** Tenant names (`ShardNameRegexCore`). @category rules */
export const TENANT_NAME = /^[A-Za-z0-9\-_]{1,64}$/

/** Property names Weaviate keeps for itself. @category rules */
export const RESERVED_PROPERTY_NAMES: ReadonlyArray<string> = ["_additional", "_id", "id"]
/** Suffixes of Weaviate's own index files, which a property name may not end in. @category rules */
export const RESERVED_PROPERTY_SUFFIXES: ReadonlyArray<string> = ["_searchable", "_rangeable", "_temp", "__meta_count", "_propertyLength", "_nullState"]

/** The data types a property can have (`string`/`string[]` are deprecated since 1.19 and refused). @category rules */
export const DATA_TYPES: ReadonlyArray<string> = [
  "text", "text[]", "int", "int[]", "number", "number[]", "boolean", "boolean[]", "date", "date[]", "uuid", "uuid[]",
  "geoCoordinates", "phoneNumber", "blob", "object", "object[]"
]

/** The text tokenizations every server has; the language tokenizers need the server's own setting. @category rules */
export const TOKENIZATIONS: ReadonlyArray<string> = ["word", "lowercase", "whitespace", "field", "trigram", "gse", "gse_ch", "kagome_ja", "kagome_kr"]

const TEXT_TYPES = new Set(["text", "text[]"])
const RANGE_TYPES = new Set(["int", "number", "date"])
const OBJECT_TYPES = new Set(["object", "object[]"])
const NOT_NESTED = new Set(["geoCoordinates", "phoneNumber"])

/** A module of `/v1/meta` that makes vectors (`text2vec-…`, `multi2vec-…`, …). @category rules */
export const isVectorizerModule = (module: string): boolean => /^(text2vec|multi2vec|img2vec|ref2vec|text2multivec|multi2multivec)-/.test(module)

/** The module that offloading tenants needs (`usecases/schema/tenant.go`). @category rules */
export const OFFLOAD_MODULE = "offload-s3"

// ===== Models =====

/** A property as `create_table` and `add_column` take it (Weaviate's own field names). @category models */
export interface PropertySpec {
  readonly name: string
  readonly dataType: string
  readonly description?: string | undefined
  readonly tokenization?: string | undefined
  readonly indexFilterable?: boolean | undefined
  readonly indexSearchable?: boolean | undefined
  readonly indexRangeFilters?: boolean | undefined
  readonly nestedProperties?: ReadonlyArray<PropertySpec> | undefined
}

/** A named vector: its own vectorizer (or `none`) over some properties. @category models */
export interface NamedVectorSpec {
  readonly name: string
  readonly vectorizer: string
  readonly sourceProperties?: ReadonlyArray<string> | undefined
  readonly vectorIndexType?: string | undefined
}

/** A new collection. @category models */
export interface CollectionSpec {
  readonly name: string
  readonly description?: string | undefined
  readonly properties: ReadonlyArray<PropertySpec>
  /** A vectorizer module, or `none` (vectors given with each row); absent: the server's default. */
  readonly vectorizer?: string | undefined
  readonly vectorIndexType?: string | undefined
  readonly namedVectors?: ReadonlyArray<NamedVectorSpec> | undefined
  readonly multiTenancy?: {
    readonly enabled: boolean
    readonly autoTenantCreation?: boolean | undefined
    readonly autoTenantActivation?: boolean | undefined
  } | undefined
  readonly replicationFactor?: number | undefined
  /** The inverted index settings, some of which only creation can set. */
  readonly invertedIndex?: {
    readonly indexTimestamps?: boolean | undefined
    readonly indexNullState?: boolean | undefined
    readonly indexPropertyLength?: boolean | undefined
    readonly bm25?: { readonly b?: number | undefined; readonly k1?: number | undefined } | undefined
    readonly stopwords?: {
      readonly preset?: string | undefined
      readonly additions?: ReadonlyArray<string> | undefined
      readonly removals?: ReadonlyArray<string> | undefined
    } | undefined
  } | undefined
}

/** What the planning of a change knows about the server. @category models */
export interface ServerFacts {
  /** The modules `/v1/meta` lists. */
  readonly modules: ReadonlyArray<string>
  /** The collections there now. */
  readonly collections: ReadonlyArray<Pick<Collection, "name">>
}

/** One request of a structure change, exactly as it is sent. @category models */
export interface SchemaRequest {
  readonly method: "POST" | "PUT" | "DELETE"
  readonly path: string
  readonly body?: unknown
}

/** A planned change: the readable summary the user approves, and the request sent. @category models */
export interface Plan {
  readonly summary: ReadonlyArray<string>
  readonly request: SchemaRequest
}

/** The approval text of a plan: the summary, then the exact request. @category rendering */
export const statementOf = (plan: Plan): string =>
  [...plan.summary, "", "Sent as:", `${plan.request.method} ${plan.request.path}`, ...(plan.request.body === undefined ? [] : [JSON.stringify(plan.request.body)])].join("\n")

// ===== Properties =====

const flags = (p: PropertySpec): ReadonlyArray<string> => [
  ...(p.tokenization !== undefined ? [`tokenization ${p.tokenization}`] : []),
  ...(p.indexFilterable === false ? ["not filterable"] : p.indexFilterable === true ? ["filterable"] : []),
  ...(p.indexSearchable === false ? ["not searchable"] : p.indexSearchable === true ? ["searchable"] : []),
  ...(p.indexRangeFilters === true ? ["range filters"] : [])
]

/**
 * A property as one line (and its nested properties as lines under it, indented).
 *
 * @category rendering
 */
export const propertyLines = (p: PropertySpec, indent = "  "): ReadonlyArray<string> => {
  const details = flags(p)
  const line = `${indent}${p.name}: ${p.dataType}${details.length > 0 ? ` (${details.join(", ")})` : ""}${
    p.description !== undefined && p.description !== "" ? ` — ${p.description}` : ""
  }`
  return [line, ...(p.nestedProperties ?? []).flatMap((n) => propertyLines(n, `${indent}    `))]
}

/** A property as Weaviate takes it. @category conversions */
export const propertyDocument = (p: PropertySpec): Record<string, unknown> => ({
  name: p.name,
  dataType: [p.dataType],
  ...(p.description !== undefined ? { description: p.description } : {}),
  ...(p.tokenization !== undefined ? { tokenization: p.tokenization } : {}),
  ...(p.indexFilterable !== undefined ? { indexFilterable: p.indexFilterable } : {}),
  ...(p.indexSearchable !== undefined ? { indexSearchable: p.indexSearchable } : {}),
  ...(p.indexRangeFilters !== undefined ? { indexRangeFilters: p.indexRangeFilters } : {}),
  ...(p.nestedProperties !== undefined ? { nestedProperties: p.nestedProperties.map(propertyDocument) } : {})
})

/**
 * What Weaviate would refuse in a list of properties of `collection` (one reason per problem):
 * invalid or reserved names, a name used twice (names are compared ignoring case, as Weaviate does),
 * an unknown data type, a reference to a collection that does not exist, settings that do not fit the
 * type, nested properties on a type that has none, or an object without them.
 *
 * @category rules
 */
export const propertyProblems = (
  collection: string,
  properties: ReadonlyArray<PropertySpec>,
  options: { readonly existing: ReadonlyArray<string>; readonly collections: ReadonlyArray<string>; readonly prefix?: string }
): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const nested = options.prefix !== undefined
  const taken = new Set(options.existing.map((name) => name.toLowerCase()))
  for (const p of properties) {
    const label = `property ${JSON.stringify(nested ? `${options.prefix}.${p.name}` : p.name)}`
    if (!(nested ? NESTED_PROPERTY_NAME : PROPERTY_NAME).test(p.name)) {
      problems.push(`${label}: not a valid property name (a letter or _, then letters, digits or _${nested ? "" : "; at most 231 characters"})`)
    } else if (!nested && RESERVED_PROPERTY_NAMES.includes(p.name)) {
      problems.push(`${label}: a name Weaviate reserves (${RESERVED_PROPERTY_NAMES.join(", ")})`)
    } else if (!nested && RESERVED_PROPERTY_SUFFIXES.some((suffix) => p.name.endsWith(suffix))) {
      problems.push(`${label}: ends in a suffix Weaviate reserves for its own indexes (${RESERVED_PROPERTY_SUFFIXES.join(", ")})`)
    }
    if (taken.has(p.name.toLowerCase())) {
      problems.push(`${label}: the name is already used${options.existing.length > 0 && !nested ? ` in ${collection}` : ""} (names are compared ignoring case)`)
    }
    taken.add(p.name.toLowerCase())
    problems.push(...typeProblems(collection, p, label, nested, options.collections))
  }
  return problems
}

const typeProblems = (
  collection: string,
  p: PropertySpec,
  label: string,
  nested: boolean,
  collections: ReadonlyArray<string>
): ReadonlyArray<string> => {
  const type = p.dataType
  const reference = /^[A-Z]/.test(type)
  if (type === "string" || type === "string[]") return [`${label}: the data type ${type} is deprecated; use ${type.replace("string", "text")}`]
  if (reference) {
    if (nested) return [`${label}: a reference (${type}) cannot be a nested property`]
    if (type !== collection && !collections.includes(type)) return [`${label}: references the collection ${type}, which does not exist`]
    return settingsProblems(p, label, "reference")
  }
  if (!DATA_TYPES.includes(type)) return [`${label}: unknown data type ${JSON.stringify(type)} (one of ${DATA_TYPES.join(", ")}, or a collection name for a reference)`]
  if (nested && NOT_NESTED.has(type)) return [`${label}: ${type} cannot be a nested property`]
  return settingsProblems(p, label, type)
}

const settingsProblems = (p: PropertySpec, label: string, type: string): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (p.tokenization !== undefined) {
    if (!TEXT_TYPES.has(type)) problems.push(`${label}: tokenization applies to text and text[] only, not ${type}`)
    else if (!TOKENIZATIONS.includes(p.tokenization)) problems.push(`${label}: unknown tokenization ${JSON.stringify(p.tokenization)} (one of ${TOKENIZATIONS.join(", ")})`)
  }
  if (p.indexSearchable === true && !TEXT_TYPES.has(type)) problems.push(`${label}: indexSearchable applies to text and text[] only, not ${type}`)
  if (p.indexRangeFilters === true && !RANGE_TYPES.has(type)) problems.push(`${label}: indexRangeFilters applies to int, number and date only, not ${type}`)
  if (OBJECT_TYPES.has(type)) {
    if (p.nestedProperties === undefined || p.nestedProperties.length === 0) problems.push(`${label}: ${type} needs at least one nested property`)
    else problems.push(...propertyProblems("", p.nestedProperties, { existing: [], collections: [], prefix: label.slice(label.indexOf("\"") + 1, -1) }))
  } else if (p.nestedProperties !== undefined && p.nestedProperties.length > 0) {
    problems.push(`${label}: nested properties are for object and object[] only, not ${type}`)
  }
  return problems
}

// ===== create_table =====

const vectorizerProblem = (vectorizer: string, modules: ReadonlyArray<string>, where: string): string | undefined => {
  if (vectorizer === "none") return undefined
  if (!modules.includes(vectorizer)) {
    const available = modules.filter(isVectorizerModule)
    return `${where}: this server has no module ${vectorizer} (its vectorizers: ${available.length === 0 ? "none" : available.join(", ")}; or none, with vectors given per row)`
  }
  if (!isVectorizerModule(vectorizer)) return `${where}: ${vectorizer} is a module of this server but not a vectorizer`
  return undefined
}

/**
 * The collection's document for `POST /v1/schema`.
 *
 * @category conversions
 */
export const collectionDocument = (spec: CollectionSpec): Record<string, unknown> => {
  const inverted = spec.invertedIndex
  const invertedConfig = inverted === undefined ? undefined : {
    ...(inverted.indexTimestamps !== undefined ? { indexTimestamps: inverted.indexTimestamps } : {}),
    ...(inverted.indexNullState !== undefined ? { indexNullState: inverted.indexNullState } : {}),
    ...(inverted.indexPropertyLength !== undefined ? { indexPropertyLength: inverted.indexPropertyLength } : {}),
    ...(inverted.bm25 !== undefined ? { bm25: inverted.bm25 } : {}),
    ...(inverted.stopwords !== undefined ? { stopwords: inverted.stopwords } : {})
  }
  return {
    class: spec.name,
    ...(spec.description !== undefined ? { description: spec.description } : {}),
    ...(spec.vectorizer !== undefined ? { vectorizer: spec.vectorizer } : {}),
    ...(spec.vectorIndexType !== undefined ? { vectorIndexType: spec.vectorIndexType } : {}),
    ...(spec.namedVectors !== undefined && spec.namedVectors.length > 0
      ? {
        vectorConfig: Object.fromEntries(spec.namedVectors.map((v) => [v.name, {
          vectorizer: { [v.vectorizer]: v.sourceProperties !== undefined ? { properties: v.sourceProperties } : {} },
          vectorIndexType: v.vectorIndexType ?? "hnsw"
        }]))
      }
      : {}),
    properties: spec.properties.map(propertyDocument),
    ...(spec.multiTenancy !== undefined
      ? {
        multiTenancyConfig: {
          enabled: spec.multiTenancy.enabled,
          ...(spec.multiTenancy.autoTenantCreation !== undefined ? { autoTenantCreation: spec.multiTenancy.autoTenantCreation } : {}),
          ...(spec.multiTenancy.autoTenantActivation !== undefined ? { autoTenantActivation: spec.multiTenancy.autoTenantActivation } : {})
        }
      }
      : {}),
    ...(spec.replicationFactor !== undefined ? { replicationConfig: { factor: spec.replicationFactor } } : {}),
    ...(invertedConfig !== undefined ? { invertedIndexConfig: invertedConfig } : {})
  }
}

const onOff = (value: boolean | undefined) => (value === true ? "on" : "off")

/**
 * Plans a new collection: every reason Weaviate would refuse it, or the plan.
 *
 * @category planning
 */
export const planCreate = (spec: CollectionSpec, facts: ServerFacts): { readonly problems: ReadonlyArray<string> } | Plan => {
  const problems: Array<string> = []
  const names = facts.collections.map((c) => c.name)
  if (!COLLECTION_NAME.test(spec.name)) {
    problems.push(`${JSON.stringify(spec.name)} is not a valid collection name (an upper-case letter, then letters, digits or _; at most 255 characters)`)
  } else {
    const existing = names.find((name) => name.toLowerCase() === spec.name.toLowerCase())
    if (existing !== undefined) problems.push(`a collection named ${existing} already exists${existing === spec.name ? "" : " (names are compared ignoring case)"}`)
  }
  problems.push(...propertyProblems(spec.name, spec.properties, { existing: [], collections: names }))
  const named = spec.namedVectors ?? []
  if (named.length > 0 && (spec.vectorizer !== undefined || spec.vectorIndexType !== undefined)) {
    problems.push("vectorizer and vector_index_type are for a collection with one vector; with named_vectors give each its own vectorizer")
  }
  if (spec.vectorizer !== undefined) {
    const problem = vectorizerProblem(spec.vectorizer, facts.modules, "vectorizer")
    if (problem !== undefined) problems.push(problem)
  }
  const vectorNames = new Set<string>()
  const propertyNames = new Set(spec.properties.map((p) => p.name))
  for (const v of named) {
    const where = `named vector ${JSON.stringify(v.name)}`
    if (!VECTOR_NAME.test(v.name)) problems.push(`${where}: not a valid vector name (a letter or _, then letters, digits or _)`)
    if (vectorNames.has(v.name)) problems.push(`${where}: the name is used twice`)
    vectorNames.add(v.name)
    const problem = vectorizerProblem(v.vectorizer, facts.modules, where)
    if (problem !== undefined) problems.push(problem)
    for (const source of v.sourceProperties ?? []) {
      if (!propertyNames.has(source)) problems.push(`${where}: source property ${JSON.stringify(source)} is not a property of the collection`)
    }
  }
  const tenancy = spec.multiTenancy
  if (tenancy !== undefined && !tenancy.enabled && (tenancy.autoTenantCreation === true || tenancy.autoTenantActivation === true)) {
    problems.push("autoTenantCreation and autoTenantActivation need multi-tenancy enabled")
  }
  if (spec.replicationFactor !== undefined && (!Number.isInteger(spec.replicationFactor) || spec.replicationFactor < 1)) {
    problems.push("the replication factor is a whole number of at least 1")
  }
  if (problems.length > 0) return { problems }
  const inverted = spec.invertedIndex
  const summary = [
    `Create the collection ${spec.name}`,
    ...(spec.description !== undefined ? [`  description: ${spec.description}`] : []),
    ...(named.length === 0
      ? [`  vectorizer: ${spec.vectorizer ?? "the server's default"}${spec.vectorizer === "none" ? " (vectors given with each row)" : ""}`]
      : []),
    ...(spec.vectorIndexType !== undefined ? [`  vector index: ${spec.vectorIndexType}`] : []),
    ...(named.length > 0 ? [`  named vectors (${named.length}):`] : []),
    ...named.map((v) =>
      `    ${v.name}: ${v.vectorizer}${v.sourceProperties !== undefined ? ` over ${v.sourceProperties.join(", ")}` : ""}${
        v.vectorIndexType !== undefined ? `, ${v.vectorIndexType} index` : ""
      }`
    ),
    `  multi-tenancy: ${tenancy?.enabled === true ? `on (autoTenantCreation ${onOff(tenancy.autoTenantCreation)}, autoTenantActivation ${onOff(tenancy.autoTenantActivation)})` : "off"}`,
    ...(spec.replicationFactor !== undefined ? [`  replication factor: ${spec.replicationFactor}`] : []),
    ...(inverted?.indexTimestamps !== undefined ? [`  indexTimestamps: ${inverted.indexTimestamps}`] : []),
    ...(inverted?.indexNullState !== undefined ? [`  indexNullState: ${inverted.indexNullState}`] : []),
    ...(inverted?.indexPropertyLength !== undefined ? [`  indexPropertyLength: ${inverted.indexPropertyLength}`] : []),
    ...(inverted?.bm25 !== undefined ? [`  bm25: ${JSON.stringify(inverted.bm25)}`] : []),
    ...(inverted?.stopwords !== undefined ? [`  stopwords: ${JSON.stringify(inverted.stopwords)}`] : []),
    `Properties (${spec.properties.length}):`,
    ...spec.properties.flatMap((p) => propertyLines(p, "  "))
  ]
  return { summary, request: { method: "POST", path: "/v1/schema", body: collectionDocument(spec) } }
}

// ===== add_column =====

/** What `add_column` says about the limits of Weaviate's schema. @category constants */
export const ADD_COLUMN_NOTE = "Weaviate cannot rename or drop a property once added. Rows already stored are not re-indexed for it."

/**
 * Plans one new property of an existing collection.
 *
 * @category planning
 */
export const planAddProperty = (
  collection: Collection,
  property: PropertySpec,
  facts: ServerFacts
): { readonly problems: ReadonlyArray<string> } | Plan => {
  const problems = propertyProblems(collection.name, [property], {
    existing: collection.properties.map((p) => p.name),
    collections: facts.collections.map((c) => c.name)
  })
  if (problems.length > 0) return { problems }
  return {
    summary: [`Add a property to ${collection.name}`, ...propertyLines(property, "  "), ...ADD_COLUMN_NOTE.split(/(?<=\.) /)],
    request: { method: "POST", path: `/v1/schema/${encodeURIComponent(collection.name)}/properties`, body: propertyDocument(property) }
  }
}

// ===== update_table =====

const INDEX_SETTING = "(?:ef|dynamicEfMin|dynamicEfMax|dynamicEfFactor|flatSearchCutoff|vectorCacheMaxObjects|filterStrategy)"
const VECTOR_PREFIX = "(?:vectorConfig\\.[_A-Za-z][_0-9A-Za-z]*\\.)?"

type Check = (value: unknown) => string | undefined

const isBool: Check = (v) => (typeof v === "boolean" ? undefined : "true or false")
const isNumber: Check = (v) => (typeof v === "number" && Number.isFinite(v) ? undefined : "a number")
const isWhole = (min: number): Check => (v) => (typeof v === "number" && Number.isInteger(v) && v >= min ? undefined : `a whole number of at least ${min}`)
const oneOf = (...values: ReadonlyArray<string>): Check => (v) => (typeof v === "string" && values.includes(v) ? undefined : `one of ${values.join(", ")}`)
const isWords: Check = (v) => (Array.isArray(v) && v.every((w) => typeof w === "string") ? undefined : "a list of words")

/**
 * The settings `update_table` may change, by dotted path in the collection's document, each with the
 * values it takes. `vectorConfig.NAME.` before a vector index setting names a named vector's index.
 *
 * @category rules
 */
export const MUTABLE_SETTINGS: ReadonlyArray<readonly [RegExp, string, Check]> = [
  [/^invertedIndexConfig\.bm25\.(b|k1)$/, "invertedIndexConfig.bm25.b, invertedIndexConfig.bm25.k1", isNumber],
  [/^invertedIndexConfig\.stopwords\.preset$/, "invertedIndexConfig.stopwords.preset", oneOf("en", "none")],
  [/^invertedIndexConfig\.stopwords\.(additions|removals)$/, "invertedIndexConfig.stopwords.additions, invertedIndexConfig.stopwords.removals", isWords],
  [/^invertedIndexConfig\.cleanupIntervalSeconds$/, "invertedIndexConfig.cleanupIntervalSeconds", isWhole(1)],
  [/^replicationConfig\.factor$/, "replicationConfig.factor", isWhole(1)],
  [/^replicationConfig\.asyncEnabled$/, "replicationConfig.asyncEnabled", isBool],
  [/^replicationConfig\.deletionStrategy$/, "replicationConfig.deletionStrategy", oneOf("NoAutomatedResolution", "DeleteOnConflict", "TimeBasedResolution")],
  [/^multiTenancyConfig\.(autoTenantCreation|autoTenantActivation)$/, "multiTenancyConfig.autoTenantCreation, multiTenancyConfig.autoTenantActivation", isBool],
  [new RegExp(`^${VECTOR_PREFIX}vectorIndexConfig\\.filterStrategy$`), "vectorIndexConfig.filterStrategy", oneOf("sweeping", "acorn")],
  [new RegExp(`^${VECTOR_PREFIX}vectorIndexConfig\\.${INDEX_SETTING}$`), "vectorIndexConfig.ef (and dynamicEfMin, dynamicEfMax, dynamicEfFactor, flatSearchCutoff, vectorCacheMaxObjects)", (v) => isWhole(-1)(v)]
]

/**
 * Settings Weaviate never changes after creation, each with the reason given when asked to.
 *
 * @category rules
 */
export const IMMUTABLE_SETTINGS: ReadonlyArray<readonly [RegExp, string]> = [
  [/^class$/, "the collection's name cannot be changed"],
  [/^vectorizer$|^moduleConfig(\.|$)/, "the vectorizer and its module settings are fixed at creation"],
  [/^vectorIndexType$/, "the vector index type is fixed at creation"],
  [/^properties(\.|$)/, "properties are not changed here: add_column adds one; Weaviate cannot rename or drop a property"],
  [/^shardingConfig(\.|$)/, "sharding is fixed at creation"],
  [/^multiTenancyConfig\.enabled$/, "multi-tenancy cannot be turned on or off after creation"],
  [/^invertedIndexConfig\.(indexTimestamps|indexNullState|indexPropertyLength)$/, "this inverted index setting is fixed at creation"],
  [new RegExp(`^${VECTOR_PREFIX}vectorIndexConfig\\.(distance|efConstruction|maxConnections|cleanupIntervalSeconds)$`), "this vector index setting is fixed at creation"],
  [/^vectorConfig\.[^.]+\.(vectorizer|vectorIndexType)(\.|$)/, "a named vector's vectorizer and index type are fixed at creation"],
  [/^vectorConfig\.[^.]+$/, "named vectors are not added or removed here"]
]

const getPath = (document: unknown, path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>((node, key) => (typeof node === "object" && node !== null ? (node as Record<string, unknown>)[key] : undefined), document)

const setPath = (document: Record<string, unknown>, path: ReadonlyArray<string>, value: unknown): void => {
  let node = document
  for (const key of path.slice(0, -1)) {
    const next = node[key]
    if (typeof next !== "object" || next === null || Array.isArray(next)) node[key] = {}
    node = node[key] as Record<string, unknown>
  }
  node[path[path.length - 1]!] = value
}

const shown = (value: unknown) => (value === undefined ? "(not set)" : JSON.stringify(value))

/**
 * Plans a change of a collection's mutable settings (and description) on its document as Weaviate
 * has it now: every immutable or unknown setting is refused, naming it; the request is the whole
 * document with the changes (`PUT /v1/schema/{C}` replaces the class).
 *
 * @category planning
 */
export const planUpdate = (
  current: Record<string, unknown>,
  changes: { readonly description?: string | undefined; readonly settings?: Readonly<Record<string, unknown>> | undefined }
): { readonly problems: ReadonlyArray<string> } | Plan => {
  const name = String(current["class"] ?? "")
  const settings = Object.entries(changes.settings ?? {})
  const problems: Array<string> = []
  const immutable: Array<string> = []
  for (const [path, value] of settings) {
    const fixed = IMMUTABLE_SETTINGS.find(([rule]) => rule.test(path))
    if (fixed !== undefined) {
      immutable.push(`${path}: ${fixed[1]}`)
      continue
    }
    const mutable = MUTABLE_SETTINGS.find(([rule]) => rule.test(path))
    if (mutable === undefined) {
      problems.push(`${path}: not a setting update_table can change (it changes description, ${MUTABLE_SETTINGS.map(([, label]) => label).join(", ")})`)
      continue
    }
    const wrong = mutable[2](value)
    if (wrong !== undefined) problems.push(`${path}: ${JSON.stringify(value)} is not valid; it takes ${wrong}`)
    const vector = /^vectorConfig\.([^.]+)\./.exec(path)?.[1]
    if (vector !== undefined && getPath(current, ["vectorConfig", vector]) === undefined) problems.push(`${path}: ${name} has no named vector ${vector}`)
    if (path.startsWith("multiTenancyConfig.") && value === true && getPath(current, ["multiTenancyConfig", "enabled"]) !== true) {
      problems.push(`${path}: ${name} is not multi-tenant`)
    }
  }
  if (immutable.length > 0) problems.unshift(`immutable settings cannot be changed: ${immutable.join("; ")}`)
  if (settings.length === 0 && changes.description === undefined) problems.push("nothing to change: give description or settings")
  if (problems.length > 0) return { problems }
  const next = structuredClone(current)
  const lines: Array<string> = []
  if (changes.description !== undefined) {
    lines.push(`  description: ${shown(current["description"])} → ${JSON.stringify(changes.description)}`)
    next["description"] = changes.description
  }
  for (const [path, value] of settings) {
    const keys = path.split(".")
    lines.push(`  ${path}: ${shown(getPath(current, keys))} → ${JSON.stringify(value)}`)
    setPath(next, keys, value)
  }
  return {
    summary: [`Change the settings of ${name}`, ...lines],
    request: { method: "PUT", path: `/v1/schema/${encodeURIComponent(name)}`, body: next }
  }
}

// ===== Tenants =====

/** The statuses a tenant can be set to, in both of Weaviate's spellings. @category rules */
export const TENANT_STATUSES: ReadonlyArray<string> = ["ACTIVE", "INACTIVE", "OFFLOADED", "HOT", "COLD", "FROZEN"]

/** `HOT` → `ACTIVE (HOT)`: both names, as users meet either. @category rendering */
export const statusLabel = (status: string): string => {
  const hot = canonicalStatus(status)
  const named = hot === "HOT" ? "ACTIVE" : hot === "COLD" ? "INACTIVE" : hot === "FROZEN" ? "OFFLOADED" : hot
  return named === hot ? hot : `${named} (${hot})`
}

/** Tenant names Weaviate would refuse, and names given twice. @category rules */
export const tenantNameProblems = (names: ReadonlyArray<string>): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const seen = new Set<string>()
  for (const name of names) {
    if (!TENANT_NAME.test(name)) problems.push(`tenant ${JSON.stringify(name)}: not a valid tenant name (1 to 64 letters, digits, - or _)`)
    if (seen.has(name)) problems.push(`tenant ${JSON.stringify(name)}: named twice`)
    seen.add(name)
  }
  return problems
}

/** The request that sets tenants' status (`PUT`) or creates them (`POST`). @category planning */
export const tenantsRequest = (collection: string, method: "POST" | "PUT", names: ReadonlyArray<string>, status: string): SchemaRequest => ({
  method,
  path: `/v1/schema/${encodeURIComponent(collection)}/tenants`,
  body: names.map((name) => ({ name, activityStatus: canonicalStatus(status) }))
})

/** The request that deletes tenants. @category planning */
export const deleteTenantsRequest = (collection: string, names: ReadonlyArray<string>): SchemaRequest => ({
  method: "DELETE",
  path: `/v1/schema/${encodeURIComponent(collection)}/tenants`,
  body: names
})

// ===== Sending =====

/**
 * Sends one planned request, once; a refusal is the database's (`DatabaseRefused` with its reason).
 *
 * @category requests
 */
export const send = (http: WeaviateHttp, request: SchemaRequest): Effect.Effect<unknown, RequestError> =>
  Effect.map(
    http.requestOk({ method: request.method, path: request.path, ...(request.body !== undefined ? { body: { json: request.body } } : {}) }),
    (response) => response.json
  )

/**
 * The collection's document as Weaviate has it now, read past every cache (`update_table` changes
 * the latest, not a cached copy).
 *
 * @category requests
 */
export const readDocument = (http: WeaviateHttp, collection: string): Effect.Effect<Record<string, unknown>, RequestError> =>
  Effect.map(http.requestOk({ method: "GET", path: `/v1/schema/${encodeURIComponent(collection)}` }), (response) =>
    typeof response.json === "object" && response.json !== null ? response.json as Record<string, unknown> : {})
