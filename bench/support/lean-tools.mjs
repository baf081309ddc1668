// lean-node for the tool calls `bench:peers` times: plain `node:http` programs' worth of the per-call
// work the contract requires, and nothing else. It is the floor the daemon's CPU per call and added
// latency are compared with (issue 27). For every call:
// - the bearer token checked by HMAC against a salted digest; the protocol-version header checked;
// - the JSON body parsed;
// - the POST to Weaviate's `/v1/graphql` through an undici pool;
// - the grid mapping (uuid first, the properties, no vector) and the result JSON (structured content
//   plus a text table);
// - one SHA-256-chained activity line and one log line per call, appended through held descriptors,
//   batched per tick.
// `execute_query` (a GraphQL `Get`) also parses the statement with `graphql` and checks it is one
// read-only operation. `vector_search` in mode `hybrid` reads the collection's properties once (the
// daemon's schema cache does the same) and sends `Get` with `hybrid: {query}` and the score, as the
// daemon does.
// `search_query_history` (when LEAN_HISTORY_DB names a history.db and LEAN_HISTORY_SQL holds the
// store's own `{text, params}` for the benchmarked search) runs that FTS5 statement, prepared once,
// through better-sqlite3 on the file read-only, and answers the entries as the tool's structured
// content plus a one-line-per-entry text table; the search and the limit come from the call.
// Plain JavaScript, so no loader runs beside it. Usage:
//   LEAN_TOKEN=TOKEN node lean-tools.mjs WEAVIATE_URL DIR   → prints `listening on http://127.0.0.1:PORT/mcp`
import * as NodeCrypto from "node:crypto"
import * as NodeHttp from "node:http"
import { createRequire } from "node:module"
import { Kind, parse } from "graphql"
import { Pool } from "undici"
import { leanIntake, leanToken, openLeanLines } from "./lean-contract.mjs"

const [weaviateUrl, dir] = process.argv.slice(2)
if (weaviateUrl === undefined || dir === undefined) {
  console.error("usage: LEAN_TOKEN=TOKEN lean-tools.mjs WEAVIATE_URL DIR")
  process.exit(2)
}
const intake = leanIntake(leanToken())
const pool = new Pool(weaviateUrl, { connections: 8 })
const lines = openLeanLines(dir)

/** The parsed statement when it is one read-only operation, else undefined (also when it does not parse). */
const readOnly = (text) => {
  let document
  try {
    document = parse(text)
  } catch {
    return undefined
  }
  const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION)
  return operations.length === 1 && operations[0].operation === "query" && document.definitions.length === 1 ? document : undefined
}

/**
 * The grid of each collection of a `Get`, its columns in the order the statement selects them: uuid
 * (`_additional { id }`) first, then the properties, then the other `_additional` members (a search's
 * score). `layout`: each collection's `{ properties, additional }` names, in order.
 */
const grids = (data, layout) =>
  Object.entries(data?.Get ?? {}).map(([collection, objects]) => {
    const { properties, additional } = layout.get(collection) ?? { properties: [], additional: [] }
    const others = additional.filter((name) => name !== "id")
    const columns = [...(additional.includes("id") ? ["uuid"] : []), ...properties, ...others]
    const rows = objects.map((object) => {
      const row = {}
      if (additional.includes("id")) row.uuid = object._additional?.id ?? null
      for (const name of properties) row[name] = object[name] ?? null
      for (const name of others) row[name] = object._additional?.[name] ?? null
      return row
    })
    return { collection, columns, rows, totalRows: rows.length, truncated: false }
  })

/** The names a parsed `Get` selects of each collection (fields of `_additional` apart). */
const layoutOf = (document) => {
  const layout = new Map()
  const get = document.definitions[0].selectionSet.selections.find((f) => f.name.value === "Get")
  for (const field of get?.selectionSet?.selections ?? []) {
    const selected = field.selectionSet?.selections ?? []
    layout.set(field.name.value, {
      properties: selected.filter((f) => f.name.value !== "_additional").map((f) => f.name.value),
      additional: selected.filter((f) => f.name.value === "_additional").flatMap((f) => f.selectionSet.selections.map((m) => m.name.value))
    })
  }
  return layout
}

/** Each collection's property names, read once (`/v1/schema/NAME`); undefined for no such collection. */
const properties = new Map()
const propertiesOf = async (table) => {
  const known = properties.get(table)
  if (known !== undefined) return known
  const answer = await pool.request({ path: `/v1/schema/${encodeURIComponent(table)}`, method: "GET" })
  if (answer.statusCode !== 200) return void (await answer.body.dump())
  const collection = await answer.body.json()
  if (!Array.isArray(collection.properties)) return undefined
  const names = collection.properties.map((p) => p.name)
  properties.set(table, names)
  return names
}

/** The Weaviate GraphQL answer's data for `query`. */
const graphql = async (query) => {
  const answer = await pool.request({ path: "/v1/graphql", method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) })
  return (await answer.body.json()).data
}

/** `execute_query`: the statement checked, sent, and its grids; or the status to refuse it with. */
const executeQuery = async (args) => {
  const document = readOnly(args.query)
  if (document === undefined) return 400
  const tables = grids(await graphql(args.query), layoutOf(document))
  return {
    query: args.query,
    text: tables.map(textTable).join("\n\n"),
    structured: { kind: "graphql", maxRows: 100, truncated: false, tables, errors: [] }
  }
}

