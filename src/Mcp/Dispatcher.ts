/**
 * The catalogue methods: `tools/list`, `tools/call`, `resources/list`, `resources/read`,
 * `resources/templates/list`, `prompts/list`, `prompts/get`, `completion/complete`. Each call is
 * prepared synchronously (parameters decoded, tool or prompt looked up, scopes checked: `-32602` and
 * `-33007` are answered before anything runs or streams) and then run against the catalogue seam
 * with `RequestContext` and `CurrentPrincipal` provided by the endpoint.
 *
 * Scopes: the method's own (`scopesForMethod`) plus, for `tools/call`, the tool's; `tools/list` shows
 * only the tools the principal may call.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { InvalidParams, type McpError } from "../Schema/McpErrors.ts"
import type { InputRequired } from "../Schema/InputRequired.ts"
import * as McpWire from "../Schema/McpWire.ts"
import type { Scope } from "../Schema/Policy.ts"
import * as CacheHints from "./CacheHints.ts"
import * as Catalogue from "./Catalogue.ts"
import type { Pagination } from "./Pagination.ts"
import { hasScopes, insufficientScope, type Principal, scopesForMethod } from "../Auth/Principal.ts"

/** A decoded, authenticated request of a catalogue method. @category models */
export interface Call {
  readonly method: string
  readonly params: Readonly<Record<string, unknown>>
  readonly principal: Principal
}

/** What a catalogue method answers, before the era's envelope. @category models */
export type Reply =
  | {
    readonly _tag: "Result"
    readonly payload: Readonly<Record<string, unknown>>
    /** The cache hint of the modern era; `undefined` for methods outside the cache table. */
    readonly cache: CacheHints.CacheHint | undefined
    /** The JSON text (UTF-8) of some payload members, already known: the endpoint splices it in. */
    readonly serialized?: Readonly<Record<string, Uint8Array>>
  }
  | InputRequired

/** A call ready to run. @category models */
export interface Prepared {
  /** Whether the handler may suspend (database calls, dialogs): such calls run registered in flight. */
  readonly suspends: boolean
  readonly run: Effect.Effect<Reply, McpError, Catalogue.HandlerContext>
  /** The reply, when it is known without running anything (the static lists): no context to provide. */
  readonly reply?: Reply
}

/** The methods served here. @category constants */
export const METHODS: ReadonlySet<string> = new Set([
  "tools/list",
  "tools/call",
  "resources/list",
  "resources/read",
  "resources/templates/list",
  "prompts/list",
  "prompts/get",
  "completion/complete"
])

/** `completion.values` holds at most 100 items (schema). @category constants */
export const MAX_COMPLETION_VALUES = 100

const invalidParams = (method: string, error: ParseResult.ParseError) =>
  new InvalidParams({ message: `Invalid params for ${method}: ${ParseResult.TreeFormatter.formatErrorSync(error)}` })

const decoder = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (method: string, params: unknown): Either.Either<A, InvalidParams> =>
    Either.mapLeft(decode(params), (error) => invalidParams(method, error))
}

const decodePaginated = decoder(McpWire.PaginatedParams)
const decodeCall = decoder(McpWire.CallToolParams)
const decodeRead = decoder(McpWire.ReadResourceParams)
const decodeGet = decoder(McpWire.GetPromptParams)
const decodeComplete = decoder(McpWire.CompleteParams)

const result = (payload: Readonly<Record<string, unknown>>, cache: CacheHints.CacheHint | undefined): Reply => ({
  _tag: "Result",
  payload,
  cache
})

/** A catalogue value as a payload, without the members the core owns (a hint set by a handler is stripped). */
const sanitized = (value: object): Readonly<Record<string, unknown>> => {
  const record = value as Record<string, unknown>
  if (!CacheHints.ENVELOPE_MEMBERS.some((member) => member in record)) return record
  const copy = { ...record }
  for (const member of CacheHints.ENVELOPE_MEMBERS) delete copy[member]
  return copy
}

const fromOutcome = <A>(outcome: Catalogue.Outcome<A>, toPayload: (value: A) => Reply): Reply =>
  outcome._tag === "Complete" ? toPayload(outcome.value) : outcome

/** The paged lists: `tools/list` (kept per scope set and cursor, the hot path) and the others. */
const makeListings = (tools: Catalogue.Tools["Type"], pagination: Pagination["Type"]) => {
  // The visible tools depend only on the principal's scopes: computed once per distinct scope set.
  const visibleByScopes = new Map<string, ReadonlyArray<Catalogue.ToolDescriptor>>()
  const visibleTools = (principal: Principal): ReadonlyArray<Catalogue.ToolDescriptor> => {
    const key = principal.scopes.join(" ")
    let visible = visibleByScopes.get(key)
    if (visible === undefined) {
      visible = tools.all.filter((tool) => hasScopes(principal, tool.scopes)).map((tool) => tool.descriptor)
      visibleByScopes.set(key, visible)
    }
    return visible
  }

  // `tools/list` is the hot path: a page depends only on the scope set and the cursor, so the reply
  // and the JSON text of its tools are kept. Bounded: invalid cursors are refused before, and there are
  // few scope sets and pages.
  const toolPages = new Map<string, Reply>()
  const listTools = (principal: Principal, params: unknown): Either.Either<Reply, InvalidParams> =>
    Either.flatMap(decodePaginated("tools/list", params), (decoded) => {
      const key = decoded.cursor === undefined ? principal.scopes.join(" ") : `${principal.scopes.join(" ")}\n${decoded.cursor}`
      const cached = toolPages.get(key)
      if (cached !== undefined) return Either.right(cached)
      return Either.map(listed("tools/list", "tools", decoded, visibleTools(principal)), (reply) => {
        const withText: Reply = reply._tag === "Result" ? { ...reply, serialized: { tools: Buffer.from(JSON.stringify(reply.payload.tools)) } } : reply
        toolPages.set(key, withText)
        return withText
      })
    })

  const listed = <A>(
    method: string,
    key: string,
    decoded: { readonly cursor?: string | undefined },
    items: ReadonlyArray<A>
  ): Either.Either<Reply, InvalidParams> =>
    Either.map(pagination.page(method, items, decoded.cursor), (page) =>
      result(
        page.nextCursor === undefined ? { [key]: page.items } : { [key]: page.items, nextCursor: page.nextCursor },
        CacheHints.table[method]
      ))

  const listAll = <A>(method: string, key: string, params: unknown, items: ReadonlyArray<A>) =>
    Either.flatMap(decodePaginated(method, params), (decoded) => listed(method, key, decoded, items))

  return { listAll, listTools, listed, visibleTools }
}

