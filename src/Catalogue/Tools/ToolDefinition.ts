/**
 * How one tool is declared: its input and output as Effect Schemas (the descriptor's `inputSchema`
 * and `outputSchema` are generated from them), its annotations and scopes, and a handler that works
 * on decoded input. The wrapper turns everything a handler can end with into the contract's shapes:
 * arguments that do not decode, driver errors and `ToolFailure`s become `isError` results; protocol
 * errors (`Forbidden`, `InvalidParams` of a bad `requestState`, `RequestTimeout`) pass through to the
 * core. Input required from the user is a value the handler returns (`Schema/InputRequired`).
 *
 * Decision: arguments a model can fix are the tool error `invalid_argument`, not `-32602`; the
 * contract reserves protocol errors for the envelope, and the official specification asks for input
 * validation errors as tool results so that the model can correct itself.
 *
 * Every top-level string, integer or boolean parameter carries `x-mcp-header` equal to its own name
 * (docs/design.md "Decisions" 3), except free text that may exceed the 16 KB header limit (a tool lists those in
 * `unmirrored`). Numbers are never mirrored: the official rule allows the extension on string,
 * integer and boolean only.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"
import * as Redaction from "../../Base/Redaction.ts"
import * as Tracing from "../../Tracing/Tracing.ts"
import type { CollectionNotFound, FilterRefused, RequestError, StatementRefused } from "../../Driver/DriverError.ts"
import type { LookupError, TenantError } from "../../Driver/Driver.ts"
import { Forbidden, isMcpError, type McpError } from "../../Schema/McpErrors.ts"
import type { Scope } from "../../Schema/Policy.ts"
import { type CallToolResult, complete, type HandlerContext, type Outcome, type Tool } from "../../Mcp/Catalogue.ts"
import { tenantScopeOf } from "../ConnectionAccess.ts"
import { CurrentPrincipal } from "../../Auth/Principal.ts"
import { TenantScope } from "../../Driver/Tenants.ts"
import { capText } from "./TextCap.ts"
import * as ParameterIssues from "./ParameterIssues.ts"
import * as ToolError from "./ToolError.ts"

/** @category models */
export interface Annotations {
  readonly readOnlyHint: boolean
  readonly destructiveHint: boolean
  readonly idempotentHint: boolean
  readonly openWorldHint?: boolean
}

/** Every error a handler may end with. @category models */
export type HandlerError =
  | McpError
  | ToolError.ToolFailure
  | LookupError
  | RequestError
  | CollectionNotFound
  | FilterRefused
  | StatementRefused
  | TenantError

/**
 * The call being run: the tool's name and its raw arguments, as the client sent them (what a
 * `requestState` is bound to and what approvals and first access name). Provided to every handler.
 *
 * @category services
 */
export class ToolCall extends Context.Tag("weaviate-mcp/ToolCall")<ToolCall, {
  readonly tool: string
  readonly arguments: Readonly<Record<string, unknown>>
}>() {}

/** @category models */
export interface Definition<I, IE, O, OE> {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly input: Schema.Schema<I, IE>
  readonly output: Schema.Schema<O, OE>
  readonly annotations: Annotations
  /** Scopes beyond `tools:read`. */
  readonly scopes?: ReadonlyArray<Scope>
  /** Scalar parameters not mirrored into `Mcp-Param-*` headers (long free text). */
  readonly unmirrored?: ReadonlyArray<string>
  readonly run: (input: I) => Effect.Effect<Outcome<CallToolResult>, HandlerError, HandlerContext | ToolCall>
}

type JsonObject = Record<string, unknown>

/**
 * The JSON Schema types that may carry `x-mcp-header` (the 2026-07-28 Streamable HTTP "Schema
 * Extension"): `number` is not one of them, and the v2 client drops a tool that declares it on
 * anything else. The type must be explicit on the property itself.
 *
 * @category descriptors
 */
export const HEADER_TYPES: ReadonlySet<string> = new Set(["string", "integer", "boolean"])

const isHeaderScalar = (schema: JsonObject): boolean => typeof schema.type === "string" && HEADER_TYPES.has(schema.type)

/**
 * Removes what Effect adds for its own bookkeeping: `$id` (the same `/schemas/unknown` on every
 * `Unknown`, which validators reject as a duplicate) and generated `title`s (`minLength(1)`).
 */
const clean = (schema: unknown): void => {
  if (typeof schema !== "object" || schema === null) return
  const node = schema as JsonObject
  delete node.$id
  delete node.title
  for (const key of ["items", "additionalProperties", "not"]) clean(node[key])
  for (const key of ["anyOf", "oneOf", "allOf", "prefixItems"]) {
    if (Array.isArray(node[key])) for (const item of node[key] as Array<unknown>) clean(item)
  }
  for (const key of ["properties", "$defs"]) {
    if (typeof node[key] === "object" && node[key] !== null) for (const child of Object.values(node[key] as JsonObject)) clean(child)
  }
}

