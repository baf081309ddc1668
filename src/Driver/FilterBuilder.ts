/**
 * Column filters and sorts, typed from the collection schema and turned into the `where` and
 * `sort` arguments of a GraphQL `Get` (or `Aggregate`). A filter the database cannot run is refused
 * here, with its reason, before any request is sent: the collection is never returned unfiltered.
 *
 * | UI operator | Database operator / rule |
 * |---|---|
 * | equals, not equals (`=`, `!=`) | `Equal`, `NotEqual` |
 * | greater than, greater or equal, less than, less or equal (`>`, `>=`, `<`, `<=`) | `GreaterThan`, ...; `int`, `number`, `date` only |
 * | contains, not contains, starts with, ends with | `Like` with `*` wildcards (`not contains` = `Not` of `Like`); text and uuid |
 * | in list, not in list | `ContainsAny`, `ContainsNone` over a comma-separated list |
 * | between | `A and B`: `GreaterThanEqual A` and `LessThanEqual B` (both inclusive); `int`, `number`, `date` |
 * | is NULL, is not NULL | `IsNull` true/false; needs `indexNullState` |
 * | is empty, is not empty | `len(prop)` `Equal 0` / `GreaterThan 0`; needs `indexPropertyLength`; text and arrays |
 * | REGEX | refused: Weaviate has no regular-expression filter |
 *
 * Values: `int` must be an integer, `number` a decimal number, `boolean` true or false, `date` a
 * complete RFC 3339 timestamp, `uuid` a UUID; an array property filters on one element. Every
 * string reaches the query as a JSON-escaped GraphQL string literal, so no filter text can change
 * the shape of the query.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import type { Collection, Property } from "./CollectionSchema.ts"
import { FilterRefused } from "./DriverError.ts"

// ===== Operators =====

/** The operator names of the contract's UI column. @category models */
export const operators = [
  "equals",
  "not equals",
  "greater than",
  "greater or equal",
  "less than",
  "less or equal",
  "contains",
  "not contains",
  "starts with",
  "ends with",
  "in list",
  "not in list",
  "between",
  "is NULL",
  "is not NULL",
  "is empty",
  "is not empty",
  "REGEX"
] as const
export type Operator = typeof operators[number]

const symbols: Record<string, Operator> = {
  "=": "equals",
  "!=": "not equals",
  ">": "greater than",
  ">=": "greater or equal",
  "<": "less than",
  "<=": "less or equal"
}

/**
 * An operator name (any letter case) or one of the symbols `= != > >= < <=`.
 *
 * @category parsing
 */
export const normalizeOperator = (text: string): Operator | undefined => {
  const squeezed = text.trim().replace(/\s+/g, " ")
  return symbols[squeezed] ?? operators.find((op) => op.toLowerCase() === squeezed.toLowerCase())
}

const noValue: ReadonlySet<Operator> = new Set(["is NULL", "is not NULL", "is empty", "is not empty"])

/** A filter value: text as typed, or a JSON scalar or list (MCP tools). @category models */
export type FilterValue = string | number | boolean | null | ReadonlyArray<string | number | boolean>

/** @category models */
export interface Filter {
  readonly column: string
  readonly operator: string
  readonly value?: FilterValue | undefined
}

/** @category models */
export interface Sort {
  readonly column: string
  readonly direction: "asc" | "desc"
}

const describe = (filter: Filter) =>
  [filter.column, filter.operator, ...(filter.value === undefined || filter.value === null ? [] : [
    typeof filter.value === "string" ? filter.value : JSON.stringify(filter.value)
  ])].join(" ")

// ===== Parsing the CLI text form =====

const byLength = [...operators, ...Object.keys(symbols)].sort((a, b) => b.length - a.length)

/**
 * Parses `COLUMN OPERATOR VALUE` (`price between 100 and 300`, `tags in list a, b`, `note is NULL`,
 * `n >= 3`). A value in double quotes loses the quotes.
 *
 * @category parsing
 */
