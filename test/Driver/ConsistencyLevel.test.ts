/**
 * Consistency levels and the request time-out on one node (the test instance, real or compatible):
 * what is sent, and what is not. The cluster behaviour itself is in Cluster.test.ts.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { Driver } from "../../src/Driver/Driver.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"
import * as Cli from "../support/Cli.ts"
import { type DriverRuntime, failureOf, loadArticles, makeRuntime, tempHome, uuidOf } from "./support.ts"

describe("consistency levels and the request time-out", () => {
  let w: WeaviateTestInstance
  let runtime: DriverRuntime
  let home: string
  beforeAll(async () => {
    w = await startTestWeaviate()
    await loadArticles(w)
    home = tempHome()
    runtime = makeRuntime(home)
  }, 60_000)
  afterAll(async () => {
    await runtime.dispose()
    await w.close()
  })
  const add = (settings: Record<string, unknown>) =>
    runtime.runPromise(Effect.flatMap(ConnectionStore, (s) => s.add({ name: `c${Math.random()}`, host: "127.0.0.1", port: w.port, ...settings } as never)))
  const objectRequests = () => w.requests.filter((r) => r.path.startsWith("/v1/objects"))

  it("without a level none is sent: Weaviate's default applies", async () => {
    const c = await add({})
    w.clearRequests()
    await runtime.runPromise(Effect.flatMap(Driver, (d) => d.browse(c.id, "Article", { limit: 2 })))
    await runtime.runPromise(Effect.flatMap(Driver, (d) => d.getRow(c.id, "Article", uuidOf(1))))
    assert.isNotEmpty(objectRequests())
    for (const r of objectRequests()) assert.isUndefined(r.query["consistency_level"])
  })

  it("a connection's default level is sent on object reads and writes; the call's own level wins", async () => {
    const c = await add({ consistencyLevel: "ALL" })
    w.clearRequests()
    await runtime.runPromise(Effect.flatMap(Driver, (d) => d.browse(c.id, "Article", { limit: 2 })))
    await runtime.runPromise(Effect.flatMap(Driver, (d) => d.getRow(c.id, "Article", uuidOf(1), { consistencyLevel: "ONE" })))
    await runtime.runPromise(Effect.flatMap(Driver, (d) => d.insertRows(c.id, "Plain", [{ properties: { title: "levelled" } }])))
    const [browse, get, insert] = objectRequests()
    assert.strictEqual(browse!.query["consistency_level"], "ALL")
    assert.strictEqual(get!.query["consistency_level"], "ONE")
    assert.strictEqual(insert!.method, "POST")
    assert.strictEqual(insert!.query["consistency_level"], "ALL")
  })

  it("consistencyLevel goes into a GraphQL Get only for replicated collections (Weaviate refuses it on one replica)", async () => {
    const c = await add({ consistencyLevel: "QUORUM" })
    w.clearRequests()
    // A sorted page is a GraphQL Get: Article has one replica, so no argument, and the read works.
    const page = await runtime.runPromise(Effect.flatMap(Driver, (d) =>
      d.browse(c.id, "Article", { limit: 2, sort: [{ column: "title", direction: "asc" }] })))
    assert.strictEqual(page.source, "graphql")
    const graphql = w.requests.filter((r) => r.path === "/v1/graphql")
    assert.isNotEmpty(graphql)
    for (const r of graphql) assert.notInclude(r.body, "consistencyLevel")
    const editor = await runtime.runPromise(Effect.flatMap(Driver, (d) => d.graphql(c.id, "{ Get { Article(limit: 1) { title } } }")))
    assert.strictEqual(editor.errors.length, 0)
  })

  it("the request time-out bounds a data request the database never answers", async () => {
    const c = await add({ requestTimeoutSeconds: 1 })
    w.setFault({ kind: "hang" }, { pathPrefix: "/v1/objects" })
    try {
      const started = Date.now()
      const error = await failureOf(runtime, Effect.flatMap(Driver, (d) => d.getRow(c.id, "Article", uuidOf(1))))
      assert.match(error.message, /did not answer GET \/v1\/objects\/Article\/.* within 1 s \(time-out\)/)
      assert.isBelow(Date.now() - started, 5_000)
    } finally {
      w.setFault({ kind: "none" })
    }
  })

  it("connections add/update --consistency-level and --request-timeout are stored with the connection", async () => {
    const cliHome = tempHome()
    const added = await Cli.run(["connections", "add", "--home", cliHome, "--name", "lv", "--host", "127.0.0.1", "--consistency-level", "QUORUM", "--json"])
    assert.strictEqual(added.code, 0, added.stderr)
    assert.strictEqual(JSON.parse(added.stdout).consistencyLevel, "QUORUM")
    const updated = await Cli.run(["connections", "update", "lv", "--home", cliHome, "--consistency-level", "ALL", "--request-timeout", "7", "--json"])
    assert.strictEqual(updated.code, 0, updated.stderr)
    const shown = JSON.parse(updated.stdout)
    assert.strictEqual(shown.consistencyLevel, "ALL")
    assert.strictEqual(shown.requestTimeoutSeconds, 7)
    const text = await Cli.run(["connections", "show", "lv", "--home", cliHome])
    assert.match(text.stdout, /consistency\s+ALL/)
    assert.match(text.stdout, /request timeout\s+7 s/)
  })
})
