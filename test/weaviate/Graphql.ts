/**
 * `POST /v1/graphql`: a GraphQL schema built from the classes (rebuilt when the schema changes),
 * parsed, validated and executed with the `graphql` package, with graphql-go's (tailor-platform)
 * message formats for the validation errors clients see, and Weaviate's envelope: HTTP 200 with
 * `errors` (`locations`, `message`, `path`), no `data` for syntax/validation errors, `null` for the
 * failing class otherwise (adapters/handlers/rest/handlers_graphql.go, adapters/handlers/graphql/local).
 */
import {
  type ASTVisitor,
  type ExecutionResult,
  FieldsOnCorrectTypeRule,
  GraphQLBoolean,
  GraphQLEnumType,
  type GraphQLError,
  GraphQLError as GqlError,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLFieldConfigMap,
  GraphQLFloat,
  type GraphQLInputType,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  type GraphQLOutputType,
  GraphQLScalarType,
  GraphQLSchema,
  GraphQLString,
  GraphQLUnionType,
  type DocumentNode,
  execute,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  KnownArgumentNamesRule,
  Kind,
  parse,
  print,
  specifiedRules,
  validate,
  type ValidationContext,
  type ValueNode,
  ValuesOfCorrectTypeRule
} from "graphql"
import { goJson, isRecord } from "./Json.ts"
import { type GetRequest, type Hit, matchForAggregate, type QueryLimits, QueryError, runGet } from "./Query.ts"
import { type ClassDef, type PropertyDef, baseType, hasTextVectorizer, isReferenceType, isTextType, upperFirst } from "./Schema.ts"
import { parseRfc3339 } from "./Rfc3339.ts"
import type { ClassState, Store, StoredObject } from "./Store.ts"

export interface GraphqlResponse {
  readonly status: number
  readonly body: string
}

const errorBody = (message: string): string => goJson({ error: [{ message }] })

// ---------------------------------------------------------------------------------------------
// graphql-go style validation messages

const lexicalDistance = (a0: string, b0: string): number => {
  const a = a0.toLowerCase()
  const b = b0.toLowerCase()
  const d: Array<Array<number>> = []
  for (let i = 0; i <= a.length; i++) d.push([i])
  for (let j = 1; j <= b.length; j++) d[0]![j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + cost)
    }
  }
  return d[a.length]![b.length]!
}

const suggestionList = (input: string, options: ReadonlyArray<string>): Array<string> =>
  options
    .map((opt, i) => ({ opt, i, dist: lexicalDistance(input, opt) }))
    .filter((o) => o.dist <= Math.max(Math.floor(input.length / 2), Math.floor(o.opt.length / 2), 1))
    .sort((x, y) => x.dist - y.dist || x.i - y.i)
    .map((o) => o.opt)

const quotedOrList = (list: ReadonlyArray<string>): string => {
  const q = list.slice(0, 5).map((s) => `"${s}"`)
  if (q.length === 1) return q[0]!
  if (q.length === 2) return `${q[0]} or ${q[1]}`
  return `${q.slice(0, -1).join(", ")}, or ${q[q.length - 1]}`
}

