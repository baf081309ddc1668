/**
 * The seam between the protocol core and what it serves. The core (JSON-RPC, eras, headers,
 * authentication, scopes, paging, caching, streaming, cancellation) knows nothing of Weaviate; the
 * catalogue (tools, resources, prompts, completions, subscriptions over the driver) knows nothing
 * of HTTP or JSON-RPC. Each side is a layer; an embedding program may provide its own catalogue.
 *
 * Shapes are the MCP wire shapes (plain JSON values); the core adds the envelope (`resultType`,
 * `_meta`, cache hints) per era.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as EffectScope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as InputRequired from "../Schema/InputRequired.ts"
import { InvalidParams, type McpError } from "../Schema/McpErrors.ts"
import type { Scope } from "../Schema/Policy.ts"
import type { CurrentPrincipal } from "../Auth/Principal.ts"

const invalid = (message: string) => new InvalidParams({ message })

// ===== Request context =====

/** @category models */
export type Era = "modern" | "legacy"

/** @category models */
export interface ClientInfo {
  readonly name: string
  readonly title?: string | undefined
  readonly version?: string | undefined
}

/**
 * What a handler knows about the request it serves. Provided by the core to every handler, with
 * `CurrentPrincipal`.
 *
 * @category services
 */
export class RequestContext extends Context.Tag("weaviate-mcp/RequestContext")<RequestContext, {
  readonly era: Era
  readonly protocolVersion: string
  readonly method: string
  readonly requestId: string | number
  /** Declared client capabilities (modern: `_meta`; legacy: from `initialize`). */
  readonly clientCapabilities: Readonly<Record<string, unknown>>
  readonly clientInfo: Option.Option<ClientInfo>
  /** `params.requestState` of a repeated call. */
  readonly requestState: Option.Option<string>
  /** `params.inputResponses` of a repeated call. */
  readonly inputResponses: Option.Option<Readonly<Record<string, unknown>>>
  /**
   * Reports progress (`total` is 1.0). A no-op without a progress token; a value that does not
   * advance is dropped.
   */
  readonly progress: (progress: number, message: string) => Effect.Effect<void>
}>() {}

/** What every handler may require. @category models */
export type HandlerContext = RequestContext | CurrentPrincipal

// ===== Outcomes =====

/**
 * A handler's answer: complete, or input required from the user (modern era only; the core turns
 * `InputRequired` into an `input_required` result).
 *
 * @category models
 */
export type Outcome<A> =
  | { readonly _tag: "Complete"; readonly value: A }
  | InputRequired.InputRequired

/** @category constructors */
export const complete = <A>(value: A): Outcome<A> => ({ _tag: "Complete", value })

/** @category constructors */
export const inputRequired = (inputRequests: Readonly<Record<string, unknown>>, requestState: string): Outcome<never> =>
  InputRequired.make(inputRequests, requestState)

// ===== Tools =====

/** The `Tool` descriptor of `tools/list`. @category models */
export interface ToolDescriptor {
  readonly name: string
  readonly title?: string
  readonly description: string
  readonly inputSchema: Readonly<Record<string, unknown>>
  readonly outputSchema?: Readonly<Record<string, unknown>>
  readonly annotations?: Readonly<Record<string, unknown>>
}

/** A `CallToolResult` without envelope members. @category models */
export interface CallToolResult {
  readonly content: ReadonlyArray<Readonly<Record<string, unknown>>>
  readonly structuredContent?: Readonly<Record<string, unknown>>
  readonly isError?: boolean
}

/** @category models */
export interface Tool {
  readonly descriptor: ToolDescriptor
  /** Scopes the tool needs beyond `tools:read` (e.g. `tools:write`); `tools/list` hides tools the token may not call. */
  readonly scopes: ReadonlyArray<Scope>
  /** Arguments are the raw `params.arguments`; the tool decodes them (bad ones are the tool error `invalid_argument`, not a protocol error: the contract keeps protocol errors for the envelope). */
  readonly call: (args: Readonly<Record<string, unknown>>) => Effect.Effect<Outcome<CallToolResult>, McpError, HandlerContext>
}

/** @category services */
export class Tools extends Context.Tag("weaviate-mcp/Tools")<Tools, {
  readonly all: ReadonlyArray<Tool>
}>() {
  static readonly empty = Layer.succeed(Tools, Tools.of({ all: [] }))
}