/**
 * The dispatcher over a catalogue.
 *
 * @category constructors
 */
export const make = (options: {
  readonly tools: Catalogue.Tools["Type"]
  readonly resources: Catalogue.Resources["Type"]
  readonly prompts: Catalogue.Prompts["Type"]
  readonly completions: Catalogue.Completions["Type"]
  readonly pagination: Pagination["Type"]
}) => {
  const { completions, pagination, prompts, resources, tools } = options
  const toolsByName = new Map(tools.all.map((tool) => [tool.descriptor.name, tool]))
  const promptNames = new Set(prompts.all.map((prompt) => prompt.name))

  const { listAll, listTools, listed, visibleTools } = makeListings(tools, pagination)

  const now = (reply: Either.Either<Reply, McpError>): Either.Either<Prepared, McpError> =>
    Either.map(reply, (value) => ({ suspends: false, run: Effect.succeed(value), reply: value }))

  const later = (run: Prepared["run"]): Either.Either<Prepared, McpError> => Either.right({ suspends: true, run })

  /** `resources/list`: the cursor's signature is checked now, so a forged cursor is a -32602 before any work. */
  const listResources = (params: unknown): Either.Either<Prepared, McpError> =>
    Either.flatMap(decodePaginated("resources/list", params), (decoded) =>
      decoded.cursor !== undefined && Either.isLeft(pagination.offsetOf("resources/list", decoded.cursor))
        ? Either.left(new InvalidParams({ message: "Invalid cursor" }))
        : later(Effect.flatMap(resources.list, (all) =>
          Either.match(listed("resources/list", "resources", decoded, all), {
            onLeft: Effect.fail,
            onRight: Effect.succeed
          }))))

  /** `completion/complete`: at most `MAX_COMPLETION_VALUES` values, with the total and `hasMore` past that. */
  const complete = (params: unknown): Either.Either<Prepared, McpError> =>
    Either.flatMap(decodeComplete("completion/complete", params), (decoded) =>
      later(Effect.map(
        completions.complete({ ref: decoded.ref, argument: decoded.argument, context: decoded.context?.arguments ?? {} }),
        (completion) => {
          const values = completion.values.length > MAX_COMPLETION_VALUES
            ? { values: completion.values.slice(0, MAX_COMPLETION_VALUES), total: completion.total ?? completion.values.length, hasMore: true }
            : completion
          return result({ completion: values }, undefined)
        }
      )))

  /**
   * Prepares a call: `Left` for a protocol error answered at once (bad params, unknown tool or prompt,
   * missing scope). The method must be one of `METHODS`.
   */
  const prepare = (call: Call): Either.Either<Prepared, McpError> => {
    const { method, params, principal } = call
    const required = scopesForMethod(method)
    if (!hasScopes(principal, required)) return Either.left(insufficientScope(required))
    switch (method) {
      case "tools/list":
        return now(listTools(principal, params))
      case "prompts/list":
        return now(listAll(method, "prompts", params, prompts.all))
      case "resources/templates/list":
        return now(listAll(method, "resourceTemplates", params, resources.templates))
      case "resources/list":
        return listResources(params)
      case "tools/call":
        return Either.flatMap(decodeCall(method, params), (decoded) => {
          const tool = toolsByName.get(decoded.name)
          if (tool === undefined) return Either.left(new InvalidParams({ message: `Unknown tool: ${decoded.name}` }))
          const needed: ReadonlyArray<Scope> = [...required, ...tool.scopes]
          if (!hasScopes(principal, needed)) return Either.left(insufficientScope(needed))
          return later(Effect.map(tool.call(decoded.arguments ?? {}), (outcome) =>
            fromOutcome(outcome, (value) => result(sanitized(value), undefined))))
        })
      case "resources/read":
        return Either.flatMap(decodeRead(method, params), (decoded) => {
          const continued = decoded.requestState !== undefined || decoded.inputResponses !== undefined
          return later(Effect.map(resources.read(decoded.uri), (outcome) =>
            fromOutcome(outcome, (value) => result({ contents: value.contents }, CacheHints.forRead(value.ttlMs, continued)))))
        })
      case "prompts/get":
        return Either.flatMap(decodeGet(method, params), (decoded) => {
          if (!promptNames.has(decoded.name)) return Either.left(new InvalidParams({ message: `Unknown prompt: ${decoded.name}` }))
          return later(Effect.map(prompts.get(decoded.name, decoded.arguments ?? {}), (outcome) =>
            fromOutcome(outcome, (value) => result(sanitized(value), undefined))))
        })
      case "completion/complete":
        return complete(params)
      default:
        return Either.left(new InvalidParams({ message: `Not a catalogue method: ${method}` }))
    }
  }

  return { prepare, visibleTools }
}