export const parseFilterText = (text: string): Either.Either<Filter, FilterRefused> => {
  const trimmed = text.trim()
  const match = /^(\S+?)\s*(?=[=!<>])|^(\S+)\s+/.exec(trimmed)
  if (match === null) {
    return Either.left(new FilterRefused({ filter: text, reason: "expected COLUMN OPERATOR VALUE" }))
  }
  const column = match[1] ?? match[2]!
  const rest = trimmed.slice(match[0].length)
  for (const candidate of byLength) {
    const head = rest.slice(0, candidate.length)
    const isWord = /[a-z]$/i.test(candidate)
    const next = rest.charAt(candidate.length)
    if (head.toLowerCase() === candidate.toLowerCase() && (!isWord || next === "" || /\s/.test(next))) {
      const operator = normalizeOperator(candidate)!
      let value = rest.slice(candidate.length).trim()
      if (value.length >= 2 && value.startsWith("\"") && value.endsWith("\"")) value = value.slice(1, -1)
      return Either.right(noValue.has(operator) && value === "" ? { column, operator } : { column, operator, value })
    }
  }
  return Either.left(
    new FilterRefused({ filter: text, reason: `unknown operator; use one of ${operators.join(", ")} or = != > >= < <=` })
  )
}

// ===== The where clause =====

type ValueField = "valueText" | "valueInt" | "valueNumber" | "valueBoolean" | "valueDate"
type Scalar = string | number | boolean

/**
 * A `where` clause, ready to be printed as a GraphQL literal or as REST JSON.
 *
 * @category models
 */
export type Clause = Comparison | Compound

/** @category models */
export interface Comparison {
  readonly operator: "Equal" | "NotEqual" | "GreaterThan" | "GreaterThanEqual" | "LessThan" | "LessThanEqual" | "Like" | "IsNull" | "ContainsAny" | "ContainsNone"
  readonly path: ReadonlyArray<string>
  readonly field: ValueField
  readonly value: Scalar | ReadonlyArray<Scalar>
}

/** @category models */
export interface Compound {
  readonly operator: "And" | "Not"
  readonly operands: ReadonlyArray<Clause>
}

const isCompound = (clause: Clause): clause is Compound => "operands" in clause

const refuse = (filter: Filter, reason: string) => Either.left(new FilterRefused({ filter: describe(filter), reason }))

const INT = /^[+-]?\d+$/
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/
// Lone surrogates cannot be written in a GraphQL string literal.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * Whether a text is a complete RFC 3339 timestamp with valid calendar fields.
 *
 * @category parsing
 */
export const isRfc3339 = (text: string): boolean => {
  const m = RFC3339.exec(text)
  if (m === null) return false
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate()
  const offsetOk = m[9] === undefined || (Number(m[10]) <= 23 && Number(m[11]) <= 59)
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 60 &&
    offsetOk
}

/** What a column filters as: a property's base type, or the object id. */
type Target =
  | { readonly kind: "id" }
  | { readonly kind: "property"; readonly property: Property }

const typeName = (target: Target) =>
  target.kind === "id" ? "uuid (object id)" : target.property.dataType.join(",")