const literalMessages = (type: GraphQLInputType, value: ValueNode | undefined): Array<string> => {
  if (isNonNullType(type)) {
    if (value === undefined || value.kind === Kind.NULL) return [`Expected "${String(type)}", found null.`]
    return literalMessages(type.ofType, value)
  }
  if (value === undefined || value.kind === Kind.NULL || value.kind === Kind.VARIABLE) return []
  if (isListType(type)) {
    if (value.kind === Kind.LIST) {
      return value.values.flatMap((v, i) => literalMessages(type.ofType, v).map((m) => `In element #${i + 1}: ${m}`))
    }
    return literalMessages(type.ofType, value)
  }
  if (isInputObjectType(type)) {
    if (value.kind !== Kind.OBJECT) return [`Expected "${type.name}", found not an object.`]
    const fields = type.getFields()
    const out: Array<string> = []
    for (const f of value.fields) if (fields[f.name.value] === undefined) out.push(`In field "${f.name.value}": Unknown field.`)
    for (const [name, field] of Object.entries(fields)) {
      const given = value.fields.find((f) => f.name.value === name)?.value
      for (const m of literalMessages(field.type, given)) out.push(`In field "${name}": ${m}`)
    }
    return out
  }
  let parsed: unknown
  try {
    if (isScalarType(type)) parsed = type.parseLiteral(value, undefined)
    else if (isEnumType(type)) parsed = type.parseLiteral(value, undefined)
  } catch {
    parsed = undefined
  }
  if ((isScalarType(type) || isEnumType(type)) && (parsed === undefined || parsed === null)) {
    return [`Expected type "${type.name}", found ${print(value)}.`]
  }
  return []
}

/** Unknown fields/arguments and argument literal checks with graphql-go's texts. */
const WeaviateRule = (context: ValidationContext): ASTVisitor => ({
  Field(node) {
    const parent = context.getParentType()
    if (parent === null || parent === undefined || context.getFieldDef() !== undefined && context.getFieldDef() !== null) return
    if (!("getFields" in parent)) return
    const suggestions = suggestionList(node.name.value, Object.keys(parent.getFields()))
    context.reportError(
      new GqlError(
        `Cannot query field "${node.name.value}" on type "${parent.name}".${suggestions.length > 0 ? ` Did you mean ${quotedOrList(suggestions)}?` : ""}`,
        { nodes: node }
      )
    )
  },
  Argument(node) {
    const argDef = context.getArgument()
    if (argDef === null || argDef === undefined) {
      const field = context.getFieldDef()
      const parent = context.getParentType()
      if (field === null || field === undefined || parent === null || parent === undefined) return
      const suggestions = suggestionList(node.name.value, field.args.map((a) => a.name))
      context.reportError(
        new GqlError(
          `Unknown argument "${node.name.value}" on field "${field.name}" of type "${parent.name}".${suggestions.length > 0 ? ` Did you mean ${quotedOrList(suggestions)}?` : ""}`,
          { nodes: node }
        )
      )
      return
    }
    const messages = literalMessages(argDef.type, node.value)
    if (messages.length > 0) {
      context.reportError(
        new GqlError(`Argument "${node.name.value}" has invalid value ${print(node.value)}.\n${messages.join("\n")}`, { nodes: node.value })
      )
    }
  }
})

const RULES = [
  ...specifiedRules.filter((r) => r !== KnownArgumentNamesRule && r !== ValuesOfCorrectTypeRule && r !== FieldsOnCorrectTypeRule),
  WeaviateRule
]

const goMessage = (m: string): string =>
  m
    .replace(/^Field "(.+)" argument "(.+)" of type "(.+)" is required, but it was not provided\.$/, 'Field "$1" argument "$2" of type "$3" is required but not provided.')
    .replace(/^Field "(.+)" of type "(.+)" must have a selection of subfields\..*$/s, 'Field "$1" of type "$2" must have a sub selection.')
    .replace(/^Field "(.+)" must not have a selection since type "(.+)" has no subfields\.$/, 'Field "$1" of type "$2" must not have a sub selection.')

const highlight = (source: string, line: number, column: number): string => {
  const lines = source.split(/\r\n|[\n\r]/)
  const pad = String(line + 1).length
  const lp = (s: string) => s.padStart(pad, " ")
  let out = ""
  if (line >= 2) out += `${lp(String(line - 1))}: ${lines[line - 2]}\n`
  out += `${lp(String(line))}: ${lines[line - 1]}\n`
  out += " ".repeat(1 + pad + column) + "^\n"
  if (line < lines.length) out += `${lp(String(line + 1))}: ${lines[line]}\n`
  return out
}

const errorJson = (e: GraphQLError, pathNull: boolean) => ({
  locations: (e.locations ?? []).map((l) => ({ column: l.column, line: l.line })),
  message: e.message,
  path: pathNull || e.path === undefined ? null : e.path.map(String)
})

