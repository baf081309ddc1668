/**
 * Interop with the official clients: the SDK v1 client (legacy era, Streamable HTTP, 2025-11-25) and
 * the v2 client with `versionNegotiation: { mode: 'auto' }`, which must land on the modern era. Both
 * connect, list tools (through every page) and call a tool, with the bearer token.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client"
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import { FILLER_TOOLS, Harness, layer as harnessLayer } from "./support/EndpointHarness.ts"

const TOOL_COUNT = FILLER_TOOLS + 7

describe("Endpoint interop", () => {
  layer(harnessLayer(), { excludeTestServices: true })("official clients", (it) => {
    it.effect("SDK v1 client (legacy, 2025-11-25) connects, lists and calls", () =>
      Effect.gen(function*() {
        const { endpoint, token } = yield* Harness
        const result = yield* Effect.promise(async () => {
          const client = new ClientV1({ name: "sdk-v1-test", version: "1.0.0" })
          const transport = new TransportV1(new URL(endpoint), { requestInit: { headers: { authorization: `Bearer ${token}` } } })
          await client.connect(transport)
          try {
            const names: Array<string> = []
            let cursor: string | undefined
            for (let page = 0; page < 5; page++) {
              const listed = await client.listTools(cursor === undefined ? {} : { cursor })
              names.push(...listed.tools.map((tool) => tool.name))
              cursor = listed.nextCursor
              if (cursor === undefined) break
            }
            const called = await client.callTool({ name: "echo", arguments: { query: "hello" } })
            const progress: Array<number> = []
            const streamed = await client.callTool({ name: "progress", arguments: {} }, undefined, {
              onprogress: (p) => progress.push(p.progress)
            })
            await client.ping()
            return {
              version: transport.protocolVersion,
              sessionId: transport.sessionId,
              names,
              called,
              streamed,
              progress,
              server: client.getServerVersion()
            }
          } finally {
            await client.close()
          }
        })
        assert.strictEqual(result.version, "2025-11-25")
        assert.isString(result.sessionId)
        assert.strictEqual(result.names.length, TOOL_COUNT)
        assert.strictEqual((result.called.structuredContent as any).era, "legacy")
        assert.strictEqual((result.called.structuredContent as any).clientName, "sdk-v1-test")
        assert.deepStrictEqual(result.progress, [0, 0.3, 1])
        assert.strictEqual((result.streamed.content as any)[0].text, "finished")
        assert.strictEqual(result.server?.name, "weaviate-mcp")
      }))

    it.effect("v2 client with versionNegotiation auto lands on the modern era, lists and calls", () =>
      Effect.gen(function*() {
        const { endpoint, token } = yield* Harness
        const result = yield* Effect.promise(async () => {
          const client = new ClientV2({ name: "sdk-v2-test", version: "2.0.0" }, { versionNegotiation: { mode: "auto" } })
          const transport = new TransportV2(new URL(endpoint), { requestInit: { headers: { authorization: `Bearer ${token}` } } })
          await client.connect(transport)
          try {
            const listed = await client.listTools()
            const called = await client.callTool({ name: "echo", arguments: { query: "hello", limit: 3 } })
            const resources = await client.listResources()
            const read = await client.readResource({ uri: "test://items/2" })
            return {
              version: client.getNegotiatedProtocolVersion(),
              names: listed.tools.map((tool) => tool.name),
              called,
              resources: resources.resources.length,
              read
            }
          } finally {
            await client.close()
          }
        })
        assert.strictEqual(result.version, "2026-07-28")
        assert.strictEqual(result.names.length, TOOL_COUNT)
        assert.strictEqual((result.called.structuredContent as any).era, "modern")
        assert.strictEqual((result.called.structuredContent as any).clientName, "sdk-v2-test")
        assert.deepStrictEqual((result.called.structuredContent as any).arguments, { query: "hello", limit: 3 })
        assert.strictEqual(result.resources, 60)
        assert.strictEqual((result.read.contents[0] as any).uri, "test://items/2")
      }))
  })
})
