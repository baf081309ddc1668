/**
 * The resource URIs of the catalogue, their cache lifetimes and the four resource templates:
 *
 * | URI | TTL (ms) |
 * |---|---|
 * | `weaviate://connections` | 30000 |
 * | `weaviate://connections/{connection_id}/meta` | 300000 |
 * | `weaviate://connections/{connection_id}/schema` (subscribable) | 300000 |
 * | `weaviate://connections/{connection_id}/tables/{table}` | 60000 |
 * | `weaviate://connections/{connection_id}/tables/{table}/rows/{uuid}` | 5000 |
 * | `weaviate://connections/{connection_id}/tables/{table}/tenants/{tenant}/rows/{uuid}` | 5000 |
 *
 * Variables are single path segments, percent-encoded (RFC 3986) when formatted and decoded when
 * parsed, so a table or id holding `/`, `%` or spaces round-trips. Anything else (another scheme, a
 * query, a fragment, an empty or extra segment, a bad escape, a malformed uuid) is not a resource
 * of this server: `InvalidParams` (-32602), as the contract reports a resource that is not found.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import { InvalidParams } from "../../Schema/McpErrors.ts"
import type { ResourceTemplateDescriptor } from "../../Mcp/Catalogue.ts"

// ===== Models =====

/** A parsed resource URI. @category models */
export type ResourceRef = Data.TaggedEnum<{
  Connections: {}
  Meta: { readonly connectionId: string }
  Schema: { readonly connectionId: string }
  Table: { readonly connectionId: string; readonly table: string }
  /** `tenant`: the row of a multi-tenant collection's tenant. */
  Row: { readonly connectionId: string; readonly table: string; readonly uuid: string; readonly tenant?: string | undefined }
}>

/** @category constructors */
export const ResourceRef = Data.taggedEnum<ResourceRef>()

/** @category models */
export type Kind = ResourceRef["_tag"]

// ===== Constants =====

/** @category constants */
export const SCHEME = "weaviate"

/** @category constants */
export const MIME_TYPE = "application/json"

/** The cache lifetime of each kind of resource, in milliseconds. @category constants */
export const ttlMs: Readonly<Record<Kind, number>> = {
  Connections: 30_000,
  Meta: 300_000,
  Schema: 300_000,
  Table: 60_000,
  Row: 5_000
}

/** The URI of the list of connections. @category constants */
export const CONNECTIONS_URI = "weaviate://connections"

/** The RFC 6570 templates, by kind. @category constants */
export const templateUris = {
  Meta: "weaviate://connections/{connection_id}/meta",
  Schema: "weaviate://connections/{connection_id}/schema",
  Table: "weaviate://connections/{connection_id}/tables/{table}",
  Row: "weaviate://connections/{connection_id}/tables/{table}/rows/{uuid}",
  TenantRow: "weaviate://connections/{connection_id}/tables/{table}/tenants/{tenant}/rows/{uuid}"
} as const

/** The template variables of each template URI (what `completion/complete` may be asked about). @category constants */
export const templateVariables: Readonly<Record<string, ReadonlyArray<string>>> = {
  [templateUris.Meta]: ["connection_id"],
  [templateUris.Schema]: ["connection_id"],
  [templateUris.Table]: ["connection_id", "table"],
  [templateUris.Row]: ["connection_id", "table", "uuid"],
  [templateUris.TenantRow]: ["connection_id", "table", "tenant", "uuid"]
}

/** `resources/templates/list`. @category constants */
export const templates: ReadonlyArray<ResourceTemplateDescriptor> = [
  {
    uriTemplate: templateUris.Meta,
    name: "connection-meta",
    title: "Connection metadata",
    description:
      "The saved connection (without its key) and the server's health from GET /v1/meta: version, modules, latency. Cached 5 minutes.",
    mimeType: MIME_TYPE
  },
  {
    uriTemplate: templateUris.Schema,
    name: "connection-schema",
    title: "Connection schema",
    description:
      "Every collection of the connection with its properties, data types, index flags, vectorizer and multi-tenancy. Subscribable: changes are checked every 10 s. Cached 5 minutes.",
    mimeType: MIME_TYPE
  },
  {
    uriTemplate: templateUris.Table,
    name: "table",
    title: "Table",
    description:
      "One collection: its columns with types and the filter operators each accepts, index flags, vectorizer, multi-tenancy, the row count and the first rows. Cached 1 minute.",
    mimeType: MIME_TYPE
  },
  {
    uriTemplate: templateUris.Row,
    name: "row",
    title: "Row",
    description: "One object of a collection by uuid, with its properties and vector. Cached 5 seconds.",
    mimeType: MIME_TYPE
  },
  {
    uriTemplate: templateUris.TenantRow,
    name: "tenant-row",
    title: "Row of a tenant",
    description:
      "One object of a multi-tenant collection's tenant by uuid, with its properties and every vector. Cached 5 seconds.",
    mimeType: MIME_TYPE
  }
]

