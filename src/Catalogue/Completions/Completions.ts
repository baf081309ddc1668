/**
 * `completion/complete` for the prompt arguments and the template variables of the four resource
 * templates:
 *
 * - `connection_id`: the ids of the connections the principal may see whose id or name starts with
 *   the value;
 * - `table`: the collections of the connection named in `context.arguments.connection_id` (from the
 *   session's schema cache);
 * - `column` / `property` (prompt arguments): the properties of that connection's `table`;
 * - `tenant`: the tenants of that `table` the principal may use (a tenant-scoped token sees only its own),
 *   from the session's tenant cache (`Driver.tenantIndex`);
 * - `group_by`: the properties of that `table` Weaviate can group by; `metric`: its `property:metric`
 *   pairs, each property with the metrics of its data type (`Driver/Aggregate`), so `price:m` offers
 *   `price:mean`, `price:median`, `price:mode`, `price:minimum`, `price:maximum`;
 * - `vectorizer` (prompt argument): the vectorizer modules of that connection (`/v1/meta`), and `none`;
 * - `data_type` (prompt argument): Weaviate's data types, and the connection's collections (references).
 *
 * Matching is a case-insensitive prefix match; at most 100 values, with `total` and `hasMore`.
 * A connection the principal may not see completes to nothing, as if it did not exist; an unknown
 * prompt or a URI that is not one of the templates is `InvalidParams`. Completion does not ask for
 * first access (it cannot answer `input_required`): like `resources/list`, it shows names only.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { FirstAccess } from "../../Approval/FirstAccess.ts"
import * as Aggregate from "../../Driver/Aggregate.ts"
import type * as CollectionSchema from "../../Driver/CollectionSchema.ts"
import { ConnectionStore } from "../../Driver/ConnectionStore.ts"
import { HistoryStore } from "../../History/HistoryStore.ts"
import { Driver } from "../../Driver/Driver.ts"
import type { Connection } from "../../Schema/Connection.ts"
import { InvalidParams } from "../../Schema/McpErrors.ts"
import { type Completion, Completions } from "../../Mcp/Catalogue.ts"
import {
  DATA_TYPE_ARGUMENTS,
  descriptors as promptDescriptors,
  GROUP_BY_ARGUMENT,
  METRIC_ARGUMENT,
  PROPERTY_ARGUMENTS,
  VECTORIZER_ARGUMENTS
} from "../Prompts/Prompts.ts"
import * as SchemaEdits from "../../Driver/SchemaEdits.ts"
import * as ConnectionAccess from "../ConnectionAccess.ts"
import * as HistoryCatalogue from "../HistoryCatalogue.ts"
import * as ResourceUri from "../Resources/ResourceUri.ts"

/** The most values one answer carries (MCP `CompleteResult`). @category constants */
export const MAX_VALUES = 100

/**
 * The candidates that start with `prefix` (case-insensitive), in order, without duplicates, capped
 * at 100.
 *
 * @category combinators
 */
export const completeFrom = (
  candidates: ReadonlyArray<{ readonly value: string; readonly keys: ReadonlyArray<string> }>,
  prefix: string
): Completion => {
  const needle = prefix.toLowerCase()
  const matches = Array.from(
    new Set(candidates.filter((c) => c.keys.some((k) => k.toLowerCase().startsWith(needle))).map((c) => c.value))
  )
  return { values: matches.slice(0, MAX_VALUES), total: matches.length, hasMore: matches.length > MAX_VALUES }
}

const none: Completion = { values: [], total: 0, hasMore: false }

