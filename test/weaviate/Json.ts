/** JSON as Weaviate (Go) writes it: struct fields and map keys in sorted order, no HTML escaping needed. */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [k: string]: Json | undefined }

export const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k]
      if (v !== undefined) out[k] = sortKeys(v)
    }
    return out
  }
  return value
}

export const goJson = (value: unknown): string => JSON.stringify(sortKeys(value))

/** Go's `%T` of a value decoded by encoding/json with UseNumber. */
export const goTypeName = (v: unknown): string =>
  typeof v === "string"
    ? "string"
    : typeof v === "number"
      ? "json.Number"
      : typeof v === "boolean"
        ? "bool"
        : Array.isArray(v)
          ? "[]interface {}"
          : v === null
            ? "<nil>"
            : "map[string]interface {}"

/** Go's `%v` of a decoded JSON value (close enough for error messages). */
export const goValue = (v: unknown): string => {
  if (Array.isArray(v)) return `[${v.map(goValue).join(" ")}]`
  if (v === null || v === undefined) return "<nil>"
  if (typeof v === "object") {
    return `map[${Object.keys(v)
      .sort()
      .map((k) => `${k}:${goValue((v as Record<string, unknown>)[k])}`)
      .join(" ")}]`
  }
  return String(v)
}

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v)
