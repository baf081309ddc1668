/**
 * The GraphQL editor: read-only. `{ Get {…} }` and `query {…}` are accepted; a mutation, a
 * subscription, several operations or a syntax error is refused before anything is sent (the text
 * is parsed with the `graphql` package). A `Get` result becomes a grid of the selected fields
 * (`_additional.id` → `uuid`, every other `_additional` member its own column); any other result,
 * `Aggregate` included, is formatted JSON. GraphQL `errors` are reported with whatever data came back.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as ConsistencyLevel from "../Schema/ConsistencyLevel.ts"
import * as Either from "effect/Either"
import {
  type ArgumentNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  GraphQLError,
  Kind,
  type OperationDefinitionNode,
  parse,
  print,
  type SelectionSetNode
} from "graphql"
import { type RequestError, StatementRefused } from "./DriverError.ts"
import type { GraphqlError, WeaviateHttp } from "./WeaviateHttp.ts"

// ===== Validation =====

/** A query that may be sent. @category models */
export interface ValidQuery {
  /** The text to send: the statement as given, or printed again after a change (`withTenant`). */
  readonly text: string
  readonly document: DocumentNode
  readonly operation: OperationDefinitionNode
  readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>
}

/**
 * Accepts exactly one query operation (plus fragment definitions); refuses everything else.
 *
 * @category validation
 */
export const validate = (text: string): Either.Either<ValidQuery, StatementRefused> => {
  let document: DocumentNode
  try {
    document = parse(text)
  } catch (error) {
    const message = error instanceof GraphQLError ? error.message : String(error)
    return Either.left(new StatementRefused({ reason: `not valid GraphQL: ${message}` }))
  }
  const operations: Array<OperationDefinitionNode> = []
  const fragments = new Map<string, FragmentDefinitionNode>()
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) operations.push(definition)
    else if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition)
    else return Either.left(new StatementRefused({ reason: `only a query can be run, not a ${definition.kind}` }))
  }
  if (operations.length !== 1) {
    return Either.left(new StatementRefused({ reason: `exactly one operation is accepted, found ${operations.length}` }))
  }
  const operation = operations[0]!
  if (operation.operation !== "query") {
    return Either.left(
      new StatementRefused({
        reason: `the GraphQL editor is read-only: ${operation.operation} operations are refused (Weaviate has no mutation type; writes use the REST calls)`
      })
    )
  }
  return Either.right({ text, document, operation, fragments })
}

const ROOTS_WITH_CLASSES = new Set(["Get", "Aggregate"])

/**
 * The query with `argument` added to every collection field under one of `roots` that `applies` to
 * and that does not name the argument already.
 */
const withCollectionArgument = (
  query: ValidQuery,
  roots: ReadonlySet<string>,
  argument: ArgumentNode,
  applies: (collection: string) => boolean
): ValidQuery => {
  const name = argument.name.value
  const add = (set: SelectionSetNode): SelectionSetNode => ({
    ...set,
    selections: set.selections.map((s) =>
      s.kind === Kind.FIELD && applies(s.name.value) && !(s.arguments ?? []).some((a) => a.name.value === name)
        ? { ...s, arguments: [...(s.arguments ?? []), argument] }
        : s
    )
  })
  const operation: OperationDefinitionNode = {
    ...query.operation,
    selectionSet: {
      ...query.operation.selectionSet,
      selections: query.operation.selectionSet.selections.map((s) =>
        s.kind === Kind.FIELD && roots.has(s.name.value) && s.selectionSet !== undefined ? { ...s, selectionSet: add(s.selectionSet) } : s
      )
    }
  }
  const document: DocumentNode = {
    ...query.document,
    definitions: query.document.definitions.map((d) => (d === query.operation ? operation : d))
  }
  return { text: print(document), document, operation, fragments: query.fragments }
}