// ---------------------------------------------------------------------------------------------
// Schema

interface Ctx {
  readonly store: Store
  readonly limits: QueryLimits
}

interface Row {
  readonly hit: Hit
  readonly cls: ClassState
  readonly tenant: string | undefined
}

const listOr = (convert: (v: ValueNode) => unknown) => (v: ValueNode): unknown => {
  if (v.kind === Kind.LIST) {
    const items = v.values.map(convert)
    return items.some((x) => x === undefined) ? undefined : items
  }
  return convert(v)
}

const valueScalar = (name: string, convert: (v: ValueNode) => unknown): GraphQLScalarType =>
  new GraphQLScalarType({
    name,
    description: `${name}: a single value or a list of values`,
    serialize: (v) => v,
    parseValue: (v) => v,
    parseLiteral: listOr(convert)
  })

const buildScalars = () => ({
  text: valueScalar("Text", (v) => (v.kind === Kind.STRING ? v.value : undefined)),
  string: valueScalar("String_", (v) => (v.kind === Kind.STRING ? v.value : undefined)),
  date: valueScalar("Date", (v) => (v.kind === Kind.STRING ? v.value : undefined)),
  int: valueScalar("Int_", (v) => (v.kind === Kind.INT ? Number.parseInt(v.value, 10) : undefined)),
  number: valueScalar("Float_", (v) => (v.kind === Kind.INT || v.kind === Kind.FLOAT ? Number(v.value) : undefined)),
  boolean: valueScalar("Boolean_", (v) => (v.kind === Kind.BOOLEAN ? v.value : undefined))
})

const OPERATORS = [
  "And", "Or", "Not", "Equal", "NotEqual", "GreaterThan", "GreaterThanEqual", "LessThan", "LessThanEqual", "Like",
  "WithinGeoRange", "IsNull", "ContainsAny", "ContainsAll", "ContainsNone"
]

const whereType = (prefix: string, scalars: ReturnType<typeof buildScalars>): GraphQLInputObjectType => {
  const operator = new GraphQLEnumType({ name: `${prefix}WhereOperatorEnum`, values: Object.fromEntries(OPERATORS.map((o) => [o, { value: o }])) })
  const geo = new GraphQLInputObjectType({
    name: `${prefix}WhereGeoRangeInpObj`,
    fields: {
      geoCoordinates: {
        type: new GraphQLNonNull(
          new GraphQLInputObjectType({
            name: `${prefix}WhereGeoRangeGeoCoordinatesInpObj`,
            fields: { latitude: { type: new GraphQLNonNull(GraphQLFloat) }, longitude: { type: new GraphQLNonNull(GraphQLFloat) } }
          })
        )
      },
      distance: {
        type: new GraphQLNonNull(
          new GraphQLInputObjectType({ name: `${prefix}WhereGeoRangeDistanceInpObj`, fields: { max: { type: new GraphQLNonNull(GraphQLFloat) } } })
        )
      }
    }
  })
  const self: GraphQLInputObjectType = new GraphQLInputObjectType({
    name: `${prefix}WhereInpObj`,
    fields: () => ({
      operator: { type: operator },
      path: { type: new GraphQLList(GraphQLString) },
      valueInt: { type: scalars.int },
      valueNumber: { type: scalars.number },
      valueBoolean: { type: scalars.boolean },
      valueString: { type: scalars.string },
      valueText: { type: scalars.text },
      valueDate: { type: scalars.date },
      valueGeoRange: { type: geo },
      operands: { type: new GraphQLList(self) }
    })
  })
  return self
}

