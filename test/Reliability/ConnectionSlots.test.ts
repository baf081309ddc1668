/**
 * Attack class: starving the connection slots. Headers must complete within the header time-out, a
 * body that stops arriving is answered 408 at the idle time-out, idle and header-less connections give
 * their slot to a newcomer, a newcomer that finds every slot busy gets a real 503 (`-33000`,
 * `Retry-After`), and `subscriptions/listen` streams are capped per principal.
 *
 * Limits are configured short (4 slots, 300 ms for headers, 600 ms idle): nothing waits 10 or 30 s.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as NodeNet from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MAX_LISTEN_STREAMS } from "../../src/Mcp/Endpoint.ts"
import { modern, modernHeaders } from "../Mcp/support/EndpointHarness.ts"
import { type CatalogueDaemon, catalogueDaemon } from "./support.ts"

const HEADERS_MS = 300
const IDLE_MS = 600
const SLOTS = 4
const GRACE_MS = 1_000

/** The transport's clock for the recycling grace: moved by the tests, never waited for. */
let clockMs = 0
const advance = (ms: number) => (clockMs += ms)

let d: CatalogueDaemon
beforeAll(async () => {
  d = await catalogueDaemon({
    limits: { maxConnections: SLOTS, headersTimeoutMs: HEADERS_MS, idleTimeoutMs: IDLE_MS, recycleGraceMs: GRACE_MS, now: () => clockMs }
  })
}, 30_000)
afterAll(() => d.dispose())

interface Raw {
  readonly socket: NodeNet.Socket
  /** Everything received until the server closed the connection, and when that was. */
  readonly closed: Promise<{ readonly text: string; readonly at: number }>
}

const open = () =>
  new Promise<Raw>((resolve) => {
    const socket = NodeNet.connect(d.port, "127.0.0.1")
    let text = ""
    socket.on("data", (chunk) => (text += chunk.toString("utf8")))
    socket.on("error", () => {})
    const closed = new Promise<{ text: string; at: number }>((done) => socket.once("close", () => done({ text, at: performance.now() })))
    socket.once("connect", () => resolve({ socket, closed }))
  })

const host = () => `Host: 127.0.0.1:${d.port}\r\n`

const toolsList = async () => {
  const response = await fetch(d.endpoint, {
    method: "POST",
    body: JSON.stringify(modern("tools/list")),
    headers: { ...modernHeaders("tools/list"), authorization: `Bearer ${d.token}`, connection: "close" }
  })
  return { status: response.status, headers: response.headers, json: await response.json() as any }
}

/** Writes one byte every 50 ms, at most `max` bytes, until the socket closes. */
const trickle = (raw: Raw, text: string) => {
  let i = 0
  const timer = setInterval(() => {
    if (raw.socket.destroyed || i >= text.length) return clearInterval(timer)
    raw.socket.write(text[i++]!)
  }, 50)
  void raw.closed.then(() => clearInterval(timer))
}

/**
 * After clients closed their connections, the status of a `tools/list` once the server has seen the
 * closes and the slots serve again: retried a bounded number of times, 10 ms apart.
 */
