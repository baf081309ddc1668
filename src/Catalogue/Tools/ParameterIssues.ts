/**
 * A tool's refused arguments, said the way a person (or a model) fixes them: one clause per
 * parameter, what it must be and what it was — `limit: expected an integer from 1 to 500, got 0`,
 * `outcome: expected "ok" or "error", got "maybe"`, `nope: not a parameter of this tool (its
 * parameters: …)`. Effect's own formatter names a schema by its description annotation and lists the
 * `undefined` of every optional parameter as a second failure; this one reads the constraints from
 * the schema (the JSON Schema annotations of its refinements). A refinement with its own message
 * (a UUID, "at most 1,000 rows per call") keeps that message.
 *
 * @since 0.1.0
 */
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as AST from "effect/SchemaAST"

/** At most this many characters of a refused value are quoted back. */
const SHOWN = 60

const show = (value: unknown): string => {
  if (value === undefined) return "nothing"
  let text: string
  try {
    text = JSON.stringify(value) ?? String(value)
  } catch {
    text = String(value)
  }
  return text.length > SHOWN ? `${text.slice(0, SHOWN - 1)}…` : text
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`

/** The JSON Schema constraints of a chain of refinements, outermost first, and the type under them. */
const constraintsOf = (ast: AST.AST): { readonly base: AST.AST; readonly json: Record<string, unknown>; readonly message: boolean } => {
  const json: Record<string, unknown> = {}
  let message = false
  let current = ast
  while (AST.isRefinement(current)) {
    if (Option.isSome(AST.getMessageAnnotation(current))) message = true
    const annotation = AST.getJSONSchemaAnnotation(current)
    if (Option.isSome(annotation)) {
      for (const [key, value] of Object.entries(annotation.value)) if (!(key in json)) json[key] = value
    }
    current = current.from
  }
  return { base: current, json, message }
}

const range = (json: Record<string, unknown>) => {
  const min = typeof json["minimum"] === "number" ? json["minimum"] : undefined
  const max = typeof json["maximum"] === "number" ? json["maximum"] : undefined
  const above = typeof json["exclusiveMinimum"] === "number" ? json["exclusiveMinimum"] : undefined
  const below = typeof json["exclusiveMaximum"] === "number" ? json["exclusiveMaximum"] : undefined
  const parts: Array<string> = []
  if (min !== undefined && max !== undefined) parts.push(`from ${min} to ${max}`)
  else if (min !== undefined) parts.push(`of at least ${min}`)
  else if (max !== undefined) parts.push(`of at most ${max}`)
  if (above !== undefined) parts.push(`above ${above}`)
  if (below !== undefined) parts.push(`below ${below}`)
  return parts.length === 0 ? "" : ` ${parts.join(" and ")}`
}

const lengths = (json: Record<string, unknown>, unit: string) => {
  const min = typeof json["minLength"] === "number" ? json["minLength"] : typeof json["minItems"] === "number" ? json["minItems"] : undefined
  const max = typeof json["maxLength"] === "number" ? json["maxLength"] : typeof json["maxItems"] === "number" ? json["maxItems"] : undefined
  if (min !== undefined && max !== undefined) return ` of ${min} to ${plural(max, unit)}`
  if (min !== undefined) return min === 1 && unit === "character" ? "" : ` of at least ${plural(min, unit)}`
  if (max !== undefined) return ` of at most ${plural(max, unit)}`
  return ""
}

const isUndefined = (ast: AST.AST) => ast._tag === "UndefinedKeyword"

/** What a value of `ast` must be, as a phrase ("an integer from 1 to 500", "\"ok\" or \"error\""); undefined when it cannot be said simply. */
export const describe = (ast: AST.AST): string | undefined => {
  switch (ast._tag) {
    case "Refinement": {
      const { base, json } = constraintsOf(ast)
      if (base._tag === "NumberKeyword") return `${json["type"] === "integer" ? "an integer" : "a number"}${range(json)}`
      if (base._tag === "StringKeyword") {
        const pattern = typeof json["pattern"] === "string" ? ` matching /${json["pattern"]}/` : ""
        const nonEmpty = json["minLength"] === 1 && json["maxLength"] === undefined
        return `${nonEmpty ? "a non-empty string" : "a string"}${lengths(json, "character")}${pattern}`
      }
      if (base._tag === "TupleType") return `an array${lengths(json, "item")}`
      return describe(base)
    }
    case "StringKeyword":
      return "a string"
    case "NumberKeyword":
      return "a number"
    case "BooleanKeyword":
      return "true or false"
    case "Literal":
      return JSON.stringify(ast.literal)
    case "Enums":
      return ast.enums.map(([, value]) => JSON.stringify(value)).join(" or ")
    case "TypeLiteral":
      return ast.indexSignatures.length > 0 && ast.propertySignatures.length === 0 ? "an object" : undefined
    case "TupleType":
      return "an array"
    case "Union": {
      const members = ast.types.filter((member) => !isUndefined(member)).map(describe)
      if (members.some((member) => member === undefined)) return undefined
      const unique = [...new Set(members as Array<string>)]
      return unique.length <= 2 ? unique.join(" or ") : `one of ${unique.join(", ")}`
    }
    case "Suspend":
      return describe(ast.f())
    case "Transformation":
      return describe(ast.from)
    default:
      return undefined
  }
}

/** Whether `ast` is (or holds, as a union member) an object or array schema: its members' failures say more than its type. */
const structured = (ast: AST.AST): boolean => {
  const base = constraintsOf(ast).base
  if (base._tag === "TypeLiteral") return base.propertySignatures.length > 0
  if (base._tag === "TupleType") return true
  if (base._tag === "Union") return base.types.some(structured)
  if (base._tag === "Suspend") return structured(base.f())
  return false
}

const at = (path: ReadonlyArray<PropertyKey>) => path.map(String).join(".")

const clause = (path: ReadonlyArray<PropertyKey>, text: string) => (path.length === 0 ? text : `${at(path)}: ${text}`)

/** Effect's own wording of one issue, for what this module cannot say more simply. */
const fallback = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>): Array<string> =>
  ParseResult.ArrayFormatter.formatIssueSync(issue).map((one) => clause([...path, ...one.path], one.message))

const lines = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>, known: ReadonlyArray<string>): Array<string> => {
  switch (issue._tag) {
    case "Pointer":
      return lines(issue.issue, [...path, ...(Array.isArray(issue.path) ? issue.path : [issue.path as PropertyKey])], known)
    case "Missing":
      return [clause(path, "required, and missing")]
    case "Unexpected":
      return [clause(path, `not a parameter of this tool${known.length > 0 ? ` (its parameters: ${known.join(", ")})` : ""}`)]
    case "Composite": {
      if (issue.ast._tag === "TypeLiteral" || issue.ast._tag === "TupleType") {
        const names = issue.ast._tag === "TypeLiteral" ? issue.ast.propertySignatures.map((p) => String(p.name)) : []
        const issues = Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]
        return issues.flatMap((one) => lines(one, path, names))
      }
      return typeMismatch(issue, path)
    }
    case "Refinement":
    case "Type":
      return typeMismatch(issue, path)
    case "Transformation":
      return lines(issue.issue, path, known)
    default:
      return fallback(issue, path)
  }
}

/** "expected …, got …" for a value of the wrong type or outside its refinement, when that can be said simply. */
const typeMismatch = (issue: ParseResult.Composite | ParseResult.Refinement | ParseResult.Type, path: ReadonlyArray<PropertyKey>): Array<string> => {
  const ast = issue.ast
  const object = typeof issue.actual === "object" && issue.actual !== null
  // An object (or array) given where one is expected: its members' failures say what is wrong inside it.
  if (object && structured(ast)) {
    if (issue._tag === "Composite") {
      const issues = Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]
      const members = issues.filter((one) => !(one._tag === "Type" && isUndefined(one.ast)))
      // One object member (the others of the union were undefined): its failures alone.
      if (members.length === 1) return lines(members[0]!, path, [])
    }
    if (issue._tag === "Refinement" && issue.kind === "From") return lines(issue.issue, path, [])
    return fallback(issue, path)
  }
  if (constraintsOf(ast).message || (ast._tag === "Union" && ast.types.some((member) => constraintsOf(member).message))) {
    return dropUndefined(fallback(issue, path))
  }
  const expected = describe(ast)
  return expected === undefined ? dropUndefined(fallback(issue, path)) : [clause(path, `expected ${expected}, got ${show(issue.actual)}`)]
}

/** Effect's clause for the `undefined` of an optional parameter says nothing the other clauses do not. */
const dropUndefined = (clauses: Array<string>) => {
  const kept = clauses.filter((one) => !/: Expected undefined, actual /.test(one) && !/^Expected undefined, actual /.test(one))
  return kept.length > 0 ? kept : clauses
}

/** At most this many clauses are said; a thousand rows with the same mistake are not a thousand clauses. */
const SAID = 10

/**
 * The issues of a decoding, one clause each, joined with "; " (repeated clauses once, at most ten,
 * then how many more).
 *
 * @category formatting
 */
export const format = (error: ParseResult.ParseError): string => {
  const clauses = [...new Set(lines(error.issue, [], []))]
  return clauses.length <= SAID ? clauses.join("; ") : `${clauses.slice(0, SAID).join("; ")}; and ${clauses.length - SAID} more`
}