const searchArgs = (prefix: string): GraphQLFieldConfigArgumentMap => {
  const certaintyDistance = { certainty: { type: GraphQLFloat }, distance: { type: GraphQLFloat }, targetVectors: { type: new GraphQLList(GraphQLString) } }
  const args: GraphQLFieldConfigArgumentMap = {
    nearVector: {
      type: new GraphQLInputObjectType({
        name: `${prefix}NearVectorInpObj`,
        fields: { vector: { type: new GraphQLList(GraphQLFloat) }, ...certaintyDistance }
      })
    },
    nearObject: {
      type: new GraphQLInputObjectType({
        name: `${prefix}NearObjectInpObj`,
        fields: { id: { type: GraphQLString }, beacon: { type: GraphQLString }, ...certaintyDistance }
      })
    }
  }
  return args
}

const hybridArg = (prefix: string) => ({
  type: new GraphQLInputObjectType({
    name: `${prefix}HybridInpObj`,
    fields: {
      query: { type: GraphQLString },
      alpha: { type: GraphQLFloat },
      vector: { type: new GraphQLList(GraphQLFloat) },
      properties: { type: new GraphQLList(GraphQLString) },
      fusionType: { type: new GraphQLEnumType({ name: `${prefix}HybridFusionEnum`, values: { rankedFusion: { value: "rankedFusion" }, relativeScoreFusion: { value: "relativeScoreFusion" } } }) },
      maxVectorDistance: { type: GraphQLFloat },
      targetVectors: { type: new GraphQLList(GraphQLString) }
    }
  })
})

const nearTextArg = (prefix: string) => ({
  type: new GraphQLInputObjectType({
    name: `${prefix}NearTextInpObj`,
    fields: {
      concepts: { type: new GraphQLNonNull(new GraphQLList(GraphQLString)) },
      certainty: { type: GraphQLFloat },
      distance: { type: GraphQLFloat },
      targetVectors: { type: new GraphQLList(GraphQLString) }
    }
  })
})

const GEO = new GraphQLObjectType({ name: "GeoCoordinatesObj", fields: { latitude: { type: GraphQLFloat }, longitude: { type: GraphQLFloat } } })
const PHONE = new GraphQLObjectType({
  name: "PhoneNumberObj",
  fields: {
    input: { type: GraphQLString }, internationalFormatted: { type: GraphQLString }, countryCode: { type: GraphQLInt },
    national: { type: GraphQLInt }, nationalFormatted: { type: GraphQLString }, valid: { type: GraphQLBoolean }, defaultCountry: { type: GraphQLString }
  }
})

const scalarOutput = (t: string): GraphQLOutputType | undefined => {
  const b = baseType(t)
  const base =
    b === "int" ? GraphQLInt : b === "number" ? GraphQLFloat : b === "boolean" ? GraphQLBoolean
      : b === "geoCoordinates" ? GEO : b === "phoneNumber" ? PHONE : GraphQLString
  return t.endsWith("[]") ? new GraphQLList(base) : base
}

const nestedType = (name: string, props: ReadonlyArray<PropertyDef>): GraphQLObjectType =>
  new GraphQLObjectType({
    name,
    fields: () =>
      Object.fromEntries(
        props.map((p) => {
          const t = p.dataType[0]!
          const type =
            t === "object" ? nestedType(`${name}${upperFirst(p.name)}Object`, p.nestedProperties ?? [])
              : t === "object[]" ? new GraphQLList(nestedType(`${name}${upperFirst(p.name)}Object`, p.nestedProperties ?? []))
                : scalarOutput(t)!
          return [p.name, { type }]
        })
      )
  })

const ms = (n: number): string => String(n)

