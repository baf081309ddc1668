/**
 * Load: the built `weaviate-mcp serve` in front of the real Weaviate server, 64 keep-alive connections
 * running a mix for a bounded time (20 s in `npm run test:reliability`, 5 s in `npm test`): reads
 * (tools/list, list_tables, browse_table, execute_query GraphQL, resources/read), approved writes
 * (insert_rows with unique ids, approvals answered yes by a command), cancels of running calls and
 * listen streams opened and closed. Afterwards: no 5xx, no answer outside the official schema, every
 * approved write in Weaviate exactly once, and the daemon's memory back near its start.
 */
import * as NodeCrypto from "node:crypto"
import { Pool } from "undici"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { MODERN, modern, modernHeaders, parseFrames } from "../Mcp/support/EndpointHarness.ts"
import type * as Cli from "../support/Cli.ts"
import { validateMessage } from "../support/McpSchemas.ts"
import { type RealWeaviate, startRealWeaviate } from "../weaviate/RealWeaviate.ts"
import { type RecordingProxy, startRecordingProxy } from "../weaviate/RecordingProxy.ts"
import { callTool, heapAfterGcKb, makeHome, realUnavailable, rssKb, serveApproved, toolText } from "./RealDaemon.ts"

const RELIABILITY = process.env["WEAVIATE_MCP_RELIABILITY"] === "1"
const DURATION_MS = RELIABILITY ? 20_000 : 5_000
const WARMUP_MS = 5_000
/** Clients at once: listen workers on connections of their own (closing a stream closes its connection), the rest on one keep-alive pool. */
const CONNECTIONS = 64
const LISTENERS = 4
/** Most requests one worker sends (bounds every loop even on a very fast machine). */
const MAX_PER_WORKER = 2_000
/** The daemon's resident memory after the load and a settle, at most this much above its start. */
const RSS_BOUND_KB = 40 * 1024
/** The daemon's live heap after a full collection, at most this much above its warmed-up level. */
const HEAP_BOUND_KB = 16 * 1024
const mb = (kb: number) => Math.round(kb / 1024)
/** What a call to be cancelled waits at the proxy before reaching Weaviate. */
const SLOW_MS = 3_000

const unavailable = realUnavailable()

let w: RealWeaviate
let slow: RecordingProxy
let running: Cli.Running
let env: Awaited<ReturnType<typeof makeHome>>

interface Tally {
  requests: number
  status: Record<number, number>
  invalid: Array<string>
  errors: Array<string>
  cancelled: number
  clientFailures: Array<string>
  cancelsNotCancelled: Array<string>
  listens: number
  writes: Map<string, "ok" | "failed">
  kinds: Record<string, number>
}

