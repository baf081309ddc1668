/**
 * `serve --schema-cache-ms` (setting `schemaCacheMs`) reaches the driver: with `0` every tool call
 * reads its collection again; the default keeps it 2 s (virtual time in test/Driver/SchemaCache.test.ts).
 */
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as CollectionSchema from "../../src/Driver/CollectionSchema.ts"
import { modern, modernHeaders, send } from "../Mcp/support/EndpointHarness.ts"
import { type ToolsDaemon, toolsDaemon } from "../Reliability/support.ts"
import * as TestDaemon from "../support/TestDaemon.ts"

let d: ToolsDaemon
beforeAll(async () => {
  d = await toolsDaemon({ settings: { schemaCacheMs: 0 } })
}, 60_000)
afterAll(() => d.dispose())

const describeTable = () =>
  Effect.runPromise(send(d.endpoint, {
    body: modern("tools/call", { name: "describe_table", arguments: { connection_id: d.ids.local, table: "Article" } }),
    headers: { ...modernHeaders("tools/call", "describe_table"), authorization: `Bearer ${d.tokens.fullAccess}` }
  }))

// Reads of the collections' schema (the whole schema or one class), not of their shards (describe_table reads those too).
const schemaReads = () => d.w.requests.filter((r) => r.method === "GET" && /^\/v1\/schema(\/[^/]+)?$/.test(r.path)).length

describe("the schema cache setting", () => {
  it("defaults to 2,000 ms in serve's settings and in the driver", async () => {
    const defaults = await Effect.runPromise(TestDaemon.settings())
    expect(defaults.schemaCacheMs).toBe(2_000)
    expect(CollectionSchema.CacheTtl.defaultValue()).toBe(2_000)
  })

  it("schemaCacheMs 0 reaches the driver: the second call reads the schema again, as often as the first", async () => {
    await describeTable()
    d.w.clearRequests()
    const first = await describeTable()
    const readByFirst = schemaReads()
    const second = await describeTable()
    expect(first.status).toBe(200)
    expect(second.status).toBe(200)
    expect(readByFirst).toBeGreaterThan(0)
    expect(schemaReads()).toBe(2 * readByFirst)
  })
})
