/**
 * `ObjectsPage.parse`: a page of `GET /v1/objects` read with its vectors kept as Weaviate's text. The
 * rule: it answers what `JSON.parse(text).objects` answers (with `JsonText` in place of the lists of
 * numbers under `vector` and `vectors`), for any JSON at all, and `undefined` for text that is not
 * JSON. Checked against `JSON.parse` on generated pages, hostile strings included.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as RowFormat from "../../src/Driver/RowFormat.ts"
import * as Grid from "../../src/Driver/Grid.ts"
import { JsonText, NUMBER_LIST, parse } from "../../src/Driver/ObjectsPage.ts"

/** The value with every JsonText read back (what JSON.parse would have given). */
const plain = (value: unknown): unknown => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)))

/** Where JsonText appears: the top-level `vector` and each of `vectors`. */
const textPaths = (objects: unknown): Array<string> => {
  const out: Array<string> = []
  if (!Array.isArray(objects)) return out
  objects.forEach((o: Record<string, unknown>, i) => {
    if (o.vector instanceof JsonText) out.push(`${i}.vector`)
    if (typeof o.vectors === "object" && o.vectors !== null) {
      for (const [k, v] of Object.entries(o.vectors)) if (v instanceof JsonText) out.push(`${i}.vectors.${k}`)
    }
  })
  return out
}

/** A float32 as Go prints it, roughly: shortest digits, any sign and exponent. */
const float = fc.oneof(
  fc.float({ noNaN: true, noDefaultInfinity: true }).map((f) => (Object.is(f, -0) ? 0 : f)),
  fc.constantFrom(1e-7, -2.5e-12, 1e21, 123456789, 0.000001, 1 / 1024)
)
const vector = fc.array(float, { maxLength: 12 })
/** Strings that a naive scanner would trip on. */
const hostile = fc.oneof(
  fc.string(),
  fc.constantFrom("\"vector\":[1,2]", "\\", "\\\"", "]", "}", "{\"id\":\"x\"}", "\u2028", "\"objects\":[", "a\\\\\"b")
)
const properties = fc.dictionary(
  fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom("vector", "vectors", "id", "__proto__")),
  fc.oneof(hostile, float, fc.boolean(), fc.constant(null), vector, fc.dictionary(fc.constantFrom("vector", "x"), fc.oneof(vector, hostile)))
)
const object = fc.record({
  class: fc.constant("Bulk"),
  id: fc.uuid(),
  properties,
  vector: fc.oneof(vector, fc.constant(null), fc.constant([])),
  vectors: fc.option(fc.dictionary(fc.string({ maxLength: 6 }), fc.oneof(vector, fc.array(vector, { maxLength: 3 }))), { nil: undefined })
}, { requiredKeys: ["id"] })
const page = fc.record({ deprecations: fc.constant(null), objects: fc.array(object, { maxLength: 5 }), totalResults: fc.nat() })

