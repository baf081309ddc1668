/**
 * What AI clients did, on the real binary: `serve` on 127.0.0.1 with two tokens and a hanging
 * Weaviate-compatible instance; the official SDK v1 client (legacy era) and a modern client over
 * fetch; then `clients`, `clients disconnect`, `pause`/`resume`, `status` up and down, SIGTERM with a
 * call in flight, and `activity` / `activity --verify` on the file it left.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as Line from "../../src/Activity/ActivityLine.ts"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"
import { startWeaviate, type WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"

const QUERY = "{ Get { Article { title } } }"

let w: WeaviateTestInstance
let home: string
let connectionId: string
const tokens: Record<string, string> = {}

const cli = (...args: ReadonlyArray<string>) => Cli.run([...args, "--home", home])

/** A modern request over fetch, naming its client in `_meta`. */
const modern = (endpoint: string, token: string, client: string, id: number, method: string, params: Record<string, unknown> = {}) =>
  fetch(endpoint, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(method === "tools/call" ? { "mcp-name": String(params.name) } : {})
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: client, version: "2.0.0" },
          "io.modelcontextprotocol/clientCapabilities": {}
        }
      }
    })
  })

const hangingQuery = (endpoint: string, token: string, client: string, id: number) =>
  modern(endpoint, token, client, id, "tools/call", { name: "execute_query", arguments: { connection_id: connectionId, query: QUERY } })

/** Polls (bounded in count and time) until `check` holds; the daemon's state file is rewritten every second. */
const eventually = async <A>(what: string, check: () => Promise<A | undefined>, tries = 40): Promise<A> => {
  for (let i = 0; i < tries; i++) {
    const value = await check()
    if (value !== undefined) return value
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`never happened: ${what}`)
}

const clientsJson = async () => JSON.parse((await cli("clients", "--json")).stdout) as Array<{ name: string; version: string | null; principalName: string | null; era: string; inFlight: number }>

beforeAll(async () => {
  w = await startWeaviate()
  home = TestHome.tempDirSync()
  const added = await cli("connections", "add", "--name", "w", "--host", "127.0.0.1", "--port", String(w.port), "--json")
  connectionId = JSON.parse(added.stdout).id
  for (const name of ["alice", "bob"]) {
    const created = await cli("tokens", "create", "--name", name, "--access", "readWrite", "--connections", connectionId, "--json")
    tokens[name] = JSON.parse(created.stdout).token
  }
}, 60_000)

afterAll(async () => {
  await w?.close()
})