describe.skipIf(unavailable !== undefined)(`load against the real Weaviate server${unavailable === undefined ? "" : ` (skipped: ${unavailable})`}`, () => {
  beforeAll(async () => {
    w = await startRealWeaviate()
    const created = await fetch(`${w.url}/v1/schema`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ class: "Load", vectorizer: "none", properties: [{ name: "name", dataType: ["text"] }] })
    })
    assert.strictEqual(created.status, 200, await created.text())
    slow = await startRecordingProxy({ upstream: w.url })
    env = await makeHome({}, { real: w.port, slow: slow.port }, ["load"])
    // The inspector on loopback (a free port) lets the test force a full collection before it measures.
    running = await serveApproved(env.home, { NODE_OPTIONS: "--inspect=127.0.0.1:0" })
    for (const id of Object.values(env.connections)) {
      const first = await callTool(running.endpoint, env.tokens["load"]!.token, "list_tables", { connection_id: id })
      assert.notStrictEqual(first.json.result?.isError, true, toolText(first))
    }
    slow.setFault({ kind: "delay", ms: SLOW_MS }, { pathPrefix: "/v1/graphql" })
  }, 120_000)

  afterAll(async () => {
    if (running !== undefined && running.child.exitCode === null) running.child.kill("SIGTERM")
    await running?.exited
    await slow?.close()
    await w?.stop()
  }, 60_000)

  it(`64 clients (over 60 connections) for ${DURATION_MS / 1000} s: no 5xx, every answer valid, every approved write exactly once, memory back near its start`, async () => {
    const token = env.tokens["load"]!.token
    const url = new URL(running.endpoint)
    // 64 clients at once over at most 60 connections: the daemon has 64 connection slots, and a
    // listen stream closed by its client frees its slot only when the daemon sees the close, so the
    // churn of listen connections would otherwise meet full slots (see the README).
    const pool = new Pool(url.origin, { connections: CONNECTIONS - LISTENERS - 4, pipelining: 1 })
    const listenPool = new Pool(url.origin, { connections: LISTENERS, pipelining: 1 })
    const tally: Tally = { requests: 0, status: {}, invalid: [], errors: [], clientFailures: [], cancelled: 0, cancelsNotCancelled: [], listens: 0, writes: new Map(), kinds: {} }
    const real = env.connections["real"]!
    const slowId = env.connections["slow"]!

    const post = async (headers: Record<string, string>, body: unknown, signal?: AbortSignal) => {
      const r = await (signal === undefined ? pool : listenPool).request({
        path: url.pathname,
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}`, ...headers },
        body: JSON.stringify(body),
        ...(signal !== undefined ? { signal } : {})
      })
      tally.requests += 1
      tally.status[r.statusCode] = (tally.status[r.statusCode] ?? 0) + 1
      return r
    }
    const check = (what: string, text: string, type: string) => {
      if (text.length === 0) return undefined
      try {
        const messages = type.startsWith("text/event-stream") ? parseFrames(text) : [JSON.parse(text)]
        for (const m of messages) validateMessage(MODERN, m)
        return messages.at(-1)
      } catch (e) {
        if (tally.invalid.length < 5) tally.invalid.push(`${what}: ${String(e).slice(0, 500)}`)
        return undefined
      }
    }
    const request = async (what: string, method: string, params: Record<string, unknown>, id: string) => {
      tally.kinds[what] = (tally.kinds[what] ?? 0) + 1
      const name = method === "tools/call" ? String(params["name"]) : method === "resources/read" ? String(params["uri"]) : undefined
      const r = await post(modernHeaders(method, name), modern(method, params, id))
      const answer = check(what, await r.body.text(), String(r.headers["content-type"] ?? ""))
      if (what !== "cancelled call" && (r.statusCode >= 400 || answer?.error !== undefined || answer?.result?.isError === true)) {
        if (tally.errors.length < 5) tally.errors.push(`${what} ${r.statusCode}: ${JSON.stringify(answer).slice(0, 300)}`)
      }
      return answer
    }

    // The resource to read: the first one listed.
    const listed = await request("resources/list", "resources/list", {}, "setup-resources")
    const uri = listed?.result?.resources?.[0]?.uri as string | undefined
    assert.isDefined(uri, JSON.stringify(listed))

    const reads: ReadonlyArray<[string, string, (id: string) => Record<string, unknown>]> = [
      ["tools/list", "tools/list", () => ({})],
      ["list_tables", "tools/call", () => ({ name: "list_tables", arguments: { connection_id: real } })],
      ["browse_table", "tools/call", () => ({ name: "browse_table", arguments: { connection_id: real, table: "Load" } })],
      ["execute_query", "tools/call", () => ({ name: "execute_query", arguments: { connection_id: real, query: "{ Get { Load(limit: 5) { name } } }" } })],
      ["resources/read", "resources/read", () => ({ uri })]
    ]

    const write = async (id: string) => {
      const uuid = NodeCrypto.randomUUID()
      const answer = await request("insert_rows", "tools/call", {
        name: "insert_rows",
        arguments: { connection_id: real, table: "Load", rows: [{ id: uuid, properties: { name: `w-${id}` } }] }
      }, id)
      tally.writes.set(uuid, answer?.result !== undefined && answer.result.isError !== true ? "ok" : "failed")
    }

    const cancel = async (id: string) => {
      tally.kinds["cancel"] = (tally.kinds["cancel"] ?? 0) + 1
      const marker = `cancel-${id}`
      const call = request("cancelled call", "tools/call", {
        name: "execute_query",
        arguments: { connection_id: slowId, query: `{ Get { Load(where: { path: ["name"], operator: Equal, valueText: "${marker}" }) { name } } }` }
      }, id)
      call.catch(() => undefined)
      // Running: its database request is held at the proxy.
      await slow.waitForRequest((r) => r.body.includes(marker), 15_000)
      const notified = await post({ "mcp-protocol-version": MODERN, "mcp-method": "notifications/cancelled" }, {
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: id }
      })
      await notified.body.text()
      const answer = await call
      if (answer?.error?.code === -33002) tally.cancelled += 1
      else if (tally.cancelsNotCancelled.length < 5) tally.cancelsNotCancelled.push(JSON.stringify(answer).slice(0, 300))
    }

    const listen = async (id: string) => {
      tally.kinds["listen"] = (tally.kinds["listen"] ?? 0) + 1
      const controller = new AbortController()
      const r = await post(modernHeaders("subscriptions/listen"), modern("subscriptions/listen", { notifications: { resourcesListChanged: true } }, id), controller.signal)
      if (r.statusCode === 200) {
        // Opened: its first bytes (the stream's acknowledgement) arrive, then the client closes it.
        const iterator = r.body[Symbol.asyncIterator]()
        const first = await iterator.next()
        if (!first.done) {
          const text = Buffer.from(first.value as Uint8Array).toString("utf8")
          const complete = text.slice(0, text.lastIndexOf("\n\n") + 2)
          if (complete.length > 0) check("listen", complete, "text/event-stream")
        }
        tally.listens += 1
        controller.abort()
        await iterator.return?.().catch(() => undefined)
      } else {
        check("listen", await r.body.text(), String(r.headers["content-type"] ?? ""))
      }
    }

    const round = async (phase: string, durationMs: number) => {
      const started = performance.now()
      const worker = async (n: number) => {
        for (let i = 0; i < MAX_PER_WORKER && performance.now() - started < durationMs; i++) {
          const id = `${phase}${n}-${i}`
          try {
            // Workers 0-3 open and close listen streams (under the cap of 8 per principal), 4-7 cancel,
            // 8-23 write, the rest read.
            if (n < LISTENERS) await listen(id)
            else if (n < 8) await cancel(id)
            else if (n < 24) await write(id)
            else {
              const [what, method, params] = reads[(n + i) % reads.length]!
              await request(what, method, params(id), id)
            }
          } catch (e) {
            tally.clientFailures.push(`${id}: ${String(e)}`)
          }
        }
      }
      await Promise.all(Array.from({ length: CONNECTIONS }, (_, n) => worker(n)))
      return performance.now() - started
    }
    /** After a full collection: the live heap and the resident memory, in kB. */
    const settled = async () => {
      const heap = await heapAfterGcKb(running.stderr())
      return { heap, rss: rssKb(running.child.pid!) }
    }

    // Memory is compared after a warm-up round of the same mix, each time after a forced full
    // collection: what must come back is the level of a warmed-up daemon (caches, compiled code and
    // pools are filled once), and a leak shows as growth from there over the longer measured round.
    const start = await settled()
    await round("warm", WARMUP_MS)
    const warm = await settled()
    const elapsed = await round("w", DURATION_MS)
    await Promise.all([pool.close(), listenPool.close()])
    const after = await settled()

    // Every approved write exactly once, counted on Weaviate directly.
    const okIds = [...tally.writes].filter(([, s]) => s === "ok").map(([id]) => id)
    const seen = new Map<string, number>()
    let cursor: string | undefined
    for (let page = 0; page < 1_000; page++) {
      const r = await fetch(`${w.url}/v1/objects?class=Load&limit=1000${cursor === undefined ? "" : `&after=${cursor}`}`)
      const objects = ((await r.json()) as { objects?: Array<{ id: string }> }).objects ?? []
      for (const o of objects) seen.set(o.id, (seen.get(o.id) ?? 0) + 1)
      if (objects.length < 1000) break
      cursor = objects.at(-1)!.id
    }
    const aggregate = await fetch(`${w.url}/v1/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: "{ Aggregate { Load { meta { count } } } }" })
    })
    const count = ((await aggregate.json()) as any).data.Aggregate.Load[0].meta.count as number

    console.log(
      `load: ${CONNECTIONS} clients, ${Math.round(elapsed)} ms, ${tally.requests} requests (${Math.round(tally.requests / (elapsed / 1000))}/s); ` +
        `statuses ${JSON.stringify(tally.status)}; kinds ${JSON.stringify(tally.kinds)}; writes ok ${okIds.length} / ${tally.writes.size}; ` +
        `cancelled ${tally.cancelled}; listen streams ${tally.listens}; objects in Weaviate ${seen.size} (Aggregate ${count}); ` +
        `daemon after a full GC: heap ${mb(start.heap)} / RSS ${mb(start.rss)} MB at start, ${mb(warm.heap)} / ${mb(warm.rss)} MB after the ${WARMUP_MS / 1000} s warm-up, ${mb(after.heap)} / ${mb(after.rss)} MB after the load`
    )
    if (tally.errors.length > 0) console.log(`first error answers: ${tally.errors.join("\n")}`)

    const fiveHundreds = Object.entries(tally.status).filter(([s]) => Number(s) >= 500).reduce((n, [, c]) => n + c, 0)
    assert.strictEqual(fiveHundreds, 0, `5xx answers: ${JSON.stringify(tally.status)}`)
    assert.deepStrictEqual(tally.clientFailures, [], "requests that failed at the client")
    assert.deepStrictEqual(tally.invalid, [], "answers outside the official schema")
    assert.isAbove(okIds.length, 0, "some approved writes")
    assert.strictEqual(okIds.length, tally.writes.size, `writes that failed: ${tally.errors.join("\n")}`)
    for (const id of okIds) assert.strictEqual(seen.get(id), 1, `approved write ${id} in Weaviate once`)
    assert.strictEqual(seen.size, okIds.length, "nothing but the approved writes")
    assert.strictEqual(count, okIds.length, "Aggregate counts each approved write once")
    assert.isAbove(tally.cancelled, 0, "some calls cancelled")
    assert.deepStrictEqual(tally.cancelsNotCancelled, [], "every cancelled call answered -33002")
    assert.isAbove(tally.listens, 0, "some listen streams opened")
    assert.isBelow(after.heap - warm.heap, HEAP_BOUND_KB, `daemon heap after GC: ${warm.heap} kB after the warm-up, ${after.heap} kB after the load`)
    assert.isBelow(after.rss - warm.rss, RSS_BOUND_KB, `daemon RSS: ${warm.rss} kB after the warm-up, ${after.rss} kB after the load`)
    assert.strictEqual(running.child.exitCode, null)
  }, 120_000)
})
