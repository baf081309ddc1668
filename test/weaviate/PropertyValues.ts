/**
 * Validation and normalisation of object property values against a class, with auto-schema
 * (usecases/objects/validation/properties_validation.go, usecases/objects/auto_schema.go).
 * Errors carry Weaviate's texts, e.g. `invalid text property 'title' on class 'Article': not a string, but json.Number`.
 */
import { goTypeName, goValue, isRecord } from "./Json.ts"
import { isRfc3339 } from "./Rfc3339.ts"
import {
  type ClassDef,
  type PropertyDef,
  baseType,
  findProperty,
  inferProperty,
  isReferenceType,
  lowerFirst,
  parseBeacon,
  upperFirst
} from "./Schema.ts"

export class PropertyValueError extends Error {}

const UUID = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/
export const isUuid = (s: unknown): s is string => typeof s === "string" && UUID.test(s)

const typeWord: Record<string, string> = {
  text: "text", string: "text", int: "integer", number: "number", boolean: "boolean", date: "date", uuid: "uuid",
  geoCoordinates: "geoCoordinates", phoneNumber: "phoneNumber", blob: "blob", object: "object"
}

const scalar = (t: string, v: unknown): unknown => {
  switch (t) {
    case "text":
    case "string":
    case "blob":
      if (typeof v !== "string") throw new PropertyValueError(`not a string, but ${goTypeName(v)}`)
      return v
    case "int":
      if (typeof v !== "number" || !Number.isInteger(v)) throw new PropertyValueError(`requires an integer, the given value is '${goValue(v)}'`)
      return v
    case "number":
      if (typeof v !== "number") throw new PropertyValueError(`requires a float, the given value is '${goValue(v)}'`)
      return v
    case "boolean":
      if (typeof v !== "boolean") throw new PropertyValueError(`not a bool, but ${goTypeName(v)}`)
      return v
    case "date":
      if (typeof v !== "string" || !isRfc3339(v)) {
        throw new PropertyValueError(`requires a string with a RFC3339 formatted date, but the given value is '${goValue(v)}'`)
      }
      return v
    case "uuid":
      if (!isUuid(v)) throw new PropertyValueError(`requires a string of UUID format, but the given value is '${goValue(v)}'`)
      return v.toLowerCase()
    case "geoCoordinates":
      if (!isRecord(v) || typeof v["latitude"] !== "number" || typeof v["longitude"] !== "number") {
        throw new PropertyValueError(`requires latitude and longitude, but the given value is '${goValue(v)}'`)
      }
      return { latitude: v["latitude"], longitude: v["longitude"] }
    case "phoneNumber":
      if (!isRecord(v) || typeof v["input"] !== "string") throw new PropertyValueError(`requires a map with an 'input' field, but the given value is '${goValue(v)}'`)
      return v
    default:
      return v
  }
}

export interface ValidationContext {
  readonly def: ClassDef
  /** Auto-schema: add unknown properties to the class (true in Weaviate by default). */
  readonly autoSchema: boolean
  readonly now: Date
  /** Class of an object by id, to upgrade class-less beacons. */
  readonly classOfId: (id: string) => string | undefined
}

const normalizeNested = (props: ReadonlyArray<PropertyDef>, value: Record<string, unknown>, className: string): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) {
    if (v === null || v === undefined) continue
    const p = props.find((n) => n.name === k)
    out[k] = p === undefined ? v : normalizeValue(p, v, className)
  }
  return out
}

const normalizeValue = (prop: PropertyDef, value: unknown, className: string): unknown => {
  const t = prop.dataType[0]!
  const word = `${typeWord[baseType(t)] ?? baseType(t)}${t.endsWith("[]") ? " array" : ""}`
  try {
    if (t === "object") {
      if (!isRecord(value)) throw new PropertyValueError(`not an object, but ${goTypeName(value)}`)
      return normalizeNested(prop.nestedProperties ?? [], value, className)
    }
    if (t === "object[]") {
      if (!Array.isArray(value)) throw new PropertyValueError(`not an object array, but ${goTypeName(value)}`)
      return value.map((item) => {
        if (!isRecord(item)) throw new PropertyValueError(`not an object, but ${goTypeName(item)}`)
        return normalizeNested(prop.nestedProperties ?? [], item, className)
      })
    }
    if (t.endsWith("[]")) {
      if (!Array.isArray(value)) throw new PropertyValueError(`not a ${baseType(t)} array, but ${goTypeName(value)}`)
      return value.map((item) => scalar(baseType(t), item))
    }
    return scalar(t, value)
  } catch (e) {
    if (e instanceof PropertyValueError) {
      throw new PropertyValueError(`invalid ${word} property '${prop.name}' on class '${className}': ${e.message}`)
    }
    throw e
  }
}

const normalizeReference = (prop: PropertyDef, value: unknown, ctx: ValidationContext): unknown => {
  if (!Array.isArray(value)) {
    throw new PropertyValueError(
      `invalid cref: reference property '${prop.name}' on class '${ctx.def.class}': expected a list of references, but got ${goTypeName(value)}`
    )
  }
  return value.map((item, i) => {
    const ref = isRecord(item) ? parseBeacon(item["beacon"]) : undefined
    if (ref === undefined) {
      throw new PropertyValueError(
        `invalid cref: reference property '${prop.name}' on class '${ctx.def.class}': element ${i}: invalid beacon '${goValue(isRecord(item) ? item["beacon"] : item)}'`
      )
    }
    const cls = ref.className ?? ctx.classOfId(ref.id) ?? (prop.dataType.length === 1 ? prop.dataType[0] : undefined)
    return { beacon: cls === undefined ? `weaviate://localhost/${ref.id}` : `weaviate://localhost/${upperFirst(cls)}/${ref.id}` }
  })
}

/** Normalised copy of `properties`; adds inferred properties to `ctx.def` when auto-schema is on. */
export const validateProperties = (raw: unknown, ctx: ValidationContext): Record<string, unknown> => {
  if (raw === undefined || raw === null) return {}
  if (!isRecord(raw)) throw new PropertyValueError(`properties must be a map, but got ${goTypeName(raw)}`)
  const out: Record<string, unknown> = {}
  for (const [rawName, value] of Object.entries(raw)) {
    if (value === null || value === undefined) continue
    const name = lowerFirst(rawName)
    let prop = findProperty(ctx.def, name)
    if (prop === undefined) {
      if (!ctx.autoSchema) {
        throw new PropertyValueError(
          `no such prop with name '${name}' found in class '${ctx.def.class}' in the schema. Check your schema files for which properties in this class are available`
        )
      }
      const inferred = inferProperty(name, value, ctx.now)
      if (inferred === undefined) {
        out[name] = value
        continue
      }
      ctx.def.properties = [...(ctx.def.properties ?? []), inferred]
      prop = inferred
    }
    out[prop.name] = isReferenceType(prop.dataType) ? normalizeReference(prop, value, ctx) : normalizeValue(prop, value, ctx.def.class)
  }
  return out
}
