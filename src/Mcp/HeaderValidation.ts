/**
 * The modern era's required headers: copies of body values that proxies and gateways can route on
 * without parsing the body. The server compares every copy with the body; a missing, malformed or
 * disagreeing header is `-32020` (HTTP 400).
 *
 * | header | when | must equal |
 * |---|---|---|
 * | `Content-Type` | always | `application/json` or any `+json` type |
 * | `MCP-Protocol-Version` | always | `_meta["io.modelcontextprotocol/protocolVersion"]` |
 * | `Mcp-Method` | always | `method` |
 * | `Mcp-Name` | `tools/call`, `prompts/get` / `resources/read` | `params.name` / `params.uri` |
 * | `Mcp-Param-<field>` | when sent | the matching value in `arguments` (`tools/call`) or `params` |
 *
 * `Mcp-Param-<field>` (docs/design.md "Decisions" 3): the field is matched case-insensitively, descending into nested
 * objects (tools declare `x-mcp-header` equal to the parameter's own name, so the official reading
 * and this one agree), never into arrays or strings. Strings compare as text, numbers numerically,
 * booleans as `true`/`false`; an array or object never matches, nor does an absent field. Values
 * wrapped as a complete `=?base64?…?=` are decoded (standard base64 of UTF-8) first; a bad payload in
 * such a wrapper, or a control character in a raw header value, is a mismatch too.
 *
 * Bounded work: at most `MAX_PARAM_HEADERS` `Mcp-Param-*` headers, and one search per request for all
 * their fields (not a walk per header), which stops when all are found and looks at no more than
 * `MAX_FIELD_DEPTH` levels and `MAX_FIELD_VISITS` members.
 *
 * The `MCP-Protocol-Version` header is compared with `_meta`'s version before that version is
 * checked for support (`checkVersionCopy`), so a disagreement is `-32020`, not `-32022`.
 *
 * Pure and synchronous: it runs on every modern request.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import { HeaderMismatch } from "../Schema/McpErrors.ts"

/** @category constants */
export const PARAM_PREFIX = "mcp-param-"

type Headers = Readonly<Record<string, string | undefined>>

const mismatch = (message: string) => Either.left(new HeaderMismatch({ message: `Header mismatch: ${message}` }))

// Tab is the only control character node's parser lets through in a header value; DEL and the C0 set
// are checked anyway, for values that reach us by another route.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const utf8 = new TextDecoder("utf-8", { fatal: true })

const WRAPPER = /^=\?base64\?(.*)\?=$/is

/**
 * A header value as text: control characters refused, a complete `=?base64?…?=` wrapper decoded.
 * A value that merely starts like a wrapper (`=?base64?YQ==`, `=?base64?YQ==?=junk`) is a literal
 * value, compared as is; only a complete wrapper whose payload is not standard base64 of UTF-8 is
 * malformed. `Left(reason)` when malformed.
 *
 * @category decoding
 */
export const decodeValue = (raw: string): Either.Either<string, string> => {
  if (CONTROL.test(raw)) return Either.left("control character in the value")
  const match = WRAPPER.exec(raw)
  if (match === null) return Either.right(raw)
  const payload = match[1]!
  if (!BASE64.test(payload)) return Either.left("malformed base64 payload in the =?base64?…?= wrapper")
  try {
    return Either.right(utf8.decode(Buffer.from(payload, "base64")))
  } catch {
    return Either.left("base64 payload is not UTF-8")
  }
}

