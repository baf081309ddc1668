/**
 * Attack class: a destructive REST statement spelled differently to pass `execute_query`. The console
 * parses a line once into a canonical request, classifies that, shows it and sends exactly it; a
 * path whose meaning depends on the reader is refused.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import fc from "fast-check"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import * as RestConsole from "../../src/Driver/RestConsole.ts"
import { modern, modernHeaders, send } from "../Mcp/support/EndpointHarness.ts"
import { type ToolsDaemon, toolsDaemon } from "./support.ts"

const classifyLine = (line: string) => Either.map(RestConsole.parse(line), RestConsole.classify)

// ===== Spellings =====

/** Noise that resolves to nothing: `.`, `x/..`, empty segments. */
const noise = fc.constantFrom("", ".", "x/..", "./.", "a/b/../..", "")
/** A route word spelled with optional percent-encoding of each letter and any letter case. */
const spelled = (word: string) =>
  fc.tuple(...Array.from(word, (ch) => fc.constantFrom(ch, ch.toUpperCase(), `%${ch.charCodeAt(0).toString(16)}`, `%${ch.charCodeAt(0).toString(16).toUpperCase()}`)))
    .map((parts) => parts.join(""))

const pathOf = (words: ReadonlyArray<string>, noises: ReadonlyArray<string>, prefix: boolean, trailing: string) => {
  const parts: Array<string> = prefix ? ["v1"] : []
  words.forEach((word, i) => {
    if (noises[i] !== "") parts.push(noises[i]!)
    parts.push(word)
  })
  return `/${parts.join("/")}${trailing}`
}

const dropSpelling = fc.record({
  schema: spelled("schema"),
  noises: fc.array(noise, { minLength: 3, maxLength: 3 }),
  prefix: fc.boolean(),
  trailing: fc.constantFrom("", "/", "//", "/.", "/x/.."),
  slashes: fc.constantFrom("/", "//")
}).map(({ noises, prefix, schema, slashes, trailing }) => pathOf([schema, "Article"], noises, prefix, trailing).replace(/\/Article/, `${slashes}Article`))

const batchSpelling = fc.record({
  batch: spelled("batch"),
  objects: spelled("objects"),
  noises: fc.array(noise, { minLength: 3, maxLength: 3 }),
  prefix: fc.boolean(),
  trailing: fc.constantFrom("", "/", "//", "/.", "/x/..")
}).map(({ batch, noises, objects, prefix, trailing }) => pathOf([batch, objects], noises, prefix, trailing))

describe("destructive REST routes cannot be spelled past the check", () => {
  it("every spelling of DELETE /v1/schema/{C} is refused as drop_table or as an invalid path (property)", () => {
    fc.assert(fc.property(dropSpelling, (path) => {
      const classified = classifyLine(`DELETE ${path}`)
      if (Either.isRight(classified)) expect(classified.right, path).toEqual({ isWrite: true, destructive: "drop_table", collection: "Article" })
    }), { numRuns: 400 })
  })

  it("every spelling of DELETE /v1/batch/objects is refused as delete_where or as an invalid path (property)", () => {
    fc.assert(fc.property(batchSpelling, (path) => {
      const classified = classifyLine(`DELETE ${path} {"match":{"class":"Article","where":{"path":["id"],"operator":"Like","valueText":"*"}}}`)
      if (Either.isRight(classified)) expect(classified.right.destructive, path).toBe("delete_where")
    }), { numRuns: 400 })
  })

  it("dot segments are resolved; encoded dots, encoded slashes and climbing above the root are refused", () => {
    expect(Either.getOrThrow(RestConsole.parse("DELETE /v1/./schema/X")).path).toBe("/v1/schema/X")
    expect(Either.getOrThrow(RestConsole.parse("DELETE /v1/schema/./X")).path).toBe("/v1/schema/X")
    expect(Either.getOrThrow(RestConsole.parse("DELETE /v1/x/../schema/X")).path).toBe("/v1/schema/X")
    expect(Either.getOrThrow(RestConsole.parse("DELETE /x/../v1/schema/X")).path).toBe("/v1/schema/X")
    for (const bad of ["DELETE /v1/%2e%2e/schema/X", "DELETE /v1/%2E/schema/X", "DELETE /v1/schema%2FX", "DELETE /v1/schema/X%5c", "DELETE /../v1/schema/X", "DELETE /v1/schema/%zz", "GET /v1/meta#x"]) {
      expect(Either.isLeft(RestConsole.parse(bad)), bad).toBe(true)
    }
  })

  it("parse(format(request)) is the request: what is shown is what is sent (property)", () => {
    fc.assert(fc.property(fc.oneof(dropSpelling, batchSpelling), fc.constantFrom("GET", "DELETE", "POST"), (path, method) => {
      const parsed = RestConsole.parse(`${method} ${path}${method === "GET" ? "" : " {\"a\":1}"}`)
      if (Either.isLeft(parsed)) return
      expect(Either.getOrThrow(RestConsole.parse(RestConsole.format(parsed.right)))).toEqual(parsed.right)
    }), { numRuns: 300 })
  })

  it("a POST /v1/objects whose body has a query field is still a write", () => {
    expect(Either.getOrThrow(classifyLine(`POST /v1/objects {"class":"A","query":"{ Get { A { x } } }"}`))).toEqual({ isWrite: true })
    expect(Either.getOrThrow(classifyLine(`PUT /v1/graphql {"query":"{ Get { A { x } } }"}`))).toEqual({ isWrite: true })
    expect(Either.getOrThrow(classifyLine(`POST /v1/graphql {"query":"mutation { x }"}`))).toEqual({ isWrite: true })
    expect(Either.getOrThrow(classifyLine(`POST /v1/graphql {"query":"{ Get { A { x } } }"}`))).toEqual({ isWrite: false })
  })

  it("trailing-slash spellings of destructive routes are refused", () => {
    expect(Either.getOrThrow(classifyLine(`DELETE /v1/batch/objects// {"match":{"class":"A"}}`)).destructive).toBe("delete_where")
    expect(Either.getOrThrow(classifyLine("DELETE /v1/schema/A/")).destructive).toBe("drop_table")
  })

  it("DELETE and POST on /v1/batch/objects are told apart: only DELETE deletes by filter", () => {
    expect(Either.getOrThrow(classifyLine(`DELETE /v1/batch/objects {"match":{"class":"A"}}`))).toEqual({ isWrite: true, destructive: "delete_where", collection: "A" })
    expect(Either.getOrThrow(classifyLine(`POST /v1/batch/objects {"objects":[]}`))).toEqual({ isWrite: true })
  })
})

