/**
 * The tools end to end over real HTTP: the real daemon (default catalogue) on a free port, the
 * Weaviate test instance with sample data, the official v2 client (modern, with an elicitation
 * handler for the approval paths) and v1 client (legacy, dialog path), and raw requests for states a
 * client would never send (tampered, replayed, changed arguments, another principal). The dialog is
 * `--approvals exec` with a shell command whose answer the test sets; every write is counted on the
 * instance's request log.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client"
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { homeLayer } from "../../../src/Cli/CommonOptions.ts"
import * as Daemon from "../../../src/Daemon/Daemon.ts"
import { ConnectionStore } from "../../../src/Driver/ConnectionStore.ts"
import { BoundAddress } from "../../../src/Mcp/HttpTransport.ts"
import { TokenStore } from "../../../src/Auth/TokenStore.ts"
import * as TestDaemon from "../../support/TestDaemon.ts"
import { MODERN, modern, modernHeaders, send, validateDef, validateMessage } from "../../Mcp/support/EndpointHarness.ts"
import { loadSampleData, sampleId } from "../../weaviate/SampleData.ts"
import { startTestWeaviate } from "../../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../../weaviate/WeaviateServer.ts"
import { writesTo } from "./support.ts"
import * as ApprovalRecorder from "../../support/ApprovalRecorder.ts"
import * as TestHome from "../../support/TestHome.ts"

let w: WeaviateTestInstance
let endpoint: string
let connectionId: string
const tokens: Record<"readOnly" | "readWrite" | "fullAccess", string> = { readOnly: "", readWrite: "", fullAccess: "" }
let approvals: ApprovalRecorder.ApprovalRecorder
let runtime: ManagedRuntime.ManagedRuntime<unknown, unknown>

const setAnswer = (answer: "yes" | "no") => approvals.setAnswer(answer)
const dialogLog = () => approvals.questions()

beforeAll(async () => {
  w = await startTestWeaviate()
  await loadSampleData(w, { scale: 0.1 })
  const home = TestHome.tempDirSync("weaviate-mcp-tools-http-")
  approvals = ApprovalRecorder.make("weaviate-mcp-tools-dialog-")
  const command = approvals.command
  await Effect.runPromise(
    Effect.gen(function*() {
      const store = yield* ConnectionStore
      connectionId = (yield* store.add({ name: "local", host: "127.0.0.1", port: w.port })).id
      const tokenStore = yield* TokenStore
      for (const access of ["readOnly", "readWrite", "fullAccess"] as const) {
        tokens[access] = (yield* tokenStore.create({ name: access, access })).token
      }
    }).pipe(Effect.provide(Layer.merge(ConnectionStore.layer, TokenStore.layerOneShot).pipe(Layer.provide(homeLayer(Option.some(home))))), Effect.scoped)
  )
  const settings = await Effect.runPromise(
    TestDaemon.settings({ rateLimit: 0, authLockout: 0, approvals: "exec", approvalCommand: Option.some(command) })
  )
  runtime = ManagedRuntime.make(
    Daemon.layer({ settings, port: 0 }).pipe(Layer.provide(homeLayer(Option.some(home))))
  ) as ManagedRuntime.ManagedRuntime<unknown, unknown>
  const address = await runtime.runPromise(BoundAddress as never) as { url: string }
  endpoint = `${address.url}/mcp`
})
afterAll(async () => {
  await runtime.dispose()
  await w.close()
})
beforeEach(() => {
  setAnswer("yes")
  w.clearRequests()
})

/** A raw modern tools/call. */
const callRaw = (
  name: string,
  args: Record<string, unknown>,
  options: {
    token?: string
    elicitation?: boolean
    requestState?: string
    inputResponses?: unknown
    headers?: Record<string, string>
    progressToken?: string
  } = {}
) =>
  Effect.runPromise(send(endpoint, {
    body: modern("tools/call", {
      name,
      arguments: args,
      ...(options.requestState !== undefined ? { requestState: options.requestState } : {}),
      ...(options.inputResponses !== undefined ? { inputResponses: options.inputResponses } : {})
    }, 1, {
      "io.modelcontextprotocol/clientCapabilities": options.elicitation === true ? { elicitation: { form: {} } } : {},
      ...(options.progressToken !== undefined ? { progressToken: options.progressToken } : {})
    }),
    headers: { ...modernHeaders("tools/call", name), authorization: `Bearer ${options.token ?? tokens.fullAccess}`, ...options.headers }
  }))

