/**
 * A host program composes the exported layers, in process (the README's runnable example runs
 * against the packed package in test/Package/Package.test.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Option } from "effect"
import { ConnectionStore, Daemon, Driver, Home, Settings } from "../../src/index.ts"
import { loadSampleData } from "../weaviate/SampleData.ts"
import { TestWeaviate } from "../weaviate/TestWeaviate.ts"
import * as TestHome from "../support/TestHome.ts"

const tempHome = TestHome.tempDir("weaviate-mcp-embed-")

describe("embedding (README example)", () => {
  it.scopedLive("a host program runs the daemon from the library's layers", () =>
    Effect.gen(function*() {
      const dir = yield* tempHome
      const settings = yield* Effect.withConfigProvider(Settings.ServeSettings, ConfigProvider.fromJson({ auth: "off" }))
      let url = ""
      const daemon = Daemon.layer({ settings, port: 0, onListening: (a) => Effect.sync(() => void (url = `${a.url}/mcp`)) })
      yield* Layer.build(daemon.pipe(Layer.provide(Home.Home.layer(Option.some(dir)))))
      const response = yield* Effect.promise(() =>
        fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "host", version: "1" } } })
        })
      )
      assert.strictEqual(response.status, 200)
      assert.isString(response.headers.get("mcp-session-id"))
    }))

  it.scopedLive("the driver works on its own", () =>
    Effect.gen(function*() {
      const dir = yield* tempHome
      const weaviate = yield* TestWeaviate()
      yield* Effect.promise(() => loadSampleData(weaviate))
      const layer = Driver.Driver.layer.pipe(Layer.provideMerge(ConnectionStore.ConnectionStore.layer), Layer.provide(Home.Home.layer(Option.some(dir))))
      const page = yield* Effect.gen(function*() {
        const store = yield* ConnectionStore.ConnectionStore
        yield* store.add({ name: "local", host: "127.0.0.1", port: weaviate.port })
        const driver = yield* Driver.Driver
        return yield* driver.browse("local", "Article", { limit: 10 })
      }).pipe(Effect.provide(layer))
      assert.strictEqual(page.rows.length, 10)
      assert.strictEqual(page.columns[0]?.name, "uuid")
    }))
})
