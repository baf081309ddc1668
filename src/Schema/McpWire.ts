/**
 * The MCP parameter shapes the protocol core reads from `params`, per method. Members the core does
 * not read are left to the catalogue (tool arguments) or ignored. Decoded synchronously at the edge;
 * a failure is `-32602`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { RequestId } from "./JsonRpc.ts"

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** The reserved `_meta` keys of the modern era. @category constants */
export const META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
/** @category constants */
export const META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
/** @category constants */
export const META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
/** @category constants */
export const META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
/** @category constants */
export const META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

/** The W3C trace context keys that pass through `_meta` unchanged. @category constants */
export const TRACE_KEYS = ["traceparent", "tracestate", "baggage"] as const

/** `Implementation` of a client (`clientInfo`). @category schemas */
export const ClientInfo = Schema.Struct({
  name: Schema.String,
  title: Schema.optional(Schema.String),
  version: Schema.optional(Schema.String)
})

/** A progress token: text or an integer. @category schemas */
export const ProgressToken = Schema.Union(Schema.String, Schema.Int)
export type ProgressToken = typeof ProgressToken.Type

/** `params.cursor` of the list methods. @category schemas */
export const PaginatedParams = Schema.Struct({ cursor: Schema.optional(Schema.String) })

/** The members of a repeated call after `input_required`. @category schemas */
const Continuation = {
  requestState: Schema.optional(Schema.String),
  inputResponses: Schema.optional(JsonObject)
}

/** @category schemas */
export const CallToolParams = Schema.Struct({
  name: Schema.String,
  arguments: Schema.optional(JsonObject),
  ...Continuation
})

/** @category schemas */
export const ReadResourceParams = Schema.Struct({ uri: Schema.String, ...Continuation })

/** @category schemas */
export const GetPromptParams = Schema.Struct({
  name: Schema.String,
  arguments: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  ...Continuation
})

/** @category schemas */
export const CompleteParams = Schema.Struct({
  ref: Schema.Union(
    Schema.Struct({ type: Schema.Literal("ref/prompt"), name: Schema.String }),
    Schema.Struct({ type: Schema.Literal("ref/resource"), uri: Schema.String })
  ),
  argument: Schema.Struct({ name: Schema.String, value: Schema.String }),
  context: Schema.optional(Schema.Struct({
    arguments: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
  }))
})

/** `subscriptions/listen`: the notification types the client opts in to. @category schemas */
export const ListenParams = Schema.Struct({
  notifications: Schema.Struct({
    resourcesListChanged: Schema.optional(Schema.Boolean),
    resourceSubscriptions: Schema.optional(Schema.Array(Schema.String)),
    toolsListChanged: Schema.optional(Schema.Boolean),
    promptsListChanged: Schema.optional(Schema.Boolean)
  })
})

/** `notifications/cancelled`. @category schemas */
export const CancelledParams = Schema.Struct({
  requestId: RequestId,
  reason: Schema.optional(Schema.String)
})

/** Legacy `initialize`. @category schemas */
export const InitializeParams = Schema.Struct({
  protocolVersion: Schema.String,
  capabilities: Schema.optional(JsonObject),
  clientInfo: Schema.optional(ClientInfo)
})

/** Legacy `logging/setLevel`. @category schemas */
export const SetLevelParams = Schema.Struct({
  level: Schema.Literal("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
})