const approvedResponse = { approve_statement: { action: "accept", content: { approved: true } } }

/** Answers the first-access question of a token through the form, so later calls go straight to the write. */
const grantAccess = async (token: string) => {
  const first = await callRaw("list_tables", { connection_id: connectionId }, { token, elicitation: true })
  if (first.json.result?.resultType !== "input_required") return
  const granted = await callRaw("list_tables", { connection_id: connectionId }, {
    token,
    elicitation: true,
    requestState: first.json.result.requestState,
    inputResponses: approvedResponse
  })
  expect(granted.json.result.resultType).toBe("complete")
}

const v2Client = async (token: string, answer: (message: unknown) => { action: "accept" | "decline"; content?: Record<string, unknown> }) => {
  const asked: Array<any> = []
  const client = new ClientV2(
    { name: "tools-e2e-v2", version: "1.0.0" },
    { versionNegotiation: { mode: "auto" }, capabilities: { elicitation: { form: {} } } } as never
  )
  client.setRequestHandler("elicitation/create" as never, (async (request: any) => {
    asked.push(request.params)
    return answer(request.params)
  }) as never)
  const transport = new TransportV2(new URL(endpoint), { requestInit: { headers: { authorization: `Bearer ${token}` } } })
  await client.connect(transport)
  return { client, asked }
}

