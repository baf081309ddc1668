/**
 * The structure and tenant tools, the collection prompts and their completions end to end: the real
 * daemon on a free port, the real Weaviate with text2vec-bigram, the official v2 client (modern, with
 * an elicitation handler: the approval form) and v1 client (legacy: the user's dialog, here
 * `--approvals exec` with a command whose answer the test sets and whose questions it logs), what the
 * daemon sends validated against the official MCP schemas, and one activity line per call.
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
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import * as Line from "../../../src/Activity/ActivityLine.ts"
import { homeLayer } from "../../../src/Cli/CommonOptions.ts"
import * as Daemon from "../../../src/Daemon/Daemon.ts"
import { ConnectionStore } from "../../../src/Driver/ConnectionStore.ts"
import { BoundAddress } from "../../../src/Mcp/HttpTransport.ts"
import { TokenStore } from "../../../src/Auth/TokenStore.ts"
import * as TestDaemon from "../../support/TestDaemon.ts"
import { MODERN, modern, modernHeaders, send, validateMessage } from "../../Mcp/support/EndpointHarness.ts"
import { startTestWeaviate } from "../../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../../weaviate/WeaviateServer.ts"
import * as ApprovalRecorder from "../../support/ApprovalRecorder.ts"
import * as TestHome from "../../support/TestHome.ts"
import { writesTo } from "./support.ts"

let w: WeaviateTestInstance
let endpoint: string
let home: string
let connectionId: string
const tokens: Record<"readWrite" | "fullAccess", string> = { readWrite: "", fullAccess: "" }
let approvals: ApprovalRecorder.ApprovalRecorder
let runtime: ManagedRuntime.ManagedRuntime<unknown, unknown>

const setAnswer = (answer: "yes" | "no") => approvals.setAnswer(answer)
const dialogLog = () => approvals.questions()

beforeAll(async () => {
  w = await startTestWeaviate({ modules: ["text2vec-bigram"] })
  home = TestHome.tempDirSync("weaviate-mcp-structure-http-")
  approvals = ApprovalRecorder.make("weaviate-mcp-structure-dialog-")
  const command = approvals.command
  await Effect.runPromise(
    Effect.gen(function*() {
      const store = yield* ConnectionStore
      connectionId = (yield* store.add({ name: "local", host: "127.0.0.1", port: w.port })).id
      const tokenStore = yield* TokenStore
      // Naming the connection grants first access at creation.
      for (const access of ["readWrite", "fullAccess"] as const) tokens[access] = (yield* tokenStore.create({ name: access, access, connections: [connectionId] })).token
    }).pipe(Effect.provide(Layer.merge(ConnectionStore.layer, TokenStore.layerOneShot).pipe(Layer.provide(homeLayer(Option.some(home))))), Effect.scoped)
  )
  const settings = await Effect.runPromise(TestDaemon.settings({ rateLimit: 0, authLockout: 0, approvals: "exec", approvalCommand: Option.some(command) }))
  runtime = ManagedRuntime.make(Daemon.layer({ settings, port: 0 }).pipe(Layer.provide(homeLayer(Option.some(home))))) as ManagedRuntime.ManagedRuntime<unknown, unknown>
  const address = await runtime.runPromise(BoundAddress as never) as { url: string }
  endpoint = `${address.url}/mcp`
}, 60_000)
afterAll(async () => {
  await runtime.dispose()
  await w.close()
})
beforeEach(() => {
  setAnswer("yes")
  approvals.clear()
  w.clearRequests()
})

const raw = (method: string, params: Record<string, unknown>, token = tokens.fullAccess) =>
  Effect.runPromise(send(endpoint, {
    body: modern(method, params),
    headers: { ...modernHeaders(method, typeof params["name"] === "string" ? params["name"] : undefined), authorization: `Bearer ${token}` }
  }))

/** A raw modern tools/call from a client that declared elicitation, with an optional answer. */
const callAsking = (name: string, args: Record<string, unknown>, answer?: { requestState: string; inputResponses: unknown }) =>
  Effect.runPromise(send(endpoint, {
    body: modern("tools/call", { name, arguments: args, ...(answer ?? {}) }, 1, { "io.modelcontextprotocol/clientCapabilities": { elicitation: { form: {} } } }),
    headers: { ...modernHeaders("tools/call", name), authorization: `Bearer ${tokens.fullAccess}` }
  }))