const additionalType = (def: ClassDef): GraphQLObjectType => {
  const fields: GraphQLFieldConfigMap<Row, Ctx> = {
    id: { type: GraphQLString, resolve: (r) => r.hit.obj.id },
    distance: { type: GraphQLFloat, resolve: (r) => r.hit.distance ?? null },
    certainty: { type: GraphQLFloat, resolve: (r) => r.hit.certainty ?? null },
    score: { type: GraphQLString, resolve: (r) => r.hit.score ?? "0" },
    explainScore: { type: GraphQLString, resolve: (r) => r.hit.explainScore ?? "" },
    creationTimeUnix: { type: GraphQLString, resolve: (r) => ms(r.hit.obj.creationTimeUnix) },
    lastUpdateTimeUnix: { type: GraphQLString, resolve: (r) => ms(r.hit.obj.lastUpdateTimeUnix) },
    vector: { type: new GraphQLList(GraphQLFloat), resolve: (r) => r.hit.obj.vector ?? [] }
  }
  if (def.vectorConfig !== undefined) {
    fields["vectors"] = {
      type: new GraphQLObjectType({
        name: `${def.class}AdditionalVectors`,
        fields: Object.fromEntries(Object.keys(def.vectorConfig).map((n) => [n, { type: new GraphQLList(GraphQLFloat) }]))
      }),
      resolve: (r) => r.hit.obj.vectors ?? {}
    }
  }
  return new GraphQLObjectType({ name: `${def.class}AdditionalObj`, fields })
}

const toRequest = (args: Record<string, unknown>): GetRequest => ({
  limit: typeof args["limit"] === "number" ? args["limit"] : undefined,
  offset: typeof args["offset"] === "number" ? args["offset"] : undefined,
  after: typeof args["after"] === "string" ? args["after"] : undefined,
  autocut: typeof args["autocut"] === "number" ? args["autocut"] : undefined,
  sort: args["sort"] ?? undefined,
  where: args["where"] ?? undefined,
  nearVector: isRecord(args["nearVector"]) ? args["nearVector"] : undefined,
  nearObject: isRecord(args["nearObject"]) ? args["nearObject"] : undefined,
  nearText: isRecord(args["nearText"]) ? args["nearText"] : undefined,
  bm25: isRecord(args["bm25"]) ? args["bm25"] : undefined,
  hybrid: isRecord(args["hybrid"]) ? args["hybrid"] : undefined,
  tenant: typeof args["tenant"] === "string" ? args["tenant"] : undefined
})

const rethrow = (e: unknown): never => {
  if (e instanceof QueryError) throw new Error(e.message)
  throw e
}

// --- Aggregate property aggregations

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}
const mode = <T>(xs: ReadonlyArray<T>): T | undefined => {
  const counts = new Map<T, number>()
  for (const x of xs) counts.set(x, (counts.get(x) ?? 0) + 1)
  let best: T | undefined
  let n = 0
  for (const [x, c] of counts) if (c > n) (best = x), (n = c)
  return best
}