/** Converts one element of a value to its typed form. */
const typed = (
  target: Target,
  raw: string | number | boolean
): Either.Either<{ field: ValueField; value: Scalar }, string> => {
  const base = target.kind === "id" ? "uuid" : target.property.baseType
  const text = String(raw).trim()
  if (typeof raw === "string" && LONE_SURROGATE.test(raw)) return Either.left("the value is not valid Unicode text")
  switch (base) {
    case "text":
      return Either.right({ field: "valueText", value: String(raw) })
    case "int": {
      if (!INT.test(text)) return Either.left(`${JSON.stringify(text)} is not an integer (the column is int)`)
      const n = Number(text)
      if (!Number.isSafeInteger(n)) return Either.left(`${text} is out of the integer range`)
      return Either.right({ field: "valueInt", value: n })
    }
    case "number": {
      const n = Number(text)
      if (!NUMBER.test(text) || !Number.isFinite(n)) {
        return Either.left(`${JSON.stringify(text)} is not a number (the column is number)`)
      }
      return Either.right({ field: "valueNumber", value: n })
    }
    case "boolean": {
      const lower = text.toLowerCase()
      if (lower !== "true" && lower !== "false") return Either.left(`${JSON.stringify(text)} is not true or false`)
      return Either.right({ field: "valueBoolean", value: lower === "true" })
    }
    case "date":
      return isRfc3339(text)
        ? Either.right({ field: "valueDate", value: text })
        : Either.left(
          `${JSON.stringify(text)} is not a complete RFC 3339 timestamp (a date column needs e.g. 2024-01-31T00:00:00Z)`
        )
    case "uuid":
      return UUID.test(text)
        ? Either.right({ field: "valueText", value: text.toLowerCase() })
        : Either.left(`${JSON.stringify(text)} is not a UUID`)
    default:
      return Either.left(`a ${base} column cannot be filtered`)
  }
}

const scalarOf = (value: FilterValue | undefined): Either.Either<string | number | boolean, string> => {
  if (value === undefined || value === null) return Either.left("this operator needs a value")
  if (Array.isArray(value)) {
    return value.length === 1 ? Either.right(value[0]!) : Either.left("this operator takes one value, not a list")
  }
  const scalar = value as string | number | boolean
  if (typeof scalar === "string" && scalar.length === 0) return Either.left("this operator needs a value")
  return Either.right(scalar)
}

const listOf = (value: FilterValue | undefined): Either.Either<ReadonlyArray<string | number | boolean>, string> => {
  if (value === undefined || value === null) return Either.left("this operator needs a comma-separated list of values")
  const items = Array.isArray(value)
    ? value
    : typeof value === "string"
    ? value.split(",").map((s) => s.trim())
    : [value as number | boolean]
  if (items.length === 0 || items.some((i) => typeof i === "string" && i.length === 0)) {
    return Either.left("the list has an empty element")
  }
  return Either.right(items)
}

const boundsOf = (value: FilterValue | undefined): Either.Either<readonly [Scalar, Scalar], string> => {
  if (Array.isArray(value)) {
    return value.length === 2 ? Either.right([value[0]!, value[1]!] as const) : Either.left("between takes two bounds")
  }
  if (typeof value !== "string") return Either.left("between takes two bounds: LOW and HIGH")
  const parts = value.split(/\s+and\s+/i)
  return parts.length === 2 && parts[0]!.trim() !== "" && parts[1]!.trim() !== ""
    ? Either.right([parts[0]!.trim(), parts[1]!.trim()] as const)
    : Either.left("between takes two bounds: LOW and HIGH")
}

const RANGE_TYPES = new Set(["int", "number", "date"])
const EQUALITY_TYPES = new Set(["text", "int", "number", "boolean", "date", "uuid"])

/**
 * The operators a column accepts (for `describe_table`).
 *
 * @category combinators
 */
export const operatorsFor = (collection: Collection, column: string): ReadonlyArray<Operator> =>
  operators.filter((operator) =>
    operator !== "REGEX" &&
    Either.isRight(buildClause(collection, { column, operator, value: sampleValue(collection, column, operator) }))
  )

const sampleValue = (collection: Collection, column: string, operator: Operator): FilterValue | undefined => {
  if (noValue.has(operator)) return undefined
  const base = column === "uuid" ? "uuid" : collection.properties.find((p) => p.name === column)?.baseType
  const one = base === "int" || base === "number"
    ? "1"
    : base === "boolean"
    ? "true"
    : base === "date"
    ? "2024-01-01T00:00:00Z"
    : base === "uuid"
    ? "00000000-0000-0000-0000-000000000000"
    : "x"
  return operator === "between" ? [one, one] : one
}

