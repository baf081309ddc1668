/**
 * Attack class (or plain misfortune): a hung database holding callers and their connection slots.
 * Health checks, schema reads and the completions built on them have default time-outs; a time-out is
 * the tool error `timeout` or, for a non-tool method, `-33003`. The daemon here has its time-outs set
 * to 1 s (`healthTimeoutSeconds`, `schemaTimeoutSeconds`) so that nothing waits the default 10 s.
 */
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import * as WeaviateHttp from "../../src/Driver/WeaviateHttp.ts"
import { modern, modernHeaders, send } from "../Mcp/support/EndpointHarness.ts"
import * as TestDaemon from "../support/TestDaemon.ts"
import { type ToolsDaemon, toolsDaemon } from "./support.ts"

const TIMEOUT_MS = 1_000

let d: ToolsDaemon
beforeAll(async () => {
  d = await toolsDaemon({ settings: { healthTimeoutSeconds: TIMEOUT_MS / 1000, schemaTimeoutSeconds: TIMEOUT_MS / 1000 } })
}, 60_000)
afterAll(() => d.dispose())
beforeEach(() => {
  d.w.setFault({ kind: "none" })
  d.w.clearRequests()
})

const call = (method: string, params: Record<string, unknown>, name?: string) =>
  Effect.runPromise(send(d.endpoint, {
    body: modern(method, params),
    headers: { ...modernHeaders(method, name), authorization: `Bearer ${d.tokens.fullAccess}` }
  }))

/** Runs `f` and tells how long it took (ms). */
const timed = async <A>(f: () => Promise<A>) => {
  const started = performance.now()
  const value = await f()
  return { value, ms: performance.now() - started }
}

describe("every call that reaches Weaviate has a bound", () => {
  it("the defaults: health checks 10 s, schema reads 15 s", async () => {
    expect(WeaviateHttp.Timeouts.defaultValue()).toEqual({ healthMs: 10_000, schemaMs: 15_000 })
    const defaults = await Effect.runPromise(TestDaemon.settings())
    expect([defaults.healthTimeoutSeconds, defaults.schemaTimeoutSeconds]).toEqual([10, 15])
  })

  it("get_connection_status against a hung database ends with the tool error timeout", async () => {
    // First access is granted while the database still answers.
    const first = await call("tools/call", { name: "get_connection_status", arguments: { connection_id: d.ids.local } }, "get_connection_status")
    expect(first.json.result, JSON.stringify(first.json)).toBeDefined()
    d.w.setFault({ kind: "hang" })
    const { ms, value } = await timed(() => call("tools/call", { name: "get_connection_status", arguments: { connection_id: d.ids.local } }, "get_connection_status"))
    const result = value.json.result
    expect(result.isError, JSON.stringify(value.json)).toBe(true)
    expect(result.structuredContent).toBeUndefined()
    expect(result.content[0].text).toMatch(/^timeout: /)
    expect(ms).toBeLessThan(TIMEOUT_MS + 2_000)
    expect(d.w.requests.some((r) => r.path === "/v1/meta")).toBe(true)
  }, 20_000)

  it("resources/read of a schema against a hung database is -33003", async () => {
    const uri = `weaviate://connections/${d.ids.local}/schema`
    const warm = await call("resources/read", { uri }, uri)
    expect(warm.json.result, JSON.stringify(warm.json)).toBeDefined()
    d.w.setFault({ kind: "hang" })
    const { ms, value } = await timed(() => call("resources/read", { uri }, uri))
    expect(value.json.error?.code, JSON.stringify(value.json)).toBe(-33003)
    expect(ms).toBeLessThan(TIMEOUT_MS + 2_000)
  }, 20_000)

  it("completion/complete against a hung database is answered within the bound (no values)", async () => {
    d.w.setFault({ kind: "hang" })
    const { ms, value } = await timed(() =>
      call("completion/complete", {
        ref: { type: "ref/prompt", name: "explain_table" },
        argument: { name: "table", value: "A" },
        context: { arguments: { connection_id: d.ids.local } }
      })
    )
    expect(value.json.result?.completion, JSON.stringify(value.json)).toBeDefined()
    expect(value.json.result.completion.values).toEqual([])
    // It did ask the hung database, and gave up at the schema time-out.
    expect(d.w.requests.some((r) => r.path.startsWith("/v1/schema"))).toBe(true)
    expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50)
    expect(ms).toBeLessThan(TIMEOUT_MS + 2_000)
  }, 20_000)
})

describe("serve --health-timeout sets the health check's bound", () => {
  it("a daemon started with --health-timeout 1 answers get_connection_status on a hung database with timeout within about a second", async () => {
    const { startWeaviate } = await import("../weaviate/WeaviateServer.ts")
    const Cli = await import("../support/Cli.ts")
    const TestHome = await import("../support/TestHome.ts")
    const hung = await startWeaviate()
    const home = TestHome.tempDirSync()
    const added = await Cli.run(["connections", "add", "--home", home, "--name", "hung", "--host", "127.0.0.1", "--port", String(hung.port), "--json"])
    const id = (JSON.parse(added.stdout) as { id: string }).id
    // Naming the connection grants first access, so no question is asked.
    const created = await Cli.run(["tokens", "create", "--home", home, "--name", "t", "--access", "readWrite", "--connections", "hung"])
    const token = /(wmcp_[A-Za-z0-9_-]+)/.exec(created.stdout)?.[1] ?? ""
    const daemon = await Cli.serve(["--home", home, "--port", "0", "--approvals", "deny", "--health-timeout", "1"])
    try {
      hung.setFault({ kind: "hang" })
      const { ms, value } = await timed(() => Effect.runPromise(send(daemon.endpoint, {
        body: modern("tools/call", { name: "get_connection_status", arguments: { connection_id: id } }),
        headers: { ...modernHeaders("tools/call", "get_connection_status"), authorization: `Bearer ${token}` }
      })))
      expect(value.json.result?.content?.[0]?.text, JSON.stringify(value.json)).toMatch(/^timeout: /)
      expect(ms).toBeLessThan(1_000 + 2_000)
    } finally {
      daemon.child.kill("SIGTERM")
      await daemon.exited
      hung.setFault({ kind: "none" })
      await hung.close()
    }
  }, 30_000)
})