const v1Client = async (token = tokens.fullAccess) => {
  const client = new ClientV1({ name: "structure-v1", version: "1.0.0" })
  await client.connect(new TransportV1(new URL(endpoint), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
  return client
}

const v2Client = async (asked: Array<any>, token = tokens.fullAccess) => {
  const client = new ClientV2({ name: "structure-v2", version: "1.0.0" }, { versionNegotiation: { mode: "auto" }, capabilities: { elicitation: { form: {} } } } as never)
  client.setRequestHandler("elicitation/create" as never, (async (request: any) => {
    asked.push(request.params)
    return { action: "accept", content: { approved: true } }
  }) as never)
  await client.connect(new TransportV2(new URL(endpoint), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
  return client
}

const STRUCTURE_TOOLS = ["create_table", "add_column", "update_table", "drop_table", "create_tenants", "set_tenant_status", "delete_tenants"]

describe("the structure tools over HTTP", () => {
  it("tools/list lists them, valid against the official schema; drop_table and delete_tenants only for fullAccess", async () => {
    for (const [token, full] of [[tokens.fullAccess, true], [tokens.readWrite, false]] as const) {
      const reply = await raw("tools/list", {}, token)
      validateMessage(MODERN, reply.json, "ListToolsResult")
      const names: Array<string> = reply.json.result.tools.map((t: { name: string }) => t.name)
      for (const name of STRUCTURE_TOOLS) expect(names.includes(name), name).toBe(full || (name !== "drop_table" && name !== "delete_tenants"))
    }
  })

  it("the v2 client approves create_table in its form, which shows one property a line; the collection exists, vectorized by text2vec-bigram", async () => {
    const asked: Array<any> = []
    const client = await v2Client(asked)
    try {
      const result: any = await client.callTool({
        name: "create_table",
        arguments: {
          connection_id: connectionId,
          table: "Ticket",
          properties: [{ name: "title", dataType: "text" }, { name: "price", dataType: "number" }],
          vectorizer: "text2vec-bigram",
          multi_tenancy: { enabled: true }
        }
      })
      expect(result.isError, JSON.stringify(result)).not.toBe(true)
      expect(result.structuredContent).toEqual({ table: "Ticket", created: true, properties: 2, approvedBy: "form" })
    } finally {
      await client.close()
    }
    expect(asked).toHaveLength(1)
    const lines: Array<string> = asked[0].requestedSchema.properties.approved.description.split("\n")
    expect(lines).toContain("  title: text")
    expect(lines).toContain("  price: number")
    expect(lines).toContain("  multi-tenancy: on (autoTenantCreation off, autoTenantActivation off)")
    expect(writesTo(w).map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/schema"])
    const schema = await (await fetch(`${w.url}/v1/schema/Ticket`)).json() as any
    expect(schema.vectorizer).toBe("text2vec-bigram")
  })

  it("the v1 client: tenants created, deactivated (reads refused naming set_tenant_status), activated with rows kept, deleted with the user's dialog counting the rows", async () => {
    const client = await v1Client()
    const call = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: { connection_id: connectionId, table: "Ticket", ...args } })) as any
    try {
      expect((await call("create_tenants", { tenants: ["acme", "globex"] })).structuredContent.created).toEqual(["acme", "globex"])
      expect((await call("insert_rows", { tenant: "acme", rows: [{ properties: { title: "printer", price: 3 } }] })).structuredContent.applied).toBe(1)
      expect((await call("set_tenant_status", { tenants: ["acme"], status: "INACTIVE" })).structuredContent.tenants).toEqual([{ name: "acme", from: "HOT", to: "COLD" }])
      const refused = await call("browse_table", { tenant: "acme" })
      expect(refused.isError).toBe(true)
      expect(refused.content[0].text).toContain("activate it with set_tenant_status (status ACTIVE)")
      await call("set_tenant_status", { tenants: ["acme"], status: "ACTIVE" })
      expect((await call("browse_table", { tenant: "acme" })).structuredContent.rows.map((r: any) => r.title)).toEqual(["printer"])
      approvals.clear()
      const deleted = await call("delete_tenants", { tenants: ["acme"], confirm: "Ticket" })
      expect(deleted.structuredContent).toEqual({ table: "Ticket", deleted: ["acme"], rowsLost: 1, approvedBy: "exec" })
      const [dialog] = dialogLog()
      expect(dialog!.title).toBe("weaviate-mcp: approve a destructive operation")
      expect(dialog!.statement.split("\n").slice(0, 3)).toEqual(["Delete 1 tenant of Ticket with all their rows", "1 row will be lost in 1 tenant:", "  acme: 1 row"])
      setAnswer("no")
      const kept = await call("drop_table", { confirm: "Ticket" })
      expect(kept.isError).toBe(true)
      expect(kept.content[0].text.startsWith("denied: ")).toBe(true)
      expect((await fetch(`${w.url}/v1/schema/Ticket`)).status).toBe(200)
    } finally {
      await client.close()
    }
  })

  it("drop_table's input_required and its result are valid against the official schema; the form states the rows, the user's dialog follows", async () => {
    const created = await raw("tools/call", { name: "create_table", arguments: { connection_id: connectionId, table: "Dropped", properties: [{ name: "title", dataType: "text" }], vectorizer: "none" } })
    expect(created.json.result.structuredContent.created).toBe(true)
    const args = { connection_id: connectionId, table: "Dropped", confirm: "Dropped" }
    const asked = await callAsking("drop_table", args)
    validateMessage(MODERN, asked.json, "InputRequiredResult")
    const form = asked.json.result.inputRequests.approve_statement.params
    expect(form.message).toContain("Approve a destructive operation")
    expect(form.requestedSchema.properties.approved.description.split("\n").slice(0, 2)).toEqual(["Drop the collection Dropped with all its rows", "Dropped holds 0 rows: all will be lost."])
    approvals.clear()
    const done = await callAsking("drop_table", args, { requestState: asked.json.result.requestState, inputResponses: { approve_statement: { action: "accept", content: { approved: true } } } })
    validateMessage(MODERN, done.json, "CallToolResult")
    expect(done.json.result.structuredContent).toEqual({ table: "Dropped", dropped: true, rowsLost: 0, approvedBy: "exec" })
    expect(dialogLog().map((d) => d.title)).toEqual(["weaviate-mcp: approve a destructive operation"])
  })

  it("each structure call is one activity line, with the digest of the change it asked for", async () => {
    const args = { connection_id: connectionId, table: "Logged", properties: [{ name: "title", dataType: "text" }], vectorizer: "none" }
    const reply = await raw("tools/call", { name: "create_table", arguments: args })
    validateMessage(MODERN, reply.json, "CallToolResult")
    expect(reply.json.result.structuredContent.created).toBe(true)
    const { connection_id: _, ...change } = args
    let line: Extract<Line.Entry, { type: "call" }> | undefined
    for (let i = 0; i < 100 && line === undefined; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 20))
      const entries = NodeFs.readFileSync(NodePath.join(home, "activity.log"), "utf8").trimEnd().split("\n").map((text) => Line.parse(text)!)
      line = entries.find((e): e is Extract<Line.Entry, { type: "call" }> => e.type === "call" && e.tool === "create_table" && e.statements.includes(Line.statementDigest(JSON.stringify(change))))
    }
    expect(line?.outcome).toBe("ok")
    // The query history keeps the change asked for, joined to the activity line by its digest.
    // Entries are written in batches: looked for at most 100 times, 20 ms apart.
    let entries: Array<any> = []
    for (let i = 0; i < 100 && entries.length === 0; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 20))
      entries = (await raw("tools/call", { name: "search_query_history", arguments: { tool: "create_table", table: "Logged" } })).json.result.structuredContent.entries
    }
    expect(entries.map((e: any) => [e.statement, e.digest, e.outcome])).toEqual([
      [JSON.stringify(change), Line.statementDigest(JSON.stringify(change)), "ok"]
    ])
  })
})

