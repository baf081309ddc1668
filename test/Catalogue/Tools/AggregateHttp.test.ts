/**
 * `aggregate` through the real daemon over HTTP on 127.0.0.1, called by the official MCP clients (v2,
 * modern era; SDK v1, legacy era), what the server sends validated against the official MCP JSON
 * Schemas, against the real Weaviate with the full sample data — the data docs/tools.md was written
 * from, so the example there is run here and its result compared with what the daemon answers now.
 * The call is recorded in the query history and the activity log like every other read.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client"
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Line from "../../../src/Activity/ActivityLine.ts"
import { TokenStore } from "../../../src/Auth/TokenStore.ts"
import { homeLayer } from "../../../src/Cli/CommonOptions.ts"
import * as Daemon from "../../../src/Daemon/Daemon.ts"
import { ConnectionStore } from "../../../src/Driver/ConnectionStore.ts"
import { BoundAddress } from "../../../src/Mcp/HttpTransport.ts"
import { MODERN, modern, modernHeaders, send, validateDef, validateMessage } from "../../Mcp/support/EndpointHarness.ts"
import { pages } from "../../support/Markdown.ts"
import * as TestDaemon from "../../support/TestDaemon.ts"
import * as TestHome from "../../support/TestHome.ts"
import { loadSampleData, sampleObjects } from "../../weaviate/SampleData.ts"
import { startTestWeaviate } from "../../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../../weaviate/WeaviateServer.ts"

let w: WeaviateTestInstance
let endpoint: string
let home: string
let runtime: ManagedRuntime.ManagedRuntime<unknown, unknown>
let readOnly = ""

beforeAll(async () => {
  w = await startTestWeaviate()
  await loadSampleData(w)
  home = TestHome.tempDirSync("weaviate-mcp-aggregate-http-")
  await Effect.runPromise(
    Effect.gen(function*() {
      const local = yield* (yield* ConnectionStore).add({ name: "local", host: "127.0.0.1", port: w.port })
      // An allowlist grants first access at creation.
      readOnly = (yield* (yield* TokenStore).create({ name: "reader", access: "readOnly", connections: [local.id] })).token
    }).pipe(Effect.provide(Layer.merge(ConnectionStore.layer, TokenStore.layerOneShot).pipe(Layer.provide(homeLayer(Option.some(home))))))
  )
  const settings = await Effect.runPromise(TestDaemon.settings({ rateLimit: 0, authLockout: 0, approvals: "deny" }))
  runtime = ManagedRuntime.make(Daemon.layer({ settings, port: 0 }).pipe(Layer.provide(homeLayer(Option.some(home))))) as ManagedRuntime.ManagedRuntime<
    unknown,
    unknown
  >
  endpoint = `${(await runtime.runPromise(BoundAddress as never) as { url: string }).url}/mcp`
}, 180_000)
afterAll(async () => {
  await runtime?.dispose()
  await w?.close()
})

const v2Client = async () => {
  const client = new ClientV2({ name: "aggregate-v2", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } })
  await client.connect(new TransportV2(new URL(endpoint), { requestInit: { headers: { authorization: `Bearer ${readOnly}` } } }))
  return client
}
const v1Client = async () => {
  const client = new ClientV1({ name: "aggregate-v1", version: "1.0.0" })
  await client.connect(new TransportV1(new URL(endpoint), { requestInit: { headers: { authorization: `Bearer ${readOnly}` } } }))
  return client
}

/** The example of docs/tools.md's `aggregate` section: its call, its text and its structuredContent. */
const docsExample = () => {
  const page = pages().find((p) => p.file === "docs/tools.md")!
  const start = page.headings.find((h) => h.level === 3 && h.text === "`aggregate`")!
  const end = page.headings.find((h) => h.line > start.line && h.level <= 3)?.line ?? Number.MAX_SAFE_INTEGER
  const blocks = page.blocks.filter((b) => b.line > start.line && b.line < end)
  const call = blocks.find((b) => b.language === "json" && b.text.includes("\"arguments\""))!
  const after = blocks.filter((b) => b.line > call.line)
  return {
    call: JSON.parse(call.text) as { name: string; arguments: Record<string, unknown> },
    text: after.find((b) => b.language === "text")!.text,
    structured: JSON.parse(after.find((b) => b.info.split(/\s+/).includes("structuredContent"))!.text)
  }
}

/**
 * Whether a result is the documented one. A mean is a floating-point sum whose last digits depend on
 * the order Weaviate adds in, so numbers compare to 9 significant digits, in the text too.
 */
const sameAsDocumented = (actual: unknown, documented: unknown, path = "$"): void => {
  if (typeof documented === "number") {
    expect(typeof actual, path).toBe("number")
    expect(Math.abs((actual as number) - documented), path).toBeLessThanOrEqual(Math.abs(documented) * 1e-9)
  } else if (Array.isArray(documented)) {
    expect(Array.isArray(actual) && actual.length, path).toBe(documented.length)
    documented.forEach((d, i) => sameAsDocumented((actual as Array<unknown>)[i], d, `${path}[${i}]`))
  } else if (typeof documented === "object" && documented !== null) {
    expect(Object.keys(actual as object).sort(), path).toEqual(Object.keys(documented).sort())
    for (const [k, d] of Object.entries(documented)) sameAsDocumented((actual as Record<string, unknown>)[k], d, `${path}.${k}`)
  } else {
    expect(actual, path).toEqual(documented)
  }
}
const rounded = (text: string) => text.trimEnd().replace(/\d+\.\d+/g, (n) => Number(n).toPrecision(9))

const products = sampleObjects().filter((o) => o["class"] === "Product").map((o) => o["properties"] as Record<string, any>)