// ===== Resources =====

/** A `Resource` of `resources/list`. @category models */
export interface ResourceDescriptor {
  readonly uri: string
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly mimeType?: string
}

/** A `ResourceTemplate` of `resources/templates/list`. @category models */
export interface ResourceTemplateDescriptor {
  readonly uriTemplate: string
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly mimeType?: string
}

/** The answer of `resources/read` with the cache lifetime of that URI. @category models */
export interface ResourceContents {
  readonly contents: ReadonlyArray<Readonly<Record<string, unknown>>>
  readonly ttlMs: number
}

/** @category services */
export class Resources extends Context.Tag("weaviate-mcp/Resources")<Resources, {
  /** The resources the current principal may see. */
  readonly list: Effect.Effect<ReadonlyArray<ResourceDescriptor>, McpError, HandlerContext>
  readonly templates: ReadonlyArray<ResourceTemplateDescriptor>
  /** Unknown URI → `InvalidParams`; not allowed → `Forbidden`. */
  readonly read: (uri: string) => Effect.Effect<Outcome<ResourceContents>, McpError, HandlerContext>
  /**
   * Starts watching the list of resources (connections added, removed, changed). The effect completes
   * once the watch is in place and holds what it compares against; the stream then emits for every
   * change made after that. The watch lives as long as the scope.
   */
  readonly listChanged: Effect.Effect<Stream.Stream<void>, never, EffectScope.Scope>
  /**
   * Starts watching the resource at `uri` (e.g. a subscribed schema), like `listChanged`: once the
   * effect completes, every later change is emitted. Fails for an unknown or forbidden URI; the stream
   * fails when the URI can no longer be watched.
   */
  readonly watch: (uri: string) => Effect.Effect<Stream.Stream<void, McpError, HandlerContext>, McpError, EffectScope.Scope | HandlerContext>
}>() {
  static readonly empty = Layer.succeed(Resources, Resources.of({
    list: Effect.succeed([]),
    templates: [],
    read: (uri) => Effect.fail(invalid(`Unknown resource: ${uri}`)),
    listChanged: Effect.succeed(Stream.never),
    watch: (uri) => Effect.fail(invalid(`Unknown resource: ${uri}`))
  }))
}

// ===== Prompts =====

/** A `Prompt` of `prompts/list`. @category models */
export interface PromptDescriptor {
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly arguments?: ReadonlyArray<{ readonly name: string; readonly description?: string; readonly required?: boolean }>
}

/** A `GetPromptResult` without envelope members. @category models */
export interface PromptResult {
  readonly description?: string
  readonly messages: ReadonlyArray<Readonly<Record<string, unknown>>>
}

/** @category services */
export class Prompts extends Context.Tag("weaviate-mcp/Prompts")<Prompts, {
  readonly all: ReadonlyArray<PromptDescriptor>
  /** Unknown name → `InvalidParams`. */
  readonly get: (name: string, args: Readonly<Record<string, string>>) => Effect.Effect<Outcome<PromptResult>, McpError, HandlerContext>
}>() {
  static readonly empty = Layer.succeed(Prompts, Prompts.of({
    all: [],
    get: (name) => Effect.fail(invalid(`Unknown prompt: ${name}`))
  }))
}

// ===== Completions =====

/** The `completion` member of a `CompleteResult`. @category models */
export interface Completion {
  readonly values: ReadonlyArray<string>
  readonly total?: number
  readonly hasMore?: boolean
}

/** @category services */
export class Completions extends Context.Tag("weaviate-mcp/Completions")<Completions, {
  readonly complete: (request: {
    readonly ref: { readonly type: "ref/prompt"; readonly name: string } | { readonly type: "ref/resource"; readonly uri: string }
    readonly argument: { readonly name: string; readonly value: string }
    readonly context: Readonly<Record<string, string>>
  }) => Effect.Effect<Completion, McpError, HandlerContext>
}>() {
  static readonly empty = Layer.succeed(Completions, Completions.of({
    complete: () => Effect.succeed({ values: [] })
  }))
}

/** Every empty catalogue, for tests of the core and for embedding programs that serve nothing yet. @category layers */
export const empty = Layer.mergeAll(Tools.empty, Resources.empty, Prompts.empty, Completions.empty)
