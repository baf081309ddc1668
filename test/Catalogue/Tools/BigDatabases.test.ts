/**
 * Big databases, through real MCP over HTTP (the official SDK v1 client, which checks every
 * structuredContent against the tool's outputSchema) against the daemon in front of the real Weaviate
 * (a recording proxy between them counts what reaches Weaviate): listings page with a cursor that
 * holds under change and belongs to its listing, our own writes clear the caches, a dropped
 * collection is not_found, callers at once share one read, an exact tenant name is one request and
 * no listing, completions come from the tenant cache, and each cap says how to narrow or page.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { TokenStore } from "../../../src/Auth/TokenStore.ts"
import { homeLayer } from "../../../src/Cli/CommonOptions.ts"
import * as Daemon from "../../../src/Daemon/Daemon.ts"
import { ConnectionStore } from "../../../src/Driver/ConnectionStore.ts"
import { BoundAddress } from "../../../src/Mcp/HttpTransport.ts"
import * as TestDaemon from "../../support/TestDaemon.ts"
import * as TestHome from "../../support/TestHome.ts"
import { startTestWeaviate } from "../../weaviate/TestWeaviate.ts"
import type { RecordedRequest, WeaviateTestInstance } from "../../weaviate/WeaviateServer.ts"

const TENANTS = Array.from({ length: 150 }, (_, i) => `t${String(i).padStart(3, "0")}`)
const TABLES = Array.from({ length: 12 }, (_, i) => `Pg${String(i).padStart(3, "0")}`)

let w: WeaviateTestInstance
let runtime: ManagedRuntime.ManagedRuntime<unknown, unknown>
let endpoint = ""
const ids: Record<"big" | "cold" | "spare", string> = { big: "", cold: "", spare: "" }
const tokens = { full: "", scoped: "" }
const clients: Array<Client> = []

const weaviate = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${w.url}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
}

const collection = (name: string, multiTenant = false) => ({
  class: name,
  vectorizer: "none",
  properties: [{ name: "label", dataType: ["text"] }],
  ...(multiTenant ? { multiTenancyConfig: { enabled: true } } : {})
})

const client = async (token: string) => {
  const c = new Client({ name: "big-databases", version: "1.0.0" })
  await c.connect(new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
  clients.push(c)
  return c
}

interface Result {
  readonly isError?: boolean
  readonly content: Array<{ type: string; text?: string }>
  readonly structuredContent?: any
}

let full: Client
let scoped: Client

const call = async (name: string, args: Record<string, unknown>, as: Client = full, connection = ids.big): Promise<Result> =>
  (await as.callTool({ name, arguments: { connection_id: connection, ...args } })) as Result

const text = (r: Result) => r.content.map((c) => c.text ?? "").join("\n")

const ok = (r: Result) => {
  expect(r.isError, text(r)).not.toBe(true)
  return r.structuredContent
}

const failed = (r: Result, code: string) => {
  expect(r.isError, text(r)).toBe(true)
  expect(text(r)).toMatch(new RegExp(`^${code}: `))
  return text(r)
}

/** Every page of a listing from `first` on, in order (bounded: at most 50 pages). */
const walk = async (tool: string, args: Record<string, unknown>, key: string, first: any) => {
  const names: Array<string> = first[key].map((x: { name: string }) => x.name)
  let cursor: string | undefined = first.nextCursor
  for (let page = 0; cursor !== undefined && page < 50; page++) {
    const next = ok(await call(tool, { ...args, cursor }))
    names.push(...next[key].map((x: { name: string }) => x.name))
    cursor = next.nextCursor
  }
  return names
}

const since = (from: number, test: (r: RecordedRequest) => boolean) => w.requests.slice(from).filter(test)
const isTenantListing = (table: string) => (r: RecordedRequest) => r.method === "GET" && r.path === `/v1/schema/${table}/tenants`