const aggregationType = (def: ClassDef, p: PropertyDef): { type: GraphQLObjectType; compute: (objs: ReadonlyArray<StoredObject>) => unknown } | undefined => {
  const t = p.dataType[0]!
  const name = `Aggregate${def.class}${upperFirst(p.name)}Obj`
  const vals = (objs: ReadonlyArray<StoredObject>): Array<unknown> =>
    objs.flatMap((o) => {
      const v = o.properties[p.name]
      return v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]
    })
  const b = baseType(t)
  if (isTextType(t)) {
    const occ = new GraphQLObjectType({ name: `${name}TopOccurrencesObj`, fields: { value: { type: GraphQLString }, occurs: { type: GraphQLInt } } })
    return {
      type: new GraphQLObjectType({
        name,
        fields: {
          count: { type: GraphQLInt },
          type: { type: GraphQLString },
          topOccurrences: {
            type: new GraphQLList(occ),
            args: { limit: { type: GraphQLInt } },
            resolve: (src: { values: Array<string> }, args: { limit?: number }) => {
              const counts = new Map<string, number>()
              for (const v of src.values) counts.set(v, (counts.get(v) ?? 0) + 1)
              return [...counts.entries()]
                .sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1))
                .slice(0, args.limit ?? 5)
                .map(([value, occurs]) => ({ value, occurs }))
            }
          }
        }
      }),
      compute: (objs) => {
        const values = vals(objs).map(String)
        return { count: values.length, type: t, values }
      }
    }
  }
  if (b === "int" || b === "number") {
    return {
      type: new GraphQLObjectType({
        name,
        fields: Object.fromEntries(
          [["count", GraphQLInt], ["sum", GraphQLFloat], ["minimum", GraphQLFloat], ["maximum", GraphQLFloat], ["mean", GraphQLFloat], ["median", GraphQLFloat], ["mode", GraphQLFloat], ["type", GraphQLString]].map(
            ([k, ty]) => [k as string, { type: ty as GraphQLOutputType }]
          )
        )
      }),
      compute: (objs) => {
        const xs = vals(objs).filter((x): x is number => typeof x === "number")
        if (xs.length === 0) return { count: 0, type: t }
        const sum = xs.reduce((a, x) => a + x, 0)
        return { count: xs.length, sum, minimum: Math.min(...xs), maximum: Math.max(...xs), mean: sum / xs.length, median: median(xs), mode: mode(xs), type: t }
      }
    }
  }
  if (b === "boolean") {
    return {
      type: new GraphQLObjectType({
        name,
        fields: Object.fromEntries(
          [["count", GraphQLInt], ["totalTrue", GraphQLInt], ["totalFalse", GraphQLInt], ["percentageTrue", GraphQLFloat], ["percentageFalse", GraphQLFloat], ["type", GraphQLString]].map(
            ([k, ty]) => [k as string, { type: ty as GraphQLOutputType }]
          )
        )
      }),
      compute: (objs) => {
        const xs = vals(objs).filter((x): x is boolean => typeof x === "boolean")
        const tt = xs.filter((x) => x).length
        return { count: xs.length, totalTrue: tt, totalFalse: xs.length - tt, percentageTrue: xs.length ? tt / xs.length : 0, percentageFalse: xs.length ? (xs.length - tt) / xs.length : 0, type: t }
      }
    }
  }
  if (b === "date") {
    return {
      type: new GraphQLObjectType({
        name,
        fields: Object.fromEntries(["count", "minimum", "maximum", "median", "mode", "type"].map((k) => [k, { type: k === "count" ? GraphQLInt : GraphQLString }]))
      }),
      compute: (objs) => {
        const xs = vals(objs).filter((x): x is string => typeof x === "string").sort((a, c) => parseRfc3339(a) - parseRfc3339(c))
        if (xs.length === 0) return { count: 0, type: t }
        return { count: xs.length, minimum: xs[0], maximum: xs[xs.length - 1], median: xs[Math.floor((xs.length - 1) / 2)], mode: mode(xs), type: t }
      }
    }
  }
  return undefined
}

