/**
 * The stdio bridge end to end: the official v1 SDK client's `StdioClientTransport` spawns the built
 * `weaviate-mcp bridge --home H` against the real daemon on 127.0.0.1 (started here, in process, so
 * the test can restart it), which uses the Weaviate test instance. The dialog is `--approvals exec`
 * answering yes, so a readWrite write approved over elicitation is confirmed twice and runs once.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import * as NodePath from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { homeLayer } from "../../src/Cli/CommonOptions.ts"
import * as Daemon from "../../src/Daemon/Daemon.ts"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { BoundAddress } from "../../src/Mcp/HttpTransport.ts"
import * as Cli from "../support/Cli.ts"
import * as TestDaemon from "../support/TestDaemon.ts"
import * as TestHome from "../support/TestHome.ts"
import { writesTo } from "../Catalogue/Tools/support.ts"
import { loadSampleData } from "../weaviate/SampleData.ts"
import { startWeaviate, type WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"

let w: WeaviateTestInstance
let home: string
let connectionId: string
let command: string
let dialogLog: string
const dialogs = () => NodeFs.readFileSync(dialogLog, "utf8").split("\n").filter((line) => line.trim() !== "")
let runtime: ManagedRuntime.ManagedRuntime<unknown, unknown>
let client: Client
let stderr = ""
/** Every message the bridge wrote on stdout to the shared client, in order. */
const received: Array<any> = []
const elicitations: Array<any> = []

const handshakePath = () => NodePath.join(home, "mcp-handshake.json")
const readHandshake = () => JSON.parse(NodeFs.readFileSync(handshakePath(), "utf8")) as { token: string; port: number; instanceId: string }

const startDaemon = async (bridgeToken?: { rotateEvery: Duration.DurationInput; grace: Duration.DurationInput }) => {
  const settings = await Effect.runPromise(
    TestDaemon.settings({ rateLimit: 0, authLockout: 0, approvals: "exec", approvalCommand: Option.some(command) })
  )
  const rt = ManagedRuntime.make(
    Daemon.layer({ settings, port: 0, ...(bridgeToken === undefined ? {} : { bridgeToken }) }).pipe(Layer.provide(homeLayer(Option.some(home))))
  ) as ManagedRuntime.ManagedRuntime<unknown, unknown>
  await rt.runPromise(BoundAddress as never)
  return rt
}

type ElicitHandler = Parameters<typeof Client.prototype.setRequestHandler<typeof ElicitRequestSchema>>[1]

const connect = async (
  args: ReadonlyArray<string> = [],
  options: { elicitation: boolean; onElicit?: ElicitHandler } = { elicitation: true }
) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [Cli.BIN, "bridge", "--home", home, ...args],
    env: Object.fromEntries(Object.entries(process.env).filter(([k, v]) => v !== undefined && !k.startsWith("WEAVIATE_MCP_"))) as Record<string, string>,
    stderr: "pipe"
  })
  transport.stderr?.on("data", (d) => (stderr += d))
  const c = new Client({ name: "bridge-test", version: "1.0.0" }, { capabilities: options.elicitation ? { elicitation: {} } : {} })
  if (options.elicitation) {
    c.setRequestHandler(ElicitRequestSchema, options.onElicit ?? (async (request) => {
      elicitations.push(request.params)
      return { action: "accept", content: { approved: true } }
    }))
  }
  await c.connect(transport)
  const deliver = transport.onmessage
  transport.onmessage = (message) => {
    received.push(message)
    deliver?.(message)
  }
  return c
}

beforeAll(async () => {
  w = await startWeaviate()
  await loadSampleData(w, { scale: 0.1 })
  home = TestHome.tempDirSync("weaviate-mcp-bridge-")
  const dialogDir = TestHome.tempDirSync("weaviate-mcp-bridge-dialog-")
  dialogLog = NodePath.join(dialogDir, "log")
  NodeFs.writeFileSync(dialogLog, "")
  command = `cat >> '${dialogLog}'; echo >> '${dialogLog}'; test "$(cat '${NodePath.join(dialogDir, "answer")}')" = yes`
  NodeFs.writeFileSync(NodePath.join(dialogDir, "answer"), "yes")
  await Effect.runPromise(
    Effect.gen(function*() {
      const store = yield* ConnectionStore
      connectionId = (yield* store.add({ name: "local", host: "127.0.0.1", port: w.port })).id
    }).pipe(Effect.provide(ConnectionStore.layer.pipe(Layer.provide(homeLayer(Option.some(home))))), Effect.scoped)
  )
  runtime = await startDaemon()
  client = await connect()
}, 60_000)

