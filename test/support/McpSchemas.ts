/**
 * The official MCP JSON Schemas of the three revisions (`test/fixtures/reference/mcp`), compiled once, so
 * every test can validate what the server sends against the schema of its era.
 */
import { Ajv } from "ajv"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { referencePath } from "./Reference.ts"

const MODERN = "2026-07-28"

const referenceDir = referencePath("mcp")
const loadSchema = (file: string) => JSON.parse(NodeFs.readFileSync(NodePath.join(referenceDir, file), "utf8"))

// ajv-formats is CommonJS: under NodeNext its default import is the module object.
type AddFormats = (ajv: Ajv | Ajv2020) => unknown
const addFormats: AddFormats = (addFormatsModule as unknown as { default?: AddFormats }).default ??
  (addFormatsModule as unknown as AddFormats)
const ajv2020 = new Ajv2020({ strict: false, allErrors: true })
const ajv07 = new Ajv({ strict: false, allErrors: true })
addFormats(ajv2020)
addFormats(ajv07)
for (const ajv of [ajv2020, ajv07]) ajv.addFormat("byte", /^[A-Za-z0-9+/]*={0,2}$/)
const schemaModern = loadSchema("schema-2026-07-28.json")
const schema1125 = loadSchema("schema-2025-11-25.json")
const schema0618 = loadSchema("schema-2025-06-18.json")
ajv2020.addSchema(schemaModern, "modern")
ajv2020.addSchema(schema1125, "2025-11-25")
ajv07.addSchema(schema0618, "2025-06-18")

export type Era = "2026-07-28" | "2025-11-25" | "2025-06-18"

const compiled = new Map<string, (data: unknown) => boolean>()
const validator = (era: Era, def: string) => {
  const key = `${era}#${def}`
  let validate = compiled.get(key)
  if (validate === undefined) {
    const id = era === MODERN ? "modern" : era
    const ajv = era === "2025-06-18" ? ajv07 : ajv2020
    const section = era === "2025-06-18" ? "definitions" : "$defs"
    const fn = ajv.getSchema(`${id}#/${section}/${def}`)
    if (fn === undefined) throw new Error(`no ${def} in ${era}`)
    validate = (data) => {
      const ok = fn(data) as boolean
      if (!ok) throw new Error(`${def} (${era}) invalid: ${ajv.errorsText(fn.errors)}\n${JSON.stringify(data).slice(0, 2000)}`)
      return ok
    }
    compiled.set(key, validate)
  }
  return validate
}

/**
 * Validates a server message against its era's schema: a JSON-RPC message always, and the named
 * result definition when given. An error whose id is `null` (decision 5: echoed even when unreadable)
 * is validated without it, since the official schema only allows omitting it.
 */
export const validateMessage = (era: Era, message: any, resultDef?: string): void => {
  const normalized = message !== null && typeof message === "object" && "error" in message && message.id === null
    ? (({ id: _id, ...rest }) => rest)(message)
    : message
  if (era === "2025-06-18" && normalized.error !== undefined && normalized.id === undefined) {
    validator(era, "JSONRPCMessage")({ ...normalized, id: 0 })
  } else {
    validator(era, "JSONRPCMessage")(normalized)
  }
  if (resultDef !== undefined) validator(era, resultDef)(message.result)
}

/** Validates a named definition directly (notifications, results). */
export const validateDef = (era: Era, def: string, value: unknown): void => {
  validator(era, def)(value)
}

/** The upstream example of a definition. */
export const example = (def: string): any => {
  const dir = NodePath.join(referenceDir, "examples-2026-07-28", def)
  const file = NodeFs.readdirSync(dir)[0]!
  return JSON.parse(NodeFs.readFileSync(NodePath.join(dir, file), "utf8"))
}