const buildSchema = (store: Store): GraphQLSchema => {
  const scalars = buildScalars()
  const classes = store.listClasses()
  const objectTypes = new Map<string, GraphQLObjectType>()
  for (const cls of classes) {
    const def = cls.def
    const additional = additionalType(def)
    objectTypes.set(
      def.class,
      new GraphQLObjectType<Row, Ctx>({
        name: def.class,
        fields: () => {
          const fields: GraphQLFieldConfigMap<Row, Ctx> = {}
          for (const p of def.properties ?? []) {
            const t = p.dataType[0]!
            if (isReferenceType(p.dataType)) {
              const targets = p.dataType.map((n) => objectTypes.get(upperFirst(n))).filter((x): x is GraphQLObjectType => x !== undefined)
              if (targets.length === 0) continue
              const union = new GraphQLUnionType({
                name: `${def.class}${upperFirst(p.name)}Obj`,
                types: targets,
                resolveType: (r: Row) => r.cls.name
              })
              fields[p.name] = {
                type: new GraphQLList(union),
                resolve: (r, _a, ctx) => {
                  const refs = r.hit.obj.properties[p.name]
                  if (!Array.isArray(refs)) return null
                  return refs.flatMap((ref) => {
                    const o = ctx.store.resolveBeacon(isRecord(ref) ? ref["beacon"] : undefined, r.tenant)
                    const c = o === undefined ? undefined : ctx.store.getClass(o.class)
                    return o === undefined || c === undefined || !objectTypes.has(c.name) ? [] : [{ hit: { obj: o, score: "0" }, cls: c, tenant: r.tenant }]
                  })
                }
              }
              continue
            }
            const type =
              t === "object" ? nestedType(`${def.class}${upperFirst(p.name)}Object`, p.nestedProperties ?? [])
                : t === "object[]" ? new GraphQLList(nestedType(`${def.class}${upperFirst(p.name)}Object`, p.nestedProperties ?? []))
                  : scalarOutput(t)!
            fields[p.name] = { type, resolve: (r) => r.hit.obj.properties[p.name] ?? null }
          }
          fields["_additional"] = { type: additional, resolve: (r) => r }
          return fields
        }
      })
    )
  }
  const getFields: GraphQLFieldConfigMap<unknown, Ctx> = {}
  const aggregateFields: GraphQLFieldConfigMap<unknown, Ctx> = {}
  for (const cls of classes) {
    const def = cls.def
    const prefix = `GetObjects${def.class}`
    const order = new GraphQLEnumType({ name: `${prefix}SortInpObjTypeEnum`, values: { asc: { value: "asc" }, desc: { value: "desc" } } })
    const args: GraphQLFieldConfigArgumentMap = {
      after: { type: GraphQLString },
      limit: { type: GraphQLInt },
      offset: { type: GraphQLInt },
      autocut: { type: GraphQLInt },
      sort: {
        type: new GraphQLList(
          new GraphQLInputObjectType({ name: `${prefix}SortInpObj`, fields: { path: { type: new GraphQLList(GraphQLString) }, order: { type: order } } })
        )
      },
      ...searchArgs(prefix),
      where: { type: whereType(prefix, scalars) },
      bm25: {
        type: new GraphQLInputObjectType({
          name: `${prefix}HybridGetBm25InpObj`,
          fields: { query: { type: GraphQLString }, properties: { type: new GraphQLList(GraphQLString) } }
        })
      },
      hybrid: hybridArg(prefix)
    }
    if (hasTextVectorizer(def)) args["nearText"] = nearTextArg(prefix)
    if (cls.multiTenant) args["tenant"] = { type: GraphQLString }
    getFields[def.class] = {
      type: new GraphQLList(objectTypes.get(def.class)!),
      args,
      resolve: (_root, a: Record<string, unknown>, ctx): Array<Row> => {
        const c = ctx.store.getClass(def.class)!
        try {
          const req = toRequest(a)
          return runGet(ctx.store, c, req, ctx.limits).map((hit) => ({ hit, cls: c, tenant: req.tenant }))
        } catch (e) {
          return rethrow(e)
        }
      }
    }
    const aPrefix = `AggregateObjects${def.class}`
    const aggArgs: GraphQLFieldConfigArgumentMap = {
      where: { type: whereType(aPrefix, scalars) },
      objectLimit: { type: GraphQLInt },
      limit: { type: GraphQLInt },
      ...searchArgs(aPrefix),
      hybrid: hybridArg(aPrefix)
    }
    if (hasTextVectorizer(def)) aggArgs["nearText"] = nearTextArg(aPrefix)
    if (cls.multiTenant) aggArgs["tenant"] = { type: GraphQLString }
    const aggProps = (def.properties ?? []).flatMap((p) => {
      const a = aggregationType(def, p)
      return a === undefined ? [] : [{ p, ...a }]
    })
    const aggType = new GraphQLObjectType({
      name: `Aggregate${def.class}`,
      fields: {
        meta: { type: new GraphQLObjectType({ name: `Aggregate${def.class}MetaObject`, fields: { count: { type: GraphQLInt } } }) },
        ...Object.fromEntries(aggProps.map((a) => [a.p.name, { type: a.type }]))
      }
    })
    aggregateFields[def.class] = {
      type: new GraphQLList(aggType),
      args: aggArgs,
      resolve: (_root, a: Record<string, unknown>, ctx) => {
        const c = ctx.store.getClass(def.class)!
        try {
          const req = { ...toRequest(a), objectLimit: typeof a["objectLimit"] === "number" ? a["objectLimit"] : undefined }
          const objs = matchForAggregate(ctx.store, c, req, ctx.limits)
          return [{ meta: { count: objs.length }, ...Object.fromEntries(aggProps.map((x) => [x.p.name, x.compute(objs)])) }]
        } catch (e) {
          return rethrow(e)
        }
      }
    }
  }
  return new GraphQLSchema({
    query: new GraphQLObjectType({
      name: "WeaviateObj",
      fields: {
        Get: { type: new GraphQLObjectType({ name: "GetObjectsObj", fields: getFields }), resolve: () => ({}) },
        Aggregate: { type: new GraphQLObjectType({ name: "AggregateObjectsObj", fields: aggregateFields }), resolve: () => ({}) }
      }
    })
  })
}

