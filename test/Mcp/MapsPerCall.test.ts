/**
 * A warm daemon makes no new V8 maps (hidden classes) per call. A map lives in the old generation
 * until a full collection; the maps of per-call objects kept each call's objects alive past the young
 * generation (promoted to the old one, 13 KB per `execute_query`), and every new map makes the sites
 * that read such objects megamorphic (its commit message). The sources
 * found and removed:
 * - a generator function made per call (`Effect.gen(function*() {…})` inside a per-call function):
 *   V8 gives every generator function a prototype and a map of its own;
 * - Node 20's AbortSignal: each one gets three maps of its own;
 * - spread copies (`{ ...payload, resultType }`): the result envelope, the response headers (those
 *   of every answer, and the CORS headers of a browser's), the approval's facts and its dialog request;
 * - `Effect.withSpan` without `captureStackTrace: false`, which spreads its options to add one.
 *
 * Not held here: a call answered as an event stream (a progress token) still makes eight maps, two
 * Effect `Deferred`s of its stream's mailbox (Effect builds each as `{ ...CommitPrototype, … }`).
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
import { modern, modernHeaders } from "./support/EndpointHarness.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"

const TABLE = "MapsPerCall"
/** A browser client's origin, allowed: its answers carry the CORS headers. */
const ORIGIN = "http://localhost:6274"
const WARMUP_CALLS = 600
const WINDOW_CALLS = 150
const WINDOW_MIN_MS = 600
const MAX_WINDOW_CALLS = 3_000
/**
 * How often one kind of map event (its type, the property it adds, the code that made it) may recur per
 * call of a window.
 * A per-call source recurs once a call or more (before the fix, `execute_query` made about ten maps a
 * call, `kAborted` twice a call among them; a write five, `title` once a call). The daemon's own
 * timers make a few maps a second whatever the calls (an Effect `Deferred` gets four of its own).
 */
const MAX_RECURRENCE_PER_CALL = 0.5
/** Log events this close to a window's ends are left out (the log's clock starts with V8, a few ms after the spawn). */
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

/** The map events of the log: time (ms since V8 started) and kind (`Transition|prototype|title`). */
const mapEvents = (log: string): Array<{ readonly time: number; readonly kind: string }> =>
  log.split("\n").filter((line) => line.startsWith("map,")).map((line) => {
    // map,<type>,<time>,<from>,<to>,<pc>,<line>,<column>,<reason>,<name>: kinds are told apart by the code that made them.
    const fields = line.split(",")
    return { time: Number(fields[2]) / 1000, kind: `${fields[1]} ${fields[8]} ${fields.slice(9).join(",")} at ${fields[6]}:${fields[7]}` }
  })

describe("maps per call", () => {
  it("a warm daemon makes no new V8 maps per call (execute_query, list_connections, tools/list with and without an Origin, vector_search, insert_rows)", async () => {
    const dir = TestHome.tempDirSync("weaviate-mcp-maps-")
    const logFile = NodePath.join(dir, "v8.log")
    const spawned = performance.now()
    // First access is approved by a command, as in the reliability suite.
    const running = await Cli.serve(["--port", "0", "--home", home.home, "--rate-limit", "0", "--approvals", "exec", "--approval-command", "cat >/dev/null", "--allowed-origin", ORIGIN], {
      timeoutMs: 30_000,
      nodeArgs: ["--log-maps", `--logfile=${logFile}`, "--no-logfile-per-isolate"]
    })
    const { token } = home.tokens["maps"]!
    const connection_id = home.connections["db"]!
    const calls: Record<string, () => ReturnType<typeof rpc>> = {
      execute_query: () =>
        callTool(running.endpoint, token, "execute_query", { connection_id, query: `{ Get { ${TABLE}(limit: 10) { title _additional { id } } } }` }),
      list_connections: () => callTool(running.endpoint, token, "list_connections", {}),
      "tools/list": () => rpc(running.endpoint, token, "tools/list"),
      "tools/list from a browser (Origin)": async () => {
        const response = await fetch(running.endpoint, {
          method: "POST",
          headers: { ...modernHeaders("tools/list"), accept: "application/json, text/event-stream", authorization: `Bearer ${token}`, origin: ORIGIN },
          body: JSON.stringify(modern("tools/list", {}, 1))
        })
        expect(response.headers.get("access-control-allow-origin")).toBe(ORIGIN)
        return { status: response.status, json: await response.json() }
      },
      vector_search: () => callTool(running.endpoint, token, "vector_search", { connection_id, table: TABLE, mode: "bm25", query: "row", limit: 5 }),
      // A one-row write approved by the command (a new row each time).
      insert_rows: () => callTool(running.endpoint, token, "insert_rows", { connection_id, table: TABLE, rows: [{ properties: { title: "new" } }] })
    }
    const kinds = Object.keys(calls)
    const one = async (kind: string) => {
      const reply = await calls[kind]!()
      expect(reply.json?.error, JSON.stringify(reply.json)).toBeUndefined()
      expect(reply.json?.result?.isError, toolText(reply)).not.toBe(true)
    }
    for (let i = 0; i < WARMUP_CALLS; i++) await one(kinds[i % kinds.length]!)
    // Then a window of each kind alone, its calls' end times (ms since the spawn) kept.
    const windows: Array<{ kind: string; start: number; end: number; ends: Array<number> }> = []
    for (const kind of kinds) {
      const ends: Array<number> = []
      const start = performance.now() - spawned
      // At least WINDOW_CALLS calls and WINDOW_MIN_MS: the edges left out must not be most of a fast window.
      for (let i = 0; i < MAX_WINDOW_CALLS && (i < WINDOW_CALLS || performance.now() - spawned - start < WINDOW_MIN_MS); i++) {
        await one(kind)
        ends.push(performance.now() - spawned)
      }
      windows.push({ kind, start, end: performance.now() - spawned, ends })
    }
    running.child.kill("SIGTERM")
    const exited = await running.exited
    expect(exited.code).toBe(0)

    const events = mapEvents(NodeFs.readFileSync(logFile, "utf8"))
    const recurring = windows.flatMap(({ end, ends, kind, start }) => {
      const [from, to] = [start + EDGE_MS, end - EDGE_MS]
      const calls = ends.filter((t) => t >= from && t <= to).length
      expect(calls, kind).toBeGreaterThan(WINDOW_CALLS / 2)
      const counts = new Map<string, number>()
      for (const event of events) if (event.time >= from && event.time <= to) counts.set(event.kind, (counts.get(event.kind) ?? 0) + 1)
      return [...counts].filter(([, n]) => n / calls >= MAX_RECURRENCE_PER_CALL).map(([map, n]) => `${kind}: ${map} ${n} times in ${calls} calls`)
    })
    expect(recurring).toEqual([])
  }, 180_000)
})
