/**
 * A warm daemon makes no new V8 maps (hidden classes) per call. A map lives in the old generation
 * until a full collection; the maps of per-call objects kept each call's objects alive past the young
 * generation (promoted to the old one, 13 KB per `execute_query`), and every new map makes the sites
 * that read such objects megamorphic (docs/benchmarks.md, "Issue 27, tenth session"). Three sources
 * were found and removed:
 * - a generator function made per call (`Effect.gen(function*() {…})` inside a per-call function):
 *   V8 gives every generator function a prototype and a map of its own;
 * - Node 20's AbortSignal: each one gets three maps of its own;
 * - a spread copy (`{ ...payload }`) of a tool's result and of the response headers.
 *
 * Counted with V8's own map log (`--log-maps`) on the built daemon, over a window of calls after a
 * warm-up, against the real Weaviate (or the compatible instance).
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"
import { callTool, makeHome, rpc, toolText } from "../Reliability/RealDaemon.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"

const TABLE = "MapsPerCall"
const WARMUP_CALLS = 600
const WINDOW_CALLS = 400
/** Maps the window may make per call: before the fix, `execute_query` made about ten. */
const MAX_MAPS_PER_CALL = 0.25
/** Log events this close to the window's ends are left out (the log's clock starts with V8, a few ms after the spawn). */
const EDGE_MS = 50

let w: WeaviateTestInstance
let home: Awaited<ReturnType<typeof makeHome>>

beforeAll(async () => {
  w = await startTestWeaviate()
  const post = async (path: string, body: unknown) => {
    const response = await fetch(w.url + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    if (response.status >= 300) throw new Error(`${path}: ${response.status} ${await response.text()}`)
  }
  await post("/v1/schema", { class: TABLE, vectorizer: "none", properties: [{ name: "title", dataType: ["text"] }] })
  await post("/v1/batch/objects", { objects: Array.from({ length: 20 }, (_, n) => ({ class: TABLE, properties: { title: `row ${n}` } })) })
  home = await makeHome({}, { db: w.port }, ["maps"])
}, 120_000)

afterAll(async () => {
  await w?.close()
})

/** The times (ms since V8 started) of the maps the log records. */
const mapTimes = (log: string): Array<number> =>
  log.split("\n").filter((line) => line.startsWith("map-create,")).map((line) => Number(line.split(",")[1]) / 1000)

describe("maps per call", () => {
  it("a warm daemon makes no new V8 maps per tool call (execute_query, list_connections)", async () => {
    const dir = TestHome.tempDirSync("weaviate-mcp-maps-")
    const logFile = NodePath.join(dir, "v8.log")
    const spawned = performance.now()
    // First access is approved by a command, as in the reliability suite.
    const running = await Cli.serve(["--port", "0", "--home", home.home, "--rate-limit", "0", "--approvals", "exec", "--approval-command", "cat >/dev/null"], {
      timeoutMs: 30_000,
      nodeArgs: ["--log-maps", "--no-log-maps-details", `--logfile=${logFile}`, "--no-logfile-per-isolate"]
    })
    const { token } = home.tokens["maps"]!
    const connection_id = home.connections["db"]!
    const calls = [
      () => callTool(running.endpoint, token, "execute_query", { connection_id, query: `{ Get { ${TABLE}(limit: 10) { title _additional { id } } } }` }),
      () => callTool(running.endpoint, token, "list_connections", {}),
      () => rpc(running.endpoint, token, "tools/list")
    ]
    let id = 0
    const one = async () => {
      const reply = await calls[id % calls.length]!()
      expect(reply.json?.error, JSON.stringify(reply.json)).toBeUndefined()
      expect(reply.json?.result?.isError, toolText(reply)).not.toBe(true)
      id++
    }
    for (let i = 0; i < WARMUP_CALLS; i++) await one()
    const ends: Array<number> = []
    const start = performance.now() - spawned
    for (let i = 0; i < WINDOW_CALLS; i++) {
      await one()
      ends.push(performance.now() - spawned)
    }
    const end = performance.now() - spawned
    running.child.kill("SIGTERM")
    const exited = await running.exited
    expect(exited.code).toBe(0)

    const from = start + EDGE_MS
    const to = end - EDGE_MS
    const made = mapTimes(NodeFs.readFileSync(logFile, "utf8")).filter((t) => t >= from && t <= to).length
    const inWindow = ends.filter((t) => t >= from && t <= to).length
    expect(inWindow).toBeGreaterThan(WINDOW_CALLS / 2)
    expect(made / inWindow, `${made} maps in ${inWindow} calls`).toBeLessThan(MAX_MAPS_PER_CALL)
  }, 180_000)
})
