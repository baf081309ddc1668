/**
 * The web console in a real browser: Debian's headless Chromium driven by `playwright-core`, launched
 * as test/Reliability/Browser.test.ts launches it (offline: every name but loopback fails to resolve,
 * and the other origin's page is served on loopback under a name of its own). The daemon runs in this
 * process with the console's clock manual; calls come from the official MCP SDK client; the database
 * is the Weaviate under test.
 *
 * Rules: the one-time code signs in once, and not after 60 s; a tools/call shows in the live activity
 * within 1 s with its fields; the pause switch of the page is the -33006 kill switch; a token created
 * in the page works on /mcp and one revoked there is refused; a POST from another origin or without
 * the CSRF token changes nothing; the page requests nothing outside the daemon; axe finds no serious
 * or critical violation at 1280×800 and 390×844; the keyboard reaches everything.
 *
 * The screenshots of docs/console.md and the README are taken here, so they show what the page does.
 *
 * Skipped, saying why, where Chromium is not installed (`.ci/run` installs it).
 */
import { AxeBuilder } from "@axe-core/playwright"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodeHttp from "node:http"
import type * as NodeNet from "node:net"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { CODE_TTL_MS } from "../../src/Daemon/ConsoleSessions.ts"
import { modern, modernHeaders } from "../Mcp/support/EndpointHarness.ts"
import * as Chromium from "../support/Chromium.ts"
import * as ConsoleDaemon from "../support/ConsoleDaemon.ts"
import { progress } from "../support/Progress.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"

const available = Chromium.available("Console browser tests")

/**
 * Where the screenshots go: docs/images with `CONSOLE_SCREENSHOTS=1` (`npm run docs:screenshots`),
 * else a temporary folder, so that a test run leaves the working tree as it found it.
 */
const IMAGES = process.env.CONSOLE_SCREENSHOTS === "1"
  ? fileURLToPath(new URL("../../docs/images", import.meta.url))
  : NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-console-shots-"))

type Browser = import("playwright-core").Browser
type Page = import("playwright-core").Page

/** A modern tools/call with a bearer token, answered as JSON. */
const rawCall = async (url: string, token: string, name = "list_connections", args: Record<string, unknown> = {}) => {
  const response = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: { ...modernHeaders("tools/call", name), accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
    body: JSON.stringify(modern("tools/call", { name, arguments: args }, 1, { "io.modelcontextprotocol/clientInfo": { name: "raw-client", version: "1" } }))
  })
  return { status: response.status, json: (await response.json()) as { result?: { isError?: boolean }; error?: { code: number } } }
}

const listen = (server: NodeHttp.Server) =>
  new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as NodeNet.AddressInfo).port)))

