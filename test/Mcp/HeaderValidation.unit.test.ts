/**
 * The header rules as pure functions, with their exact messages: value decoding, content types, the
 * bounded field search, value matching, the version copy and the full `validate`. Each test names the
 * rule it guards.
 */
import { describe, expect, it } from "vitest"
import * as Either from "effect/Either"
import * as HeaderValidation from "../../src/Mcp/HeaderValidation.ts"

const b64 = (text: string) => `=?base64?${Buffer.from(text, "utf8").toString("base64")}?=`
const messageOf = (result: Either.Either<void, { readonly message: string }>) => {
  if (Either.isRight(result)) throw new Error("expected a mismatch")
  return result.left.message
}

const base = {
  "content-type": "application/json",
  "mcp-protocol-version": "2026-07-28",
  "mcp-method": "tools/call",
  "mcp-name": "echo"
}
const body = (params: Record<string, unknown> | undefined, method = "tools/call") => ({ method, protocolVersion: "2026-07-28", params })

describe("header values", () => {
  it("a plain value is itself; a complete =?base64?…?= wrapper is its UTF-8 payload (the prefix case-insensitive)", () => {
    expect(HeaderValidation.decodeValue("plain")).toEqual(Either.right("plain"))
    expect(HeaderValidation.decodeValue(b64("héllo"))).toEqual(Either.right("héllo"))
    expect(HeaderValidation.decodeValue(`=?BASE64?${Buffer.from("x").toString("base64")}?=`)).toEqual(Either.right("x"))
    expect(HeaderValidation.decodeValue("=?base64?YQ==?=junk")).toEqual(Either.right("=?base64?YQ==?=junk"))
    // Only a value that is wholly a wrapper is decoded: text before it makes it a literal.
    expect(HeaderValidation.decodeValue("x=?base64?YQ==?=")).toEqual(Either.right("x=?base64?YQ==?="))
  })

  it("a control character, a malformed payload or a payload that is not UTF-8 is refused, each named", () => {
    expect(HeaderValidation.decodeValue("a\u0001b")).toEqual(Either.left("control character in the value"))
    expect(HeaderValidation.decodeValue("=?base64?Y?=")).toEqual(Either.left("malformed base64 payload in the =?base64?…?= wrapper"))
    expect(HeaderValidation.decodeValue(`=?base64?${Buffer.from([0xff, 0xfe]).toString("base64")}?=`)).toEqual(Either.left("base64 payload is not UTF-8"))
  })

  it("content types: application/json or a +json type, parameters and case ignored", () => {
    for (const ok of ["application/json", "Application/JSON; charset=utf-8", " application/vnd.api+json ;x=y"]) {
      expect(HeaderValidation.isJsonContentType(ok)).toBe(true)
    }
    for (const no of [undefined, "", "text/plain", "+json", "application/jsonx", "text/json; x=application/json"]) {
      expect(HeaderValidation.isJsonContentType(no)).toBe(false)
    }
  })
})

describe("the bounded field search", () => {
  it("finds fields case-insensitively at any object depth, the shallowest first; never inside arrays or strings", () => {
    const { found, cut } = HeaderValidation.findFields({ a: { Region: "eu" }, region: "top", list: [{ deep: 1 }], text: "{\"deep\":2}" }, new Set(["region", "deep"]))
    expect(found.get("region")).toBe("top")
    expect(found.has("deep")).toBe(false)
    expect(cut).toBe(false)
    expect(HeaderValidation.findField({ x: { y: { z: 3 } } }, "z")).toEqual({ value: 3 })
    expect(HeaderValidation.findField({ x: 1 }, "z")).toBeUndefined()
  })

  it("stops once every field is found, without visiting the rest", () => {
    const rest: Record<string, unknown> = {}
    for (let i = 0; i < HeaderValidation.MAX_FIELD_VISITS + 10; i++) rest[`k${i}`] = i
    expect(HeaderValidation.findFields({ a: 1, ...rest }, new Set(["a"]))).toEqual({ found: new Map([["a", 1]]), cut: false })
  })

  it(`is cut at ${HeaderValidation.MAX_FIELD_DEPTH} levels`, () => {
    let deep: Record<string, unknown> = { target: "x" }
    for (let i = 0; i < HeaderValidation.MAX_FIELD_DEPTH; i++) deep = { n: deep }
    const result = HeaderValidation.findFields(deep, new Set(["target"]))
    expect(result.cut).toBe(true)
    expect(result.found.size).toBe(0)
    let shallow: Record<string, unknown> = { target: "x" }
    for (let i = 0; i < HeaderValidation.MAX_FIELD_DEPTH - 1; i++) shallow = { n: shallow }
    expect(HeaderValidation.findFields(shallow, new Set(["target"]))).toEqual({ found: new Map([["target", "x"]]), cut: false })
  })

  it(`is cut after ${HeaderValidation.MAX_FIELD_VISITS.toLocaleString("en-US")} members`, () => {
    const wide: Record<string, unknown> = {}
    for (let i = 0; i < HeaderValidation.MAX_FIELD_VISITS; i++) wide[`k${i}`] = i
    expect(HeaderValidation.findFields({ ...wide, target: 1 }, new Set(["target"])).cut).toBe(true)
    const justUnder: Record<string, unknown> = {}
    for (let i = 0; i < HeaderValidation.MAX_FIELD_VISITS - 1; i++) justUnder[`k${i}`] = i
    expect(HeaderValidation.findFields({ ...justUnder, target: 1 }, new Set(["target"]))).toEqual({ found: new Map([["target", 1]]), cut: false })
  })
})