afterAll(async () => {
  await client?.close()
  await runtime?.dispose()
  await w?.close()
})

beforeEach(() => {
  w.setFault({ kind: "none" })
  w.clearRequests()
})

/**
 * The database request of a `browse_table` of Author: its schema read, or its page of objects. The
 * cancellation tests use it because each call sends its own request; the listings read a cache that
 * callers share, whose read is not one caller's to abort.
 */
const readsAuthor = (r: { readonly path: string }) => r.path === "/v1/schema/Author" || r.path === "/v1/objects" || r.path === "/v1/graphql"

describe("weaviate-mcp bridge over stdio (official SDK v1 client)", () => {
  it("answers initialize itself in a legacy revision and lists the daemon's tools", async () => {
    expect(client.getServerVersion()?.name).toBe("weaviate-mcp")
    expect(client.getServerCapabilities()?.resources?.subscribe).toBe(false)
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["list_connections", "list_tables", "insert_rows"]))
    await client.ping()
  })

  it("calls a read tool; the result carries no modern-only members", async () => {
    const result: any = await client.callTool({ name: "list_tables", arguments: { connection_id: connectionId } })
    expect(result.isError).toBeFalsy()
    expect(JSON.stringify(result.structuredContent)).toContain("Author")
    expect(result.resultType).toBeUndefined()
    expect(writesTo(w)).toEqual([])
  })

  it("a write's input_required becomes elicitation/create; the approved retry writes exactly once", async () => {
    const before = elicitations.length
    const result: any = await client.callTool({
      name: "insert_rows",
      arguments: { connection_id: connectionId, table: "Author", rows: [{ properties: { name: "Through the bridge" } }] }
    })
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent.applied).toBe(1)
    const asked = elicitations.slice(before)
    expect(asked.some((p) => String(p.requestedSchema?.properties?.approved?.description).includes("Through the bridge"))).toBe(true)
    expect(writesTo(w).map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/objects"])
  })

  it("a client without elicitation gets the dialog on the user's machine; the write runs once", async () => {
    const c = await connect([], { elicitation: false })
    try {
      const asked = elicitations.length
      const shown = dialogs().length
      const result: any = await c.callTool({
        name: "insert_rows",
        arguments: { connection_id: connectionId, table: "Author", rows: [{ properties: { name: "Approved in the dialog" } }] }
      })
      expect(result.isError).toBeFalsy()
      expect(elicitations.length).toBe(asked)
      expect(dialogs().slice(shown).join("\n")).toContain("Approved in the dialog")
      expect(writesTo(w).map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/objects"])
    } finally {
      await c.close()
    }
  })

  it("SSE progress frames arrive as stdio notifications/progress, advancing, before the response", async () => {
    const progress: Array<number> = []
    const from = received.length
    const result: any = await client.callTool(
      { name: "execute_query", arguments: { connection_id: connectionId, query: "{ Get { Author(limit: 2) { name } } }" } },
      undefined,
      { onprogress: (p) => progress.push(p.progress) }
    )
    expect(result.isError).toBeFalsy()
    const mine = received.slice(from).filter((m) => m.method === "notifications/progress" || (m.id !== undefined && m.result?.content !== undefined))
    // Both approval rounds report from 0; the client sees each value once.
    expect(mine.map((m) => m.params?.progress ?? "response")).toEqual([0, 0.3, 1, "response"])
    // The official v1 client dispatches notifications a microtask late, so the last one read in the same
    // chunk as the response may miss its handler; what it got is a prefix of what was sent.
    expect([0, 0.3, 1].slice(0, progress.length)).toEqual(progress)
    expect(progress.length).toBeGreaterThanOrEqual(2)
  })

  it("notifications/cancelled from the client aborts the database request", async () => {
    w.setFault({ kind: "hang" })
    const abort = new AbortController()
    const call = client.callTool({ name: "browse_table", arguments: { connection_id: connectionId, table: "Author" } }, undefined, { signal: abort.signal })
    await w.waitForRequest(readsAuthor, 10_000)
    abort.abort("the user pressed stop")
    await expect(call).rejects.toThrow()
    const aborted = await w.waitForRequest((r) => readsAuthor(r) && r.aborted, 10_000)
    expect(aborted.completed).toBe(false)
    // The session goes on.
    w.setFault({ kind: "none" })
    expect((await client.listTools()).tools.length).toBeGreaterThan(0)
  })

  it("a request cancelled while its approval is asked of the client cancels the question too, and nothing is written", async () => {
    let asked!: () => void
    const questionAsked = new Promise<void>((resolve) => (asked = resolve))
    let questionCancelled!: (reason: unknown) => void
    const cancelledWith = new Promise<unknown>((resolve) => (questionCancelled = resolve))
    // A client that never answers the question: only the bridge's cancellation ends its handler.
    const c = await connect([], {
      elicitation: true,
      onElicit: (_request, extra) =>
        new Promise((resolve) => {
          extra.signal.addEventListener("abort", () => {
            questionCancelled(extra.signal.reason)
            resolve({ action: "cancel" })
          })
          asked()
        })
    })
    try {
      const abort = new AbortController()
      const call = c.callTool(
        { name: "insert_rows", arguments: { connection_id: connectionId, table: "Author", rows: [{ properties: { name: "Never asked twice" } }] } },
        undefined,
        { signal: abort.signal }
      )
      await questionAsked
      abort.abort("the user pressed stop")
      await expect(call).rejects.toThrow()
      // Bounded, so that a bridge that never cancels the question fails here rather than at the test's time-out.
      const never = new Promise<never>((_, reject) => setTimeout(() => reject(new Error("the question was never cancelled")), 10_000).unref())
      expect(String(await Promise.race([cancelledWith, never]))).toContain("cancelled")
      expect(writesTo(w)).toEqual([])
      // The session goes on.
      expect((await c.listTools()).tools.length).toBeGreaterThan(0)
    } finally {
      await c.close()
    }
  })

  it("survives a daemon restart mid-session: a refused call waits for the new handshake file and is retried once", async () => {
    const old = readHandshake()
    await runtime.dispose()
    expect(NodeFs.existsSync(handshakePath())).toBe(false)
    // The call reaches the old port, is refused, and waits for the daemon to come back.
    const call = client.callTool({ name: "list_tables", arguments: { connection_id: connectionId } })
    runtime = await startDaemon({ rotateEvery: "2 seconds", grace: "1 millis" })
    const result: any = await call
    expect(readHandshake().instanceId).not.toBe(old.instanceId)
    expect(result.isError).toBeFalsy()
    expect(JSON.stringify(result.structuredContent)).toContain("Author")
    expect(stderr).toContain(`using the daemon on port ${readHandshake().port}`)
    // The same client session goes on.
    expect((await client.listTools()).tools.length).toBeGreaterThan(0)
  })

  it("follows a token rotation during the session (the old token is refused after 1 ms of grace)", async () => {
    const first = readHandshake().token
    let rotated = false
    for (let attempt = 0; attempt < 100 && !rotated; attempt++) {
      await new Promise<void>((resolve) => {
        const watcher = NodeFs.watch(home, () => {
          watcher.close()
          resolve()
        })
        setTimeout(() => {
          watcher.close()
          resolve()
        }, 100)
      })
      rotated = readHandshake().token !== first
    }
    expect(rotated).toBe(true)
    const { tools } = await client.listTools()
    expect(tools.length).toBeGreaterThan(0)
    // The remaining tests need a token that stays valid while they read it.
    await runtime.dispose()
    runtime = await startDaemon()
  })

  it("closing stdin cancels what is in flight", async () => {
    const c = await connect()
    w.setFault({ kind: "hang" })
    const call = c.callTool({ name: "browse_table", arguments: { connection_id: connectionId, table: "Author" } }).catch((e) => e)
    await w.waitForRequest(readsAuthor, 10_000)
    await c.close()
    await call
    const aborted = await w.waitForRequest((r) => readsAuthor(r) && r.aborted, 10_000)
    expect(aborted.aborted).toBe(true)
  })

  it("two bridges on one daemon keep their requests apart: one client's cancellation never stops the other's request with the same id", async () => {
    // Every bridge reaches the daemon as the same principal (the handshake's token), and each fresh
    // client numbers its requests alike: only the bridge's own session id tells them apart.
    const [a, b] = [await connect(), await connect()]
    try {
      w.setFault({ kind: "hang" })
      const before = w.requests.length
      const hanging = () => w.requests.slice(before).filter(readsAuthor)
      const abort = new AbortController()
      const callA = a.callTool({ name: "browse_table", arguments: { connection_id: connectionId, table: "Author" } }, undefined, { signal: abort.signal }).catch((e) => e)
      const callB = b.callTool({ name: "browse_table", arguments: { connection_id: connectionId, table: "Author" } }).catch((e) => e)
      await w.waitForRequest(() => hanging().length === 2, 10_000)
      abort.abort("the user pressed stop")
      await callA
      await w.waitForRequest((r) => readsAuthor(r) && r.aborted, 10_000)
      // A round trip through b's bridge and the daemon after a's cancellation was carried out.
      w.setFault({ kind: "none" })
      expect((await b.listTools()).tools.length).toBeGreaterThan(0)
      expect(hanging().filter((r) => r.aborted)).toHaveLength(1)
      await b.close()
      expect(await callB).toBeInstanceOf(Error)
    } finally {
      w.setFault({ kind: "none" })
      await a.close().catch(() => undefined)
      await b.close().catch(() => undefined)
    }
  })
})

