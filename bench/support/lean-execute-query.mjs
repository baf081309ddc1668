// lean-node for `execute_query`: a plain `node:http` program that does the per-call work the contract
// requires of one `tools/call execute_query` (a GraphQL `Get`), and nothing else. It is the floor the
// daemon's CPU per call and added latency are compared with in `bench:peers` (issue 27):
// - the bearer token checked by HMAC against a salted digest; the protocol-version header checked;
// - the JSON body parsed;
// - the statement parsed with `graphql` and checked to be one read-only operation;
// - the POST to Weaviate's `/v1/graphql` through an undici pool;
// - the grid mapping (uuid first, the properties, no vector) and the result JSON (structured content
//   plus a text table);
// - one SHA-256-chained activity line and one log line per call, appended through held descriptors,
//   batched per tick.
// Plain JavaScript, so no loader runs beside it. Usage:
//   LEAN_TOKEN=TOKEN node lean-execute-query.mjs WEAVIATE_URL DIR   → prints `listening on http://127.0.0.1:PORT/mcp`
import * as NodeCrypto from "node:crypto"
import * as NodeHttp from "node:http"
import { Kind, parse } from "graphql"
import { Pool } from "undici"
import { leanIntake, leanToken, openLeanLines } from "./lean-contract.mjs"

const [weaviateUrl, dir] = process.argv.slice(2)
if (weaviateUrl === undefined || dir === undefined) {
  console.error("usage: LEAN_TOKEN=TOKEN lean-execute-query.mjs WEAVIATE_URL DIR")
  process.exit(2)
}
const intake = leanIntake(leanToken())
const pool = new Pool(weaviateUrl, { connections: 8 })
const lines = openLeanLines(dir)

/** One read-only operation, or a reason it is not. */
const readOnly = (text) => {
  const document = parse(text)
  const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION)
  if (operations.length !== 1) return "one operation"
  if (operations[0].operation !== "query") return "read-only"
  return undefined
}

/** The grid of each collection of a `Get`: uuid first, then the properties. */
const grids = (data) =>
  Object.entries(data?.Get ?? {}).map(([collection, objects]) => {
    const columns = ["uuid"]
    for (const object of objects) {
      for (const key of Object.keys(object)) if (key !== "_additional" && !columns.includes(key)) columns.push(key)
    }
    const rows = objects.map((object) => {
      const row = { uuid: object._additional?.id ?? null }
      for (const column of columns.slice(1)) row[column] = object[column] ?? null
      return row
    })
    return { collection, columns, rows, totalRows: rows.length, truncated: false }
  })

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
    if (message.method !== "tools/call" || message.params?.name !== "execute_query") return refuse(400)
    const query = message.params.arguments.query
    const refused = readOnly(query)
    if (refused !== undefined) return refuse(400)
    const answer = await pool.request({ path: "/v1/graphql", method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ query }) })
    const body = await answer.body.json()
    const tables = grids(body.data)
    const result = {
      content: [{ type: "text", text: tables.map(textTable).join("\n\n") }],
      structuredContent: { kind: "graphql", maxRows: 100, truncated: false, tables, errors: [] },
      isError: false,
      resultType: "complete"
    }
    const reply = JSON.stringify({ jsonrpc: "2.0", id: message.id, result })
    response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(reply) })
    response.end(reply)
    lines.append({
      time: new Date().toISOString(),
      client: message.params._meta?.["io.modelcontextprotocol/clientInfo"]?.name ?? null,
      method: "tools/call",
      tool: "execute_query",
      connection: message.params.arguments.connection_id,
      outcome: "ok",
      statements: [NodeCrypto.createHash("sha256").update(query).digest("hex")],
      prev: lines.previous
    }, `timestamp=${new Date().toISOString()} level=INFO message="mcp request" method=tools/call tool=execute_query durationMs=${(performance.now() - started).toFixed(1)}`)
  })
})
server.listen(0, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${server.address().port}/mcp`))
process.on("SIGTERM", () => process.exit(0))
