/**
 * The official MCP clients as they are, against the real daemon on a headless machine: the SDK v1
 * client (legacy era), the v2 client (modern era) and the MCP Inspector CLI, none written here.
 *
 * Setup: the daemon with `--approvals deny` (what `auto` resolves to without a display or a
 * terminal), tokens created with an explicit connection allowlist (first access granted at creation),
 * the Weaviate test instance with sample data, a connection `local` (Safe Mode confirm) and a
 * connection `guarded` (Safe Mode readOnly, so every write is denied).
 */
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client"
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { homeLayer } from "../../src/Cli/CommonOptions.ts"
import * as Daemon from "../../src/Daemon/Daemon.ts"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { BoundAddress } from "../../src/Mcp/HttpTransport.ts"
import { TokenStore } from "../../src/Auth/TokenStore.ts"
import { MODERN, modern, modernHeaders, send, validateDef, validateMessage } from "./support/EndpointHarness.ts"
import * as Inspector from "../support/Inspector.ts"
import * as TestDaemon from "../support/TestDaemon.ts"
import * as TestHome from "../support/TestHome.ts"
import { loadSampleData } from "../weaviate/SampleData.ts"
import { startWeaviate, type WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"

const LEVELS = ["readOnly", "readWrite", "fullAccess"] as const
type Level = typeof LEVELS[number]

let w: WeaviateTestInstance
let endpoint: string
let runtime: ManagedRuntime.ManagedRuntime<unknown, unknown>
const tokens: Record<Level, string> = { readOnly: "", readWrite: "", fullAccess: "" }
/** A readWrite token without an allowlist: its first access needs the user, and nobody can be asked. */
let unlisted = ""
let localId = ""

beforeAll(async () => {
  w = await startWeaviate()
  await loadSampleData(w, { scale: 0.1 })
  const home = TestHome.tempDirSync("weaviate-mcp-clients-")
  await Effect.runPromise(
    Effect.gen(function*() {
      const store = yield* ConnectionStore
      const local = yield* store.add({ name: "local", host: "127.0.0.1", port: w.port })
      localId = local.id
      const guarded = yield* store.add({ name: "guarded", host: "127.0.0.1", port: w.port, safeMode: "readOnly" })
      const tokenStore = yield* TokenStore
      for (const access of LEVELS) {
        tokens[access] = (yield* tokenStore.create({ name: access, access, connections: [local.id, guarded.id] })).token
      }
      unlisted = (yield* tokenStore.create({ name: "unlisted", access: "readWrite" })).token
    }).pipe(Effect.provide(Layer.merge(ConnectionStore.layer, TokenStore.layerOneShot).pipe(Layer.provide(homeLayer(Option.some(home))))))
  )
  const settings = await Effect.runPromise(TestDaemon.settings({ rateLimit: 0, authLockout: 0, approvals: "deny" }))
  runtime = ManagedRuntime.make(
    Daemon.layer({ settings, port: 0 }).pipe(Layer.provide(homeLayer(Option.some(home))))
  ) as ManagedRuntime.ManagedRuntime<unknown, unknown>
  const address = await runtime.runPromise(BoundAddress as never) as { url: string }
  endpoint = `${address.url}/mcp`
})
afterAll(async () => {
  await runtime?.dispose()
  await w?.close()
})

/** The three everyday failures, as tool calls: tool, arguments, the code the text must start with. */
const failures = [
  ["an unknown connection", "describe_table", { connection_id: "no-such-connection", table: "Author" }, "not_found"],
  [
    "a REGEX filter",
    "browse_table",
    { connection_id: "local", table: "Author", filters: [{ column: "name", operator: "REGEX", value: "^A" }] },
    "unsupported"
  ],
  ["a denied write", "insert_rows", { connection_id: "guarded", table: "Author", rows: [{ properties: { name: "x" } }] }, "denied"]
] as const

const v1Client = async (token: string) => {
  const client = new ClientV1({ name: "clients-v1", version: "1.0.0" })
  await client.connect(new TransportV1(new URL(endpoint), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
  return client
}

const v2Client = async (token: string) => {
  const client = new ClientV2({ name: "clients-v2", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } })
  await client.connect(new TransportV2(new URL(endpoint), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
  return client
}


/** Runs the Inspector CLI (`mcp-inspector --cli`) over Streamable HTTP with the bearer token. */
const inspector = (token: string, args: ReadonlyArray<string>) =>
  Inspector.run([endpoint, "--transport", "http", "--header", `Authorization: Bearer ${token}`, ...args], 25_000)

/** The Inspector's `--tool-arg key=value` pairs; non-string values as JSON. */
const toolArgs = (args: Readonly<Record<string, unknown>>) =>
  Object.entries(args).flatMap(([key, value]) => ["--tool-arg", `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`])

/** The first JSON object the Inspector printed (the result), parsed. */
const firstJson = (stdout: string): any => {
  const end = stdout.indexOf("\n}")
  return JSON.parse(stdout.slice(stdout.indexOf("{"), end + 2))
}

const expectCodedError = (result: any, code: string) => {
  expect(result.isError, JSON.stringify(result)).toBe(true)
  expect(result.content[0].type).toBe("text")
  expect(result.content[0].text.startsWith(`${code}: `), result.content[0].text).toBe(true)
  expect(result.structuredContent).toBeUndefined()
}

describe("tool errors reach the official clients as tool errors", () => {
  it.each(failures)("the SDK v1 client receives an isError result with the coded text for %s", async (_what, name, args, code) => {
    const client = await v1Client(tokens.readWrite)
    try {
      const result = await client.callTool({ name, arguments: args })
      expectCodedError(result, code)
      validateDef("2025-11-25", "CallToolResult", result)
      validateDef("2025-06-18", "CallToolResult", result)
    } finally {
      await client.close()
    }
  })

  it.each(failures)("the v2 client receives an isError result with the coded text for %s", async (_what, name, args, code) => {
    const client = await v2Client(tokens.readWrite)
    try {
      expectCodedError(await client.callTool({ name, arguments: args }), code)
    } finally {
      await client.close()
    }
  })

  it.each(failures)("a raw modern call for %s is a CallToolResult valid for the 2026-07-28 schema", async (_what, name, args, code) => {
    const reply = await Effect.runPromise(send(endpoint, {
      body: modern("tools/call", { name, arguments: args }),
      headers: { ...modernHeaders("tools/call", name), authorization: `Bearer ${tokens.readWrite}` }
    }))
    validateMessage(MODERN, reply.json, "CallToolResult")
    expectCodedError(reply.json.result, code)
  })

  it.each(failures)("the Inspector CLI receives an isError result with the coded text for %s", async (_what, name, args, code) => {
    const run = await inspector(tokens.readWrite, ["--method", "tools/call", "--tool-name", name, ...toolArgs(args)])
    expect(run.stdout + run.stderr).not.toMatch(/-32602|does not match the tool's output schema/)
    expectCodedError(firstJson(run.stdout), code)
  })
})

describe("every tool survives the official clients' checks", () => {
  const reads = [
    ["list_tables", { connection_id: "local" }],
    ["browse_table", { connection_id: "local", table: "Author", limit: 2 }],
    ["vector_search", { connection_id: "local", table: "Article", mode: "hybrid", query: "history", alpha: 0.5, limit: 2 }]
  ] as const

  it.each(reads)("%s succeeds through the SDK v1 client, which checks structuredContent against outputSchema", async (name, args) => {
    const client = await v1Client(tokens.readOnly)
    try {
      const result = await client.callTool({ name, arguments: args })
      expect(result.isError, JSON.stringify(result.content)).not.toBe(true)
      expect(result.structuredContent).toBeDefined()
    } finally {
      await client.close()
    }
  })

  it("vector_search with alpha succeeds through the Inspector CLI", async () => {
    const [, args] = reads[2]
    const run = await inspector(tokens.readOnly, ["--method", "tools/call", "--tool-name", "vector_search", ...toolArgs(args)])
    expect(run.code, run.stderr).toBe(0)
    const result = firstJson(run.stdout)
    expect(result.isError, JSON.stringify(result)).not.toBe(true)
    expect(result.structuredContent.mode).toBe("hybrid")
  })

  it.each(LEVELS)("a %s token: the v2 client's listTools() names the same tools as a raw tools/list", async (level) => {
    const raw = await Effect.runPromise(send(endpoint, {
      body: modern("tools/list"),
      headers: { ...modernHeaders("tools/list"), authorization: `Bearer ${tokens[level]}` }
    }))
    validateMessage(MODERN, raw.json, "ListToolsResult")
    const rawNames: Array<string> = raw.json.result.tools.map((t: { name: string }) => t.name)
    const client = await v2Client(tokens[level])
    try {
      const listed = await client.listTools()
      expect(listed.tools.map((t) => t.name)).toEqual(rawNames)
    } finally {
      await client.close()
    }
    expect(rawNames).toContain("vector_search")
    expect(rawNames.includes("confirm_destructive_operation"), "confirm_destructive_operation is listed for fullAccess only")
      .toBe(level === "fullAccess")
    expect(rawNames.includes("drop_table"), "drop_table is listed for fullAccess only").toBe(level === "fullAccess")
    expect(rawNames.includes("create_table")).toBe(level !== "readOnly")
    expect(rawNames.includes("insert_rows")).toBe(level !== "readOnly")
  })

  it("tools/list offers a readWrite token only what it may call, also from the cached answer", async () => {
    for (const level of ["fullAccess", "readWrite", "fullAccess", "readWrite"] as const) {
      const client = await v1Client(tokens[level])
      try {
        const names = (await client.listTools()).tools.map((t) => t.name)
        expect(names.includes("confirm_destructive_operation"), level).toBe(level === "fullAccess")
      } finally {
        await client.close()
      }
    }
  })

  it("the Inspector CLI's --strict tools/list reports no tool-schema problem", async () => {
    const run = await inspector(tokens.fullAccess, ["--method", "tools/list", "--strict"])
    expect(run.code, run.stderr).toBe(0)
    expect(firstJson(run.stdout).tools.map((t: { name: string }) => t.name)).toContain("confirm_destructive_operation")
  })
})

describe("a headless machine", () => {
  it("a token created with a connection allowlist reads without being asked; one without is refused, since nobody can be asked", async () => {
    const listed = await v2Client(tokens.readOnly)
    try {
      const result = await listed.callTool({ name: "list_tables", arguments: { connection_id: "local" } })
      expect(result.isError).not.toBe(true)
      expect(JSON.stringify(result.structuredContent)).toContain("Author")
    } finally {
      await listed.close()
    }
    const reply = await Effect.runPromise(send(endpoint, {
      body: modern("tools/call", { name: "list_tables", arguments: { connection_id: "local" } }),
      headers: { ...modernHeaders("tools/call", "list_tables"), authorization: `Bearer ${unlisted}` }
    }))
    expect(reply.json.error.code).toBe(-33007)
    expect(reply.json.error.message).toContain("no approval dialog is available")
  })

  it("the allowlist's grant holds for resources too: resources/read of the connection's schema answers at once", async () => {
    const client = await v2Client(tokens.readOnly)
    try {
      const read = await client.readResource({ uri: `weaviate://connections/${localId}/schema` })
      expect(read.contents[0]!.uri).toBe(`weaviate://connections/${localId}/schema`)
      expect(JSON.stringify(read.contents)).toContain("Author")
    } finally {
      await client.close()
    }
  })
})