describe("activity, clients, pause and status on a running daemon", () => {
  it("records every call, lists and disconnects clients, pauses and resumes, reports status, and loses no line on SIGTERM", async () => {
    const running = await Cli.serve(["--port", "0", "--home", home, "--approvals", "exec", "--approval-command", "true"])
    try {
      const { endpoint } = running

      // ----- status: up -----
      const up = await cli("status", "--json")
      assert.strictEqual(up.code, 0, up.stderr)
      const status = JSON.parse(up.stdout)
      assert.strictEqual(status.pid, running.child.pid)
      assert.strictEqual(status.url, endpoint)
      assert.strictEqual(status.paused, false)
      assert.strictEqual(status.tokens, 2)
      assert.strictEqual(status.approvals, "exec")
      assert.include(status.supportedVersions, "2026-07-28")
      assert.deepInclude(status.connections[0], { id: connectionId, ok: true })

      // ----- two named clients -----
      const sdk = new Client({ name: "sdk-client", version: "1.5.0" })
      await sdk.connect(new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers: { authorization: `Bearer ${tokens.alice}` } } }))
      await sdk.listTools()
      await sdk.callTool({ name: "list_connections", arguments: {} })

      w.setFault({ kind: "hang" }, { pathPrefix: "/v1/graphql" })
      const hanging = hangingQuery(endpoint, tokens.bob!, "modern-client", 10)
      await w.waitForRequest((r) => r.path === "/v1/graphql", 10_000)

      const listed = await eventually("both clients listed, one call in flight", async () => {
        const clients = await clientsJson()
        const b = clients.find((c) => c.name === "modern-client")
        return clients.some((c) => c.name === "sdk-client") && b?.inFlight === 1 ? clients : undefined
      })
      assert.deepInclude(listed.find((c) => c.name === "sdk-client"), { version: "1.5.0", principalName: "alice", era: "legacy" })
      assert.deepInclude(listed.find((c) => c.name === "modern-client"), { version: "2.0.0", principalName: "bob", era: "modern", inFlight: 1 })
      const table = await cli("clients")
      assert.match(table.stdout, /^client\s+version\s+principal\s+era\s+lastCall\s+inFlight/m)

      // ----- disconnect cancels the running call and revokes the token -----
      const disconnected = await cli("clients", "disconnect", "modern-client")
      assert.strictEqual(disconnected.code, 0, disconnected.stderr)
      const cancelled = (await (await hanging).json()) as { error: { code: number } }
      assert.strictEqual(cancelled.error.code, -33002)
      const afterRevoke = await modern(endpoint, tokens.bob!, "modern-client", 11, "tools/list")
      assert.strictEqual(afterRevoke.status, 401)

      // ----- pause with a call in flight, then resume -----
      const inFlight = sdk.callTool({ name: "execute_query", arguments: { connection_id: connectionId, query: QUERY } })
        .then(() => undefined, (error: { code?: number }) => error)
      await w.waitForRequest((r) => r.path === "/v1/graphql" && !r.completed && r.headers.authorization === undefined, 10_000)
      assert.strictEqual((await cli("pause")).code, 0)
      const refused = await eventually("paused within a second", async () => {
        const response = await modern(endpoint, tokens.alice!, "modern-client", 12, "tools/list")
        return response.status === 503 ? (response.json() as Promise<{ error: { code: number } }>) : undefined
      }, 15)
      assert.strictEqual(refused.error.code, -33006)
      const pausedCall = await inFlight
      assert.strictEqual(pausedCall?.code, -33002)
      const pausedStatus = JSON.parse((await cli("status", "--json")).stdout)
      assert.strictEqual(pausedStatus.paused, true)
      assert.strictEqual((await cli("resume")).code, 0)
      await eventually("resumed within a second", async () => {
        const response = await modern(endpoint, tokens.alice!, "modern-client", 13, "tools/list")
        return response.status === 200 ? true : undefined
      }, 15)

      // ----- SIGTERM with a call in flight -----
      const last = hangingQuery(endpoint, tokens.alice!, "modern-client", 14).then((r) => r.status, () => "gone")
      await w.waitForRequest((r) => r.path === "/v1/graphql" && !r.completed, 10_000)
      running.child.kill("SIGTERM")
      const exited = await running.exited
      assert.strictEqual(exited.code, 0, exited.stderr)
      await last
      await sdk.close().catch(() => undefined)

      // ----- operational log: start and stop lines, one line per request, warnings, never a secret -----
      const stderr = exited.stderr
      assert.match(stderr, /level=INFO .*message=listening/)
      assert.match(stderr, /level=INFO .*message=stopped/)
      const requestLines = stderr.split("\n").filter((l) => l.includes('message="mcp request"'))
      assert.isTrue(requestLines.some((l) =>
        /level=INFO/.test(l) && /method=tools\/call/.test(l) && /tool=list_connections/.test(l) && /principal=alice/.test(l) &&
        /client=sdk-client/.test(l) && /outcome=ok/.test(l) && /durationMs=[0-9.]+/.test(l)
      ), requestLines.join("\n"))
      assert.match(stderr, /level=WARN .*message="authentication failed"/)
      assert.match(stderr, /level=WARN .*message="AI access paused"/)
      for (const secret of Object.values(tokens)) assert.notInclude(stderr, secret)
      assert.notInclude(stderr, "Article")

      // ----- the log: one line per request sent, statements only as digests, the chain intact -----
      const content = NodeFs.readFileSync(NodePath.join(home, "activity.log"), "utf8")
      const entries = content.trimEnd().split("\n").map((text) => Line.parse(text)!)
      const calls = entries.filter((e): e is Extract<Line.Entry, { type: "call" }> => e.type === "call")
      const executeQueries = calls.filter((e) => e.tool === "execute_query")
      // bob's hanging call, alice's paused call and the one cut by SIGTERM.
      assert.strictEqual(executeQueries.length, 3)
      assert.deepStrictEqual(executeQueries.map((e) => e.outcome), ["cancelled", "cancelled", "cancelled"])
      assert.deepStrictEqual(executeQueries[0]!.statements, [Line.statementDigest(QUERY)])
      assert.notInclude(content, "Article")
      assert.isTrue(calls.some((e) => e.method === "initialize" && e.client === "sdk-client"))
      assert.isTrue(calls.some((e) => e.tool === "list_connections" && e.client === "sdk-client" && e.principalName === "alice" && e.outcome === "ok"))
      assert.isTrue(calls.some((e) => e.outcome === "unauthenticated" && e.principal === null))
      assert.isTrue(calls.some((e) => e.code === -33006))
      assert.deepStrictEqual(Line.verify(content), { _tag: "Valid", lines: entries.length })

      const verified = await cli("activity", "--verify")
      assert.strictEqual(verified.code, 0, verified.stderr)
      const shown = await cli("activity", "--client", "sdk-client", "--tool", "list_connections")
      assert.match(shown.stdout, /^time\s+client\s+principal\s+method\s+tool\s+connection\s+outcome/m)
      assert.strictEqual(shown.stdout.trim().split("\n").length, 3)
      const csv = await cli("activity", "--csv", "--connection", connectionId)
      assert.strictEqual(csv.stdout.trim().split("\n").length, 1 + 3)
      const json = JSON.parse((await cli("activity", "--json", "--since", "1h")).stdout)
      assert.strictEqual(json.length, calls.length)

      // ----- status: down -----
      const down = await cli("status")
      assert.strictEqual(down.code, 1)
      assert.match(down.stderr, /not running/)

      // ----- tampering shows -----
      const lines = content.split("\n")
      // A value it cannot already have (a fixed 0.1 left a call that took 0.1 ms unchanged).
      const edited = lines[4]!.replace(/"durationMs":([0-9.]+)/, (_, ms: string) => `"durationMs":${Number(ms) + 1000}`)
      assert.notStrictEqual(edited, lines[4])
      lines[4] = edited
      NodeFs.writeFileSync(NodePath.join(home, "activity.log"), lines.join("\n"))
      const tampered = await cli("activity", "--verify")
      assert.strictEqual(tampered.code, 1)
      assert.match(tampered.stderr, /line 5 /)
    } finally {
      running.child.kill("SIGKILL")
    }
  }, 120_000)
})