// ===== Formatting =====

const segment = (value: string) => encodeURIComponent(value)

/**
 * The canonical URI of a resource (variables percent-encoded).
 *
 * @category formatting
 */
export const format = (ref: ResourceRef): string => {
  switch (ref._tag) {
    case "Connections":
      return CONNECTIONS_URI
    case "Meta":
      return `${CONNECTIONS_URI}/${segment(ref.connectionId)}/meta`
    case "Schema":
      return `${CONNECTIONS_URI}/${segment(ref.connectionId)}/schema`
    case "Table":
      return `${CONNECTIONS_URI}/${segment(ref.connectionId)}/tables/${segment(ref.table)}`
    case "Row":
      return `${CONNECTIONS_URI}/${segment(ref.connectionId)}/tables/${segment(ref.table)}${
        ref.tenant === undefined ? "" : `/tenants/${segment(ref.tenant)}`
      }/rows/${segment(ref.uuid)}`
  }
}

// ===== Parsing =====

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** @category predicates */
export const isUuid = (text: string): boolean => UUID.test(text)

const unknown = (uri: string, reason: string) =>
  Either.left(new InvalidParams({ message: `Unknown resource ${JSON.stringify(uri)}: ${reason}`, data: { uri } }))

const decode = (raw: string): string | undefined => {
  try {
    return decodeURIComponent(raw)
  } catch {
    return undefined
  }
}

// The scheme and the authority are case-insensitive (RFC 3986 §3.1, §3.2.2); the path is not.
const PREFIX = /^weaviate:\/\/connections(?=\/|$)/i

/**
 * Reads a URI of this server, or says why it is not one.
 *
 * @category parsing
 */
export const parse = (uri: string): Either.Either<ResourceRef, InvalidParams> => {
  const prefix = PREFIX.exec(uri)
  if (prefix === null) return unknown(uri, `not a ${SCHEME}://connections URI`)
  if (/[?#]/.test(uri)) return unknown(uri, "resource URIs take no query or fragment")
  const rest = uri.slice(prefix[0].length)
  if (rest === "") return Either.right(ResourceRef.Connections())
  const raw = rest.slice(1).split("/")
  const parts: Array<string> = []
  for (const part of raw) {
    const decoded = decode(part)
    if (decoded === undefined) return unknown(uri, `bad percent-encoding in ${JSON.stringify(part)}`)
    if (decoded.length === 0) return unknown(uri, "empty path segment")
    parts.push(decoded)
  }
  const [connectionId, kind, table, rows, uuid] = parts as [string, ...Array<string | undefined>]
  if (parts.length === 2 && kind === "meta") return Either.right(ResourceRef.Meta({ connectionId }))
  if (parts.length === 2 && kind === "schema") return Either.right(ResourceRef.Schema({ connectionId }))
  if (parts.length === 3 && kind === "tables") return Either.right(ResourceRef.Table({ connectionId, table: table! }))
  if (parts.length === 5 && kind === "tables" && rows === "rows") {
    if (!isUuid(uuid!)) return unknown(uri, `${JSON.stringify(uuid)} is not a uuid`)
    return Either.right(ResourceRef.Row({ connectionId, table: table!, uuid: uuid!.toLowerCase() }))
  }
  if (parts.length === 7 && kind === "tables" && rows === "tenants" && parts[5] === "rows") {
    const tenantUuid = parts[6]!
    if (!isUuid(tenantUuid)) return unknown(uri, `${JSON.stringify(tenantUuid)} is not a uuid`)
    return Either.right(ResourceRef.Row({ connectionId, table: table!, tenant: uuid!, uuid: tenantUuid.toLowerCase() }))
  }
  return unknown(uri, "expected …/meta, …/schema, …/tables/{table}, …/tables/{table}/rows/{uuid} or …/tables/{table}/tenants/{tenant}/rows/{uuid}")
}