// ===== Refusals =====

const deadPid = () => {
  const child = NodeChild.spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"])
  return Number(child.stdout.toString())
}

const writeHandshake = (dir: string, content: Record<string, unknown>, mode = 0o600) => {
  const path = NodePath.join(dir, "mcp-handshake.json")
  NodeFs.writeFileSync(path, JSON.stringify(content), { mode })
  NodeFs.chmodSync(path, mode)
}

const handshake = (port: number, pid: number, instanceId = "stub-instance") => ({
  version: 1,
  port,
  pid,
  instanceId,
  protocolVersion: "2026-07-28",
  startedAt: new Date().toISOString(),
  token: "wmcp_bridge_stub",
  tokenExpiresAt: new Date(Date.now() + 3_600_000).toISOString()
})

describe("weaviate-mcp bridge refuses an untrusted or unsuitable daemon (exit 1, stdout empty)", () => {
  it("a handshake file with mode 0644", async () => {
    const dir = TestHome.tempDirSync()
    writeHandshake(dir, handshake(readHandshake().port, process.pid), 0o644)
    const r = await Cli.run(["bridge", "--home", dir])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe("")
    expect(r.stderr).toContain("mode 0644, expected 0600")
  })

  it("a handshake file whose pid is dead says how to start the daemon", async () => {
    const dir = TestHome.tempDirSync()
    writeHandshake(dir, handshake(readHandshake().port, deadPid()))
    const r = await Cli.run(["bridge", "--home", dir])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe("")
    expect(r.stderr).toMatch(/pid \d+ .*is gone/)
    expect(r.stderr).toContain("weaviate-mcp serve --home")
  })

  it("a handshake file naming another instance than the server on its port", async () => {
    const dir = TestHome.tempDirSync()
    writeHandshake(dir, { ...handshake(readHandshake().port, process.pid, "someone-else"), token: readHandshake().token })
    const r = await Cli.run(["bridge", "--home", dir])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("instanceId differs")
  })

  it("a server whose discovery lacks 2026-07-28", async () => {
    const stub = NodeHttp.createServer((req, res) => {
      let body = ""
      req.on("data", (d) => (body += d))
      req.on("end", () => {
        const message = JSON.parse(body)
        res.setHeader("content-type", "application/json")
        res.end(JSON.stringify({
          jsonrpc: "2.0",
          id: message.id,
          result: {
            supportedVersions: ["2025-11-25", "2025-06-18"],
            capabilities: {},
            instructions: "",
            serverInfo: { name: "stub", version: "0", instanceId: "stub-instance" }
          }
        }))
      })
    })
    await new Promise<void>((resolve) => stub.listen(0, "127.0.0.1", resolve))
    try {
      const dir = TestHome.tempDirSync()
      writeHandshake(dir, handshake((stub.address() as { port: number }).port, process.pid))
      const r = await Cli.run(["bridge", "--home", dir])
      expect(r.code).toBe(1)
      expect(r.stdout).toBe("")
      expect(r.stderr).toContain("does not support MCP 2026-07-28")
    } finally {
      stub.close()
    }
  })
})