describe("aggregate over HTTP with the official clients", () => {
  it("the v2 client (modern era) gets the docs example's grid and structuredContent, as docs/tools.md shows them", async () => {
    const example = docsExample()
    const client = await v2Client()
    try {
      const result: any = await client.callTool({ name: example.call.name, arguments: example.call.arguments })
      expect(result.isError, JSON.stringify(result.content)).toBeFalsy()
      sameAsDocumented(result.structuredContent, example.structured)
      expect(rounded(result.content[0].text)).toBe(rounded(example.text))
      // The figures themselves, counted here from the generated rows.
      expect(result.structuredContent.count).toBe(products.length)
      for (const row of result.structuredContent.rows) {
        const group = products.filter((p) => p.category === row.category)
        expect(row.count).toBe(group.length)
        expect(row["stock:sum"]).toBe(group.reduce((n, p) => n + p.stock, 0))
      }
    } finally {
      await client.close()
    }
  })

  it("the SDK v1 client (legacy era) gets the same result, validated against its outputSchema by the client", async () => {
    const example = docsExample()
    const client = await v1Client()
    try {
      await client.listTools()
      const result: any = await client.callTool({ name: "aggregate", arguments: example.call.arguments })
      expect(result.isError).toBeFalsy()
      sameAsDocumented(result.structuredContent, example.structured)
      const refused: any = await client.callTool({
        name: "aggregate",
        arguments: { connection_id: "local", table: "Product", metrics: [{ property: "category", metric: "sum" }] }
      })
      expect(refused.isError).toBe(true)
      expect(refused.content[0].text).toBe(
        "invalid_argument: Statement refused: sum does not fit category, which is text; its metrics are count, topOccurrences"
      )
    } finally {
      await client.close()
    }
  })

  it("what the server sends is a valid CallToolResult of the official schema, success and refusal alike", async () => {
    const example = docsExample()
    const call = (args: Record<string, unknown>) =>
      Effect.runPromise(send(endpoint, {
        body: modern("tools/call", { name: "aggregate", arguments: args }),
        headers: { ...modernHeaders("tools/call", "aggregate"), authorization: `Bearer ${readOnly}` }
      }))
    const ok = await call(example.call.arguments)
    validateMessage(MODERN, ok.json, "CallToolResult")
    sameAsDocumented(ok.json.result.structuredContent, example.structured)
    const refused = await call({ connection_id: "local", table: "Product", group_by: "location" })
    validateMessage(MODERN, refused.json, "CallToolResult")
    expect(refused.json.result.isError).toBe(true)
  })

  it("the official client completes aggregate_table's metric by the property's type and group_by, and gets the prompt", async () => {
    const client = await v1Client()
    try {
      const ref = { type: "ref/prompt" as const, name: "aggregate_table" }
      const context = { arguments: { connection_id: "local", table: "Product" } }
      const metrics = await client.complete({ ref, argument: { name: "metric", value: "stock:m" }, context })
      validateDef("2025-11-25", "CompleteResult", metrics)
      expect(metrics.completion.values).toEqual(["stock:mean", "stock:median", "stock:mode", "stock:minimum", "stock:maximum"])
      const groups = await client.complete({ ref, argument: { name: "group_by", value: "c" }, context })
      expect(groups.completion.values).toEqual(["category", "colors"])
      const prompt = await client.getPrompt({ name: "aggregate_table", arguments: { connection_id: "local", table: "Product", group_by: "category", metric: "stock:sum" } })
      validateDef("2025-11-25", "GetPromptResult", prompt)
      expect((prompt.messages[0]!.content as { text: string }).text).toContain("- stock (int): count, sum, mean, median, mode, minimum, maximum")
    } finally {
      await client.close()
    }
  })

  it("each call is in the query history (tool aggregate, its arguments, its rows) and has its activity line", async () => {
    const client = await v2Client()
    try {
      await client.callTool({ name: "aggregate", arguments: { connection_id: "local", table: "Ticket", tenant: "globex", group_by: "status" } })
      const refused: any = await client.callTool({ name: "aggregate", arguments: { connection_id: "local", table: "Ticket", tenant: "globex", group_by: "subjectx" } })
      expect(refused.isError).toBe(true)
      // The history is written in batches: the entry shows within a bounded wait.
      let entries: Array<any> = []
      for (let i = 0; i < 50 && entries.length < 2; i++) {
        const found: any = await client.callTool({ name: "search_query_history", arguments: { connection_id: "local", tool: "aggregate", search: "globex" } })
        entries = found.structuredContent.entries
        if (entries.length < 2) await new Promise((resolve) => setTimeout(resolve, 100))
      }
      expect(entries).toHaveLength(2)
      const [failed, ok] = entries
      expect(ok).toMatchObject({ tool: "aggregate", table: "Ticket", tenant: "globex", outcome: "ok", rows: 3, source: "mcp", client: "aggregate-v2" })
      expect(JSON.parse(ok.statement)).toEqual({ table: "Ticket", group_by: "status", tenant: "globex" })
      expect(failed).toMatchObject({ tool: "aggregate", outcome: "error", errorCode: "invalid_argument", rows: null })
      expect(failed.errorMessage).toContain("Ticket has no property subjectx")
    } finally {
      await client.close()
    }
    const lines = NodeFs.readFileSync(NodePath.join(home, "activity.log"), "utf8").trimEnd().split("\n").map((text) => Line.parse(text)!)
    const calls = lines.filter((e): e is Extract<Line.Entry, { type: "call" }> => e.type === "call" && e.tool === "aggregate")
    expect(calls.some((e) => e.outcome === "ok" && e.client === "aggregate-v2")).toBe(true)
    expect(calls.some((e) => e.outcome === "tool_error" && e.client === "aggregate-v2")).toBe(true)
  })
})