// ---------------------------------------------------------------------------------------------
// Handler

export class GraphqlEndpoint {
  private cached: { version: number; schema: GraphQLSchema } | undefined
  constructor(
    private readonly store: Store,
    private readonly limits: () => QueryLimits
  ) {}

  private schema(): GraphQLSchema {
    if (this.cached === undefined || this.cached.version !== this.store.version) {
      this.cached = { version: this.store.version, schema: buildSchema(this.store) }
    }
    return this.cached.schema
  }

  /** `body` is the decoded `GraphQLQuery` request body. */
  handle(body: Record<string, unknown>): GraphqlResponse {
    const query = typeof body["query"] === "string" ? body["query"] : ""
    if (query === "") return { status: 422, body: errorBody("query cannot be empty") }
    const variables = body["variables"]
    if (variables !== undefined && variables !== null && !isRecord(variables)) {
      const t = Array.isArray(variables) ? "[]interface {}" : typeof variables === "number" ? "float64" : typeof variables
      return { status: 422, body: errorBody(`variables must be a JSON object, got ${t}`) }
    }
    if (this.store.listClasses().length === 0) {
      return {
        status: 422,
        body: errorBody("no graphql provider present, this is most likely because no schema is present. Import a schema first!")
      }
    }
    let document: DocumentNode
    try {
      document = parse(query)
    } catch (e) {
      const err = e as GraphQLError
      const loc = err.locations?.[0] ?? { line: 1, column: 1 }
      // graphql-go names a punctuator bare (`Unexpected )`) where graphql-js quotes it
      const description = err.message.replace(/^Syntax Error: /, "").replace(/\.$/, "").replace(/<EOF>/g, "EOF")
        .replace(/"(\.\.\.|[!$&():=@[\]{|}])"/g, "$1")
      const message = `Syntax Error GraphQL request (${loc.line}:${loc.column}) ${description}\n\n${highlight(query, loc.line, loc.column)}`
      return { status: 200, body: goJson({ errors: [{ locations: [{ column: loc.column, line: loc.line }], message, path: null }] }) }
    }
    const schema = this.schema()
    const validationErrors = validate(schema, document, RULES)
    if (validationErrors.length > 0) {
      return {
        status: 200,
        body: goJson({ errors: validationErrors.map((e) => ({ ...errorJson(e, true), message: goMessage(e.message) })) })
      }
    }
    const result = execute({
      schema,
      document,
      contextValue: { store: this.store, limits: this.limits() } satisfies Ctx,
      variableValues: isRecord(variables) ? variables : undefined,
      operationName: typeof body["operationName"] === "string" && body["operationName"] !== "" ? body["operationName"] : undefined
    }) as ExecutionResult
    const out: Record<string, unknown> = {}
    if (result.data !== undefined && result.data !== null) out["data"] = result.data
    if (result.errors !== undefined && result.errors.length > 0) out["errors"] = result.errors.map((e) => errorJson(e, false))
    return { status: 200, body: goJson(out) }
  }
}

