/**
 * The REST console's parser and classifier as pure functions: one statement is parsed once into the
 * canonical request that is classified, shown and sent. Each test names the rule it guards (see the
 * hostile-callers tests in test/Reliability/RestConsoleBypass.test.ts for the same rules over HTTP).
 */
import { describe, expect, it } from "vitest"
import * as Either from "effect/Either"
import * as RestConsole from "../../src/Driver/RestConsole.ts"

const parsed = (text: string) => {
  const result = RestConsole.parse(text)
  if (Either.isLeft(result)) throw new Error(`refused: ${result.left.reason}`)
  return result.right
}
const reason = (text: string) => {
  const result = RestConsole.parse(text)
  if (Either.isRight(result)) throw new Error(`accepted: ${JSON.stringify(result.right)}`)
  return result.left.reason
}
const segments = (path: string) => RestConsole.canonicalSegments(path)

describe("REST console: canonical segments", () => {
  it("empty and '.' segments are dropped; '..' removes the segment before it", () => {
    expect(segments("/v1//./schema/./X")).toEqual(Either.right(["schema", "X"]))
    expect(segments("/v1/x/../schema/X")).toEqual(Either.right(["schema", "X"]))
  })

  it("a '..' above the root is refused, naming why", () => {
    expect(segments("/..")).toEqual(Either.left("the path climbs above the root with '..'"))
    expect(segments("/v1/../../schema")).toEqual(Either.left("the path climbs above the root with '..'"))
  })

  it("an invalid percent escape is refused, naming the segment", () => {
    expect(segments("/v1/%zz")).toEqual(Either.left('the path segment "%zz" has an invalid percent escape'))
  })

  it.each([["%2e"], ["%2E%2e"], ["a%2fb"], ["a%5cb"], ["a%0ab"], ["%7f"]])("a segment that decodes to a dot segment, a separator or a control character (%s) is ambiguous", (raw) => {
    expect(segments(`/v1/schema/${raw}`)).toEqual(
      Either.left(`the path segment ${JSON.stringify(raw)} is ambiguous (it encodes a separator, a dot segment or a control character)`)
    )
  })

  it("a leading v1 is removed once (added back by canonicalPath); a second one is a segment", () => {
    expect(segments("/v1/v1/schema")).toEqual(Either.right(["v1", "schema"]))
    expect(RestConsole.canonicalPath([])).toBe("/v1")
    expect(RestConsole.canonicalPath(["schema", "a b"])).toBe("/v1/schema/a%20b")
  })
})

describe("REST console: parse", () => {
  it("a line is <METHOD> <path> [body]; leading blanks are allowed, the method is case-insensitive", () => {
    expect(parsed("  get /schema")).toEqual({ method: "GET", path: "/v1/schema" })
    expect(parsed("POST\t/v1/objects {\"class\":\"A\"}")).toEqual({ method: "POST", path: "/v1/objects", body: "{\"class\":\"A\"}" })
    expect(parsed("POST /v1/objects\n{\"class\":\"A\"}\n")).toEqual({ method: "POST", path: "/v1/objects", body: "{\"class\":\"A\"}" })
  })

  it("anything else is refused with the expected shape", () => {
    for (const text of ["", "GET", "/v1/schema", "GET\n/v1/schema", "1GET /v1"]) {
      expect(reason(text)).toBe("expected <METHOD> <path> [body], e.g. GET /v1/schema")
    }
  })

  it("only GET, HEAD, POST, PUT, PATCH and DELETE are methods; another is refused by name", () => {
    for (const method of ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]) expect(parsed(`${method} /v1/nodes`).method).toBe(method)
    expect(reason("TRACE /v1/nodes")).toBe("unknown method TRACE; use GET, HEAD, POST, PUT, PATCH or DELETE")
    expect(reason("OPTIONS /v1/nodes")).toBe("unknown method OPTIONS; use GET, HEAD, POST, PUT, PATCH or DELETE")
  })

  it("a URL, a scheme-relative path or a backslash is refused: a path on this connection only", () => {
    for (const path of ["http://evil/v1/schema", "file:/etc/passwd", "//evil/v1", "/v1\\schema"]) {
      expect(reason(`GET ${path}`)).toBe("give a path on this connection (e.g. /v1/schema), not a URL")
    }
  })

  it("a fragment is refused as ambiguous", () => {
    expect(reason("GET /v1/schema#x")).toBe("a path with a fragment (#) is ambiguous; leave it out")
  })

  it("an ambiguous path is refused with the segment's reason", () => {
    expect(reason("DELETE /v1/schema/%2e%2e/X")).toContain("is ambiguous")
    expect(reason("GET /../v1/schema")).toBe("the path climbs above the root with '..'")
  })

  it("the query keeps one value per name and is re-encoded; no query adds no '?'", () => {
    expect(parsed("GET /v1/objects?class=A&limit=1&limit=2").path).toBe("/v1/objects?class=A&limit=2")
    expect(parsed("GET /v1/objects?").path).toBe("/v1/objects")
    expect(parsed("GET /v1/objects").path).toBe("/v1/objects")
  })

  it("GET and HEAD take no body", () => {
    expect(reason("GET /v1/schema {}")).toBe("GET takes no body")
    expect(reason("HEAD /v1/schema {}")).toBe("HEAD takes no body")
  })

  it("a body must be JSON, and the refusal says so", () => {
    expect(reason("POST /v1/objects {nope")).toMatch(/^the body is not valid JSON \(.+\)$/)
  })

  it("format is what the approval shows and what is run: parse(format(r)) is r", () => {
    for (const text of ["POST /v1/objects {\"a\":1}", "DELETE /v1/schema/X", "GET /v1/objects?class=A"]) {
      const request = parsed(text)
      expect(parsed(RestConsole.format(request))).toEqual(request)
    }
    expect(RestConsole.format({ method: "GET", path: "/v1/meta" })).toBe("GET /v1/meta")
    expect(RestConsole.format({ method: "POST", path: "/v1/objects", body: "{}" })).toBe("POST /v1/objects\n{}")
  })
})

