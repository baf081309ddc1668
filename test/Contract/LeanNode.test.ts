/**
 * `bench:peers` compares the daemon with lean-node (bench/support/lean-tools.mjs), a plain `node:http`
 * program that does only the per-call work the contract requires. A floor is honest only while it
 * answers what the daemon answers: the same rows and columns from the same GraphQL, for each tool the
 * benchmark times (`execute_query`, `vector_search` hybrid), against the real Weaviate. And it refuses
 * what it does not do rather than answer something else.
 */
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { modern, modernHeaders } from "../Mcp/support/EndpointHarness.ts"
import { type Harness, makeHarness, success } from "../Catalogue/Tools/support.ts"

const LEAN = NodePath.resolve(import.meta.dirname, "../../bench/support/lean-tools.mjs")
const TOKEN = "wmcp_lean_floor_test_token"
const TABLE = "LeanFloor"
const words = ["river", "ocean", "vector", "graph", "shard", "model"]

let h: Harness
let lean: NodeChildProcess.ChildProcess
let endpoint: string
let dir: string

/** POSTs JSON to the Weaviate under test; fails on a non-2xx answer. */
const weaviatePost = async (path: string, body: unknown) => {
  const response = await fetch(`${h.w.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status} ${await response.text()}`)
}

/** A modern `tools/call` to lean-node: the HTTP status and the body. */
const callLean = async (name: string, args: Record<string, unknown>, token = TOKEN) => {
  const response = await fetch(endpoint, {
    method: "POST",
    headers: { ...modernHeaders("tools/call", name), authorization: `Bearer ${token}` },
    body: JSON.stringify(modern("tools/call", { name, arguments: args }))
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
}

beforeAll(async () => {
  h = await makeHarness({ sample: false })
  await weaviatePost("/v1/schema", {
    class: TABLE,
    vectorizer: "text2vec-transformers",
    properties: [{ name: "title", dataType: ["text"] }, { name: "body", dataType: ["text"] }]
  })
  const objects = Array.from({ length: 40 }, (_, n) => ({
    class: TABLE,
    properties: { title: `${words[n % 6]} ${words[(n * 5) % 6]}`, body: Array.from({ length: 12 }, (_, i) => words[(n * 7 + i * 3) % 6]).join(" ") }
  }))
  await weaviatePost("/v1/batch/objects", { objects })
  dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-lean-"))
  lean = NodeChildProcess.spawn(process.execPath, [LEAN, h.w.url, dir], { env: { ...process.env, LEAN_TOKEN: TOKEN }, stdio: ["ignore", "pipe", "pipe"] })
  endpoint = await new Promise<string>((resolve, reject) => {
    let out = ""
    const timer = setTimeout(() => reject(new Error(`lean-node did not start: ${out}`)), 20_000)
    const read = (chunk: Buffer) => {
      out += chunk.toString("utf8")
      const found = /listening on (http:\/\/\S+)/.exec(out)?.[1]
      if (found !== undefined) (clearTimeout(timer), resolve(found))
    }
    lean.stdout!.on("data", read)
    lean.stderr!.on("data", read)
    lean.once("exit", (code) => (clearTimeout(timer), reject(new Error(`lean-node exited (${code}): ${out}`))))
  })
}, 180_000)

afterAll(async () => {
  lean?.kill("SIGTERM")
  await h?.close()
  if (dir !== undefined) NodeFs.rmSync(dir, { recursive: true, force: true })
})

describe("lean-node, the benchmark's floor, answers what the daemon answers", () => {
  it("vector_search hybrid: the same GraphQL, columns and rows (uuid first, the properties, the score)", async () => {
    for (const query of ["river", "vector graph", "ocean \"quoted\""]) {
      const args = { table: TABLE, mode: "hybrid", query, limit: 10 }
      const ours = success(h, "vector_search", await h.call("vector_search", { connection_id: h.ids.local, ...args })).structured
      const floor = await callLean("vector_search", { connection_id: "any", ...args })
      expect(floor.status, JSON.stringify(floor.body)).toBe(200)
      const theirs = floor.body.result.structuredContent
      expect(theirs.query).toBe(ours.query)
      expect(theirs.columns).toEqual(ours.columns)
      expect(theirs.rows).toEqual(ours.rows)
      expect(ours.rows.length).toBeGreaterThan(0)
    }
  })

  it("execute_query: the same tables from the same Get", async () => {
    const query = `{ Get { ${TABLE}(limit: 10) { title body _additional { id } } } }`
    const ours = success(h, "execute_query", await h.call("execute_query", { connection_id: h.ids.local, query })).structured
    const floor = await callLean("execute_query", { connection_id: "any", query })
    expect(floor.status, JSON.stringify(floor.body)).toBe(200)
    const theirs = floor.body.result.structuredContent
    expect(theirs.tables.map((t: { columns: unknown }) => t.columns)).toEqual(ours.tables.map((t: { columns: unknown }) => t.columns))
    expect(theirs.tables.map((t: { rows: unknown }) => t.rows)).toEqual(ours.tables.map((t: { rows: unknown }) => t.rows))
    expect(ours.tables[0].rows).toHaveLength(10)
  })

  it("refuses what it does not do, and stays up: a wrong token, a body that is not JSON, a write or unparsable statement, another search mode, a name that is no collection, an unknown tool", async () => {
    expect((await callLean("execute_query", { query: "{ Get { X { a } } }" }, "wmcp_wrong")).status).toBe(401)
    expect((await callLean("execute_query", { query: "mutation { x }" })).status).toBe(400)
    expect((await callLean("execute_query", { query: "{ Get { " })).status).toBe(400)
    expect((await callLean("vector_search", { table: "NoSuchCollection", mode: "hybrid", query: "river" })).status).toBe(404)
    expect((await callLean("vector_search", { table: "X) { a } } } #", mode: "hybrid", query: "river" })).status).toBe(400)
    expect((await callLean("vector_search", { table: TABLE, mode: "bm25", query: "river" })).status).toBe(400)
    expect((await callLean("toString", {})).status).toBe(400)
    const notJson = await fetch(endpoint, { method: "POST", headers: { ...modernHeaders("tools/call", "execute_query"), authorization: `Bearer ${TOKEN}` }, body: "{not json" })
    expect(notJson.status).toBe(400)
    expect(lean.exitCode).toBeNull()
    expect((await callLean("vector_search", { table: TABLE, mode: "hybrid", query: "river" })).status).toBe(200)
  })
})
