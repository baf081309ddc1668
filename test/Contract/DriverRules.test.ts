/**
 * Rules of `vector-database-connector.md` (and the README's driver surfaces in the CLI) that the audit
 * in `docs/contract-coverage.md` found without a test that would fail if the rule broke. Every test
 * talks real HTTP to the Weaviate-compatible test instance.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { Driver } from "../../src/Driver/Driver.ts"
import * as Grid from "../../src/Driver/Grid.ts"
import * as Cli from "../support/Cli.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"
import { type DriverRuntime, loadArticles, makeRuntime, tempHome, uuidOf } from "../Driver/support.ts"

let w: WeaviateTestInstance
let home: string
let runtime: DriverRuntime
beforeAll(async () => {
  w = await startTestWeaviate()
  await loadArticles(w)
  home = tempHome()
  runtime = makeRuntime(home)
  await runtime.runPromise(Effect.flatMap(ConnectionStore, (s) => s.add({ name: "local", host: "127.0.0.1", port: w.port })))
})
afterAll(async () => {
  await runtime.dispose()
  await w.close()
})

const withDriver = <A, E>(f: (driver: Driver["Type"]) => Effect.Effect<A, E>) => runtime.runPromise(Effect.flatMap(Driver, f))

describe("Contract: connection settings", () => {
  it("Connection settings: Port defaults to 8080, Auth Method None, SSL Mode Disabled (plain HTTP), Skip TLS off; Safe Mode confirm and AI policy readWrite by default", async () => {
    const saved = await runtime.runPromise(Effect.flatMap(ConnectionStore, (s) => s.add({ name: "defaults", host: "db.example" })))
    assert.strictEqual(saved.port, 8080)
    assert.strictEqual(saved.authMethod, "none")
    assert.strictEqual(saved.sslMode, "disabled")
    assert.strictEqual(saved.baseUrl, "http://db.example:8080")
    assert.isFalse(saved.skipTlsVerify)
    assert.strictEqual(saved.safeMode, "confirm")
    assert.strictEqual(saved.aiPolicy, "readWrite")
    const https = await runtime.runPromise(Effect.flatMap(ConnectionStore, (s) => s.add({ name: "cloud", host: "db.example", port: 443, sslMode: "required" })))
    assert.strictEqual(https.baseUrl, "https://db.example:443", "every mode but Disabled uses HTTPS")
  })

  it("API Key: sent as Authorization: Bearer only when Auth Method is API Key (a stored key under None is never sent)", async () => {
    const c = await runtime.runPromise(Effect.flatMap(ConnectionStore, (s) =>
      s.add({ name: "key-but-none", host: "127.0.0.1", port: w.port, authMethod: "none", apiKey: "stored-but-unused" })))
    w.clearRequests()
    await withDriver((d) => d.health(c.id))
    await withDriver((d) => d.listCollections(c.id))
    assert.isAtLeast(w.requests.length, 2)
    for (const request of w.requests) assert.isUndefined(request.headers["authorization"], request.path)
  })
})

describe("Contract: collection grid", () => {
  it("Collection grid: array and object values are rendered as JSON in the cell; vector as a JSON array of numbers", async () => {
    const page = await withDriver((d) => d.browse("local", "Article", { limit: 1 }))
    const row = page.rows[0]!
    assert.strictEqual(Grid.renderCell(row.tags), "[\"news\",\"tech\"]")
    assert.strictEqual(Grid.renderCell(row.meta), "{\"source\":\"a\"}")
    assert.strictEqual(Grid.renderCell(row.vector), "[0,1,0.5]")
    assert.deepStrictEqual(JSON.parse(Grid.renderCell(row.vector)), [0, 1, 0.5])
    assert.strictEqual(Grid.renderCell(row.wordCount), "10")
    assert.strictEqual(Grid.renderCell(null), "")
  })

  it("Collection grid over the CLI: browse prints array and object cells as JSON and the vector last", async () => {
    const r = await Cli.run(["browse", "local", "Article", "--limit", "1", "--home", home])
    assert.strictEqual(r.code, 0, r.stderr)
    const [header, , first] = r.stdout.split("\n")
    assert.match(header!, /^uuid\s.*\svector\s*$/)
    assert.include(first!, "[\"news\",\"tech\"]")
    assert.include(first!, "{\"source\":\"a\"}")
    assert.match(first!, /\[0,1,0\.5\]\s*$/)
  })
})

describe("Contract: errors", () => {
  it("Errors: an update or delete without uuid is skipped and logged (a warning naming the row); no request is sent", async () => {
    const lines: Array<string> = []
    const capture = Logger.replace(Logger.defaultLogger, Logger.make(({ logLevel, message }) => {
      lines.push(`${logLevel.label} ${Array.isArray(message) ? message.join(" ") : String(message)}`)
    }))
    w.clearRequests()
    await runtime.runPromise(Effect.gen(function*() {
      const d = yield* Driver
      yield* d.updateRows("local", "Plain", [{ values: { title: "x" } }])
      yield* d.deleteRows("local", "Plain", [""])
    }).pipe(Effect.provide(capture)))
    assert.deepStrictEqual(w.requests.filter((r) => r.path !== "/v1/schema" && !r.path.startsWith("/v1/schema/")), [])
    assert.strictEqual(lines.filter((line) => line.startsWith("WARN") && /Plain: row 0: .*uuid/.test(line)).length, 2, lines.join("\n"))
  })
})

describe("Contract: endpoints", () => {
  it("Rule 7: gRPC is not used; every call of the driver is HTTP under /v1", async () => {
    w.clearRequests()
    await withDriver((d) => d.health("local"))
    await withDriver((d) => d.listCollections("local"))
    await withDriver((d) => d.browse("local", "Article", { limit: 2 }))
    await withDriver((d) => d.browse("local", "Article", { limit: 2, sort: [{ column: "title", direction: "asc" }] }))
    await withDriver((d) => d.count("local", "Article"))
    await withDriver((d) => d.getRow("local", "Article", uuidOf(1)))
    await withDriver((d) => d.graphql("local", "{ Get { Article(limit: 1) { title } } }"))
    await withDriver((d) => d.rest("local", "GET /nodes"))
    assert.isAtLeast(w.requests.length, 8)
    for (const request of w.requests) assert.match(request.path, /^\/v1\//, `${request.method} ${request.path}`)
    const manifest = JSON.parse(NodeFs.readFileSync(NodePath.resolve(import.meta.dirname, "../../package.json"), "utf8"))
    const dependencies = Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })
    assert.deepStrictEqual(dependencies.filter((name) => /grpc/i.test(name)), [])
  })
})

describe("Contract: driver surfaces in the CLI", () => {
  it("rest CONN \"<METHOD> <path> [body]\": runs the line (a path without /v1 receives it) and prints the response; a refusal exits 1", async () => {
    w.clearRequests()
    const ok = await Cli.run(["rest", "local", "GET /schema/Article", "--home", home])
    assert.strictEqual(ok.code, 0, ok.stderr)
    assert.strictEqual(JSON.parse(ok.stdout).class, "Article")
    assert.isTrue(w.requests.some((r) => r.method === "GET" && r.path === "/v1/schema/Article"))
    const created = await Cli.run(["rest", "local", `POST /objects {"class":"Plain","id":"${uuidOf(900)}","properties":{"title":"from the console"}}`, "--home", home])
    assert.strictEqual(created.code, 0, created.stderr)
    const row = await withDriver((d) => d.getRow("local", "Plain", uuidOf(900)))
    assert.strictEqual(Option.getOrThrow(row).title, "from the console")
    const refused = await Cli.run(["rest", "local", "GET /schema/NoSuchClass", "--home", home])
    assert.strictEqual(refused.code, 1)
  })

  it("connections list and remove: list shows every saved connection without a key; remove deletes it", async () => {
    await runtime.runPromise(Effect.flatMap(ConnectionStore, (s) =>
      s.add({ name: "to-remove", host: "127.0.0.1", port: w.port, authMethod: "apiKey", apiKey: "secret-key-value" })))
    const listed = await Cli.run(["connections", "list", "--json", "--home", home])
    assert.strictEqual(listed.code, 0, listed.stderr)
    assert.notInclude(listed.stdout, "secret-key-value")
    const names = (JSON.parse(listed.stdout) as Array<{ name: string }>).map((c) => c.name)
    assert.includeMembers(names, ["local", "to-remove"])
    const removed = await Cli.run(["connections", "remove", "to-remove", "--home", home])
    assert.strictEqual(removed.code, 0, removed.stderr)
    const after = await Cli.run(["connections", "list", "--json", "--home", home])
    assert.notInclude((JSON.parse(after.stdout) as Array<{ name: string }>).map((c) => c.name), "to-remove")
    const again = await Cli.run(["connections", "remove", "to-remove", "--home", home])
    assert.strictEqual(again.code, 1)
  })
})
