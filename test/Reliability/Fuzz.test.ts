/**
 * Hostile input against the real daemon process (`weaviate-mcp serve`, token authentication on, debug
 * logging), with fast-check for a bounded number of runs: JSON-RPC bodies, header values, `Mcp-Param-*`
 * encodings, cursors and `requestState` values.
 *
 * Rules, for every answer: the daemon does not crash and keeps answering; every answer is a 2xx result
 * or a well-formed JSON-RPC error valid for the official schema of its era (never a 5xx); no secret
 * (the bearer token, a connection's API key) appears in any response or in anything the daemon logged;
 * and another client's `tools/list`, sent between the hostile requests, keeps being answered quickly
 * (its slowest answer is reported, and held under 100 ms by the reliability run).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import fc from "fast-check"
import * as NodeChild from "node:child_process"
import { performance } from "node:perf_hooks"
import * as Cli from "../support/Cli.ts"
import { validateMessage } from "../support/McpSchemas.ts"
import * as TestHome from "../support/TestHome.ts"

const MODERN = "2026-07-28"
const RUNS = Number(process.env.FUZZ_RUNS ?? 100)
const API_KEY = "fuzz-secret-api-key-7d1f0c9e2b"
/** The reliability run (`npm run test:reliability`) holds the latency bound; a shared `npm test` reports it. */
const HOLD_LATENCY = process.env.WEAVIATE_MCP_RELIABILITY === "1"
/** A plain node:http server: reads the body, answers fixed bytes; prints its URL. */
const BARE_SERVER = `
const server = require("node:http").createServer((req, res) => {
  req.resume()
  req.on("end", () => res.end('{"jsonrpc":"2.0","id":1,"result":{}}'))
})
server.listen(0, "127.0.0.1", () => process.stdout.write("http://127.0.0.1:" + server.address().port + "/\\n"))
`

const meta = {
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientInfo": { name: "fuzz", version: "1" },
  "io.modelcontextprotocol/clientCapabilities": {}
}

