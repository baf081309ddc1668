/**
 * The modern era's required headers: each row of the header table, the Mcp-Param rules and the
 * base64 wrapper, as pure functions and over real HTTP.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HeaderValidation from "../../src/Mcp/HeaderValidation.ts"
import { Harness, layer as harnessLayer, MODERN, modern, modernHeaders, postModern, send, validateMessage } from "./support/EndpointHarness.ts"

const b64 = (text: string) => `=?base64?${Buffer.from(text, "utf8").toString("base64")}?=`

const body = (method: string, params: Record<string, unknown> = {}) => ({ method, protocolVersion: MODERN, params })

const check = (headers: Record<string, string>, method = "tools/call", params: Record<string, unknown> = { name: "echo", arguments: {} }) =>
  HeaderValidation.validate({ ...modernHeaders(method, typeof params.name === "string" ? params.name : typeof params.uri === "string" ? params.uri : undefined), ...headers }, body(method, params))

describe("HeaderValidation", () => {
  it("decodes the =?base64?…?= wrapper (UTF-8)", () => {
    assert.deepStrictEqual(HeaderValidation.decodeValue(b64("grüße")), Either.right("grüße"))
    assert.deepStrictEqual(HeaderValidation.decodeValue(b64(" padded ")), Either.right(" padded "))
    assert.deepStrictEqual(HeaderValidation.decodeValue("=?BASE64?YQ==?="), Either.right("a"))
    assert.deepStrictEqual(HeaderValidation.decodeValue("plain value"), Either.right("plain value"))
  })

  it("a complete wrapper with a bad payload is malformed", () => {
    for (const raw of ["=?base64?Y!Q=?=", "=?base64?YQ?=", "=?base64?/w==?=", "=?base64?YQ==?=x?="]) {
      assert.isTrue(Either.isLeft(HeaderValidation.decodeValue(raw)), raw)
    }
  })

  it("a value that only starts like a wrapper is a literal value, compared as is (the wrapper regex is anchored)", () => {
    for (const raw of ["=?base64?YQ==", "=?base64?YQ==?=junk", "=?utf8?YQ==?=", "=?base64?"]) {
      assert.deepStrictEqual(HeaderValidation.decodeValue(raw), Either.right(raw), raw)
    }
  })

  it("a control character in a header is refused", () => {
    for (const raw of ["a\tb", "a\u0001b", "a\u007fb"]) assert.isTrue(Either.isLeft(HeaderValidation.decodeValue(raw)), JSON.stringify(raw))
  })

  it("Content-Type must be application/json or a +json type", () => {
    for (const type of ["application/json", "application/json; charset=utf-8", "application/vnd.api+json", "APPLICATION/JSON"]) {
      assert.isTrue(HeaderValidation.isJsonContentType(type), type)
    }
    for (const type of [undefined, "text/plain", "application/jsonx", "+json", "application/x-www-form-urlencoded"]) {
      assert.isFalse(HeaderValidation.isJsonContentType(type), String(type))
    }
  })

  it("Mcp-Param: strings as text, numbers numerically, booleans as true/false, arrays and objects never", () => {
    assert.isTrue(HeaderValidation.matchesValue("abc", "abc"))
    assert.isFalse(HeaderValidation.matchesValue("ABC", "abc"))
    assert.isTrue(HeaderValidation.matchesValue("10", 10))
    assert.isTrue(HeaderValidation.matchesValue("1e1", 10))
    assert.isTrue(HeaderValidation.matchesValue("10.0", 10))
    assert.isFalse(HeaderValidation.matchesValue("11", 10))
    assert.isFalse(HeaderValidation.matchesValue("", 0))
    assert.isTrue(HeaderValidation.matchesValue("true", true))
    assert.isTrue(HeaderValidation.matchesValue("false", false))
    assert.isFalse(HeaderValidation.matchesValue("True", true))
    assert.isFalse(HeaderValidation.matchesValue("1", true))
    assert.isFalse(HeaderValidation.matchesValue("[1]", [1]))
    assert.isFalse(HeaderValidation.matchesValue("{}", {}))
    assert.isFalse(HeaderValidation.matchesValue("null", null))
  })

  it("Mcp-Param: the field is matched case-insensitively, descending into nested objects", () => {
    const params = { name: "echo", arguments: { Query: "q", filter: { Region: "eu", deeper: { Level: 3 } } } }
    assert.isTrue(Either.isRight(check({ "mcp-param-query": "q" }, "tools/call", params)))
    assert.isTrue(Either.isRight(check({ "mcp-param-region": "eu" }, "tools/call", params)))
    assert.isTrue(Either.isRight(check({ "mcp-param-level": "3" }, "tools/call", params)))
    assert.isTrue(Either.isLeft(check({ "mcp-param-region": "us" }, "tools/call", params)))
    assert.isTrue(Either.isLeft(check({ "mcp-param-missing": "x" }, "tools/call", params)))
    assert.isTrue(Either.isLeft(check({ "mcp-param-filter": "x" }, "tools/call", params)))
    // Other methods match against params.
    assert.isTrue(Either.isRight(check({ "mcp-param-uri": "test://items/1" }, "resources/read", { uri: "test://items/1" })))
  })

  it("for tools/call, Mcp-Param-name is compared with arguments.name, not params.name", () => {
    const params = { name: "echo", arguments: { name: "from-arguments" } }
    assert.isTrue(Either.isRight(check({ "mcp-param-name": "from-arguments" }, "tools/call", params)))
    assert.isTrue(Either.isLeft(check({ "mcp-param-name": "echo" }, "tools/call", params)))
    assert.isTrue(Either.isLeft(check({ "mcp-param-name": "echo" }, "tools/call", { name: "echo", arguments: {} })))
  })

  it("the field search descends into nested objects only, never into arrays or strings", () => {
    const params = { name: "echo", arguments: { list: [{ inArray: "x" }], text: "{\"inString\":\"x\"}", nested: { inObject: "x" } } }
    assert.isTrue(Either.isRight(check({ "mcp-param-inobject": "x" }, "tools/call", params)))
    assert.isTrue(Either.isLeft(check({ "mcp-param-inarray": "x" }, "tools/call", params)))
    assert.isTrue(Either.isLeft(check({ "mcp-param-instring": "x" }, "tools/call", params)))
  })

  it("the base64 wrapper regex is anchored: =?base64?YQ==?=junk is a literal value, not a wrapper", () => {
    const params = (query: string) => ({ name: "echo", arguments: { query } })
    assert.isTrue(Either.isRight(check({ "mcp-param-query": "=?base64?YQ==?=junk" }, "tools/call", params("=?base64?YQ==?=junk"))))
    assert.isTrue(Either.isLeft(check({ "mcp-param-query": "=?base64?YQ==?=junk" }, "tools/call", params("a"))))
    assert.isTrue(Either.isRight(check({ "mcp-param-query": "=?base64?YQ==" }, "tools/call", params("=?base64?YQ=="))))
    assert.isTrue(Either.isRight(check({ "mcp-param-query": "=?base64?YQ==?=" }, "tools/call", params("a"))))
  })

  it("at most 32 Mcp-Param-* headers are checked; more is -32020", () => {
    const headers = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`mcp-param-f${i}`, "x"]))
    const args = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`f${i}`, "x"]))
    assert.isTrue(Either.isRight(check(headers(32), "tools/call", { name: "echo", arguments: args })))
    const many = check(headers(33), "tools/call", { name: "echo", arguments: args })
    assert.isTrue(Either.isLeft(many) && many.left.message.includes("at most 32"))
  })

  it("Mcp-Name is checked for tools/call and prompts/get (name) and resources/read (uri) only", () => {
    assert.isTrue(Either.isLeft(HeaderValidation.validate(modernHeaders("prompts/get"), body("prompts/get", { name: "greet" }))))
    assert.isTrue(Either.isLeft(HeaderValidation.validate(modernHeaders("resources/read", "test://x"), body("resources/read", { uri: "test://y" }))))
    assert.isTrue(Either.isRight(HeaderValidation.validate(modernHeaders("tools/list"), body("tools/list"))))
    assert.isTrue(Either.isRight(HeaderValidation.validate(modernHeaders("resources/read", b64("test://ü")), body("resources/read", { uri: "test://ü" }))))
  })

  layer(harnessLayer(), { excludeTestServices: true })("over HTTP: -32020 (400)", (it) => {
    const expectMismatch = (reply: { status: number; json: any }) => {
      assert.strictEqual(reply.status, 400, JSON.stringify(reply.json))
      assert.strictEqual(reply.json.error.code, -32020)
      assert.strictEqual(reply.json.id, 1)
      validateMessage(MODERN, reply.json)
    }

    it.effect("Content-Type: always application/json or +json", () =>
      Effect.gen(function*() {
        expectMismatch(yield* postModern("tools/list", {}, { headers: { "content-type": "text/plain" } }))
        const ok = yield* postModern("tools/list", {}, { headers: { "content-type": "application/vnd.mcp+json; charset=utf-8" } })
        assert.strictEqual(ok.status, 200)
      }))

    it.effect("MCP-Protocol-Version: always, equal to the _meta version", () =>
      Effect.gen(function*() {
        const { endpoint, token } = yield* Harness
        const headers = { ...modernHeaders("tools/list"), authorization: `Bearer ${token}` }
        delete (headers as Record<string, string>)["mcp-protocol-version"]
        expectMismatch(yield* send(endpoint, { body: modern("tools/list"), headers }))
        expectMismatch(yield* postModern("tools/list", {}, { headers: { "mcp-protocol-version": "2025-11-25" } }))
      }))

    it.effect("a version header that disagrees with _meta is -32020, checked before -32022 (unsupported version)", () =>
      Effect.gen(function*() {
        const { endpoint, token } = yield* Harness
        const unsupported = { "io.modelcontextprotocol/protocolVersion": "2099-01-01" }
        // Header and _meta disagree, and _meta names an unsupported version: the copy is wrong first.
        expectMismatch(yield* send(endpoint, { body: modern("tools/list", {}, 1, unsupported), headers: { ...modernHeaders("tools/list"), authorization: `Bearer ${token}` } }))
        // Both agree on an unsupported version: -32022.
        const agreed = yield* send(endpoint, {
          body: modern("tools/list", {}, 1, unsupported),
          headers: { ...modernHeaders("tools/list"), "mcp-protocol-version": "2099-01-01", authorization: `Bearer ${token}` }
        })
        assert.strictEqual(agreed.json.error.code, -32022)
      }))

    it.effect("a tools/call without params.name is -32602", () =>
      Effect.gen(function*() {
        const reply = yield* postModern("tools/call", { arguments: {} })
        assert.strictEqual(reply.json.error.code, -32602, JSON.stringify(reply.json))
      }))

    it.effect("Mcp-Method: always, equal to the method", () =>
      Effect.gen(function*() {
        const { endpoint, token } = yield* Harness
        const headers = { ...modernHeaders("tools/list"), authorization: `Bearer ${token}` }
        delete (headers as Record<string, string>)["mcp-method"]
        expectMismatch(yield* send(endpoint, { body: modern("tools/list"), headers }))
        expectMismatch(yield* postModern("tools/list", {}, { headers: { "mcp-method": "prompts/list" } }))
      }))

    it.effect("Mcp-Name: tools/call and prompts/get equal to params.name; resources/read equal to params.uri", () =>
      Effect.gen(function*() {
        expectMismatch(yield* postModern("tools/call", { name: "echo", arguments: {} }, { name: "other" }))
        expectMismatch(yield* postModern("prompts/get", { name: "greet" }, { name: "other" }))
        expectMismatch(yield* postModern("resources/read", { uri: "test://items/1" }, { name: "test://items/2" }))
        const { endpoint, token } = yield* Harness
        expectMismatch(yield* send(endpoint, { body: modern("tools/call", { name: "echo", arguments: {} }), headers: { ...modernHeaders("tools/call"), authorization: `Bearer ${token}` } }))
      }))

    it.effect("Mcp-Param-<field>: validated when sent, accepted when missing", () =>
      Effect.gen(function*() {
        const args = { query: "weaviate", limit: 10, flag: true, filter: { Region: "eu" } }
        const ok = yield* postModern("tools/call", { name: "echo", arguments: args }, {
          headers: { "mcp-param-query": "weaviate", "Mcp-Param-Limit": "10", "mcp-param-flag": "true", "mcp-param-region": "eu" }
        })
        assert.strictEqual(ok.status, 200, ok.text)
        assert.strictEqual((yield* postModern("tools/call", { name: "echo", arguments: args })).status, 200)
        expectMismatch(yield* postModern("tools/call", { name: "echo", arguments: args }, { headers: { "mcp-param-query": "other" } }))
        expectMismatch(yield* postModern("tools/call", { name: "echo", arguments: args }, { headers: { "mcp-param-limit": "11" } }))
        expectMismatch(yield* postModern("tools/call", { name: "echo", arguments: args }, { headers: { "mcp-param-flag": "false" } }))
        expectMismatch(yield* postModern("tools/call", { name: "echo", arguments: args }, { headers: { "mcp-param-filter": "eu" } }))
      }))

    it.effect("the =?base64?…?= wrapper is decoded before comparing; a malformed one is -32020", () =>
      Effect.gen(function*() {
        const args = { query: " grüße " }
        const ok = yield* postModern("tools/call", { name: "echo", arguments: args }, { headers: { "mcp-param-query": b64(" grüße ") } })
        assert.strictEqual(ok.status, 200, ok.text)
        expectMismatch(yield* postModern("tools/call", { name: "echo", arguments: args }, { headers: { "mcp-param-query": "=?base64?not base64?=" } }))
        expectMismatch(yield* postModern("tools/call", { name: "echo", arguments: args }, { headers: { "mcp-param-query": "=?base64?Z3L" } }))
      }))

    it.effect("a control character in a header is -32020", () =>
      Effect.gen(function*() {
        expectMismatch(yield* postModern("tools/call", { name: "echo", arguments: { query: "a\tb" } }, { headers: { "mcp-param-query": "a\tb" } }))
      }))
  })
})