/** The column a filter names, resolved against the collection, with what the operators need of it. */
interface Resolved {
  readonly target: Target
  readonly base: string
  readonly path: ReadonlyArray<string>
  readonly isArray: boolean
  readonly type: string
}

/** Resolves the filter's column (`uuid` or a property) and checks that it can be filtered at all. */
const resolveColumn = (collection: Collection, filter: Filter, operator: Operator): Either.Either<Resolved, FilterRefused> => {
  if (filter.column === "vector") return refuse(filter, "the vector column cannot be filtered; use vector search")
  let target: Target
  if (filter.column === "uuid") {
    target = { kind: "id" }
  } else {
    const property = collection.properties.find((p) => p.name === filter.column)
    if (property === undefined) {
      return refuse(filter, `the collection ${collection.name} has no column ${JSON.stringify(filter.column)}`)
    }
    target = { kind: "property", property }
  }
  const base = target.kind === "id" ? "uuid" : target.property.baseType
  const type = typeName(target)
  if (target.kind === "property" && !EQUALITY_TYPES.has(base)) {
    return refuse(filter, `a ${type} column cannot be filtered${base === "reference" ? " (cross-reference)" : ""}`)
  }
  if (target.kind === "property" && !target.property.indexFilterable && !noValue.has(operator)) {
    return refuse(filter, `the property ${target.property.name} is not filterable (indexFilterable is false)`)
  }
  return Either.right({
    target,
    base,
    path: target.kind === "id" ? ["id"] : [target.property.name],
    isArray: target.kind === "property" && target.property.isArray,
    type
  })
}

const RANGE_OPERATORS = {
  "greater than": "GreaterThan",
  "greater or equal": "GreaterThanEqual",
  "less than": "LessThan",
  "less or equal": "LessThanEqual"
} as const

/** `between`: both bounds typed like the column, as `>= low And <= high`. */
const betweenClause = (filter: Filter, { path, target }: Resolved): Either.Either<Clause, FilterRefused> =>
  Either.match(Either.flatMap(boundsOf(filter.value), ([low, high]) => Either.all([typed(target, low), typed(target, high)])), {
    onLeft: (reason) => refuse(filter, reason),
    onRight: ([low, high]) =>
      Either.right({
        operator: "And",
        operands: [
          { operator: "GreaterThanEqual", path, field: low.field, value: low.value },
          { operator: "LessThanEqual", path, field: high.field, value: high.value }
        ]
      })
  })

/** contains, not contains, starts with, ends with: `Like` with `*` wildcards (negated with `Not`). */
const likeClause = (
  filter: Filter,
  operator: "contains" | "not contains" | "starts with" | "ends with",
  { path, target }: Resolved
): Either.Either<Clause, FilterRefused> => {
  // Weaviate 1.39 runs `Like` on `id` (checked against the real server): a part of a uuid is
  // matched as text, not validated as a whole uuid.
  const part: Either.Either<{ readonly value: Scalar }, string> = target.kind === "id"
    ? Either.flatMap(scalarOf(filter.value), (v) =>
      /^[0-9a-fA-F-]+$/.test(String(v).trim())
        ? Either.right({ value: String(v).trim().toLowerCase() })
        : Either.left(`${JSON.stringify(String(v))} is not part of a uuid (hex digits and dashes)`))
    : Either.flatMap(scalarOf(filter.value), (v) => typed(target, v))
  return Either.match(part, {
    onLeft: (reason) => refuse(filter, reason),
    onRight: ({ value }) => {
      const pattern = operator === "starts with" ? `${value}*` : operator === "ends with" ? `*${value}` : `*${value}*`
      const like: Clause = { operator: "Like", path, field: "valueText", value: pattern }
      return Either.right(operator === "not contains" ? { operator: "Not", operands: [like] } : like)
    }
  })
}