const statusOnceSlotsFree = async () => {
  let status = 0
  for (let i = 0; i < 100 && status !== 200; i++) {
    status = (await toolsList()).status
    if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return status
}

describe("connection slots cannot be starved", () => {
  it("headers must complete within the header time-out: a trickler gets 408 and is closed", async () => {
    const raw = await open()
    const started = performance.now()
    trickle(raw, `POST /mcp HTTP/1.1\r\n${host()}X-Slow: ${"a".repeat(200)}\r\n\r\n`)
    const { at, text } = await raw.closed
    expect(text).toMatch(/^HTTP\/1\.1 408/)
    const elapsed = at - started
    expect(elapsed).toBeGreaterThanOrEqual(HEADERS_MS - 20)
    expect(elapsed).toBeLessThan(IDLE_MS + 400)
  }, 10_000)

  it("a request whose body never arrives is answered 408 at the idle time-out, not twice it", async () => {
    const raw = await open()
    const body = JSON.stringify(modern("tools/list"))
    raw.socket.write(`POST /mcp HTTP/1.1\r\n${host()}Content-Type: application/json\r\nAuthorization: Bearer ${d.token}\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`)
    const started = performance.now()
    const { at, text } = await raw.closed
    expect(text).toMatch(/^HTTP\/1\.1 408/)
    expect(text).toContain("-32600")
    const elapsed = at - started
    expect(elapsed).toBeGreaterThanOrEqual(IDLE_MS - 20)
    expect(elapsed).toBeLessThan(IDLE_MS * 2)
  }, 10_000)

  it("sockets that trickle header bytes on every slot do not keep a real client out", async () => {
    const tricklers = await Promise.all(Array.from({ length: SLOTS }, () => open()))
    for (const raw of tricklers) trickle(raw, `POST /mcp HTTP/1.1\r\n${host()}`)
    advance(GRACE_MS)
    const reply = await toolsList()
    expect(reply.status).toBe(200)
    expect(reply.json.result.tools.length).toBeGreaterThan(0)
    for (const raw of tricklers) raw.socket.destroy()
  }, 10_000)

  it("idle keep-alive connections give their slot to a newcomer", async () => {
    const idle = await Promise.all(Array.from({ length: SLOTS }, () => open()))
    const body = JSON.stringify(modern("tools/list"))
    for (const raw of idle) {
      raw.socket.write(`POST /mcp HTTP/1.1\r\n${host()}Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nAuthorization: Bearer ${d.token}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
    }
    // Each got its answer and stays open, idle.
    await Promise.all(idle.map((raw) => new Promise<void>((resolve) => raw.socket.once("data", () => resolve()))))
    advance(GRACE_MS)
    const reply = await toolsList()
    expect(reply.status).toBe(200)
    expect(idle.filter((raw) => raw.socket.destroyed).length).toBeGreaterThanOrEqual(1)
    for (const raw of idle) raw.socket.destroy()
  }, 10_000)

  it("a connection that has just opened, or just got its answer, keeps its slot: a newcomer gets 503, and their requests are answered", async () => {
    const fresh = await Promise.all(Array.from({ length: SLOTS }, () => open()))
    advance(GRACE_MS - 1)
    const reply = await toolsList()
    expect(reply.status).toBe(503)
    expect(reply.json.error.code).toBe(-33000)
    const body = JSON.stringify(modern("tools/list"))
    for (const raw of fresh) {
      raw.socket.write(`POST /mcp HTTP/1.1\r\n${host()}Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\nAuthorization: Bearer ${d.token}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
    }
    const answers = await Promise.all(fresh.map((raw) => new Promise<string>((resolve) => raw.socket.once("data", (chunk) => resolve(chunk.toString("latin1"))))))
    for (const answer of answers) expect(answer).toMatch(/^HTTP\/1\.1 200 /)
    expect(fresh.filter((raw) => raw.socket.destroyed)).toHaveLength(0)
    // Just answered: still within the grace, so still not recyclable.
    expect((await toolsList()).status).toBe(503)
    for (const raw of fresh) raw.socket.destroy()
    expect(await statusOnceSlotsFree()).toBe(200)
  }, 10_000)

  it("with every slot serving a request, a new connection gets a real 503 with -33000 and Retry-After, not a reset", async () => {
    const busy = await Promise.all(Array.from({ length: SLOTS }, () => open()))
    for (const [i, raw] of busy.entries()) {
      // Each slow call is running (a request in progress on its slot) before the next is sent.
      const started = await Effect.runPromise(Deferred.make<string | number>())
      await Effect.runPromise(Ref.set(d.signals.slowStarted, started))
      const body = JSON.stringify(modern("tools/call", { name: "slow", arguments: {} }, i + 100))
      raw.socket.write(`POST /mcp HTTP/1.1\r\n${host()}Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: slow\r\nAuthorization: Bearer ${d.token}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
      await Effect.runPromise(Deferred.await(started).pipe(Effect.timeout("5 seconds")))
    }
    const reply = await toolsList()
    expect(reply.status).toBe(503)
    expect(reply.json.error.code).toBe(-33000)
    expect(Number(reply.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    for (const raw of busy) raw.socket.destroy()
    expect(await statusOnceSlotsFree()).toBe(200)
  }, 10_000)
})

describe("subscriptions/listen streams are capped per principal", () => {
  let wide: CatalogueDaemon
  beforeAll(async () => {
    wide = await catalogueDaemon({ limits: { maxConnections: MAX_LISTEN_STREAMS + 4 } })
  }, 30_000)
  afterAll(() => wide.dispose())

  const listen = async (id: number, signal: AbortSignal) => {
    const response = await fetch(wide.endpoint, {
      method: "POST",
      signal,
      body: JSON.stringify(modern("subscriptions/listen", { notifications: { resourcesListChanged: true } }, id)),
      headers: { ...modernHeaders("subscriptions/listen"), authorization: `Bearer ${wide.token}` }
    })
    if (response.status === 200) {
      // The acknowledgement arrives: the stream is open.
      const reader = response.body!.getReader()
      await reader.read()
      return { status: 200, json: undefined as any }
    }
    return { status: response.status, json: await response.json() as any }
  }

  it(`one token holds at most ${MAX_LISTEN_STREAMS} streams; the next is -33010 with Retry-After until one closes`, async () => {
    const controllers = Array.from({ length: MAX_LISTEN_STREAMS }, () => new AbortController())
    for (const [i, controller] of controllers.entries()) expect((await listen(i + 1, controller.signal)).status).toBe(200)
    const refused = await listen(99, new AbortController().signal)
    expect(refused.status).toBe(429)
    expect(refused.json.error.code).toBe(-33010)
    expect(refused.json.error.message).toContain(`at most ${MAX_LISTEN_STREAMS}`)
    controllers[0]!.abort()
    // The slot is given back when the stream ends (bounded retries while the server sees the close).
    const again = new AbortController()
    let status = 0
    for (let i = 0; i < 100 && status !== 200; i++) {
      status = (await listen(100 + i, again.signal)).status
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 10))
    }
    expect(status).toBe(200)
    again.abort()
    for (const controller of controllers) controller.abort()
  }, 20_000)
})