/**
 * Adds `tenant: "<tenant>"` to every collection field under `Get` and `Aggregate` that has no
 * tenant yet.
 *
 * @category combinators
 */
export const withTenant = (query: ValidQuery, tenant: string): ValidQuery =>
  withCollectionArgument(
    query,
    ROOTS_WITH_CLASSES,
    { kind: Kind.ARGUMENT, name: { kind: Kind.NAME, value: "tenant" }, value: { kind: Kind.STRING, value: tenant } },
    () => true
  )

const GET_ONLY: ReadonlySet<string> = new Set(["Get"])

/**
 * The query with `consistencyLevel: LEVEL` on every replicated collection of its `Get` (the only root
 * that takes it) that does not name one already.
 *
 * @category combinators
 */
export const withConsistencyLevel = (
  query: ValidQuery,
  level: ConsistencyLevel.ConsistencyLevel,
  /** whether a collection takes the argument (`ConsistencyLevel.replicated`) */
  replicated: (collection: string) => boolean
): ValidQuery =>
  withCollectionArgument(
    query,
    GET_ONLY,
    { kind: Kind.ARGUMENT, name: { kind: Kind.NAME, value: "consistencyLevel" }, value: { kind: Kind.ENUM, value: level } },
    replicated
  )

// ===== Results =====

/** One collection of a `Get` result as a grid. @category models */
export interface GridTable {
  readonly collection: string
  /** `uuid` first when `_additional.id` is selected, then the selected fields in order. */
  readonly columns: ReadonlyArray<string>
  readonly rows: ReadonlyArray<Readonly<Record<string, unknown>>>
}

/** @category models */
export type EditorResult =
  | { readonly kind: "grid"; readonly tables: ReadonlyArray<GridTable>; readonly errors: ReadonlyArray<GraphqlError> }
  | { readonly kind: "json"; readonly data: unknown; readonly json: string; readonly errors: ReadonlyArray<GraphqlError> }

const responseKey = (field: FieldNode) => field.alias?.value ?? field.name.value

/** The fields of a selection set, with inline fragments and fragment spreads flattened. */
const fieldsOf = (
  set: SelectionSetNode | undefined,
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
  depth = 0,
  tooDeep: () => void = () => undefined
): ReadonlyArray<FieldNode> => {
  if (set === undefined) return []
  if (depth > MAX_FRAGMENT_DEPTH) {
    tooDeep()
    return []
  }
  return set.selections.flatMap((s): ReadonlyArray<FieldNode> => {
    if (s.kind === Kind.FIELD) return [s]
    if (s.kind === Kind.INLINE_FRAGMENT) return fieldsOf(s.selectionSet, fragments, depth + 1, tooDeep)
    return fieldsOf(fragments.get(s.name.value)?.selectionSet, fragments, depth + 1, tooDeep)
  })
}

/** Fragments nested deeper than this are not followed. */
const MAX_FRAGMENT_DEPTH = 16

/** A collection a query reads: the root it is under and the tenant it names (`null`: not a string literal). @category models */
export interface CollectionUse {
  readonly root: string
  readonly collection: string
  readonly tenant: string | null | undefined
}

/**
 * Every collection a query reads under each root field (`Get`, `Aggregate`, `Explore` …), fragments
 * included, with the tenant each names. `undefined` when the query nests fragments too deep to be
 * followed completely: what it reads cannot be told, so a caller that must know refuses it.
 *
 * @category combinators
 */
export const collectionsUsed = (query: ValidQuery): ReadonlyArray<CollectionUse> | undefined => {
  let complete = true
  const tooDeep = () => void (complete = false)
  const uses = fieldsOf(query.operation.selectionSet, query.fragments, 0, tooDeep).flatMap((root) =>
    fieldsOf(root.selectionSet, query.fragments, 0, tooDeep).map((field): CollectionUse => {
      const tenants = (field.arguments ?? []).filter((a) => a.name.value === "tenant")
      const only = tenants.length === 1 ? tenants[0]! : undefined
      return {
        root: root.name.value,
        collection: field.name.value,
        // Named twice, or not as a string literal: which tenant the server takes cannot be told.
        tenant: tenants.length === 0 ? undefined : only !== undefined && only.value.kind === Kind.STRING ? only.value.value : null
      }
    })
  )
  return complete ? uses : undefined
}