/** `vector_search` in mode hybrid (the only mode the benchmark times); anything else is refused. */
const vectorSearch = async (args) => {
  if (args.mode !== "hybrid" || typeof args.query !== "string" || typeof args.table !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(args.table)) return 400
  const names = await propertiesOf(args.table)
  if (names === undefined) return 404
  const query = `{ Get { ${args.table}(hybrid: {query: ${JSON.stringify(args.query)}}, limit: ${args.limit ?? 10}) { ${names.join(" ")} _additional { id score } } } }`
  const [table] = grids(await graphql(query), new Map([[args.table, { properties: names, additional: ["id", "score"] }]]))
  const rows = table?.rows ?? []
  return {
    query,
    text: `${table === undefined ? "" : textTable(table)}\n${rows.length} results (hybrid)`,
    structured: { table: args.table, mode: "hybrid", query, columns: table?.columns ?? [], rows }
  }
}

/** `search_query_history`: the benchmarked FTS5 search, newest first, a page of entries; undefined without a history. */
const historySearch = (() => {
  const file = process.env.LEAN_HISTORY_DB
  const sql = process.env.LEAN_HISTORY_SQL
  if (file === undefined || sql === undefined) return undefined
  const { text, params } = JSON.parse(sql)
  const statement = new (createRequire(import.meta.url)("better-sqlite3"))(file, { readonly: true }).prepare(text)
  const cut = (s, width) => (s.length > width ? `${s.slice(0, width - 1)}…` : s)
  return async (args) => {
    if (typeof args.search !== "string") return 400
    const limit = Math.min(500, Math.max(1, args.limit ?? 50))
    const rows = statement.all(args.search, ...params.slice(1, -1), limit + 1)
    const entries = rows.slice(0, limit).map((r) => ({
      id: r.id, time: new Date(r.time).toISOString(), connection: r.connection, table: r.collection, tenant: r.tenant,
      consistencyLevel: r.consistency_level, source: r.source === "cli" ? "cli" : "mcp", client: r.client,
      principal: r.principal_name ?? r.principal, tool: r.tool, statement: r.statement, statementCut: r.cut_from !== null,
      digest: r.digest, durationMs: r.duration_ms, rows: r.rows, outcome: r.outcome === "ok" ? "ok" : "error",
      errorCode: r.error_code, errorMessage: r.error_message, approval: r.approval
    }))
    const lines = entries.map((e) =>
      [e.id, e.time, e.connection, e.table, e.tool, e.source === "cli" ? "cli" : e.client ?? "mcp", e.outcome === "ok" ? "ok" : e.errorCode ?? "error", e.rows, Math.round(e.durationMs), cut((e.statement ?? e.digest ?? "").replace(/\s+/g, " "), 80)].join(" | ")
    )
    const next = rows.length > limit ? `c${entries[entries.length - 1].id}` : undefined
    return {
      query: args.search,
      text: ["id | time | connection | table | tool | source | outcome | rows | ms | statement", ...lines, `${entries.length} entries; ${next === undefined ? "no more" : `more: call again with cursor ${next}`}`].join("\n"),
      structured: { entries, ...(next === undefined ? {} : { next_cursor: next }) }
    }
  }
})()

const tools = new Map([["execute_query", executeQuery], ["vector_search", vectorSearch], ...(historySearch === undefined ? [] : [["search_query_history", historySearch]])])

const textTable = (table) =>
  [`${table.collection}:`, table.columns.join(" | "), ...table.rows.map((row) => table.columns.map((c) => String(row[c] ?? "")).join(" | "))].join("\n")

const server = NodeHttp.createServer((request, response) => {
  const chunks = []
  request.on("data", (chunk) => chunks.push(chunk))
  request.on("end", async () => {
    const started = performance.now()
    const refuse = (status) => (response.writeHead(status), response.end())
    const message = intake(request, chunks)
    if (typeof message === "number") return refuse(message)
    const tool = message.method === "tools/call" ? tools.get(message.params?.name) : undefined
    if (tool === undefined) return refuse(400)
    // Weaviate unreachable or answering otherwise than expected: a refusal, never the floor down.
    const done = await tool(message.params.arguments ?? {}).catch(() => 502)
    if (typeof done === "number") return refuse(done)
    const result = { content: [{ type: "text", text: done.text }], structuredContent: done.structured, isError: false, resultType: "complete" }
    const reply = JSON.stringify({ jsonrpc: "2.0", id: message.id, result })
    response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(reply) })
    response.end(reply)
    lines.append({
      time: new Date().toISOString(),
      client: message.params._meta?.["io.modelcontextprotocol/clientInfo"]?.name ?? null,
      method: "tools/call",
      tool: message.params.name,
      connection: message.params.arguments.connection_id,
      outcome: "ok",
      statements: [NodeCrypto.createHash("sha256").update(done.query).digest("hex")],
      prev: lines.previous
    }, `timestamp=${new Date().toISOString()} level=INFO message="mcp request" method=tools/call tool=${message.params.name} durationMs=${(performance.now() - started).toFixed(1)}`)
  })
})
server.listen(0, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${server.address().port}/mcp`))
process.on("SIGTERM", () => process.exit(0))