describe("matching a header's text with a body value", () => {
  it("strings exactly; numbers by value (blank around them ignored, an empty text never); booleans as true/false; anything else never", () => {
    expect(HeaderValidation.matchesValue("a", "a")).toBe(true)
    expect(HeaderValidation.matchesValue(" a", "a")).toBe(false)
    expect(HeaderValidation.matchesValue(" 1.50 ", 1.5)).toBe(true)
    expect(HeaderValidation.matchesValue("", 0)).toBe(false)
    expect(HeaderValidation.matchesValue("  ", 0)).toBe(false)
    expect(HeaderValidation.matchesValue("Infinity", Number.POSITIVE_INFINITY)).toBe(false)
    expect(HeaderValidation.matchesValue("true", true)).toBe(true)
    expect(HeaderValidation.matchesValue("false", false)).toBe(true)
    expect(HeaderValidation.matchesValue("1", true)).toBe(false)
    expect(HeaderValidation.matchesValue("null", null)).toBe(false)
    expect(HeaderValidation.matchesValue("{}", {})).toBe(false)
  })
})

describe("the version copy, checked before support", () => {
  it("disagreeing MCP-Protocol-Version and _meta version is a mismatch; a missing header, or no _meta version, is left to validate", () => {
    expect(messageOf(HeaderValidation.checkVersionCopy({ "mcp-protocol-version": "2025-11-25" }, "2026-07-28"))).toBe(
      "Header mismatch: MCP-Protocol-Version header value '2025-11-25' does not match the body value '2026-07-28'"
    )
    expect(HeaderValidation.checkVersionCopy({}, "2026-07-28")).toEqual(Either.void)
    expect(HeaderValidation.checkVersionCopy({ "mcp-protocol-version": "x" }, undefined)).toEqual(Either.void)
    expect(HeaderValidation.checkVersionCopy({ "mcp-protocol-version": "x" }, "")).toEqual(Either.void)
    expect(HeaderValidation.checkVersionCopy({ "mcp-protocol-version": "2026-07-28" }, "2026-07-28")).toEqual(Either.void)
  })
})