/** in list / not in list: `ContainsAny` / `ContainsNone` of values typed like the column. */
const listClause = (filter: Filter, operator: "in list" | "not in list", { path, target }: Resolved): Either.Either<Clause, FilterRefused> =>
  Either.match(Either.flatMap(listOf(filter.value), (list) => Either.all(list.map((item) => typed(target, item)))), {
    onLeft: (reason) => refuse(filter, reason),
    onRight: (values) =>
      Either.right({
        operator: operator === "in list" ? "ContainsAny" : "ContainsNone",
        path,
        field: values[0]!.field,
        value: values.map((v) => v.value)
      })
  })

/**
 * One filter as a `where` clause, or the reason it cannot run.
 *
 * @category combinators
 */
export const buildClause = (collection: Collection, filter: Filter): Either.Either<Clause, FilterRefused> => {
  const operator = normalizeOperator(filter.operator)
  if (operator === undefined) {
    return refuse(filter, `unknown operator ${JSON.stringify(filter.operator)}; use one of ${operators.join(", ")} or = != > >= < <=`)
  }
  if (operator === "REGEX") {
    return refuse(filter, "REGEX is not supported by Weaviate; use contains, starts with or ends with (Like with * wildcards)")
  }
  const resolved = resolveColumn(collection, filter, operator)
  if (Either.isLeft(resolved)) return Either.left(resolved.left)
  const column = resolved.right
  const { base, isArray, path, target, type } = column

  const compare = (
    op: "Equal" | "NotEqual" | "GreaterThan" | "GreaterThanEqual" | "LessThan" | "LessThanEqual"
  ): Either.Either<Clause, FilterRefused> =>
    Either.match(Either.flatMap(scalarOf(filter.value), (v) => typed(target, v)), {
      onLeft: (reason) => refuse(filter, reason),
      onRight: ({ field, value }) => Either.right({ operator: op, path, field, value })
    })

  switch (operator) {
    case "equals":
      return compare("Equal")
    case "not equals":
      return compare("NotEqual")
    case "greater than":
    case "greater or equal":
    case "less than":
    case "less or equal":
      if (!RANGE_TYPES.has(base)) return refuse(filter, `${operator} applies to int, number and date columns; this column is ${type}`)
      return compare(RANGE_OPERATORS[operator])
    case "between":
      if (!RANGE_TYPES.has(base)) return refuse(filter, `between applies to int, number and date columns; this column is ${type}`)
      return betweenClause(filter, column)
    case "contains":
    case "not contains":
    case "starts with":
    case "ends with":
      if (base !== "text" && target.kind !== "id") {
        return refuse(filter, `${operator} applies to text columns and the uuid (object id) column only; this column is ${type}`)
      }
      return likeClause(filter, operator, column)
    case "in list":
    case "not in list":
      return listClause(filter, operator, column)
    case "is NULL":
    case "is not NULL":
      if (target.kind === "id") return refuse(filter, "the uuid column is never NULL")
      if (!collection.indexNullState) {
        return refuse(filter, `${operator} needs indexNullState, which is not enabled on the collection ${collection.name}`)
      }
      return Either.right({ operator: "IsNull", path, field: "valueBoolean", value: operator === "is NULL" })
    case "is empty":
    case "is not empty":
      if (target.kind === "id" || (base !== "text" && !isArray)) {
        return refuse(filter, `${operator} applies to text and array columns; this column is ${type}`)
      }
      if (!collection.indexPropertyLength) {
        return refuse(filter, `${operator} needs indexPropertyLength, which is not enabled on the collection ${collection.name}`)
      }
      return Either.right({ operator: operator === "is empty" ? "Equal" : "GreaterThan", path: [`len(${path[0]})`], field: "valueInt", value: 0 })
  }
}

/**
 * All filters as one clause (`And` when there are several); `undefined` when there are none.
 *
 * @category combinators
 */