/**
 * Maps the response of a query to the editor's display.
 *
 * @category combinators
 */
export const toResult = (
  query: ValidQuery,
  response: { readonly data?: Record<string, unknown> | null; readonly errors?: ReadonlyArray<GraphqlError> }
): EditorResult => {
  const errors = response.errors ?? []
  const roots = fieldsOf(query.operation.selectionSet, query.fragments)
  const data = response.data ?? null
  const onlyGet = roots.length === 1 && roots[0]!.name.value === "Get"
  if (!onlyGet || data === null) {
    return { kind: "json", data, json: JSON.stringify(data, null, 2), errors }
  }
  const get = roots[0]!
  const getData = (data[responseKey(get)] ?? {}) as Record<string, unknown>
  const tables = fieldsOf(get.selectionSet, query.fragments).map((classField): GridTable => {
    const fields = fieldsOf(classField.selectionSet, query.fragments)
    const propertyKeys = fields.filter((f) => f.name.value !== "_additional").map(responseKey)
    const additional = fields.filter((f) => f.name.value === "_additional")
    const additionalMembers = additional.flatMap((a) =>
      fieldsOf(a.selectionSet, query.fragments).map((m) => ({ parent: responseKey(a), key: responseKey(m), name: m.name.value }))
    )
    const columnOf = (m: { key: string; name: string }) =>
      m.name === "id" ? "uuid" : propertyKeys.includes(m.key) || m.key === "uuid" ? `_additional.${m.key}` : m.key
    const hasId = additionalMembers.some((m) => m.name === "id")
    const columns = [
      ...(hasId ? ["uuid"] : []),
      ...propertyKeys,
      ...additionalMembers.filter((m) => m.name !== "id").map(columnOf)
    ]
    const items = getData[responseKey(classField)]
    const rows = Array.isArray(items)
      ? items.map((item) => {
        const record = (typeof item === "object" && item !== null ? item : {}) as Record<string, unknown>
        const row: Record<string, unknown> = {}
        for (const m of additionalMembers) {
          const parent = record[m.parent]
          const value = typeof parent === "object" && parent !== null ? (parent as Record<string, unknown>)[m.key] : undefined
          row[columnOf(m)] = value ?? null
        }
        for (const key of propertyKeys) row[key] = record[key] ?? null
        return Object.fromEntries(columns.map((c) => [c, row[c] ?? null]))
      })
      : []
    return { collection: responseKey(classField), columns, rows }
  })
  return { kind: "grid", tables, errors }
}

// ===== Running =====

/**
 * Runs a query (validated here when given as text), optionally naming a tenant for every collection
 * in it. A validated query is not parsed again.
 *
 * @category requests
 */
export const run = Effect.fnUntraced(function*(
  http: WeaviateHttp,
  statement: string | ValidQuery,
  options: {
    readonly tenant?: string | undefined
    readonly consistencyLevel?: ConsistencyLevel.ConsistencyLevel | undefined
    /** the collections with a replication factor above 1 (needed with `consistencyLevel`) */
    readonly replicated?: (collection: string) => boolean
  } = {}
): Effect.fn.Return<EditorResult, RequestError | StatementRefused> {
  let query = typeof statement === "string" ? yield* validate(statement) : statement
  if (options.tenant !== undefined) query = withTenant(query, options.tenant)
  if (options.consistencyLevel !== undefined) {
    query = withConsistencyLevel(query, options.consistencyLevel, options.replicated ?? (() => true))
  }
  const response = yield* http.graphql(query.text)
  return toResult(query, response)
})