/**
 * The JSON Schema of a tool's input or output: JSON Schema 2020-12 keywords that draft-07 shares
 * (no `$ref`, no `$schema`, so validators of either draft accept it), with `x-mcp-header` on
 * mirrored string, integer and boolean parameters.
 *
 * @category descriptors
 */
export const jsonSchemaOf = (schema: Schema.Schema.Any, mirror: { readonly unmirrored: ReadonlyArray<string> } | undefined) => {
  const json = JSONSchema.make(schema, { target: "jsonSchema2020-12" }) as unknown as JsonObject
  delete json.$schema
  clean(json)
  if (mirror !== undefined) {
    const properties = (json.properties ?? {}) as Record<string, JsonObject>
    for (const [name, property] of Object.entries(properties)) {
      if (isHeaderScalar(property) && !mirror.unmirrored.includes(name)) property["x-mcp-header"] = name
    }
  }
  return json
}

/**
 * Every string of a JSON value, redacted. The value itself is returned when nothing needed redacting
 * (the usual case): a copy of every result cost a call as much as the grid it holds.
 */
const redactDeep = (value: unknown): unknown => {
  if (typeof value === "string") return Redaction.global.redact(value)
  if (Array.isArray(value)) {
    let copy: Array<unknown> | undefined
    for (let i = 0; i < value.length; i++) {
      const item = value[i]
      const redacted = redactDeep(item)
      if (redacted !== item) (copy ??= value.slice())[i] = redacted
    }
    return copy ?? value
  }
  if (typeof value === "object" && value !== null) {
    let copy: Record<string, unknown> | undefined
    for (const key in value) {
      const item = (value as Record<string, unknown>)[key]
      const redacted = redactDeep(item)
      if (redacted !== item) (copy ??= { ...value })[key] = redacted
    }
    return copy ?? value
  }
  return value
}

/**
 * A successful result: `structuredContent` plus its readable text (capped, `capText`), both redacted
 * (a row that holds a bearer value or a URL with credentials is shown without them, like any other
 * text). `narrow` says how to ask for less when the text is cut.
 *
 * @category constructors
 */
export const ok = <O>(structured: O, text: string, narrow?: string): Outcome<CallToolResult> =>
  complete({
    content: [{ type: "text", text: Redaction.global.redact(capText(text, narrow)) }],
    structuredContent: redactDeep(structured) as Readonly<Record<string, unknown>>
  })

/**
 * The `Tool` of a definition.
 *
 * @category constructors
 */
export const make = <I, IE, O, OE>(definition: Definition<I, IE, O, OE>): Tool => {
  const decode = Schema.decodeUnknownEither(definition.input, { onExcessProperty: "error", errors: "all" })
  const name = definition.name
  const spanAttributes = { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name }
  // The JSON Schemas are made on the first `tools/list`, once, not at start: the fifteen tools' took
  // 4–6 ms of the daemon's start (its commit message).
  let inputSchema: JsonObject | undefined
  let outputSchema: JsonObject | undefined
  return {
    descriptor: {
      name,
      title: definition.title,
      description: definition.description,
      get inputSchema() {
        return inputSchema ??= jsonSchemaOf(definition.input, { unmirrored: definition.unmirrored ?? [] })
      },
      get outputSchema() {
        return outputSchema ??= jsonSchemaOf(definition.output, undefined)
      },
      annotations: { title: definition.title, ...definition.annotations }
    },
    scopes: definition.scopes ?? [],
    call: (raw) => {
      const decoded = decode(raw ?? {})
      if (Either.isLeft(decoded)) {
        return Effect.succeed(complete(ToolError.toResult(ToolError.fail("invalid_argument", ParameterIssues.format(decoded.left)))))
      }
      return definition.run(decoded.right).pipe(
        // The call and its principal's tenant scope, provided together (one copy of the context).
        (run) =>
          Effect.flatMap(CurrentPrincipal, (principal) =>
            Effect.provide(
              run,
              Context.make(ToolCall, { tool: name, arguments: raw ?? {} }).pipe(Context.add(TenantScope, tenantScopeOf(principal)))
            )),
        Effect.catchAll((error): Effect.Effect<Outcome<CallToolResult>, McpError> => {
          if (isMcpError(error)) return Effect.fail(error)
          // A tenant outside a tenant-scoped token is refused like a connection outside it.
          if (error._tag === "TenantForbidden") return Effect.fail(new Forbidden({ message: error.message }))
          const failure = error._tag === "ToolFailure" ? error : ToolError.fromDriverError(error)
          return Effect.succeed(complete(ToolError.toResult(failure)))
        }),
        Effect.catchAllDefect((defect) =>
          Effect.as(
            Effect.logError(`tool ${name} failed`, defect),
            complete(ToolError.toResult(ToolError.fail("internal_failure", `the tool ${name} failed unexpectedly`)))
          )
        ),
        Tracing.spanWhenTraced(`Tools.${name}`, spanAttributes)
      )
    }
  }
}