beforeAll(async () => {
  w = await startTestWeaviate()
  for (const name of TABLES) await weaviate("POST", "/v1/schema", collection(name))
  await weaviate("POST", "/v1/schema", collection("Big", true))
  await weaviate("POST", "/v1/schema/Big/tenants", TENANTS.map((name, i) => ({ name, activityStatus: i >= 140 ? "COLD" : "HOT" })))
  await weaviate("POST", "/v1/schema", collection("Other", true))
  await weaviate("POST", "/v1/schema/Other/tenants", [{ name: "o1" }, { name: "o2" }])
  await weaviate("POST", "/v1/schema", collection("Gone", true))
  await weaviate("POST", "/v1/schema/Gone/tenants", [{ name: "g1" }])
  await weaviate("POST", "/v1/schema", collection("Wide"))
  // Rows whose text is wider than the cap of one answer (1,000 rows of about 110 characters each).
  const objects = Array.from({ length: 1_000 }, (_, i) => ({ class: "Wide", properties: { label: `row ${i} ${"x".repeat(50)}` } }))
  await weaviate("POST", "/v1/batch/objects", { objects })
  const home = TestHome.tempDirSync("weaviate-mcp-big-")
  await Effect.runPromise(
    Effect.gen(function*() {
      const store = yield* ConnectionStore
      for (const name of ["big", "cold", "spare"] as const) {
        ids[name] = (yield* store.add({ name, host: "127.0.0.1", port: w.port, safeMode: "silent" })).id
      }
      const tokenStore = yield* TokenStore
      tokens.full = (yield* tokenStore.create({ name: "full", access: "fullAccess" })).token
      tokens.scoped = (yield* tokenStore.create({ name: "scoped", access: "fullAccess", tenants: { [ids.big]: { Big: ["t001", "t002"] } } })).token
    }).pipe(Effect.provide(Layer.merge(ConnectionStore.layer, TokenStore.layerOneShot).pipe(Layer.provide(homeLayer(Option.some(home))))), Effect.scoped)
  )
  const settings = await Effect.runPromise(
    TestDaemon.settings({ rateLimit: 0, authLockout: 0, approvals: "exec", approvalCommand: Option.some("cat > /dev/null; true") })
  )
  runtime = ManagedRuntime.make(Daemon.layer({ settings, port: 0 }).pipe(Layer.provide(homeLayer(Option.some(home))))) as ManagedRuntime.ManagedRuntime<unknown, unknown>
  endpoint = `${(await runtime.runPromise(BoundAddress as never) as { url: string }).url}/mcp`
  full = await client(tokens.full)
  scoped = await client(tokens.scoped)
}, 180_000)

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined)
  await runtime?.dispose()
  await w?.close()
}, 60_000)

