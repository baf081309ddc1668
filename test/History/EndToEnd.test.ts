/**
 * The query history on the real binary and the real Weaviate: `serve` records every statement its
 * tools send (the official SDK v1 and v2 clients call them), the CLI's own commands record theirs
 * with the source `cli`, and both are read back through `search_query_history` (validated against the
 * official MCP schemas), `weaviate-mcp history`, `history show` and `history clear`. A token sees only
 * its allowlisted connections and its own tenants; without `history:read` it sees nothing.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client"
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import Ajv2020 from "ajv/dist/2020.js"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as Line from "../../src/Activity/ActivityLine.ts"
import * as Cli from "../support/Cli.ts"
import { validateDef } from "../support/McpSchemas.ts"
import * as TestHome from "../support/TestHome.ts"
import { loadSampleData } from "../weaviate/SampleData.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"

let w: WeaviateTestInstance
let home: string
let running: Cli.Running
const ids: Record<string, string> = {}
const tokens: Record<string, string> = {}

const cli = (...args: ReadonlyArray<string>) => Cli.run([...args, "--home", home], { timeoutMs: 30_000 })

const v1 = async (token: string, name = "history-v1") => {
  const client = new ClientV1({ name, version: "1.0.0" })
  await client.connect(new TransportV1(new URL(running.endpoint), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
  return client
}

const v2 = async (token: string, name = "history-v2") => {
  const client = new ClientV2({ name, version: "2.0.0" }, { versionNegotiation: { mode: "auto" } })
  await client.connect(new TransportV2(new URL(running.endpoint), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
  return client
}

type Entry = {
  id: number
  time: string
  connection: string | null
  table: string | null
  tenant: string | null
  source: string
  client: string | null
  principal: string | null
  principalName: string | null
  tool: string
  statement: string | null
  statementCut: boolean
  digest: string | null
  durationMs: number
  rows: number | null
  outcome: string
  errorCode: string | null
  errorMessage: string | null
}

/** The history as `weaviate-mcp history --json` prints it, once it holds `count` entries matching `where` (bounded: 100 looks). */
const historyJson = async (args: ReadonlyArray<string>, where: (e: Entry) => boolean = () => true, count = 1): Promise<Array<Entry>> => {
  let entries: Array<Entry> = []
  for (let i = 0; i < 100; i++) {
    const run = await cli("history", ...args, "--json")
    assert.strictEqual(run.code, 0, run.stderr)
    entries = (JSON.parse(run.stdout) as Array<Entry>).filter(where)
    if (entries.length >= count) return entries
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return entries
}

let validateOutput: ((data: unknown) => boolean) & { errors?: unknown }

const search = async (client: ClientV1, args: Record<string, unknown>) => {
  const result = await client.callTool({ name: "search_query_history", arguments: args })
  validateDef("2025-11-25", "CallToolResult", result)
  if (result.isError !== true) assert.isTrue(validateOutput(result.structuredContent), JSON.stringify(validateOutput.errors))
  return result as { isError?: boolean; content: Array<{ type: string; text: string }>; structuredContent: { entries: Array<Entry>; next_cursor?: string } }
}

beforeAll(async () => {
  w = await startTestWeaviate()
  await loadSampleData(w, { scale: 0.1 })
  home = TestHome.tempDirSync()
  for (const name of ["w", "other"]) {
    const added = await cli("connections", "add", "--name", name, "--host", "127.0.0.1", "--port", String(w.port), "--json")
    assert.strictEqual(added.code, 0, added.stderr)
    ids[name] = JSON.parse(added.stdout).id
  }
  const create = async (name: string, ...args: ReadonlyArray<string>) => {
    const created = await cli("tokens", "create", "--name", name, ...args, "--json")
    assert.strictEqual(created.code, 0, created.stderr)
    tokens[name] = JSON.parse(created.stdout).token
  }
  await create("alice", "--access", "readWrite", "--connections", `${ids.w},${ids.other}`)
  await create("narrow", "--access", "readOnly", "--connections", ids.w!)
  await create("acme", "--access", "readOnly", "--connections", ids.w!, "--tenants", `${ids.w}:Ticket:acme`)
  await create("nohistory", "--access", "readOnly", "--scopes", "tools:read,resources:read", "--connections", ids.w!)
  running = await Cli.serve(["--port", "0", "--home", home, "--approvals", "exec", "--approval-command", "true", "--rate-limit", "0"])
  const client = await v1(tokens.alice!)
  const listed = await client.listTools()
  const tool = listed.tools.find((t) => t.name === "search_query_history")
  assert.isDefined(tool)
  validateOutput = new Ajv2020.default({ strict: false }).compile(tool!.outputSchema!)
  await client.close()
}, 120_000)

afterAll(async () => {
  running?.child.kill("SIGTERM")
  await running?.exited
  await w?.close()
})

describe("the query history of a running daemon", () => {
  it("records each tool's statement with its client, principal, rows and outcome, joined to its activity line by digest", async () => {
    const client = await v1(tokens.alice!, "harbour-client")
    try {
      const query = "{ Get { Article(limit: 3) { title } } }"
      await client.callTool({ name: "execute_query", arguments: { connection_id: "w", query } })
      await client.callTool({ name: "vector_search", arguments: { connection_id: ids.w, table: "Article", mode: "bm25", query: "harbour lights", limit: 5 } })
      await client.callTool({ name: "browse_table", arguments: { connection_id: ids.w, table: "Article", limit: 4, filters: [{ column: "wordCount", operator: ">", value: 1 }] } })
      await client.callTool({ name: "count_rows", arguments: { connection_id: ids.w, table: "Article" } })
      const failed = await client.callTool({ name: "execute_query", arguments: { connection_id: ids.w, query: "{ Get { Article { noSuchProperty } } }" } })
      assert.isTrue(failed.isError)
    } finally {
      await client.close()
    }
    const entries = await historyJson([], (e) => e.client === "harbour-client", 5)
    const byTool = (tool: string) => entries.filter((e) => e.tool === tool)
    const graphql = byTool("execute_query").find((e) => e.outcome === "ok")!
    assert.deepInclude(graphql, { connection: ids.w, table: "Article", source: "mcp", principalName: "alice", statement: "{ Get { Article(limit: 3) { title } } }", rows: 3, statementCut: false })
    assert.isAbove(graphql.durationMs, 0)
    const refused = byTool("execute_query").find((e) => e.outcome === "error")!
    assert.strictEqual(refused.errorCode, "query_failed")
    assert.include(refused.errorMessage, "noSuchProperty")
    const search = byTool("vector_search")[0]!
    assert.deepInclude(JSON.parse(search.statement!), { table: "Article", mode: "bm25", query: "harbour lights", limit: 5 })
    assert.deepInclude(JSON.parse(byTool("browse_table")[0]!.statement!), { table: "Article", limit: 4, filters: [{ column: "wordCount", operator: ">", value: 1 }] })
    assert.strictEqual(byTool("browse_table")[0]!.rows, 4)
    assert.isAbove(byTool("count_rows")[0]!.rows!, 0)

    // The digest is the activity line's: the history entry and its line join.
    const lines = NodeFs.readFileSync(NodePath.join(home, "activity.log"), "utf8").split("\n").filter((l) => l.length > 0).map((l) => Line.parse(l)!)
    const line = lines.find((l) => l.type === "call" && l.tool === "vector_search" && l.client === "harbour-client") as Extract<Line.Entry, { type: "call" }>
    assert.strictEqual(search.digest, line.statements[0])
    assert.strictEqual(graphql.digest, Line.statementDigest("{ Get { Article(limit: 3) { title } } }"))
  })

  it("search_query_history finds a statement by full-text search, pages with a cursor, and answers a broken FTS5 search with invalid_argument", async () => {
    const client = await v1(tokens.alice!)
    try {
      const found = await search(client, { search: "harbour", tool: "vector_search" })
      assert.isFalse(found.isError === true)
      assert.isAtLeast(found.structuredContent.entries.length, 1)
      assert.include(found.structuredContent.entries[0]!.statement, "harbour lights")
      assert.match(found.content[0]!.text, /^\| id \| time \| connection \| table \| tool \|/)

      const first = await search(client, { connection_id: "w", limit: 2 })
      assert.lengthOf(first.structuredContent.entries, 2)
      assert.isString(first.structuredContent.next_cursor)
      const second = await search(client, { connection_id: "w", limit: 2, cursor: first.structuredContent.next_cursor })
      const firstIds = first.structuredContent.entries.map((e) => e.id)
      for (const entry of second.structuredContent.entries) assert.isBelow(entry.id, Math.min(...firstIds))

      for (const broken of ['"unbalanced', "NEAR("]) {
        const refused = await search(client, { search: broken })
        assert.isTrue(refused.isError)
        assert.match(refused.content[0]!.text, /^invalid_argument: the search .* is not valid FTS5: (unterminated string|fts5: syntax error)/)
      }
    } finally {
      await client.close()
    }
    // The v2 client reads the same.
    const client2 = await v2(tokens.alice!)
    try {
      const result = await client2.callTool({ name: "search_query_history", arguments: { search: "harbour" } })
      assert.isFalse(result.isError === true)
      assert.isAtLeast((result.structuredContent as { entries: Array<unknown> }).entries.length, 1)
    } finally {
      await client2.close()
    }
  })

  it("the CLI records its own statements (source cli); history shows them, history show prints the statement ready to paste, history clear deletes", async () => {
    const query = "{ Get { Article(limit: 2) { title wordCount } } }"
    const ran = await cli("graphql", "other", query)
    assert.strictEqual(ran.code, 0, ran.stderr)
    const rest = await cli("rest", "other", "GET /v1/objects?class=Article&limit=3")
    assert.strictEqual(rest.code, 0, rest.stderr)
    const browse = await cli("browse", "other", "Article", "--limit", "2")
    assert.strictEqual(browse.code, 0, browse.stderr)
    const file = NodePath.join(TestHome.tempDirSync(), "articles.jsonl")
    const exported = await cli("export", "other", "Article", "--output", file)
    assert.strictEqual(exported.code, 0, exported.stderr)
    const imported = await cli("import", "other", "Article", file, "--dry-run")
    assert.strictEqual(imported.code, 0, imported.stderr)
    const entries = await historyJson(["other", "--client", "cli"], () => true, 5)
    const rowsExported = NodeFs.readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "").length
    assert.deepInclude(entries.find((e) => e.tool === "export")!, { table: "Article", rows: rowsExported, outcome: "ok" })
    assert.deepInclude(JSON.parse(entries.find((e) => e.tool === "import")!.statement!), { table: "Article", file, dryRun: true })
    const graphql = entries.find((e) => e.tool === "graphql")!
    assert.deepInclude(graphql, { source: "cli", connection: ids.other, table: "Article", statement: query, rows: 2, outcome: "ok" })
    assert.deepInclude(entries.find((e) => e.tool === "rest")!, { statement: "GET /v1/objects?class=Article&limit=3", rows: 3, table: "Article" })
    assert.deepInclude(entries.find((e) => e.tool === "browse")!, { rows: 2, table: "Article" })

    const shown = await cli("history", "show", String(graphql.id))
    assert.strictEqual(shown.code, 0, shown.stderr)
    assert.strictEqual(shown.stdout, `${query}\n`)
    assert.include(shown.stderr, `graphql on ${ids.other}`)

    const table = await cli("history", "other", "--tool", "graphql")
    assert.match(table.stdout, /^id\s+time\s+connection\s+table\s+tool\s+source\s+outcome\s+rows\s+ms\s+statement\n-+/)
    assert.include(table.stdout, "{ Get { Article(limit: 2) { title wordCount } } }")

    const failed = await cli("graphql", "other", "{ Get { Article { nothingHere } } }")
    assert.strictEqual(failed.code, 1)
    const errors = await historyJson(["other", "--outcome", "error"], (e) => e.tool === "graphql")
    assert.strictEqual(errors[0]!.outcome, "error")

    const dry = await cli("history", "clear", "other")
    assert.match(dry.stdout, /Would delete \d+ entries; add --yes/)
    assert.isAtLeast((await historyJson(["other"])).length, 6)
    const cleared = await cli("history", "clear", "other", "--yes")
    assert.match(cleared.stdout, /^Deleted \d+ entries\.$/m)
    const after = await cli("history", "other", "--json")
    assert.deepStrictEqual(JSON.parse(after.stdout), [])
    assert.isAtLeast((await historyJson([ids.w!])).length, 1)
  })

  it("the history resource template, the summarize_query_history prompt and the completions of its table and tool", async () => {
    const client = await v1(tokens.alice!)
    try {
      const templates = await client.listResourceTemplates()
      validateDef("2025-11-25", "ListResourceTemplatesResult", templates)
      assert.include(templates.resourceTemplates.map((t) => t.uriTemplate), "weaviate://connections/{id}/history{?limit,search,date_filter}")

      const uri = `weaviate://connections/${ids.w}/history?limit=2&search=lights&date_filter=today`
      const read = await client.readResource({ uri })
      validateDef("2025-11-25", "ReadResourceResult", read)
      const body = JSON.parse((read.contents[0] as { text: string }).text)
      assert.deepInclude(body, { connectionId: ids.w, limit: 2, dateFilter: "today", search: "lights" })
      assert.isAtLeast(body.entries.length, 1)
      for (const entry of body.entries) assert.include(entry.statement, "harbour lights")
      const tooMany = await client.readResource({ uri: `weaviate://connections/${ids.w}/history?limit=501` }).catch((e: Error) => e)
      assert.match(String(tooMany), /-32602|limit must be a whole number from 1 to 500/)
      const badFilter = await client.readResource({ uri: `weaviate://connections/${ids.w}/history?date_filter=yesterday` }).catch((e: Error) => e)
      assert.match(String(badFilter), /date_filter must be today, thisWeek, thisMonth or all/)

      const prompts = await client.listPrompts()
      assert.include(prompts.prompts.map((p) => p.name), "summarize_query_history")
      const prompt = await client.getPrompt({ name: "summarize_query_history", arguments: { connection_id: "w", period: "today", table: "Article" } })
      validateDef("2025-11-25", "GetPromptResult", prompt)
      const text = (prompt.messages[0]!.content as { text: string }).text
      assert.include(text, `Summarise what was run against the Weaviate connection "w" (id ${ids.w}) on the table Article`)
      assert.match(text, /By tool: .*execute_query/)
      assert.include(text, "query_failed")

      const tools = await client.complete({ ref: { type: "ref/prompt", name: "summarize_query_history" }, argument: { name: "tool", value: "vec" } })
      validateDef("2025-11-25", "CompleteResult", tools)
      assert.deepStrictEqual(tools.completion.values, ["vector_search"])
      const tables = await client.complete({
        ref: { type: "ref/prompt", name: "summarize_query_history" },
        argument: { name: "table", value: "A" },
        context: { arguments: { connection_id: ids.w! } }
      })
      assert.deepStrictEqual(tables.completion.values, ["Article"])
      const ids_ = await client.complete({ ref: { type: "ref/resource", uri: "weaviate://connections/{id}/history{?limit,search,date_filter}" }, argument: { name: "id", value: "" } })
      assert.sameMembers(ids_.completion.values, [ids.w, ids.other])
    } finally {
      await client.close()
    }
    // Without history:read, the resource is refused.
    const none = await v1(tokens.nohistory!)
    try {
      const refused = await none.readResource({ uri: `weaviate://connections/${ids.w}/history` }).catch((e: Error) => e)
      assert.match(String(refused), /history:read/)
    } finally {
      await none.close()
    }
  })

  it("a 10 MB statement is recorded cut to 64 KB and marked as cut", async () => {
    const query = `{ Get { Article(limit: 1) { title } } }\n# ${"x".repeat(10 * 1024 * 1024)}`
    const ran = await Cli.run(["graphql", "w", "-", "--home", home], { input: query, timeoutMs: 60_000 })
    assert.strictEqual(ran.code, 0, ran.stderr.slice(0, 500))
    const [entry] = await historyJson(["w", "--tool", "graphql", "--limit", "1"])
    const full = JSON.parse((await cli("history", "show", String(entry!.id), "--json")).stdout)
    assert.isTrue(full.statementCut)
    assert.strictEqual(full.statementBytes, Buffer.byteLength(query))
    assert.strictEqual(Buffer.byteLength(full.statement), 64 * 1024)
    assert.isTrue(query.startsWith(full.statement))
  })

  it("a token sees only the history of its allowlisted connections", async () => {
    const alice = await v1(tokens.alice!)
    await alice.callTool({ name: "count_rows", arguments: { connection_id: ids.other, table: "Author" } })
    await alice.close()
    await historyJson(["other", "--tool", "count_rows"])
    const narrow = await v1(tokens.narrow!)
    try {
      const all = await search(narrow, { limit: 500 })
      assert.isAbove(all.structuredContent.entries.length, 0)
      assert.deepStrictEqual([...new Set(all.structuredContent.entries.map((e) => e.connection))], [ids.w])
      const outside = await narrow.callTool({ name: "search_query_history", arguments: { connection_id: ids.other } }).catch((e: Error) => e)
      assert.instanceOf(outside, Error)
      assert.match((outside as Error).message, /-33007|not in the token's connection allowlist/)
    } finally {
      await narrow.close()
    }
  })

  it("a tenant-scoped token sees only its own tenants' entries", async () => {
    const alice = await v1(tokens.alice!)
    for (const tenant of ["acme", "globex"]) {
      await alice.callTool({ name: "browse_table", arguments: { connection_id: ids.w, table: "Ticket", tenant, limit: 2 } })
    }
    await alice.close()
    await historyJson([ids.w!, "--table", "Ticket"], () => true, 2)
    const acme = await v1(tokens.acme!)
    try {
      const seen = await search(acme, { limit: 500 })
      assert.isAbove(seen.structuredContent.entries.length, 0)
      for (const entry of seen.structuredContent.entries) assert.deepInclude(entry, { table: "Ticket", tenant: "acme" })
    } finally {
      await acme.close()
    }
  })

  it("a token without history:read is not offered search_query_history and is refused it", async () => {
    const client = await v1(tokens.nohistory!)
    try {
      const listed = await client.listTools()
      assert.notInclude(listed.tools.map((t) => t.name), "search_query_history")
      const refused = await client.callTool({ name: "search_query_history", arguments: {} }).catch((e: Error) => e)
      assert.instanceOf(refused, Error)
      assert.match((refused as Error).message, /history:read/)
    } finally {
      await client.close()
    }
  })

  it("reading the history while the daemon writes loses no entry", async () => {
    const marker = `loadtest${Date.now()}`
    const client = await v1(tokens.alice!, marker)
    const calls = 40
    try {
      const writing = Promise.all(Array.from({ length: calls }, (_, i) =>
        client.callTool({ name: "count_rows", arguments: { connection_id: ids.w, table: "Article", filters: [{ column: "wordCount", operator: ">", value: i }] } })))
      const reading = Promise.all(Array.from({ length: 4 }, () => cli("history", "--client", marker, "--json", "--limit", "500")))
      const [answers, reads] = await Promise.all([writing, reading])
      assert.lengthOf(answers, calls)
      for (const read of reads) assert.strictEqual(read.code, 0, read.stderr)
    } finally {
      await client.close()
    }
    const entries = await historyJson(["--client", marker, "--limit", "500"], () => true, calls)
    assert.lengthOf(entries, calls)
  })
})