describe.skipIf(!available)("the web console in a real browser (headless Chromium)", () => {
  let daemon: ConsoleDaemon.ConsoleDaemon
  let weaviate: WeaviateTestInstance
  let browser: Browser
  let evil: NodeHttp.Server
  let evilPort = 0
  let evilHtml = ""
  /** A token allowed on the connection (no first-access question), created through the console's API. */
  let agentToken = ""
  const sdkClients: Array<Client> = []
  /** Every request a console page made, across the tests. */
  const requests: Array<string> = []

  /** A tab of its own; the console's tabs have every request recorded (not the attackers' pages). */
  const newPage = async (viewport = { width: 1280, height: 800 }, record = true) => {
    const context = await browser.newContext({ viewport })
    if (record) context.on("request", (request) => void requests.push(request.url()))
    const page = await context.newPage()
    return page
  }

  const signedIn = async (viewport?: { width: number; height: number }) => {
    const page = await newPage(viewport)
    await page.goto(`${daemon.url}/console#code=${await ConsoleDaemon.code(daemon)}`)
    await page.getByRole("heading", { name: "Live activity" }).waitFor({ timeout: 10_000 })
    return page
  }

  const sdk = async (name: string, token: string) => {
    const client = new Client({ name, version: "1.0.0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
    sdkClients.push(client)
    return client
  }

  /** A screenshot of one section of the page. */
  const shotOf = async (page: Page, selector: string, name: string) => {
    NodeFs.mkdirSync(IMAGES, { recursive: true })
    await page.locator(selector).screenshot({ path: NodePath.join(IMAGES, name) })
  }

  const shot = async (page: Page, name: string, options: { fullPage?: boolean; clip?: { x: number; y: number; width: number; height: number } } = {}) => {
    NodeFs.mkdirSync(IMAGES, { recursive: true })
    await page.screenshot({ path: NodePath.join(IMAGES, name), ...options })
  }

  beforeAll(async () => {
    progress("the console browser tests: a daemon, the Weaviate under test, headless Chromium")
    weaviate = await startTestWeaviate()
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${weaviate.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
      if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`)
    }
    await post("/v1/schema", { class: "Article", vectorizer: "none", properties: [{ name: "title", dataType: ["text"] }] })
    for (const title of ["Vector search at home", "Hybrid search explained", "Consoles people can read"]) {
      await post("/v1/objects", { class: "Article", properties: { title }, vector: [Math.random(), Math.random(), Math.random()] })
    }
    const home = (await import("../support/TestHome.ts")).tempDirSync("weaviate-mcp-console-browser-")
    NodeFs.writeFileSync(NodePath.join(home, "connections.json"), JSON.stringify({
      version: 1,
      connections: [{ id: "local", name: "local", host: "127.0.0.1", port: weaviate.port, safeMode: "confirm", aiPolicy: "readWrite" }]
    }), { mode: 0o600 })
    daemon = await ConsoleDaemon.start({ home })
    const session = await ConsoleDaemon.signIn(daemon)
    const created = await fetch(`${daemon.url}/console/api/tokens`, {
      method: "POST",
      headers: { cookie: session.cookie, "x-csrf-token": session.csrf, origin: daemon.url, "content-type": "application/json" },
      body: JSON.stringify({ name: "laptop", access: "readWrite", connections: ["local"] })
    })
    agentToken = ((await created.json()) as { token: string }).token
    evil = NodeHttp.createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      response.end(evilHtml)
    })
    evilPort = await listen(evil)
    browser = await Chromium.launch([
      // The other origin is a name of its own on loopback; nothing else resolves at all.
      `--host-resolver-rules=MAP evil.example 127.0.0.1:${evilPort}, MAP rebind.example 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1`
    ])
    // Some activity for the charts and the screenshots: two official clients, a few calls each.
    const claude = await sdk("claude-code", agentToken)
    const cursor = await sdk("cursor", agentToken)
    for (let i = 0; i < 3; i++) {
      await claude.callTool({ name: "list_tables", arguments: { connection_id: "local" } })
      await claude.callTool({ name: "execute_query", arguments: { connection_id: "local", query: "{ Get { Article(limit: 2) { title } } }" } })
      await cursor.callTool({ name: "count_rows", arguments: { connection_id: "local", table: "Article" } })
    }
    await cursor.callTool({ name: "get_row", arguments: { connection_id: "local", table: "Missing", uuid: "00000000-0000-0000-0000-000000000000" } })
  }, 120_000)

  afterAll(async () => {
    for (const client of sdkClients) await client.close().catch(() => undefined)
    await browser?.close()
    await new Promise<void>((resolve) => (evil === undefined ? resolve() : (evil.closeAllConnections(), evil.close(() => resolve()))))
    await daemon?.dispose()
    await weaviate?.close()
    if (process.env.CONSOLE_SCREENSHOTS !== "1") NodeFs.rmSync(IMAGES, { recursive: true, force: true })
  }, 60_000)

  it("signs in with the one-time code; the code leaves the address bar and the history", async () => {
    const page = await newPage()
    const code = await ConsoleDaemon.code(daemon)
    await page.goto(`${daemon.url}/console#code=${code}`)
    await page.getByRole("heading", { name: "Live activity" }).waitFor({ timeout: 10_000 })
    expect(page.url()).toBe(`${daemon.url}/console`)
    // The entry was replaced, not added: one step back is the blank page the tab opened with.
    expect(await page.evaluate("window.history.length")).toBe(2)
    await expect(page.getByRole("status").first().textContent()).resolves.toContain("AI access on")
    // No secret on the page: neither the code nor a token.
    const text = await page.content()
    expect(text).not.toContain(code)
    expect(text).not.toMatch(/wmcp_[0-9a-f]{16}_/)
    await shot(page, "console.png")
    await page.goBack()
    expect(page.url()).toBe("about:blank")
    await page.context().close()
  }, 60_000)

  it("a second use of the code is refused", async () => {
    const code = await ConsoleDaemon.code(daemon)
    const first = await newPage()
    await first.goto(`${daemon.url}/console#code=${code}`)
    await first.getByRole("heading", { name: "Live activity" }).waitFor({ timeout: 10_000 })
    const second = await newPage()
    await second.goto(`${daemon.url}/console#code=${code}`)
    await second.getByText("unknown, used or expired").waitFor({ timeout: 10_000 })
    expect(await second.getByRole("heading", { name: "Live activity" }).count()).toBe(0)
    await first.context().close()
    await second.context().close()
  }, 60_000)

  it("an expired code is refused (60 s on the console's clock)", async () => {
    const code = await ConsoleDaemon.code(daemon)
    daemon.advance(CODE_TTL_MS)
    const page = await newPage()
    await page.goto(`${daemon.url}/console#code=${code}`)
    await page.getByText("unknown, used or expired").waitFor({ timeout: 10_000 })
    expect(await page.getByText("weaviate-mcp console", { exact: false }).first().isVisible()).toBe(true)
    await page.context().close()
  }, 60_000)

  it("a tools/call by an official MCP client appears in the live activity within 1 s, with its fields", async () => {
    const page = await signedIn()
    await page.getByText("Live.").waitFor({ timeout: 10_000 })
    const client = await sdk("inspector-e2e", agentToken)
    await client.callTool({ name: "count_rows", arguments: { connection_id: "local", table: "Article" } })
    const answered = Date.now()
    // The client's initialize is a row of its own and may arrive first: wait for the call's row.
    const row = page.locator("#activity-table tbody tr").filter({ hasText: "inspector-e2e" }).filter({ hasText: "count_rows" }).first()
    await row.waitFor({ timeout: 1_000 })
    expect(Date.now() - answered).toBeLessThan(1_000)
    const cells = await row.locator("td").allTextContents()
    // Time, client, principal, tool, connection, collection, outcome, duration.
    expect(cells.slice(1, 7)).toEqual(["inspector-e2e", "laptop", "count_rows", "local", "Article", "ok"])
    expect(cells[7]).toMatch(/^\d+(\.\d)? ms$/)
    // The filters narrow the table.
    await page.getByLabel("Client", { exact: true }).selectOption("cursor")
    expect(await page.locator("#activity-table tbody tr").filter({ hasText: "inspector-e2e" }).count()).toBe(0)
    expect(await page.locator("#activity-table tbody tr").filter({ hasText: "cursor" }).count()).toBeGreaterThan(0)
    await page.getByLabel("Client", { exact: true }).selectOption("")
    await page.getByLabel("Outcome", { exact: true }).selectOption("tool_error")
    expect(await page.locator("#activity-table tbody tr").filter({ hasText: "get_row" }).count()).toBe(1)
    await page.getByLabel("Outcome", { exact: true }).selectOption("")
    // Pausing the stream holds new calls back; resuming shows them.
    await page.getByRole("button", { name: "Pause the stream" }).click()
    await client.callTool({ name: "list_tables", arguments: { connection_id: "local" } })
    const held = page.locator("#activity-table tbody tr").filter({ hasText: "inspector-e2e" }).filter({ hasText: "list_tables" })
    // The page has the call (it says it keeps it) and does not show it.
    await page.getByText(/\d+ new calls? kept/).waitFor({ timeout: 1_000 })
    expect(await held.count()).toBe(0)
    await page.getByRole("button", { name: "Resume the stream" }).click()
    await held.first().waitFor({ timeout: 1_000 })
    await page.locator("#charts canvas").first().waitFor()
    await shotOf(page, "#charts", "console-charts.png")
    await page.context().close()
  }, 60_000)

  it("pausing from the console makes the next tools/call answer -33006; resuming lets it through (from the keyboard)", async () => {
    const page = await signedIn()
    // The skip link comes first; then the header's controls.
    await page.keyboard.press("Tab")
    expect(await page.evaluate("document.activeElement?.textContent")).toBe("Skip to the content")
    await page.keyboard.press("Tab")
    expect(await page.evaluate("document.activeElement?.textContent")).toBe("Pause AI access")
    await page.keyboard.press("Enter")
    await page.getByText("AI access paused", { exact: true }).waitFor({ timeout: 5_000 })
    const refused = await rawCall(daemon.url, agentToken)
    expect(refused.status).toBe(503)
    expect(refused.json.error?.code).toBe(-33006)
    const client = await sdk("paused-check", daemon.token).catch((error: unknown) => error)
    expect(String(client)).toContain("-33006")
    await shot(page, "console-paused.png", { clip: { x: 0, y: 0, width: 1280, height: 120 } })
    await page.keyboard.press("Enter")
    await page.getByText("AI access on", { exact: true }).waitFor({ timeout: 5_000 })
    expect((await rawCall(daemon.url, agentToken)).status).toBe(200)
    await page.context().close()
  }, 60_000)

  it("a token created in the console works for /mcp; one revoked there is refused on the next call", async () => {
    const page = await signedIn()
    await page.getByLabel("Name").fill("browser-made")
    await page.getByLabel("Access level").selectOption("readOnly")
    await page.getByRole("button", { name: "Create token" }).click()
    const input = page.getByLabel("Token", { exact: true })
    await input.waitFor({ timeout: 5_000 })
    const token = await input.inputValue()
    expect(token).toMatch(/^wmcp_/)
    expect((await rawCall(daemon.url, token)).status).toBe(200)
    // Shown once: gone when dismissed, and never in the list.
    await page.getByRole("button", { name: "Done" }).click()
    expect(await page.content()).not.toContain(token)
    const row = page.locator("#tokens-table tbody tr").filter({ hasText: "browser-made" })
    await row.waitFor()
    await row.getByRole("button", { name: "Revoke browser-made" }).click()
    await row.getByRole("button", { name: "Yes, revoke" }).click()
    await row.getByText("revoked").waitFor({ timeout: 5_000 })
    expect((await rawCall(daemon.url, token)).status).toBe(401)
    await shotOf(page, "#tokens", "console-tokens.png")
    await page.context().close()
  }, 60_000)

  it("a POST from another origin, or without the CSRF token, is refused and changes nothing", async () => {
    const page = await signedIn()
    // From the console's own page, without the token: refused.
    const withoutCsrf = await page.evaluate(async () => {
      const response = await fetch("/console/api/pause", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ paused: true }) })
      return response.status
    })
    expect(withoutCsrf).toBe(403)
    // From another origin, with the browser's cookies: a fetch and a form.
    let hits = 0
    const count = () => void hits++
    const other = await newPage(undefined, false)
    evilHtml = `<!doctype html><html><body>
      <form id="f" method="POST" action="${daemon.url}/console/api/pause" enctype="text/plain"><input name='{"paused":true,"x":"' value='"}'></form>
      </body></html>`
    other.on("request", count)
    await other.goto(`http://evil.example/`)
    const fetched = await other.evaluate(async (url) => {
      try {
        const response = await fetch(`${url}/console/api/pause`, { method: "POST", credentials: "include", mode: "no-cors", headers: { "content-type": "text/plain" }, body: JSON.stringify({ paused: true }) })
        return response.type
      } catch (error) {
        return String(error)
      }
    }, daemon.url)
    // Either an opaque answer or none at all (the answer's Cross-Origin-Resource-Policy): never readable.
    expect(["opaque", "TypeError: Failed to fetch"]).toContain(fetched)
    const [formAnswer] = await Promise.all([other.waitForResponse((r) => r.url().includes("/console/api/pause")), other.evaluate("document.getElementById('f').submit()")])
    expect(formAnswer.status()).toBe(403)
    expect(hits).toBeGreaterThan(0)
    // Nothing changed.
    await page.reload()
    await page.getByRole("heading", { name: "Live activity" }).waitFor()
    await page.getByText("AI access on", { exact: true }).waitFor()
    const settings = NodePath.join(daemon.home, "settings.json")
    expect(NodeFs.existsSync(settings) && JSON.parse(NodeFs.readFileSync(settings, "utf8")).paused === true).toBe(false)
    expect((await rawCall(daemon.url, agentToken)).status).toBe(200)
    await other.context().close()
    await page.context().close()
  }, 60_000)

  it("a DNS-rebinding page that reaches the daemon's port by its own name is refused on the Host, page and API alike", async () => {
    const page = await newPage(undefined, false)
    const response = await page.goto(`http://rebind.example:${daemon.port}/console`)
    expect(response?.status()).toBe(403)
    expect(await response!.text()).toContain("Host")
    const posted = await page.evaluate(async (url) => {
      const reply = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ paused: true }) })
      return reply.status
    }, `http://rebind.example:${daemon.port}/console/api/pause`)
    expect(posted).toBe(403)
    expect((await rawCall(daemon.url, agentToken)).status).toBe(200)
    await page.context().close()
  }, 60_000)

  it("connections: health, latency and the cluster, from the Test button", async () => {
    const page = await signedIn()
    await page.getByRole("button", { name: "Test local" }).click()
    const row = page.locator("#connections tbody tr").filter({ hasText: "local" })
    await row.locator(".badge.health-healthy").waitFor({ timeout: 15_000 })
    expect(await row.textContent()).toMatch(/\d+(\.\d)? ms/)
    await shotOf(page, "#connections", "console-connections.png")
    await page.context().close()
  }, 60_000)

  it("the history search box finds the statements of the calls", async () => {
    const page = await signedIn()
    await page.getByLabel("Search the query history").fill("Article")
    await page.getByRole("button", { name: "Search", exact: true }).click()
    await page.locator("#history tbody tr").first().waitFor({ timeout: 5_000 })
    expect(await page.locator("#history tbody").textContent()).toContain("Get { Article")
    await page.context().close()
  }, 60_000)

  it("axe reports no serious or critical violation, at 1280×800 and at 390×844; the narrow page does not scroll sideways", async () => {
    for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
      const page = await signedIn(viewport)
      await page.locator("#activity-table tbody tr").first().waitFor({ timeout: 5_000 })
      await page.getByRole("button", { name: "Test local" }).click()
      await page.locator("#connections .badge.health-healthy").waitFor({ timeout: 15_000 })
      const results = await new AxeBuilder({ page: page as never }).analyze()
      const bad = results.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
      expect(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(" ")).join("; ")})`), `${viewport.width}×${viewport.height}`).toEqual([])
      const overflow: number = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
      expect(overflow, `${viewport.width}×${viewport.height}`).toBeLessThanOrEqual(0)
      if (viewport.width === 390) {
        await page.evaluate("window.scrollTo(0, 0)")
        await shot(page, "console-mobile.png")
      }
      await page.context().close()
    }
  }, 120_000)

  it("the page made no request outside the daemon", () => {
    expect(requests.length).toBeGreaterThan(20)
    // A `data:` URL is no request to anywhere (the page's empty icon).
    const outside = requests.filter((url) => !url.startsWith(`${daemon.url}/`) && !url.startsWith("data:"))
    expect(outside).toEqual([])
    // Every console request stayed under /console.
    expect(requests.filter((url) => url.startsWith(`${daemon.url}/`) && !url.startsWith(`${daemon.url}/console`))).toEqual([])
  })
})