describe("big databases over MCP (real Weaviate)", () => {
  it("list_tables pages with total and a cursor, and paging holds when collections are added and dropped between pages", async () => {
    const first = ok(await call("list_tables", { pattern: "Pg", limit: 4 }))
    expect(first.tables.map((t: { name: string }) => t.name)).toEqual(["Pg000", "Pg001", "Pg002", "Pg003"])
    expect(first.total).toBe(12)
    expect(first.nextCursor).toEqual(expect.any(String))
    // Our own writes, through the daemon: each clears its schema cache.
    ok(await call("execute_query", { query: `POST /v1/schema ${JSON.stringify(collection("Pg0025"))}` }))
    ok(await call("execute_query", { query: `POST /v1/schema ${JSON.stringify(collection("Pg0105"))}` }))
    for (const table of ["Pg001", "Pg005"]) {
      ok(await call("confirm_destructive_operation", { table, confirm: table, operation: "drop_table" }))
    }
    const names = await walk("list_tables", { pattern: "Pg", limit: 4 }, "tables", first)
    const stayed = TABLES.filter((t) => t !== "Pg001" && t !== "Pg005")
    for (const t of stayed) expect(names.filter((n) => n === t), t).toHaveLength(1)
    expect(names).toContain("Pg0105")
    expect(names).not.toContain("Pg005")
    expect(new Set(names).size).toBe(names.length)
  })

  it("list_tenants pages with total and a cursor, and paging holds when tenants are added and removed between pages", async () => {
    const first = ok(await call("list_tenants", { table: "Big", limit: 40 }))
    expect(first.tenants).toHaveLength(40)
    expect(first.total).toBe(150)
    // Our own tenant writes, through the daemon: each clears that collection's tenant cache.
    ok(await call("execute_query", { query: `POST /v1/schema/Big/tenants [{"name":"t0205"},{"name":"t1000"}]` }))
    ok(await call("execute_query", { query: `DELETE /v1/schema/Big/tenants ["t010","t050"]` }))
    const names = await walk("list_tenants", { table: "Big", limit: 40 }, "tenants", first)
    const stayed = TENANTS.filter((t) => t !== "t010" && t !== "t050")
    for (const t of stayed) expect(names.filter((n) => n === t), t).toHaveLength(1)
    expect(names).toContain("t1000")
    expect(names).not.toContain("t050")
    expect(new Set(names).size).toBe(names.length)
    const after = ok(await call("list_tenants", { table: "Big", limit: 1 }))
    expect(after.total).toBe(150)
  })

  it("prefix and status narrow list_tenants; ACTIVE, INACTIVE and OFFLOADED are HOT, COLD and FROZEN", async () => {
    const prefixed = ok(await call("list_tenants", { table: "Big", prefix: "t04" }))
    expect(prefixed.tenants.map((t: { name: string }) => t.name)).toEqual(TENANTS.filter((t) => t.startsWith("t04")))
    expect(prefixed.total).toBe(10)
    const cold = ok(await call("list_tenants", { table: "Big", status: "COLD" }))
    expect(cold.tenants.map((t: { name: string }) => t.name)).toEqual(TENANTS.slice(140))
    expect(cold.tenants.every((t: { active: boolean }) => !t.active)).toBe(true)
    expect(ok(await call("list_tenants", { table: "Big", status: "INACTIVE" })).total).toBe(10)
    const page = ok(await call("list_tenants", { table: "Big", status: "HOT", limit: 100 }))
    expect(page.tenants).toHaveLength(100)
    expect(page.nextCursor).toEqual(expect.any(String))
  })

  it("a cursor from one collection or filter is refused with another (invalid_argument)", async () => {
    const tenants = ok(await call("list_tenants", { table: "Big", limit: 5 })).nextCursor
    expect(failed(await call("list_tenants", { table: "Other", cursor: tenants }), "invalid_argument")).toContain("another list_tenants listing")
    failed(await call("list_tenants", { table: "Big", prefix: "t1", cursor: tenants }), "invalid_argument")
    failed(await call("list_tenants", { table: "Big", status: "HOT", cursor: tenants }), "invalid_argument")
    failed(await call("list_tenants", { table: "Big", cursor: "not-a-cursor" }), "invalid_argument")
    const tables = ok(await call("list_tables", { pattern: "Pg", limit: 2 })).nextCursor
    failed(await call("list_tables", { pattern: "Pg0", cursor: tables }), "invalid_argument")
    failed(await call("list_tables", { pattern: "Pg", cursor: tables }, full, ids.spare), "invalid_argument")
    failed(await call("list_tenants", { table: "Big", cursor: tables }), "invalid_argument")
    const matches = ok(await call("search_schema", { pattern: "label", limit: 2 })).nextCursor
    failed(await call("search_schema", { pattern: "lab", cursor: matches }), "invalid_argument")
    // The same arguments take it.
    expect(ok(await call("search_schema", { pattern: "label", limit: 2, cursor: matches })).matches).toHaveLength(2)
  })

  it("a stale cache never serves a dropped collection: after the drop, listings leave it out and tools on it answer not_found", async () => {
    expect(ok(await call("list_tables", { pattern: "Gone" })).tables.map((t: { name: string }) => t.name)).toEqual(["Gone"])
    expect(ok(await call("list_tenants", { table: "Gone" })).total).toBe(1)
    expect(ok(await call("search_schema", { pattern: "Gone" })).total).toBe(1)
    ok(await call("confirm_destructive_operation", { table: "Gone", confirm: "Gone", operation: "drop_table" }))
    const listed = ok(await call("list_tables", { pattern: "Gone" }))
    expect(listed.tables).toEqual([])
    expect(listed.stale).toBeUndefined()
    expect(ok(await call("search_schema", { pattern: "Gone" })).total).toBe(0)
    failed(await call("list_tenants", { table: "Gone" }), "not_found")
    failed(await call("list_tenants", { table: "Gone", name: "g1" }), "not_found")
    failed(await call("describe_table", { table: "Gone" }), "not_found")
  })

  it("callers at once share one read: a cold cache under 6 concurrent calls sends one request for the schema, the shards and the tenants", async () => {
    // First access to the connection is granted once, before the calls at once.
    ok(await call("get_connection_status", {}, full, ids.cold))
    const from = w.requests.length
    const results = await Promise.all([
      ...Array.from({ length: 6 }, () => call("list_tables", { limit: 3 }, full, ids.cold)),
      ...Array.from({ length: 6 }, () => call("list_tenants", { table: "Other" }, full, ids.cold))
    ])
    for (const r of results) ok(r)
    expect(since(from, (r) => r.method === "GET" && r.path === "/v1/schema")).toHaveLength(1)
    expect(since(from, (r) => r.method === "GET" && r.path === "/v1/nodes")).toHaveLength(1)
    expect(since(from, isTenantListing("Other"))).toHaveLength(1)
    // Warm: the same calls again reach Weaviate for none of them.
    const warm = w.requests.length
    for (const r of await Promise.all(Array.from({ length: 6 }, () => call("list_tables", { limit: 3 }, full, ids.cold)))) ok(r)
    expect(since(warm, (r) => r.path === "/v1/schema" || r.path === "/v1/nodes")).toEqual([])
  })

  it("an exact tenant name is one request to Weaviate's single-tenant route and never a listing", async () => {
    const from = w.requests.length
    const one = ok(await call("list_tenants", { table: "Big", name: "t077" }, full, ids.spare))
    expect(one).toMatchObject({ table: "Big", total: 1, tenants: [{ name: "t077", activityStatus: "HOT", active: true }] })
    expect(since(from, isTenantListing("Big"))).toEqual([])
    expect(since(from, (r) => r.path === "/v1/schema/Big/tenants/t077")).toHaveLength(1)
    const none = ok(await call("list_tenants", { table: "Big", name: "nobody" }, full, ids.spare))
    expect(none).toMatchObject({ total: 0, tenants: [] })
    expect(since(from, isTenantListing("Big"))).toEqual([])
  })

  it("a prefix only one tenant starts with is answered as Weaviate has that tenant now", async () => {
    const from = w.requests.length
    const one = ok(await call("list_tenants", { table: "Big", prefix: "t14" }))
    expect(one.total).toBe(10)
    const unique = ok(await call("list_tenants", { table: "Big", prefix: "t077" }))
    expect(unique).toMatchObject({ total: 1, tenants: [{ name: "t077" }] })
    expect(since(from, (r) => r.path === "/v1/schema/Big/tenants/t077")).toHaveLength(1)
  })

  it("a tenant-scoped token sees only its tenants in pages, exact names and completions", async () => {
    const page = ok(await call("list_tenants", { table: "Big" }, scoped))
    expect(page.tenants.map((t: { name: string }) => t.name)).toEqual(["t001", "t002"])
    expect(page.total).toBe(2)
    expect(ok(await call("list_tenants", { table: "Big", name: "t003" }, scoped))).toMatchObject({ total: 0, tenants: [] })
    const completion = await scoped.complete({
      ref: { type: "ref/resource", uri: "weaviate://connections/{connection_id}/tables/{table}/tenants/{tenant}/rows/{uuid}" },
      argument: { name: "tenant", value: "t" },
      context: { arguments: { connection_id: ids.big, table: "Big" } }
    })
    expect(completion.completion.values).toEqual(["t001", "t002"])
  })

  it("tenant completions come from the tenant cache by prefix: the first 100 and hasMore, and no request once warm", async () => {
    const complete = (value: string) =>
      full.complete({
        ref: { type: "ref/resource", uri: "weaviate://connections/{connection_id}/tables/{table}/tenants/{tenant}/rows/{uuid}" },
        argument: { name: "tenant", value },
        context: { arguments: { connection_id: ids.big, table: "Big" } }
      })
    const first = await complete("T")
    expect(first.completion.values).toHaveLength(100)
    expect(first.completion.values[0]).toBe("t000")
    expect(first.completion.hasMore).toBe(true)
    expect(first.completion.total).toBeGreaterThan(100)
    const from = w.requests.length
    expect((await complete("t12")).completion).toEqual({ values: TENANTS.filter((t) => t.startsWith("t12")), total: 10, hasMore: false })
    expect(since(from, isTenantListing("Big"))).toEqual([])
  })

  it("a refusal for a missing tenant names the first tenants from the tenant cache, not from a listing of every tenant", async () => {
    ok(await call("list_tenants", { table: "Big", limit: 1 }))
    const from = w.requests.length
    const refused = failed(await call("browse_table", { table: "Big" }), "invalid_argument")
    expect(refused).toMatch(/^invalid_argument: Big is multi-tenant; pass tenant \(tenants: t000, t001, (t\d+, ){17}t\d+ …\)$/)
    expect(since(from, isTenantListing("Big"))).toEqual([])
  })

  describe("each cap, cut on purpose, says how to narrow or page", () => {
    it("list_tables", async () => {
      const r = await call("list_tables", { pattern: "Pg", limit: 2 })
      expect(text(r)).toMatch(/\[page: 2 of \d+ collections shown; narrow with pattern, or call again with cursor \S+ for the next page\]/)
    })

    it("search_schema", async () => {
      const r = await call("search_schema", { pattern: "label", limit: 3 })
      expect(text(r)).toMatch(/\[page: 3 of \d+ matches shown; narrow with a longer pattern, or call again with cursor \S+ for the next page\]/)
    })

    it("list_tenants", async () => {
      const r = await call("list_tenants", { table: "Big" })
      expect(ok(r).tenants).toHaveLength(100)
      expect(text(r)).toMatch(/\[page: 100 of \d+ tenants shown; narrow with prefix or status, or call again with cursor \S+ for the next page\]/)
    })

    it("describe_table's tenants", async () => {
      const r = await call("describe_table", { table: "Big" })
      const d = ok(r)
      expect(d.tenants).toHaveLength(100)
      expect(d.tenancy.tenantCount).toBeGreaterThan(100)
      expect(text(r)).toContain(`[20 of ${d.tenancy.tenantCount} shown; list_tenants pages them all, prefix or status narrows]`)
    })

    it("the text of any answer (browse_table of 1,000 wide rows)", async () => {
      const r = await call("browse_table", { table: "Wide", limit: 1_000 })
      expect(ok(r).rows).toHaveLength(1_000)
      const t = text(r)
      expect(t.length).toBeLessThanOrEqual(32_000)
      expect(t).toMatch(/\[cut: this text is capped at 32,000 characters and held [\d,]+; structuredContent has all of it\. To see the rest, narrow or page: a smaller limit or filters; the next rows with offset\]$/)
    })
  })
})