export const buildWhere = (
  collection: Collection,
  filters: ReadonlyArray<Filter>
): Either.Either<Clause | undefined, FilterRefused> =>
  Either.map(Either.all(filters.map((f) => buildClause(collection, f))), (clauses) =>
    clauses.length === 0 ? undefined : clauses.length === 1 ? clauses[0] : { operator: "And", operands: clauses })

// ===== Printing =====

/**
 * A GraphQL string literal holding exactly `text` (JSON string escaping is valid GraphQL).
 *
 * @category printing
 */
export const graphqlString = (text: string): string => JSON.stringify(text)

// Numbers are finite here (checked when typed): `String` gives a GraphQL literal (`1e+21` is a valid
// float, and `String(-0)` is "0").
const printScalar = (value: Scalar): string => typeof value === "string" ? graphqlString(value) : String(value)

/**
 * A clause as a GraphQL input literal (the value of `where:`).
 *
 * @category printing
 */
export const printWhere = (clause: Clause): string => {
  if (isCompound(clause)) {
    return `{operator: ${clause.operator}, operands: [${clause.operands.map(printWhere).join(", ")}]}`
  }
  const value = Array.isArray(clause.value)
    ? `[${(clause.value as ReadonlyArray<Scalar>).map(printScalar).join(", ")}]`
    : printScalar(clause.value as Scalar)
  return `{path: [${clause.path.map(graphqlString).join(", ")}], operator: ${clause.operator}, ${clause.field}: ${value}}`
}

/**
 * A clause as a REST `WhereFilter` (lists use the `value*Array` fields), e.g. for batch deletes.
 *
 * @category printing
 */
export const toRestWhere = (clause: Clause): Record<string, unknown> => {
  if (isCompound(clause)) {
    return { operator: clause.operator, operands: clause.operands.map(toRestWhere) }
  }
  const field = Array.isArray(clause.value) ? `${clause.field}Array` : clause.field
  return { path: clause.path, operator: clause.operator, [field]: clause.value }
}

const SORTABLE = new Set(["text", "int", "number", "boolean", "date"])

/**
 * The `sort:` argument, or the reason a sort cannot run.
 *
 * @category combinators
 */
export const buildSort = (
  collection: Collection,
  sorts: ReadonlyArray<Sort>
): Either.Either<string | undefined, FilterRefused> => {
  const parts: Array<string> = []
  for (const sort of sorts) {
    const label = `sort ${sort.column}:${sort.direction}`
    if (sort.direction !== "asc" && sort.direction !== "desc") {
      return Either.left(new FilterRefused({ filter: label, reason: "the direction is asc or desc" }))
    }
    const property = collection.properties.find((p) => p.name === sort.column)
    if (property === undefined) {
      const reason = sort.column === "uuid" || sort.column === "vector"
        ? `the ${sort.column} column cannot be sorted (unsorted pages come in uuid order)`
        : `the collection ${collection.name} has no column ${JSON.stringify(sort.column)}`
      return Either.left(new FilterRefused({ filter: label, reason }))
    }
    if (!SORTABLE.has(property.baseType)) {
      return Either.left(
        new FilterRefused({ filter: label, reason: `a ${property.dataType.join(",")} column cannot be sorted` })
      )
    }
    parts.push(`{path: [${graphqlString(property.name)}], order: ${sort.direction}}`)
  }
  return Either.right(parts.length === 0 ? undefined : `[${parts.join(", ")}]`)
}

/**
 * Parses `col:asc` / `col:desc` (direction defaults to asc).
 *
 * @category parsing
 */
export const parseSortText = (text: string): Either.Either<Sort, FilterRefused> => {
  const m = /^\s*([^:\s]+)\s*(?::\s*(asc|desc)\s*)?$/i.exec(text)
  return m === null
    ? Either.left(new FilterRefused({ filter: `sort ${text}`, reason: "expected COLUMN:asc or COLUMN:desc" }))
    : Either.right({ column: m[1]!, direction: (m[2]?.toLowerCase() ?? "asc") as "asc" | "desc" })
}