describe("REST console: classify", () => {
  const classify = (text: string) => RestConsole.classify(parsed(text))

  it("GET and HEAD are reads; every other method is a write", () => {
    expect(classify("GET /v1/schema")).toEqual({ isWrite: false })
    expect(classify("HEAD /v1/schema")).toEqual({ isWrite: false })
    expect(classify("PUT /v1/objects/A/x {}")).toEqual({ isWrite: true })
    expect(classify("PATCH /v1/objects/A/x {}")).toEqual({ isWrite: true })
  })

  it("POST /v1/graphql with a valid read-only query is a read; a mutation-looking or broken one, or another route, is a write", () => {
    expect(classify(`POST /v1/graphql {"query":"{ Get { A { x } } }"}`)).toEqual({ isWrite: false })
    expect(classify(`POST /v1/graphql {"query":"mutation { x }"}`)).toEqual({ isWrite: true })
    expect(classify(`POST /v1/graphql {"query":42}`)).toEqual({ isWrite: true })
    expect(classify(`POST /v1/graphql null`)).toEqual({ isWrite: true })
    expect(classify(`POST /v1/graphql`)).toEqual({ isWrite: true })
    // A query field in another route's body is not a GraphQL read.
    expect(classify(`POST /v1/objects {"query":"{ Get { A { x } } }"}`)).toEqual({ isWrite: true })
    expect(classify(`POST /v1/graphql/x {"query":"{ Get { A { x } } }"}`)).toEqual({ isWrite: true })
    expect(classify(`PUT /v1/graphql {"query":"{ Get { A { x } } }"}`)).toEqual({ isWrite: true })
  })

  it("DELETE /v1/schema/{C} drops a collection (route names case-insensitive); a deeper or other DELETE does not", () => {
    expect(classify("DELETE /v1/schema/Article")).toEqual({ isWrite: true, destructive: "drop_table", collection: "Article" })
    expect(classify("DELETE /v1/SCHEMA/Article")).toEqual({ isWrite: true, destructive: "drop_table", collection: "Article" })
    expect(classify("DELETE /v1/schema/Article/tenants")).toEqual({ isWrite: true })
    expect(classify("DELETE /v1/schema")).toEqual({ isWrite: true })
    expect(classify("POST /v1/schema/Article {}")).toEqual({ isWrite: true })
    expect(classify("DELETE /v1/objects/Article")).toEqual({ isWrite: true })
  })

  it("DELETE /v1/batch/objects deletes by filter, with the collection of its match when named; POST there is an ordinary write", () => {
    expect(classify(`DELETE /v1/batch/objects {"match":{"class":"Article"}}`)).toEqual({ isWrite: true, destructive: "delete_where", collection: "Article" })
    expect(classify(`DELETE /v1/Batch/Objects {"match":{}}`)).toEqual({ isWrite: true, destructive: "delete_where" })
    expect(classify(`DELETE /v1/batch/objects null`)).toEqual({ isWrite: true, destructive: "delete_where" })
    expect(classify(`DELETE /v1/batch/objects`)).toEqual({ isWrite: true, destructive: "delete_where" })
    expect(classify(`DELETE /v1/batch/objects {"match":{"class":7}}`)).toEqual({ isWrite: true, destructive: "delete_where" })
    expect(classify(`POST /v1/batch/objects {"objects":[]}`)).toEqual({ isWrite: true })
    expect(classify(`DELETE /v1/batch/references {}`)).toEqual({ isWrite: true })
    expect(classify(`DELETE /v1/batch {}`)).toEqual({ isWrite: true })
  })

  it("a percent-encoded route segment is classified by what it decodes to", () => {
    expect(classify("DELETE /v1/%73chema/Article")).toEqual({ isWrite: true, destructive: "drop_table", collection: "Article" })
    expect(classify("DELETE /v1/schema/My%20Class")).toEqual({ isWrite: true, destructive: "drop_table", collection: "My Class" })
  })
})