describe("the collection prompts and their completions over HTTP", () => {
  it("design_collection names the server's vectorizer modules, the data types and the create_table call; valid against the official schema", async () => {
    const reply = await raw("prompts/get", { name: "design_collection", arguments: { connection_id: connectionId, description: "Support tickets with a title, a status and a price", vectorizer: "text2vec-bigram" } })
    validateMessage(MODERN, reply.json, "GetPromptResult")
    const text: string = reply.json.result.messages[0].content.text
    expect(text).toContain("Use the vectorizer text2vec-bigram.")
    expect(text).toMatch(/Vectorizer modules of this server: [^\n]*text2vec-bigram/)
    expect(text).toContain("Data types: text, text[], int")
    expect(text).toContain("\"tool\": \"create_table\"")
    expect(text).toContain("the user approves it again before anything is created")
    const client = await v1Client()
    try {
      const prompt: any = await client.getPrompt({ name: "plan_column", arguments: { connection_id: connectionId, table: "Ticket", data_type: "date" } })
      expect(prompt.messages[0].content.text).toContain("It should be of type date.")
      expect(prompt.messages[0].content.text).toContain("Weaviate cannot rename or drop a property once added")
    } finally {
      await client.close()
    }
  })

  it("completion/complete completes vectorizer modules from /v1/meta, data types, property names and tenant names", async () => {
    const complete = async (ref: Record<string, unknown>, name: string, value: string, context: Record<string, string>) => {
      const reply = await raw("completion/complete", { ref, argument: { name, value }, context: { arguments: context } })
      validateMessage(MODERN, reply.json, "CompleteResult")
      return reply.json.result.completion.values as Array<string>
    }
    const design = { type: "ref/prompt", name: "design_collection" }
    const plan = { type: "ref/prompt", name: "plan_column" }
    expect(await complete(design, "vectorizer", "text2vec-b", { connection_id: connectionId })).toEqual(["text2vec-bigram"])
    expect(await complete(design, "vectorizer", "no", { connection_id: connectionId })).toEqual(["none"])
    expect(await complete(plan, "data_type", "te", { connection_id: connectionId })).toEqual(["text", "text[]"])
    expect(await complete(plan, "data_type", "Tic", { connection_id: connectionId })).toEqual(["Ticket"])
    expect(await complete(plan, "column", "p", { connection_id: connectionId, table: "Ticket" })).toEqual(["price"])
    const client = await v1Client()
    try {
      await client.callTool({ name: "create_tenants", arguments: { connection_id: connectionId, table: "Ticket", tenants: ["tenant-a", "tenant-b", "other"] } })
      const tenants = await client.complete({
        ref: { type: "ref/resource", uri: "weaviate://connections/{connection_id}/tables/{table}/tenants/{tenant}/rows/{uuid}" },
        argument: { name: "tenant", value: "tenant-" },
        context: { arguments: { connection_id: connectionId, table: "Ticket" } }
      })
      expect(tenants.completion.values).toEqual(["tenant-a", "tenant-b"])
    } finally {
      await client.close()
    }
  })
})
