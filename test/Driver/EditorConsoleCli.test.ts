import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as NodeChild from "node:child_process"
import * as NodePath from "node:path"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { Driver } from "../../src/Driver/Driver.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"
import { type DriverRuntime, failureOf, loadArticles, makeRuntime, tempHome, uuidOf } from "./support.ts"

let w: WeaviateTestInstance
let runtime: DriverRuntime
let home: string
beforeAll(async () => {
  w = await startTestWeaviate({ apiKeys: ["cli-key"] })
  await loadArticles(w, { authorization: "Bearer cli-key" })
  home = tempHome()
  runtime = makeRuntime(home)
  await runtime.runPromise(Effect.flatMap(ConnectionStore, (s) => s.add({ name: "local", host: "127.0.0.1", port: w.port, authMethod: "apiKey", apiKey: "cli-key" })))
})
afterAll(async () => {
  await runtime.dispose()
  await w.close()
})

const graphql = (query: string) => runtime.runPromise(Effect.flatMap(Driver, (d) => d.graphql("local", query)))
const rest = (line: string) => runtime.runPromise(Effect.flatMap(Driver, (d) => d.rest("local", line)))

describe("GraphQL editor against the instance", () => {
  it("a Get result is a grid: _additional.id becomes uuid, other _additional members are columns", async () => {
    const result = await graphql(`{ Get { Article(where: {path: ["wordCount"], operator: Equal, valueInt: 10}) { title wordCount _additional { id vector } } } }`)
    assert.strictEqual(result.kind, "grid")
    if (result.kind !== "grid") return
    assert.deepStrictEqual(result.tables[0]!.columns, ["uuid", "title", "wordCount", "vector"])
    assert.deepStrictEqual(result.tables[0]!.rows, [{ uuid: uuidOf(1), title: "Hello world", wordCount: 10, vector: [0, 1, 0.5] }])
  })
  it("Aggregate is formatted JSON", async () => {
    const result = await graphql(`query { Aggregate { Article { meta { count } } } }`)
    assert.strictEqual(result.kind, "json")
    if (result.kind === "json") assert.deepStrictEqual(result.data, { Aggregate: { Article: [{ meta: { count: 4 } }] } })
  })
  it("GraphQL errors are reported and partial data kept", async () => {
    const result = await graphql(`{ Get { Article(where: {path: ["published"], operator: Equal, valueDate: "2024-01-01"}) { title } } }`)
    assert.isAbove(result.errors.length, 0)
    assert.match(result.errors[0]!.message, /RFC3339/)
  })
  it("a mutation is refused before anything is sent", async () => {
    w.clearRequests()
    const error = await failureOf(runtime, Effect.flatMap(Driver, (d) => d.graphql("local", `mutation { Delete { Article } }`)))
    assert.match(error.message, /read-only/)
    assert.deepStrictEqual(w.requests.filter((r) => r.path === "/v1/graphql"), [])
  })
})

describe("REST console against the instance", () => {
  it("a path without /v1 receives it", async () => {
    w.clearRequests()
    const result = await rest("GET /meta")
    assert.strictEqual(result.status, 200)
    assert.deepStrictEqual(w.requests.map((r) => r.path), ["/v1/meta"])
  })
  it("a body on the same line or on the lines below", async () => {
    const sameLine = await rest(`POST /objects {"class":"Plain","id":"${uuidOf(500)}","properties":{"title":"same line"}}`)
    assert.strictEqual(sameLine.status, 200)
    const below = await rest(`PATCH /v1/objects/Plain/${uuidOf(500)}\n{\n  "class": "Plain",\n  "properties": {"title": "lines below"}\n}`)
    assert.strictEqual(below.status, 204)
    const read = await rest(`GET objects/Plain/${uuidOf(500)}`)
    assert.strictEqual((read.json as { properties: { title: string } }).properties.title, "lines below")
    const missing = await rest("GET /v1/objects/Nope/" + uuidOf(1))
    assert.isFalse(missing.ok)
    assert.strictEqual(missing.status, 404)
  })
})

describe("command line", () => {
  // Asynchronous: the test instance runs in this process and must keep answering.
  const cli = (args: ReadonlyArray<string>, input = "") =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = NodeChild.spawn(process.execPath, ["--import", "tsx", NodePath.resolve("src/Main.ts"), ...args, "--home", home], {
        env: { ...process.env, NO_COLOR: "1" }
      })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (c: Buffer) => (stdout += c.toString("utf8")))
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString("utf8")))
      child.on("error", reject)
      child.on("close", (status) => resolve({ status, stdout, stderr }))
      child.stdin.end(input)
    })

  it("connections add/show/test/list print no key; test exits 0 and 1", async () => {
    const added = await cli(["connections", "add", "--name", "cli", "--host", "127.0.0.1", "--port", String(w.port), "--auth-method", "api-key", "--api-key", "cli-key", "--ssl-mode", "disabled", "--safe-mode", "readOnly", "--ai-policy", "readOnly", "--json"])
    assert.strictEqual(added.status, 0, added.stderr)
    const saved = JSON.parse(added.stdout) as { id: string; safeMode: string; apiKeyConfigured: boolean }
    assert.strictEqual(saved.safeMode, "readOnly")
    assert.isTrue(saved.apiKeyConfigured)
    assert.notInclude(added.stdout, "cli-key")
    const tested = await cli(["connections", "test", saved.id])
    assert.strictEqual(tested.status, 0, tested.stderr)
    assert.match(tested.stdout, /^OK: cli/)
    await runtime.runPromise(Effect.flatMap(ConnectionStore, (s) => s.add({ name: "bad", host: "127.0.0.1", port: w.port, authMethod: "apiKey", apiKey: "nope" })))
    const failed = await cli(["connections", "test", "bad"])
    assert.strictEqual(failed.status, 1)
    assert.match(failed.stderr, /^Authentication failed: /)
    assert.notInclude(failed.stderr, "nope")
  })
  it("browse prints an aligned table; a refused filter exits 1; a bad flag exits 2", async () => {
    const page = await cli(["browse", "local", "Article", "--filter", "price between 100 and 200", "--sort", "price:desc", "--limit", "5"])
    assert.strictEqual(page.status, 0, page.stderr)
    const lines = page.stdout.split("\n")
    assert.match(lines[0]!, /^uuid\s+title\s+wordCount\s+price/)
    assert.match(lines[2]!, /Hello there\s+20\s+200/)
    assert.strictEqual(lines[0]!.indexOf("title"), lines[2]!.indexOf("Hello there"))
    const refused = await cli(["browse", "local", "Article", "--filter", "title REGEX ^H"])
    assert.strictEqual(refused.status, 1)
    assert.match(refused.stderr, /REGEX is not supported/)
    const usage = await cli(["browse", "local", "Article", "--limit", "many"])
    assert.strictEqual(usage.status, 2)
  })
  it("graphql reads - from stdin", async () => {
    const query = await cli(["graphql", "local", "-"], `{ Get { Article(limit: 1) { title _additional { id } } } }`)
    assert.strictEqual(query.status, 0, query.stderr)
    assert.match(query.stdout, /^uuid\s+title/)
  })
})