describe("over HTTP against the daemon: nothing destructive reaches Weaviate", () => {
  let d: ToolsDaemon
  beforeAll(async () => {
    d = await toolsDaemon()
  }, 60_000)
  afterAll(() => d.dispose())
  beforeEach(() => d.w.clearRequests())

  const execute = (token: string, connection: string, query: string) =>
    Effect.runPromise(send(d.endpoint, {
      body: modern("tools/call", { name: "execute_query", arguments: { connection_id: connection, query } }),
      headers: { ...modernHeaders("tools/call", "execute_query"), authorization: `Bearer ${token}` }
    }))

  const errorCode = (reply: { json: any }) => {
    const result = reply.json.result
    expect(result?.isError, JSON.stringify(reply.json)).toBe(true)
    // A tool error's text is `code: message` (no structuredContent: it would not match outputSchema).
    return (result.content[0].text as string).split(":")[0]!
  }

  const destructiveReached = () => d.w.requests.filter((r) => r.method === "DELETE")

  it("the issue's spellings are refused with unsupported for a fullAccess token and for readWrite under Safe Mode silent", async () => {
    const batch = `{"match":{"class":"Article","where":{"path":["wordCount"],"operator":"GreaterThan","valueInt":-1}}}`
    for (const [token, connection] of [[d.tokens.fullAccess, d.ids.local], [d.tokens.readWrite, d.ids.silent]] as const) {
      for (const line of ["DELETE /v1/./schema/Article", "DELETE /v1/schema/./Article", "DELETE /v1/x/../schema/Article", `DELETE /v1/./batch/objects ${batch}`, `DELETE /v1/batch/objects// ${batch}`]) {
        const reply = await execute(token, connection, line)
        expect(errorCode(reply), line).toBe("unsupported")
        expect(reply.json.result.content[0].text).toContain("confirm_destructive_operation")
      }
    }
    expect(destructiveReached()).toEqual([])
  }, 60_000)

  it("an ambiguous path is invalid_argument and nothing is sent", async () => {
    for (const line of ["DELETE /v1/%2e%2e/schema/Article", "DELETE /v1/schema%2FArticle", "DELETE /../schema/Article"]) {
      expect(errorCode(await execute(d.tokens.fullAccess, d.ids.local, line)), line).toBe("invalid_argument")
    }
    expect(d.w.requests.filter((r) => r.path.includes("schema"))).toEqual([])
  }, 30_000)

  it("what reaches the Weaviate instance is the canonical request that was classified (property)", async () => {
    const readPath = fc.record({
      words: fc.constantFrom(["schema"], ["schema", "Article"], ["nodes"], ["meta"], ["objects"]),
      noises: fc.array(noise, { minLength: 3, maxLength: 3 }),
      prefix: fc.boolean(),
      trailing: fc.constantFrom("", "/", "/.")
    }).map(({ noises, prefix, trailing, words }) => pathOf(words, noises, prefix, trailing))
    await fc.assert(fc.asyncProperty(readPath, async (path) => {
      d.w.clearRequests()
      const reply = await execute(d.tokens.readOnly, d.ids.local, `GET ${path}`)
      const shown = reply.json.result?.structuredContent?.request
      const parsed = Either.getOrThrow(RestConsole.parse(`GET ${path}`))
      // A first access may be asked for (exec answers yes); the statement itself is the last request.
      const reached = d.w.requests.at(-1)
      expect(shown, JSON.stringify(reply.json)).toEqual({ method: "GET", path: parsed.path })
      expect(`${reached?.method} ${reached?.path}`).toBe(`GET ${parsed.path}`)
    }), { numRuns: 40 })
  }, 60_000)
})
