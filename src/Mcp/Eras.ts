/**
 * Protocol revisions and the two eras (docs/design.md "Decisions" 6). A request is modern when its `_meta` carries
 * `io.modelcontextprotocol/protocolVersion` or its `MCP-Protocol-Version` header names a modern
 * revision; everything else is legacy (`initialize` + `Mcp-Session-Id`).
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { InvalidParams, UnsupportedVersion } from "../Schema/McpErrors.ts"
import { ClientInfo, META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION } from "../Schema/McpWire.ts"
import type * as Catalogue from "./Catalogue.ts"

/** The modern revision. @category constants */
export const MODERN = "2026-07-28"

/** Every revision answered, newest first: the live `supportedVersions`. @category constants */
export const SUPPORTED_VERSIONS: ReadonlyArray<string> = [MODERN, "2025-11-25", "2025-06-18"]

/** Revisions of the modern era. @category constants */
export const MODERN_VERSIONS: ReadonlyArray<string> = [MODERN]

/** Revisions a legacy `initialize` may ask for (`2025-03-26` needs batching, which is refused). @category constants */
export const LEGACY_VERSIONS: ReadonlyArray<string> = ["2025-11-25", "2025-06-18"]

/** Methods only the modern era has. @category constants */
export const MODERN_ONLY: ReadonlySet<string> = new Set(["server/discover", "subscriptions/listen"])

/** Methods only the legacy era has. @category constants */
export const LEGACY_ONLY: ReadonlySet<string> = new Set(["initialize", "ping", "logging/setLevel"])

/** @category errors */
export const unsupported = (requested: string, supported: ReadonlyArray<string>): UnsupportedVersion =>
  new UnsupportedVersion({
    message: `Unsupported protocol version: ${requested}`,
    data: { supported, requested }
  })

/**
 * Whether a request belongs to the modern era.
 *
 * @category predicates
 */
export const isModern = (meta: Readonly<Record<string, unknown>> | undefined, versionHeader: string | undefined): boolean =>
  (meta !== undefined && META_PROTOCOL_VERSION in meta) || (versionHeader !== undefined && MODERN_VERSIONS.includes(versionHeader.trim()))

/** What the modern `_meta` declares. @category models */
export interface ModernMeta {
  readonly protocolVersion: string
  readonly clientCapabilities: Readonly<Record<string, unknown>>
  readonly clientInfo: Option.Option<Catalogue.ClientInfo>
}

const decodeClientInfo = Schema.decodeUnknownOption(ClientInfo)

const isObject = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Validates the reserved `_meta` keys of a modern request: version missing or empty → `-32602`,
 * unsupported → `-32022` (`data: {supported, requested}`), capabilities missing or not an object →
 * `-32602`. `clientInfo` is optional; a malformed one is ignored (it only names the client).
 *
 * @category validation
 */
export const validateModernMeta = (
  meta: Readonly<Record<string, unknown>> | undefined
): Either.Either<ModernMeta, InvalidParams | UnsupportedVersion> => {
  const version = meta?.[META_PROTOCOL_VERSION]
  if (typeof version !== "string" || version.length === 0) {
    return Either.left(new InvalidParams({ message: `_meta["${META_PROTOCOL_VERSION}"] is required and must be a non-empty string` }))
  }
  if (!MODERN_VERSIONS.includes(version)) return Either.left(unsupported(version, SUPPORTED_VERSIONS))
  const capabilities = meta![META_CLIENT_CAPABILITIES]
  if (!isObject(capabilities)) {
    return Either.left(new InvalidParams({ message: `_meta["${META_CLIENT_CAPABILITIES}"] is required and must be an object` }))
  }
  return Either.right({
    protocolVersion: version,
    clientCapabilities: capabilities,
    clientInfo: decodeClientInfo(meta![META_CLIENT_INFO])
  })
}