describe("tools over HTTP, modern era", () => {
  it("tools/list serves the catalogue; descriptors validate against the official schema", async () => {
    const reply = await Effect.runPromise(send(endpoint, {
      body: modern("tools/list"),
      headers: { ...modernHeaders("tools/list"), authorization: `Bearer ${tokens.fullAccess}` }
    }))
    validateMessage(MODERN, reply.json, "ListToolsResult")
    expect(reply.json.result.tools.map((t: { name: string }) => t.name)).toContain("confirm_destructive_operation")
    // The contract's fifteen, aggregate, the structure and tenant tools and the daemon's search_query_history.
    expect(reply.json.result.tools.map((t: { name: string }) => t.name)).toContain("search_query_history")
    expect(reply.json.result.tools).toHaveLength(24)
  })

  it("a read through the v2 client: first access via its elicitation handler, then the result", async () => {
    const { client, asked } = await v2Client(tokens.readOnly, () => ({ action: "accept", content: { approved: true } }))
    try {
      const result: any = await client.callTool({ name: "describe_table", arguments: { connection_id: connectionId, table: "Article" } })
      expect(result.isError).toBeFalsy()
      expect(result.structuredContent.vectorizer).toBe("text2vec-transformers")
      expect(asked).toHaveLength(1)
      expect(asked[0].message).toContain("first time")
    } finally {
      await client.close()
    }
  })

  it("a write through the v2 client: accept + approved by a fullAccess token runs it once, with no dialog", async () => {
    const before = dialogLog().length
    const { client, asked } = await v2Client(tokens.fullAccess, () => ({ action: "accept", content: { approved: true } }))
    try {
      const result: any = await client.callTool({
        name: "insert_rows",
        arguments: { connection_id: connectionId, table: "Author", rows: [{ properties: { name: "Over HTTP" } }] }
      })
      expect(result.isError).toBeFalsy()
      expect(result.structuredContent.applied).toBe(1)
      expect(asked.at(-1).requestedSchema.properties.approved.description).toContain("\"Over HTTP\"")
    } finally {
      await client.close()
    }
    expect(writesTo(w).map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/objects"])
    expect(dialogLog().length).toBe(before)
  })

  it("a declined form through the v2 client is the tool error denied; nothing is written", async () => {
    const { client } = await v2Client(tokens.fullAccess, (params: any) =>
      String(params.message).includes("first time") ? { action: "accept", content: { approved: true } } : { action: "decline" })
    try {
      const result: any = await client.callTool({
        name: "delete_rows",
        arguments: { connection_id: connectionId, table: "Author", uuids: ["00000000-0000-4000-8000-000000000001"] }
      })
      expect(result.isError).toBe(true)
      expect(result.content[0].text).toMatch(/^denied: /)
    } finally {
      await client.close()
    }
    expect(writesTo(w)).toEqual([])
  })

  it("a readWrite token's accepted form is confirmed a second time by the exec dialog (exit 0 runs it once, exit 1 denies)", async () => {
    await grantAccess(tokens.readWrite)
    const args = { connection_id: connectionId, table: "Author", rows: [{ properties: { name: "Twice confirmed" } }] }
    for (const answer of ["no", "yes"] as const) {
      w.clearRequests()
      setAnswer(answer)
      const asked = await callRaw("insert_rows", args, { token: tokens.readWrite, elicitation: true })
      validateMessage(MODERN, asked.json, "InputRequiredResult")
      const done = await callRaw("insert_rows", args, {
        token: tokens.readWrite,
        elicitation: true,
        requestState: asked.json.result.requestState,
        inputResponses: approvedResponse
      })
      validateMessage(MODERN, done.json, "CallToolResult")
      expect(done.json.result.isError === true).toBe(answer === "no")
      expect(writesTo(w)).toHaveLength(answer === "yes" ? 1 : 0)
      expect(dialogLog().at(-1)!.title).toBe("weaviate-mcp: confirm the approved write")
    }
  })

  it("tampered, replayed, changed-argument and other-principal states are -32602; the write runs once", async () => {
    await grantAccess(tokens.fullAccess)
    const args = { connection_id: connectionId, table: "Author", rows: [{ properties: { name: "Bound state" } }] }
    const ask = async () => (await callRaw("insert_rows", args, { elicitation: true })).json.result.requestState as string
    const repeat = (state: string, overrides: { args?: Record<string, unknown>; token?: string } = {}) =>
      callRaw("insert_rows", overrides.args ?? args, {
        elicitation: true,
        requestState: state,
        inputResponses: approvedResponse,
        ...(overrides.token !== undefined ? { token: overrides.token } : {})
      })
    const expectInvalid = (reply: Awaited<ReturnType<typeof callRaw>>) => {
      expect(reply.status).toBe(400)
      expect(reply.json.error.code).toBe(-32602)
    }
    const state = await ask()
    expectInvalid(await repeat(`${state.slice(0, -3)}xyz`))
    expectInvalid(await repeat(await ask(), { args: { ...args, rows: [{ properties: { name: "Changed" } }] } }))
    await grantAccess(tokens.readWrite)
    expectInvalid(await repeat(await ask(), { token: tokens.readWrite }))
    expect(writesTo(w)).toEqual([])
    const once = await ask()
    const done = await repeat(once)
    expect(done.json.result.isError).toBeUndefined()
    expectInvalid(await repeat(once))
    expect(writesTo(w)).toHaveLength(1)
  })

  it("execute_query with a progress token streams progress 0.0, 0.3, 1.0 then the result", async () => {
    await grantAccess(tokens.fullAccess)
    const reply = await callRaw("execute_query", { connection_id: connectionId, query: "{ Get { Author(limit: 3) { name } } }", max_rows: 2 }, {
      progressToken: "p1"
    })
    expect(reply.headers.get("content-type")).toContain("text/event-stream")
    const progress = reply.frames.filter((f) => f.method === "notifications/progress").map((f) => f.params.progress)
    expect(progress).toEqual([0, 0.3, 1])
    const final = reply.frames.at(-1)
    validateMessage(MODERN, final, "CallToolResult")
    expect(final.result.content[0].text).toContain("[truncated: 2 of 3 rows shown (max_rows)]")
  })

  it("Mcp-Param headers named by x-mcp-header are validated against the arguments", async () => {
    await grantAccess(tokens.fullAccess)
    const args = { connection_id: connectionId, table: "Author", limit: 2 }
    const good = await callRaw("browse_table", args, { headers: { "mcp-param-table": "Author", "mcp-param-limit": "2" } })
    expect(good.json.result.structuredContent.rows).toHaveLength(2)
    const bad = await callRaw("browse_table", args, { headers: { "mcp-param-table": "Article" } })
    expect(bad.json.error.code).toBe(-32020)
  })

  it("a tool error is a complete result with isError and a code; the destructive tool is -33007 below fullAccess", async () => {
    await grantAccess(tokens.fullAccess)
    const missing = await callRaw("describe_table", { connection_id: connectionId, table: "Nope" })
    validateMessage(MODERN, missing.json, "CallToolResult")
    expect(missing.json.result.resultType).toBe("complete")
    expect(missing.json.result.content[0].text).toMatch(/^not_found: /)
    const refused = await callRaw("confirm_destructive_operation", {
      connection_id: connectionId,
      operation: "drop_table",
      table: "Author",
      confirm: "Author"
    }, { token: tokens.readWrite })
    expect(refused.status).toBe(403)
    expect(refused.json.error.code).toBe(-33007)
  })
})

describe("tools over HTTP, legacy era", () => {
  it("the v1 client never gets input_required: a write blocks on the exec dialog, runs once on exit 0, is denied on exit 1", async () => {
    const client = new ClientV1({ name: "tools-e2e-v1", version: "1.0.0" }, { capabilities: { elicitation: {} } })
    const transport = new TransportV1(new URL(endpoint), { requestInit: { headers: { authorization: `Bearer ${tokens.readWrite}` } } })
    await client.connect(transport)
    try {
      const args = { connection_id: connectionId, table: "Author", rows: [{ properties: { name: "Legacy write" } }] }
      const ok: any = await client.callTool({ name: "insert_rows", arguments: args })
      expect(ok.isError).toBeFalsy()
      expect(ok.resultType).toBeUndefined()
      expect(writesTo(w)).toHaveLength(1)
      expect(dialogLog().at(-1)!.statement).toContain("\"Legacy write\"")
      w.clearRequests()
      setAnswer("no")
      const no: any = await client.callTool({ name: "insert_rows", arguments: args })
      expect(no.isError).toBe(true)
      expect(no.content[0].text).toMatch(/^denied: /)
      expect(writesTo(w)).toEqual([])
    } finally {
      await client.close()
    }
  })
})

describe("every read tool over HTTP in both eras", () => {
  const calls = (): ReadonlyArray<readonly [string, Record<string, unknown>]> => [
    ["list_connections", {}],
    ["get_connection_status", { connection_id: connectionId }],
    ["list_tables", { connection_id: connectionId, include_counts: true }],
    ["describe_table", { connection_id: connectionId, table: "Product" }],
    ["search_schema", { connection_id: connectionId, pattern: "name" }],
    ["browse_table", { connection_id: connectionId, table: "Product", filters: [{ column: "stock", operator: ">=", value: 10 }], limit: 3 }],
    ["count_rows", { connection_id: connectionId, table: "Product" }],
    ["get_row", { connection_id: connectionId, table: "Product", uuid: sampleId(3, 1) }],
    ["vector_search", { connection_id: connectionId, table: "Product", mode: "bm25", query: "lamp", limit: 2 }],
    ["execute_query", { connection_id: connectionId, query: "GET /v1/schema" }]
  ]

  it("modern: each answers a complete CallToolResult valid in 2026-07-28", async () => {
    await grantAccess(tokens.fullAccess)
    for (const [name, args] of calls()) {
      const reply = await callRaw(name, args)
      validateMessage(MODERN, reply.json, "CallToolResult")
      expect(reply.json.result.isError, `${name}: ${JSON.stringify(reply.json.result.content)}`).toBeUndefined()
      expect(reply.json.result.resultType).toBe("complete")
    }
  })

  it("legacy (2025-06-18 through the v1 client): each answers with structured content and no resultType", async () => {
    const client = new ClientV1({ name: "tools-e2e-v1-reads", version: "1.0.0" })
    const transport = new TransportV1(new URL(endpoint), { requestInit: { headers: { authorization: `Bearer ${tokens.fullAccess}` } } })
    await client.connect(transport)
    try {
      for (const [name, args] of calls()) {
        const result: any = await client.callTool({ name, arguments: args })
        expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy()
        expect(result.resultType).toBeUndefined()
        expect(typeof result.structuredContent).toBe("object")
        validateDef(transport.protocolVersion as "2025-11-25", "CallToolResult", result)
      }
    } finally {
      await client.close()
    }
  })
})