describe("hostile input (fast-check against the daemon process)", () => {
  let daemon: Cli.Running
  let token = ""
  let probeToken = ""
  let home = ""
  const latencies: Array<number> = []
  /** The same probe against a plain node:http server in a process of its own, right after each of ours. */
  const bareLatencies: Array<number> = []
  let bare: NodeChild.ChildProcess | undefined
  let bareUrl = ""

  beforeAll(async () => {
    home = TestHome.tempDirSync()
    const created = await Cli.run(["tokens", "create", "--home", home, "--name", "fuzz", "--access", "fullAccess"])
    token = /(wmcp_[A-Za-z0-9_-]+)/.exec(created.stdout)?.[1] ?? ""
    const probe = await Cli.run(["tokens", "create", "--home", home, "--name", "probe", "--access", "readOnly"])
    probeToken = /(wmcp_[A-Za-z0-9_-]+)/.exec(probe.stdout)?.[1] ?? ""
    const added = await Cli.run([
      "connections", "add", "--home", home, "--name", "secret", "--host", "127.0.0.1", "--port", "9",
      "--auth-method", "api-key", "--api-key", API_KEY, "--json"
    ])
    expect(added.code, added.stderr).toBe(0)
    expect(token).not.toBe("")
    expect(probeToken).not.toBe("")
    daemon = await Cli.serve(["--home", home, "--port", "0", "--approvals", "deny", "--rate-limit", "0", "--auth-lockout", "0", "--log-level", "debug"])
    bare = NodeChild.spawn(process.execPath, ["-e", BARE_SERVER], { stdio: ["ignore", "pipe", "inherit"] })
    bareUrl = await new Promise<string>((resolve, reject) => {
      let out = ""
      bare!.stdout!.on("data", (chunk) => {
        out += chunk
        const url = /^(http:\/\/127\.0\.0\.1:\d+\/)\n/.exec(out)?.[1]
        if (url !== undefined) resolve(url)
      })
      bare!.once("exit", (code) => reject(new Error(`the bare server exited (${code})`)))
    })
  }, 60_000)

  afterAll(async () => {
    bare?.kill("SIGKILL")
    daemon?.child.kill("SIGTERM")
    const finished = await daemon?.exited
    // Secrets never reach the log, whatever was sent.
    for (const secret of [token, probeToken, API_KEY]) {
      expect(finished?.stdout ?? "").not.toContain(secret)
      expect(finished?.stderr ?? "").not.toContain(secret)
    }
    if (latencies.length > 0) {
      const slowest = Math.max(...latencies)
      const bareSlowest = Math.max(0, ...bareLatencies)
      console.log(
        `another client's tools/list during hostile input: ${latencies.length} probes, slowest ${slowest.toFixed(1)} ms ` +
          `(a plain node:http server probed right after each: slowest ${bareSlowest.toFixed(1)} ms)`
      )
      // 100 ms over what a plain server took at the same time: a stall of the daemon counts, a
      // machine busy with other test files (both cores shared) does not.
      if (HOLD_LATENCY) expect(slowest).toBeLessThan(100 + bareSlowest)
    }
  })

  /** Another client's `tools/list`, timed. */
  const probe = async () => {
    const started = performance.now()
    const response = await fetch(daemon.endpoint, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${probeToken}`,
        "mcp-protocol-version": MODERN,
        "mcp-method": "tools/list"
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: `probe-${latencies.length}`, method: "tools/list", params: { _meta: meta } })
    })
    await response.arrayBuffer()
    latencies.push(performance.now() - started)
    expect(response.status).toBe(200)
    const bareStarted = performance.now()
    const bareResponse = await fetch(bareUrl, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
    await bareResponse.arrayBuffer()
    bareLatencies.push(performance.now() - bareStarted)
  }

  /** Sends one hostile request and checks its answer; then the probe. */
  const check = async (body: string, headers: Record<string, string>) => {
    const response = await fetch(daemon.endpoint, { method: "POST", headers, body })
    const text = await response.text()
    const contentType = response.headers.get("content-type") ?? ""
    expect(response.status, text).toBeLessThan(500)
    for (const secret of [token, probeToken, API_KEY]) expect(text).not.toContain(secret)
    if (response.status === 202) expect(text).toBe("")
    else if (contentType.startsWith("application/json")) {
      const message = JSON.parse(text)
      const era = message.result?.resultType !== undefined || headers["mcp-protocol-version"] === MODERN ? MODERN : "2025-11-25"
      validateMessage(era, message)
      if (message.error !== undefined) {
        expect(Number.isInteger(message.error.code)).toBe(true)
        expect(typeof message.error.message).toBe("string")
        expect(response.status).toBeGreaterThanOrEqual(400)
      }
    } else {
      expect(contentType, `${response.status} ${text}`).toMatch(/^text\/event-stream/)
    }
    await probe()
  }

  const modernHeaders = (method: string, extra: Record<string, string> = {}) => ({
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${token}`,
    "mcp-protocol-version": MODERN,
    "mcp-method": method,
    ...extra
  })

  const headerValue = fc.string({ maxLength: 200 }).filter((value) => /^[\t\x20-\x7e]*$/.test(value))
  const base64Wrapper = fc.oneof(
    fc.uint8Array({ maxLength: 60 }).map((bytes) => `=?base64?${Buffer.from(bytes).toString("base64")}?=`),
    fc.string({ maxLength: 60 }).filter((value) => /^[\x20-\x7e]*$/.test(value)).map((value) => `=?base64?${value}?=`),
    fc.string({ maxLength: 60 }).filter((value) => /^[\x20-\x7e]*$/.test(value)).map((value) => `=?base64?${value}`)
  )

  it("Mcp-Param headers with arbitrary names, values and base64 wrappers get a well-formed answer", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,20}$/), fc.oneof(headerValue, base64Wrapper), { maxKeys: 8 }),
        fc.jsonValue({ maxDepth: 3 }),
        async (params, args) => {
          const headers: Record<string, string> = modernHeaders("tools/call", { "mcp-name": "list_tables" })
          for (const [name, value] of Object.entries(params)) headers[`mcp-param-${name}`] = value
          const body = JSON.stringify({
            jsonrpc: "2.0", id: 1, method: "tools/call",
            params: { name: "list_tables", arguments: typeof args === "object" && args !== null && !Array.isArray(args) ? args : { connection_id: args }, _meta: meta }
          })
          await check(body, headers)
        }
      ),
      { numRuns: RUNS }
    )
  }, 120_000)

  it("arbitrary cursors on every list method get a result or -32602, never a crash", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("tools/list", "resources/list", "resources/templates/list", "prompts/list"),
        fc.oneof(fc.string({ maxLength: 300 }), fc.base64String({ maxLength: 300 }), fc.jsonValue({ maxDepth: 2 })),
        async (method, cursor) => {
          await check(JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { cursor, _meta: meta } }), modernHeaders(method))
        }
      ),
      { numRuns: RUNS }
    )
  }, 120_000)

  it("arbitrary requestState and inputResponses on a write get a well-formed refusal, and nothing is written", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.string({ maxLength: 400 }), fc.base64String({ maxLength: 400 }), fc.jsonValue({ maxDepth: 2 })),
        fc.jsonValue({ maxDepth: 3 }),
        async (requestState, inputResponses) => {
          const body = JSON.stringify({
            jsonrpc: "2.0", id: 1, method: "tools/call",
            params: {
              name: "delete_rows",
              arguments: { connection_id: "secret", table: "Article", uuids: ["00000000-0000-0000-0000-000000000001"] },
              requestState,
              inputResponses,
              _meta: meta
            }
          })
          await check(body, modernHeaders("tools/call", { "mcp-name": "delete_rows" }))
        }
      ),
      { numRuns: RUNS }
    )
  }, 120_000)

  it("arbitrary protocol, method and content headers get a well-formed answer", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          "mcp-protocol-version": fc.oneof(fc.constantFrom(MODERN, "2025-11-25", "2025-06-18", "1999-01-01", ""), headerValue),
          "mcp-method": fc.oneof(fc.constantFrom("tools/list", "tools/call", "x"), headerValue),
          "content-type": fc.oneof(fc.constantFrom("application/json", "text/plain", "application/json; charset=utf-16"), headerValue),
          accept: fc.oneof(fc.constantFrom("application/json, text/event-stream", "text/html", "*/*"), headerValue)
        }, { requiredKeys: [] }),
        fc.constantFrom("tools/list", "server/discover", "resources/list"),
        async (headers, method) => {
          const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { _meta: meta } })
          await check(body, { authorization: `Bearer ${token}`, ...headers })
        }
      ),
      { numRuns: RUNS }
    )
  }, 120_000)

  it("the daemon is still up and answers after all of it", async () => {
    await probe()
    expect(daemon.child.exitCode).toBeNull()
  })
})
