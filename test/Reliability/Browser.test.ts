/**
 * A real browser against the endpoint: Debian's headless Chromium driven by `playwright-core`
 * (`executablePath: /usr/bin/chromium`, with the flags that keep it off the network). Pages are served
 * on loopback and reached by name through `--host-resolver-rules`, so the browser sends the real
 * `Origin` and `Host` it would send from those sites; the allowed origin is served over HTTPS with a
 * self-signed certificate (accepted with `--ignore-certificate-errors`).
 *
 * Rules: a page of an allowed origin (`https://claude.ai`, a default) can call the endpoint, CORS
 * preflight included, and read the answer; the same page under any other origin cannot read anything;
 * a DNS-rebinding page, which reaches the daemon's port by its own name, is refused on the `Host`.
 *
 * Skipped, saying why, where Chromium is not installed (`.ci/run` installs it).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as NodeHttp from "node:http"
import * as NodeHttps from "node:https"
import type * as NodeNet from "node:net"
import * as NodePath from "node:path"
import * as Chromium from "../support/Chromium.ts"
import * as Cli from "../support/Cli.ts"
import { progress } from "../support/Progress.ts"
import * as TestHome from "../support/TestHome.ts"
import { generateTls } from "../weaviate/Tls.ts"

const CHROMIUM = Chromium.PATH
const available = Chromium.available("Browser tests")

const MODERN = "2026-07-28"

/** The script a page runs: a modern `tools/list` with a bearer token (a non-simple request: preflight). */
const pageScript = (endpoint: string, token: string) => `
  window.callEndpoint = async () => {
    try {
      const response = await fetch(${JSON.stringify(endpoint)}, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          authorization: "Bearer ${token}",
          "mcp-protocol-version": "${MODERN}",
          "mcp-method": "tools/list"
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: {
          "io.modelcontextprotocol/protocolVersion": "${MODERN}",
          "io.modelcontextprotocol/clientCapabilities": {}
        } } })
      })
      const body = await response.json()
      return { status: response.status, tools: Array.isArray(body?.result?.tools) ? body.result.tools.length : null }
    } catch (error) {
      return { error: String(error) }
    }
  }`

const page = (script: string) => `<!doctype html><html><head><meta charset="utf-8"><script>${script}</script></head><body>page</body></html>`

const listen = (server: NodeHttp.Server | NodeHttps.Server) =>
  new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as NodeNet.AddressInfo).port)))

const close = (server: NodeHttp.Server | NodeHttps.Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })

describe.skipIf(!available)("a real browser (headless Chromium)", () => {
  let daemon: Cli.Running
  let token: string
  let html = ""
  /** What the daemon saw: the preflights and posts that reached it, by method. */
  const servers: Array<NodeHttp.Server | NodeHttps.Server> = []
  let browser: import("playwright-core").Browser
  let httpsPort = 0
  let httpPort = 0

  beforeAll(async () => {
    progress("the browser tests: starting headless Chromium against a daemon, pages from three origins")
    const home = TestHome.tempDirSync()
    const created = await Cli.run(["tokens", "create", "--home", home, "--name", "browser", "--access", "readOnly"])
    token = /(wmcp_[A-Za-z0-9_-]+)/.exec(created.stdout)?.[1] ?? ""
    expect(token, created.stderr).not.toBe("")
    daemon = await Cli.serve(["--home", home, "--port", "0", "--approvals", "deny"])
    const handler: NodeHttp.RequestListener = (_request, response) => {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      response.end(html)
    }
    const tls = generateTls()
    const secure = NodeHttps.createServer({ cert: tls.certPem, key: tls.keyPem }, handler)
    const plain = NodeHttp.createServer(handler)
    servers.push(secure, plain)
    httpsPort = await listen(secure)
    httpPort = await listen(plain)
    browser = await Chromium.launch([
      "--ignore-certificate-errors",
      // Every name the tests use resolves to loopback; nothing else resolves at all.
      `--host-resolver-rules=MAP claude.ai:443 127.0.0.1:${httpsPort}, MAP evil.example:443 127.0.0.1:${httpsPort}, ` +
        `MAP rebind.example 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1`
    ])
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await Promise.all(servers.map(close))
    daemon?.child.kill("SIGTERM")
    await daemon?.exited
  })

  const callFrom = async (origin: string) => {
    html = page(pageScript(daemon.endpoint, token))
    const context = await browser.newContext({ ignoreHTTPSErrors: true })
    try {
      const tab = await context.newPage()
      const console: Array<string> = []
      tab.on("console", (message) => console.push(message.text()))
      await tab.goto(`${origin}/`, { timeout: 15_000 })
      // Runs in the page, where `callEndpoint` was defined by the page's script.
      const result = await tab.evaluate("window.callEndpoint()") as { status?: number; tools?: number | null; error?: string }
      return { ...result, console: console.join("\n") }
    } finally {
      await context.close()
    }
  }

  it("a page of an allowed origin (https://claude.ai) calls the endpoint through a CORS preflight and reads the answer", async () => {
    const result = await callFrom("https://claude.ai")
    expect(result).toMatchObject({ status: 200 })
    expect(result.tools).toBeGreaterThan(0)
  }, 60_000)

  it("the same page under another origin (https://evil.example) reads nothing: the preflight is refused", async () => {
    const result = await callFrom("https://evil.example")
    expect(result).toMatchObject({ error: expect.stringContaining("Failed to fetch") })
    expect(result.console).toContain("blocked by CORS policy")
    expect(result.console).toContain("preflight")
  }, 60_000)

  it("a DNS-rebinding page that reaches the daemon's port by its own name is refused on the Host (403 forbidden_host)", async () => {
    const context = await browser.newContext()
    try {
      const tab = await context.newPage()
      // The rebinding attack: the attacker's name now resolves to 127.0.0.1, so the page's own origin
      // is the daemon's port. Its requests are same-origin to the browser; only the Host tells them apart.
      const response = await tab.goto(`http://rebind.example:${daemon.port}/mcp`, { timeout: 15_000 })
      expect(response?.status()).toBe(403)
      const body = JSON.parse(await response!.text()) as { error: { code: number; data: { code: string } } }
      expect(body.error.code).toBe(-33007)
      expect(body.error.data.code).toBe("forbidden_host")
      const posted = await tab.evaluate(async (url) => {
        const reply = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
        return { status: reply.status, text: await reply.text() }
      }, `http://rebind.example:${daemon.port}/mcp`)
      expect(posted.status).toBe(403)
      expect(posted.text).toContain("forbidden_host")
      expect(posted.text).not.toContain("tools")
    } finally {
      await context.close()
    }
  }, 60_000)

  it("serves its pages only on loopback (the page servers and the daemon listen on 127.0.0.1)", () => {
    expect(new URL(daemon.endpoint).hostname).toBe("127.0.0.1")
    for (const server of servers) expect((server.address() as NodeNet.AddressInfo).address).toBe("127.0.0.1")
    expect(NodePath.isAbsolute(CHROMIUM)).toBe(true)
    expect(httpPort).toBeGreaterThan(0)
  })
})