/** @category constructors */
export const make = Effect.gen(function*() {
  const driver = yield* Driver
  const access = yield* ConnectionAccess.make
  const store = yield* ConnectionStore
  const history = yield* Effect.serviceOption(HistoryStore)
  /** Whether a reference is the query history's prompt or template (there is one only with a history). */
  const isHistory = (ref: Parameters<Completions["Type"]["complete"]>[0]["ref"]) =>
    Option.isSome(history) && (ref.type === "ref/prompt" ? ref.name === HistoryCatalogue.PROMPT : ref.uri === HistoryCatalogue.TEMPLATE)

  const visibleConnection = Effect.fnUntraced(function*(idOrName: string | undefined) {
    if (idOrName === undefined) return undefined
    const connections = yield* access.visible
    return connections.find((c) => c.id === idOrName) ?? connections.find((c) => c.name === idOrName)
  })

  // From the session's schema cache, like the listings. A server that is down completes to nothing
  // rather than failing the client's typing.
  const collectionsOf = (connection: Connection) =>
    driver.catalog(connection).pipe(
      Effect.map((read) => read.value.collections),
      Effect.orElseSucceed((): ReadonlyArray<CollectionSchema.Collection> => [])
    )

  const argumentNames = (ref: { readonly type: "ref/prompt"; readonly name: string } | { readonly type: "ref/resource"; readonly uri: string }) => {
    if (isHistory(ref)) {
      return Effect.succeed(ref.type === "ref/prompt" ? HistoryCatalogue.prompt.arguments.map((a) => a.name) : HistoryCatalogue.TEMPLATE_VARIABLES)
    }
    if (ref.type === "ref/prompt") {
      const prompt = promptDescriptors.find((d) => d.name === ref.name)
      return prompt === undefined
        ? Effect.fail(new InvalidParams({ message: `Unknown prompt ${JSON.stringify(ref.name)}`, data: { name: ref.name } }))
        : Effect.succeed(prompt.arguments.map((a) => a.name))
    }
    const variables = ResourceUri.templateVariables[ref.uri]
    return variables === undefined
      ? Effect.fail(
        new InvalidParams({
          message: `Not a resource template of this server: ${JSON.stringify(ref.uri)}`,
          data: { uri: ref.uri }
        })
      )
      : Effect.succeed(variables)
  }

  const complete = Effect.fnUntraced(function*(request: Parameters<Completions["Type"]["complete"]>[0]) {
    const names = yield* argumentNames(request.ref)
    const { name, value } = request.argument
    if (!names.includes(name)) return none
    if (isHistory(request.ref) && Option.isSome(history)) {
      const answer = HistoryCatalogue.completeArgument({ store, history: history.value }, name, value, request.context)
      if (answer !== undefined) return yield* answer
    }
    if (name === "connection_id" || (name === "id" && isHistory(request.ref))) {
      const connections = yield* access.visible
      return completeFrom(connections.map((c) => ({ value: c.id, keys: [c.id, c.name] })), value)
    }
    const other = VECTORIZER_ARGUMENTS.has(name) || DATA_TYPE_ARGUMENTS.has(name) || name === GROUP_BY_ARGUMENT || name === METRIC_ARGUMENT
    if (name !== "table" && name !== "tenant" && !PROPERTY_ARGUMENTS.has(name) && !other) return none
    const connection = yield* visibleConnection(request.context["connection_id"])
    if (connection === undefined) return DATA_TYPE_ARGUMENTS.has(name) ? completeFrom(SchemaEdits.DATA_TYPES.map((t) => ({ value: t, keys: [t] })), value) : none
    if (VECTORIZER_ARGUMENTS.has(name)) {
      // The modules the server has now (`/v1/meta`); a server that is down completes to nothing.
      return yield* driver.health(connection).pipe(
        Effect.map((health) => completeFrom([...health.modules.filter(SchemaEdits.isVectorizerModule), "none"].map((m) => ({ value: m, keys: [m] })), value)),
        Effect.orElseSucceed(() => none)
      )
    }
    if (name === "tenant") {
      const table = request.context["table"]
      if (table === undefined) return none
      // From the session's tenant cache, by prefix: a million tenants complete as fast as ten.
      return yield* ConnectionAccess.withTenantScope(driver.tenantIndex(connection, table)).pipe(
        Effect.map(({ read }): Completion => {
          const { values, total } = read.value.completions(value, MAX_VALUES)
          return { values, total, hasMore: total > values.length }
        }),
        Effect.orElseSucceed(() => none)
      )
    }
    const collections = yield* collectionsOf(connection)
    if (name === "table") return completeFrom(collections.map((c) => ({ value: c.name, keys: [c.name] })), value)
    if (DATA_TYPE_ARGUMENTS.has(name)) {
      return completeFrom([...SchemaEdits.DATA_TYPES, ...collections.map((c) => c.name)].map((t) => ({ value: t, keys: [t] })), value)
    }
    const tableName = request.context["table"]
    const collection = tableName === undefined
      ? undefined
      : collections.find((c) => c.name === tableName) ?? collections.find((c) => c.name.toLowerCase() === tableName.toLowerCase())
    if (collection === undefined) return none
    if (name === METRIC_ARGUMENT) return completeFrom(Aggregate.metricNames(collection).map((m) => ({ value: m, keys: [m] })), value)
    const properties = name === GROUP_BY_ARGUMENT ? collection.properties.filter(Aggregate.canGroupBy) : collection.properties
    return completeFrom(properties.map((p) => ({ value: p.name, keys: [p.name] })), value)
  })

  return Completions.of({ complete })
})

/** @category layers */
export const layer: Layer.Layer<Completions, never, Driver | ConnectionStore | FirstAccess> = Layer.effect(Completions, make)

/** @category layers */
export const CompletionsLive = layer