describe("validate", () => {
  it("a request whose copies all agree passes", () => {
    expect(HeaderValidation.validate(base, body({ name: "echo", arguments: {} }))).toEqual(Either.void)
  })

  it("Content-Type must be JSON, and the message shows what was sent", () => {
    expect(messageOf(HeaderValidation.validate({ ...base, "content-type": "text/plain" }, body({ name: "echo" })))).toBe(
      "Header mismatch: Content-Type must be application/json or a +json type, got 'text/plain'"
    )
    const { "content-type": _, ...noType } = base
    expect(messageOf(HeaderValidation.validate(noType, body({ name: "echo" })))).toBe(
      "Header mismatch: Content-Type must be application/json or a +json type, got ''"
    )
  })

  it("each required copy is named when missing, malformed or different", () => {
    const { "mcp-method": _, ...noMethod } = base
    expect(messageOf(HeaderValidation.validate(noMethod, body({ name: "echo" })))).toBe("Header mismatch: Mcp-Method header is required")
    expect(messageOf(HeaderValidation.validate({ ...base, "mcp-method": "=?base64?%?=" }, body({ name: "echo" })))).toBe(
      "Header mismatch: Mcp-Method: malformed base64 payload in the =?base64?…?= wrapper"
    )
    expect(messageOf(HeaderValidation.validate({ ...base, "mcp-name": "other" }, body({ name: "echo" })))).toBe(
      "Header mismatch: Mcp-Name header value 'other' does not match the body value 'echo'"
    )
    expect(messageOf(HeaderValidation.validate({ ...base, "mcp-protocol-version": "2025-11-25" }, body({ name: "echo" })))).toBe(
      "Header mismatch: MCP-Protocol-Version header value '2025-11-25' does not match the body value '2026-07-28'"
    )
  })

  it("Mcp-Name copies params.name for tools/call and prompts/get, params.uri for resources/read, nothing for other methods", () => {
    expect(messageOf(HeaderValidation.validate({ ...base, "mcp-method": "prompts/get", "mcp-name": "x" }, body({ name: "p" }, "prompts/get")))).toBe(
      "Header mismatch: Mcp-Name header value 'x' does not match the body value 'p'"
    )
    expect(messageOf(HeaderValidation.validate({ ...base, "mcp-method": "resources/read", "mcp-name": "x" }, body({ uri: "weaviate://c" }, "resources/read")))).toBe(
      "Header mismatch: Mcp-Name header value 'x' does not match the body value 'weaviate://c'"
    )
    expect(HeaderValidation.validate({ ...base, "mcp-method": "tools/list", "mcp-name": "anything" }, body({}, "tools/list"))).toEqual(Either.void)
    // Without a name in the body, the params are invalid: that is the method's -32602, not a mismatch.
    expect(HeaderValidation.validate(base, body({}))).toEqual(Either.void)
    expect(HeaderValidation.validate(base, body(undefined))).toEqual(Either.void)
  })

  it("Mcp-Param-<field> compares with arguments (tools/call) or params (other methods), and names what is wrong", () => {
    const call = body({ name: "echo", arguments: { query: "q", name: "arg-name" } })
    expect(HeaderValidation.validate({ ...base, "mcp-param-query": "q" }, call)).toEqual(Either.void)
    expect(HeaderValidation.validate({ ...base, "mcp-param-name": "arg-name" }, call)).toEqual(Either.void)
    expect(messageOf(HeaderValidation.validate({ ...base, "mcp-param-name": "echo" }, call))).toBe(
      "Header mismatch: Mcp-Param-name header value 'echo' does not match the body value"
    )
    expect(messageOf(HeaderValidation.validate({ ...base, "mcp-param-missing": "x" }, call))).toBe("Header mismatch: Mcp-Param-missing names no value in the body")
    expect(messageOf(HeaderValidation.validate({ ...base, "mcp-param-": "x" }, call))).toBe("Header mismatch: Mcp-Param- names no value in the body")
    expect(messageOf(HeaderValidation.validate({ ...base, "mcp-param-query": "a\u0002" }, call))).toBe("Header mismatch: Mcp-Param-query: control character in the value")
    expect(messageOf(HeaderValidation.validate({ ...base, "mcp-param-query": "q" }, body({ name: "echo", arguments: ["q"] })))).toBe(
      "Header mismatch: Mcp-Param-query names no value in the body"
    )
    const prompts = { ...base, "mcp-method": "prompts/get", "mcp-name": "p", "mcp-param-who": "me" }
    expect(HeaderValidation.validate(prompts, body({ name: "p", who: "me" }, "prompts/get"))).toEqual(Either.void)
  })

  it("a field beyond the search bound is named as such", () => {
    let deep: Record<string, unknown> = { target: "x" }
    for (let i = 0; i < HeaderValidation.MAX_FIELD_DEPTH; i++) deep = { n: deep }
    expect(messageOf(HeaderValidation.validate({ ...base, "mcp-param-target": "x" }, body({ name: "echo", arguments: deep })))).toBe(
      `Header mismatch: Mcp-Param-target names no value within the first ${HeaderValidation.MAX_FIELD_DEPTH} levels and 100,000 members of the body`
    )
  })

  it(`at most ${HeaderValidation.MAX_PARAM_HEADERS} Mcp-Param headers`, () => {
    const headers: Record<string, string> = { ...base }
    const args: Record<string, unknown> = {}
    for (let i = 0; i < HeaderValidation.MAX_PARAM_HEADERS; i++) (headers[`mcp-param-f${i}`] = "v", args[`f${i}`] = "v")
    expect(HeaderValidation.validate(headers, body({ name: "echo", arguments: args }))).toEqual(Either.void)
    headers["mcp-param-extra"] = "v"
    expect(messageOf(HeaderValidation.validate(headers, body({ name: "echo", arguments: { ...args, extra: "v" } })))).toBe(
      `Header mismatch: ${HeaderValidation.MAX_PARAM_HEADERS + 1} Mcp-Param-* headers; at most ${HeaderValidation.MAX_PARAM_HEADERS} are accepted`
    )
  })
})