/** Whether a `Content-Type` names JSON (`application/json` or any `+json` type, parameters allowed). @category predicates */
export const isJsonContentType = (contentType: string | undefined): boolean => {
  if (contentType === undefined) return false
  const semi = contentType.indexOf(";")
  const type = (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase()
  return type === "application/json" || (type.endsWith("+json") && type.includes("/"))
}

const isObject = (u: unknown): u is Readonly<Record<string, unknown>> => typeof u === "object" && u !== null && !Array.isArray(u)

/** How deep the `Mcp-Param-*` fields are looked for (the endpoint refuses deeper JSON anyway). @category constants */
export const MAX_FIELD_DEPTH = 64

/** Most `Mcp-Param-*` headers on one request. @category constants */
export const MAX_PARAM_HEADERS = 32

/** Most members looked at to find the `Mcp-Param-*` fields of one request. @category constants */
export const MAX_FIELD_VISITS = 100_000

/**
 * The values of the `wanted` fields (lower-case) in a target object, searched once for all of them:
 * for each field the first key matching case-insensitively, breadth first (top level first),
 * descending into nested objects only (never into arrays or strings). The search stops when every
 * field is found, and is bounded: `cut` tells whether it stopped at `MAX_FIELD_DEPTH` levels or
 * `MAX_FIELD_VISITS` members before finding them all.
 *
 * @category matching
 */
export const findFields = (
  target: Readonly<Record<string, unknown>>,
  wanted: ReadonlySet<string>
): { readonly found: ReadonlyMap<string, unknown>; readonly cut: boolean } => {
  const found = new Map<string, unknown>()
  const lengths = new Set<number>()
  for (const field of wanted) lengths.add(field.length)
  let visits = 0
  let level: Array<Readonly<Record<string, unknown>>> = [target]
  for (let depth = 0; level.length > 0; depth++) {
    if (depth === MAX_FIELD_DEPTH) return { found, cut: true }
    const next: Array<Readonly<Record<string, unknown>>> = []
    for (const object of level) {
      for (const key in object) {
        if (++visits > MAX_FIELD_VISITS) return { found, cut: true }
        const value = object[key]
        if (lengths.has(key.length)) {
          const lower = key.toLowerCase()
          if (wanted.has(lower) && !found.has(lower)) {
            found.set(lower, value)
            if (found.size === wanted.size) return { found, cut: false }
          }
        }
        if (isObject(value)) next.push(value)
      }
    }
    level = next
  }
  return { found, cut: false }
}

/**
 * The value of `field` (lower-case) in `target` (see `findFields`); `undefined` when absent.
 *
 * @category matching
 */
export const findField = (target: Readonly<Record<string, unknown>>, field: string): { readonly value: unknown } | undefined => {
  const { found } = findFields(target, new Set([field]))
  return found.has(field) ? { value: found.get(field) } : undefined
}

/**
 * Whether a header's text equals a body value under the contract's rules.
 *
 * @category matching
 */
export const matchesValue = (text: string, value: unknown): boolean => {
  switch (typeof value) {
    case "string":
      return text === value
    case "number": {
      const trimmed = text.trim()
      if (trimmed.length === 0) return false
      const parsed = Number(trimmed)
      return Number.isFinite(parsed) && parsed === value
    }
    case "boolean":
      return text === (value ? "true" : "false")
    default:
      return false
  }
}

/** What the validation compares the headers with. @category models */
export interface Body {
  readonly method: string
  readonly protocolVersion: string
  readonly params: Readonly<Record<string, unknown>> | undefined
}

const nameFor = (method: string, params: Readonly<Record<string, unknown>> | undefined): { readonly member: string; readonly value: unknown } | undefined => {
  if (method === "tools/call" || method === "prompts/get") return { member: "params.name", value: params?.name }
  if (method === "resources/read") return { member: "params.uri", value: params?.uri }
  return undefined
}

const checkCopy = (headers: Headers, header: string, display: string, expected: unknown): Either.Either<void, HeaderMismatch> => {
  const raw = headers[header]
  if (raw === undefined) return mismatch(`${display} header is required`)
  const decoded = decodeValue(raw)
  if (Either.isLeft(decoded)) return mismatch(`${display}: ${decoded.left}`)
  if (typeof expected !== "string" || decoded.right !== expected) {
    return mismatch(`${display} header value '${decoded.right}' does not match the body value '${String(expected)}'`)
  }
  return Either.void
}

/**
 * The `MCP-Protocol-Version` header against `_meta`'s version, before that version is checked for
 * support: when both are present and disagree the request is `-32020` (the copy is wrong, whatever
 * the version). A missing header is left to `validate`.
 *
 * @category validation
 */
export const checkVersionCopy = (headers: Headers, metaVersion: unknown): Either.Either<void, HeaderMismatch> => {
  if (headers["mcp-protocol-version"] === undefined || typeof metaVersion !== "string" || metaVersion.length === 0) return Either.void
  return checkCopy(headers, "mcp-protocol-version", "MCP-Protocol-Version", metaVersion)
}

/**
 * Validates the headers of a modern request against its body (headers lower-cased, as node gives them).
 *
 * @category validation
 */
export const validate = (headers: Headers, body: Body): Either.Either<void, HeaderMismatch> => {
  if (!isJsonContentType(headers["content-type"])) {
    return mismatch(`Content-Type must be application/json or a +json type, got '${headers["content-type"] ?? ""}'`)
  }
  const version = checkCopy(headers, "mcp-protocol-version", "MCP-Protocol-Version", body.protocolVersion)
  if (Either.isLeft(version)) return version
  const method = checkCopy(headers, "mcp-method", "Mcp-Method", body.method)
  if (Either.isLeft(method)) return method
  const name = nameFor(body.method, body.params)
  // Without a name or uri in the body the params are invalid: that is the -32602 of the method.
  if (name !== undefined && typeof name.value === "string") {
    const checked = checkCopy(headers, "mcp-name", "Mcp-Name", name.value)
    if (Either.isLeft(checked)) return checked
  }
  const params: Array<string> = []
  for (const header in headers) {
    if (header.startsWith(PARAM_PREFIX)) params.push(header)
  }
  if (params.length === 0) return Either.void
  if (params.length > MAX_PARAM_HEADERS) {
    return mismatch(`${params.length} Mcp-Param-* headers; at most ${MAX_PARAM_HEADERS} are accepted`)
  }
  // One bounded search for all the fields, however many headers name them.
  const target = body.method === "tools/call" ? body.params?.arguments : body.params
  const wanted = new Set(params.map((header) => header.slice(PARAM_PREFIX.length)))
  const search = isObject(target) ? findFields(target, wanted) : undefined
  for (const header of params) {
    const field = header.slice(PARAM_PREFIX.length)
    const decoded = decodeValue(headers[header]!)
    if (Either.isLeft(decoded)) return mismatch(`Mcp-Param-${field}: ${decoded.left}`)
    if (search === undefined || field.length === 0 || !search.found.has(field)) {
      return mismatch(
        search?.cut === true
          ? `Mcp-Param-${field} names no value within the first ${MAX_FIELD_DEPTH} levels and ${MAX_FIELD_VISITS.toLocaleString("en-US")} members of the body`
          : `Mcp-Param-${field} names no value in the body`
      )
    }
    if (!matchesValue(decoded.right, search.found.get(field))) {
      return mismatch(`Mcp-Param-${field} header value '${decoded.right}' does not match the body value`)
    }
  }
  return Either.void
}
