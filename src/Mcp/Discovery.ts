/**
 * What the server says about itself: `serverInfo`, the capabilities of each era, the instructions
 * for the model, and the `server/discover` result. All of it is fixed for the life of the daemon, so
 * it is built once.
 *
 * @since 0.1.0
 */
import { NAME, VERSION } from "../Base/Version.ts"
import * as Eras from "./Eras.ts"

/** @category constants */
export const TITLE = "Weaviate MCP"

/** The package's npm page: the project has no public repository to point at. @category constants */
export const WEBSITE_URL = "https://www.npmjs.com/package/weaviate-mcp"

/**
 * The instructions given to the model (`server/discover`, legacy `initialize`).
 *
 * @category constants
 */
export const INSTRUCTIONS = [
  "This server gives access to the user's Weaviate vector databases.",
  "Start from `list_connections` to see which connections you may use.",
  "Call `describe_table` before writing a query against a collection: it gives the columns, their types and the filter operators each one accepts.",
  "Writes are confirmed by the user. When a call is refused (denied, user_cancelled, forbidden), treat the refusal as the user's policy, not as a transient error: do not retry it or work around it; tell the user instead."
].join(" ")

/** `serverInfo` on every modern result's `_meta`. @category models */
export interface ServerInfo {
  readonly name: string
  readonly version: string
  readonly title?: string
  readonly websiteUrl?: string
  readonly instanceId?: string
}

/** The short form carried by every modern result. @category constants */
export const serverInfo: ServerInfo = { name: NAME, version: VERSION }

/**
 * The long form (discovery, `initialize`): with `title`, `websiteUrl` and the running instance's id,
 * which readers of the handshake file compare with the file.
 *
 * @category constructors
 */
export const fullServerInfo = (instanceId: string): ServerInfo => ({
  name: NAME,
  version: VERSION,
  title: TITLE,
  websiteUrl: WEBSITE_URL,
  instanceId
})

/** The capabilities table of the modern era. @category constants */
export const modernCapabilities = {
  tools: { listChanged: false },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: false },
  completions: {},
  extensions: {}
} as const

/**
 * Legacy capabilities: no subscriptions and no list-changed notifications (the legacy era has no
 * stream to deliver them on: `GET /mcp` is 405), `logging` for `logging/setLevel`.
 *
 * @category constants
 */
export const legacyCapabilities = {
  tools: { listChanged: false },
  resources: { subscribe: false, listChanged: false },
  prompts: { listChanged: false },
  completions: {},
  logging: {}
} as const

/**
 * The `server/discover` payload without envelope members (the core adds `resultType`, `_meta` and the
 * cache hints).
 *
 * @category constructors
 */
export const discoverPayload = (instanceId: string) => ({
  supportedVersions: Eras.SUPPORTED_VERSIONS,
  capabilities: modernCapabilities,
  instructions: INSTRUCTIONS,
  serverInfo: fullServerInfo(instanceId)
})

/**
 * The legacy `initialize` result.
 *
 * @category constructors
 */
export const initializeResult = (protocolVersion: string, instanceId: string) => ({
  protocolVersion,
  capabilities: legacyCapabilities,
  serverInfo: fullServerInfo(instanceId),
  instructions: INSTRUCTIONS
})