describe("ObjectsPage.parse answers what JSON.parse answers", () => {
  it("on generated pages (compact, indented, with hostile strings): the same objects, number lists as JsonText", () => {
    fc.assert(
      fc.property(page, fc.constantFrom(undefined, 1, "\t"), (p, indent) => {
        const text = JSON.stringify(p, null, indent)
        const expected = (JSON.parse(text) as { objects: unknown }).objects
        const got = parse(text)
        expect(got).toBeDefined()
        expect(plain(got!.objects)).toEqual(plain(expected))
        // Without vectorText it is JSON.parse's answer itself: numbers, no JsonText.
        const parsed = parse(text, { vectorText: false })!.objects
        expect(parsed).toEqual(expected)
        expect(textPaths(parsed)).toEqual([])
        // Compact pages (as Weaviate sends them) keep every list of numbers as text.
        if (indent === undefined) {
          const lists = (expected as Array<Record<string, unknown>>).flatMap((o, i) => [
            ...(Array.isArray(o.vector) && o.vector.every((n) => typeof n === "number") ? [`${i}.vector`] : []),
            ...Object.entries((o.vectors ?? {}) as Record<string, unknown>)
              .filter(([, v]) => Array.isArray(v) && v.every((n) => typeof n === "number"))
              .map(([k]) => `${i}.vectors.${k}`)
          ])
          expect(textPaths(got!.objects).sort()).toEqual(lists.sort())
        }
      }),
      { numRuns: 400 }
    )
  })

  it("any JSON at all gives JSON.parse's objects; text that is not JSON gives undefined", () => {
    fc.assert(
      fc.property(fc.oneof(fc.jsonValue(), fc.jsonValue().map((v) => ({ objects: v })), fc.array(fc.jsonValue()).map((a) => ({ objects: a }))), (value) => {
        const text = JSON.stringify(value)
        const expected = typeof value === "object" && value !== null ? (value as { objects?: unknown }).objects : undefined
        expect(plain(parse(text)?.objects)).toEqual(plain(expected))
      }),
      { numRuns: 300 }
    )
    fc.assert(
      fc.property(page, fc.nat(), (p, cut) => {
        const text = JSON.stringify(p)
        const truncated = text.slice(0, cut % text.length)
        expect(parse(truncated)).toBeUndefined()
      }),
      { numRuns: 300 }
    )
    for (const bad of ["", "{", "{\"objects\":[{\"id\":\"a\",\"vector\":[1,2,]}]}", "{\"objects\":[{\"vector\":[1.]}]}", "{\"objects\":[]} x", "{\"objects\":[{\"vector\":[01]}]}"]) {
      expect(parse(bad), bad).toBeUndefined()
    }
  })

  it("a vector is text only when it is a plain list of JSON numbers", () => {
    expect(NUMBER_LIST.test("[1,-0.5,2.5e-7,1E+21,0]")).toBe(true)
    expect(NUMBER_LIST.test("[]")).toBe(true)
    for (const no of ["[1, 2]", "[01]", "[1.]", "[.5]", "[+1]", "[1,]", "[,1]", "[NaN]", "[[1]]", "[\"1\"]", "[1e]"]) {
      expect(NUMBER_LIST.test(no), no).toBe(false)
    }
    // A multi-vector (a list of lists) is parsed.
    const multi = parse("{\"objects\":[{\"id\":\"a\",\"vectors\":{\"m\":[[1,2],[3]]}}]}")!.objects as Array<{ vectors: { m: unknown } }>
    expect(multi[0]!.vectors.m).toEqual([[1, 2], [3]])
  })

  it("\"__proto__\" is not made the prototype of an object", () => {
    const objects = parse("{\"objects\":[{\"id\":\"a\",\"__proto__\":{\"polluted\":1},\"properties\":{\"__proto__\":{\"p\":2}}}]}")!.objects as Array<Record<string, unknown>>
    expect(Object.getPrototypeOf(objects[0])).toBe(Object.prototype)
    expect((objects[0] as { polluted?: unknown }).polluted).toBeUndefined()
    // Inside properties JSON.parse keeps it as an own key, as everywhere else.
    expect(Object.getOwnPropertyNames(objects[0]!.properties)).toEqual(["__proto__"])
  })
})

describe("the export's encoders copy a JsonText vector and write what JSON.stringify of the parsed row writes", () => {
  it("JSONL, JSON and CSV lines are the same text with the vectors kept as text or parsed", () => {
    const columns = ["uuid", "title", "n", "vector"]
    fc.assert(
      fc.property(fc.uuid(), hostile, fc.oneof(float, fc.constant(null)), vector, (uuid, title, n, v) => {
        const text = JSON.stringify(v)
        const parsed = { uuid, title, n, vector: JSON.parse(text) as unknown }
        const kept = { uuid, title, n, vector: new JsonText(text) }
        for (const format of ["jsonl", "json", "csv"] as const) {
          const encoder = RowFormat.encoder(format, columns)
          expect(encoder.row(kept, true)).toBe(encoder.row(parsed, true))
        }
        expect(RowFormat.encoder("jsonl", columns).row(parsed, true)).toBe(`${JSON.stringify(parsed)}\n`)
        expect(Grid.renderCell(kept.vector)).toBe(text)
      })
    )
  })
})
