/**
 * The web console's server side over real HTTP on 127.0.0.1 (the daemon in this process, its console
 * clock virtual): the one-time code, the session cookie, the CSRF token, the origin and host checks,
 * the security headers, the live stream and the JSON endpoints. docs/console.md describes the rules.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Option from "effect/Option"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import * as NodePath from "node:path"
import { MAX_STREAMS } from "../../src/Daemon/Console.ts"
import { CODE_TTL_MS, KEY_FILE, KEY_HEADER, SESSION_TTL_MS } from "../../src/Daemon/ConsoleSessions.ts"
import { modern, modernHeaders } from "../Mcp/support/EndpointHarness.ts"
import * as ConsoleDaemon from "../support/ConsoleDaemon.ts"

/** A tools/call of the official shape with a bearer token (or a cookie instead). */
const toolsCall = async (url: string, auth: Record<string, string>, id = 1) => {
  const response = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: { ...modernHeaders("tools/call", "list_connections"), accept: "application/json, text/event-stream", ...auth },
    body: JSON.stringify(modern("tools/call", { name: "list_connections", arguments: {} }, id))
  })
  return { status: response.status, json: (await response.json()) as { result?: unknown; error?: { code: number } } }
}

const api = (daemon: { url: string }, route: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) =>
  fetch(`${daemon.url}/console/api/${route}`, {
    method: init.method ?? "GET",
    headers: init.headers ?? {},
    ...(init.body === undefined ? {} : { body: typeof init.body === "string" ? init.body : JSON.stringify(init.body) })
  })

/** The headers of a state-changing request of the page. */
const pageHeaders = (daemon: { url: string }, session: { cookie: string; csrf: string }) => ({
  cookie: session.cookie,
  "x-csrf-token": session.csrf,
  origin: daemon.url,
  "content-type": "application/json"
})

/** A GET with a Host header of our choosing (fetch does not let one set it). */
const getWithHost = (port: number, path: string, host: string, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; body: string; headers: NodeHttp.IncomingHttpHeaders }>((resolve, reject) => {
    const request = NodeHttp.request({ host: "127.0.0.1", port, path, method: "GET", headers: { ...headers, host } }, (response) => {
      let body = ""
      response.on("data", (chunk) => (body += chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body, headers: response.headers }))
    })
    request.once("error", reject)
    request.end()
  })

const paused = (home: string) => {
  const path = NodePath.join(home, "settings.json")
  return NodeFs.existsSync(path) && JSON.parse(NodeFs.readFileSync(path, "utf8")).paused === true
}

describe("the web console over HTTP", () => {
  let daemon: ConsoleDaemon.ConsoleDaemon

  beforeAll(async () => {
    daemon = await ConsoleDaemon.start()
  }, 30_000)

  afterAll(async () => {
    await daemon?.dispose()
  })

  describe("sign-in", () => {
    it("a one-time code is exchanged for a session cookie: HttpOnly, SameSite=Strict, Path=/console, a stated Max-Age", async () => {
      const session = await ConsoleDaemon.exchange(daemon.url, await ConsoleDaemon.code(daemon))
      expect(session.status).toBe(200)
      const attributes = session.setCookie.split(";").map((p) => p.trim())
      expect(attributes).toEqual(expect.arrayContaining(["HttpOnly", "SameSite=Strict", "Path=/console", "Max-Age=43200"]))
      expect(session.csrf.length).toBeGreaterThan(30)
      const overview = await api(daemon, "overview", { headers: { cookie: session.cookie } })
      expect(overview.status).toBe(200)
    })

    it("a second use of a code is refused", async () => {
      const code = await ConsoleDaemon.code(daemon)
      expect((await ConsoleDaemon.exchange(daemon.url, code)).status).toBe(200)
      const again = await ConsoleDaemon.exchange(daemon.url, code)
      expect(again.status).toBe(401)
      expect(again.setCookie).toBe("")
    })

    it("a code is valid 60 s: accepted just before, refused from then on (virtual clock)", async () => {
      const early = await ConsoleDaemon.code(daemon)
      const late = await ConsoleDaemon.code(daemon)
      daemon.advance(CODE_TTL_MS - 1)
      expect((await ConsoleDaemon.exchange(daemon.url, early)).status).toBe(200)
      daemon.advance(1)
      const expired = await ConsoleDaemon.exchange(daemon.url, late)
      expect(expired.status).toBe(401)
      expect(expired.body.error).toContain("expired")
    })

    it("a code is handed out only for the console key, and never to a browser", async () => {
      const ask = (headers: Record<string, string>) => api(daemon, "code", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: {} })
      expect((await ask({})).status).toBe(401)
      expect((await ask({ [KEY_HEADER]: "not-the-key" })).status).toBe(401)
      // The daemon's MCP token is no console key.
      expect((await ask({ authorization: `Bearer ${daemon.token}` })).status).toBe(401)
      expect((await ask({ [KEY_HEADER]: ConsoleDaemon.keyOf(daemon.home), origin: daemon.url })).status).toBe(403)
      expect((await ask({ [KEY_HEADER]: ConsoleDaemon.keyOf(daemon.home) })).status).toBe(200)
    })

    it("the console key file is the user's alone (mode 0600) and names the daemon", () => {
      const path = NodePath.join(daemon.home, KEY_FILE)
      expect(NodeFs.statSync(path).mode & 0o777).toBe(0o600)
      expect(JSON.parse(NodeFs.readFileSync(path, "utf8"))).toMatchObject({ version: 1, instanceId: expect.any(String), key: expect.any(String) })
    })

    it("an MCP token does not open the console", async () => {
      expect(daemon.token).toMatch(/^wmcp_/)
      const response = await api(daemon, "overview", { headers: { authorization: `Bearer ${daemon.token}` } })
      expect(response.status).toBe(401)
      expect(((await response.json()) as { error: string }).error).toContain("does not accept MCP tokens")
      expect((await api(daemon, "tokens", { headers: { authorization: `Bearer ${daemon.token}` } })).status).toBe(401)
    })

    it("a console session cannot call MCP methods: its cookie on /mcp is answered as no credentials", async () => {
      const session = await ConsoleDaemon.signIn(daemon)
      const withCookie = await toolsCall(daemon.url, { cookie: session.cookie })
      expect(withCookie.status).toBe(401)
      expect(withCookie.json.result).toBeUndefined()
      const withToken = await toolsCall(daemon.url, { authorization: `Bearer ${daemon.token}` })
      expect(withToken.status).toBe(200)
    })
  })

  describe("origins, hosts and CSRF", () => {
    it("the Host check of /mcp applies (DNS rebinding): a name other than loopback is refused 403", async () => {
      const session = await ConsoleDaemon.signIn(daemon)
      for (const path of ["/console", "/console/assets/console.js", "/console/api/overview"]) {
        const response = await getWithHost(daemon.port, path, `rebind.example:${daemon.port}`, { cookie: session.cookie })
        expect(response.status, path).toBe(403)
        expect(response.body).toContain("Host")
        expect(response.headers["x-frame-options"]).toBe("DENY")
      }
      // The right name with another port is refused too; loopback names with the port are not.
      expect((await getWithHost(daemon.port, "/console", "127.0.0.1:1")).status).toBe(403)
      expect((await getWithHost(daemon.port, "/console", `localhost:${daemon.port}`)).status).toBe(200)
      expect((await getWithHost(daemon.port, "/console/api/overview", `localhost:${daemon.port}`, { cookie: session.cookie })).status).toBe(200)
    })

    it("a POST from another origin is refused and changes nothing, even from an origin /mcp allows", async () => {
      const session = await ConsoleDaemon.signIn(daemon)
      for (const origin of ["https://evil.example", "https://claude.ai", "http://localhost:1"]) {
        const response = await api(daemon, "pause", { method: "POST", headers: { ...pageHeaders(daemon, session), origin }, body: { paused: true } })
        expect(response.status, origin).toBe(403)
      }
      const crossSite = await api(daemon, "pause", { method: "POST", headers: { ...pageHeaders(daemon, session), "sec-fetch-site": "cross-site" }, body: { paused: true } })
      expect(crossSite.status).toBe(403)
      expect(paused(daemon.home)).toBe(false)
      const overview = (await (await api(daemon, "overview", { headers: { cookie: session.cookie } })).json()) as { paused: boolean }
      expect(overview.paused).toBe(false)
    })

    it("every state-changing request needs the CSRF token: without it, or with another, it is refused and changes nothing", async () => {
      const session = await ConsoleDaemon.signIn(daemon)
      const before = (await (await api(daemon, "tokens", { headers: { cookie: session.cookie } })).json()) as { tokens: Array<unknown> }
      const { "x-csrf-token": _, ...withoutCsrf } = pageHeaders(daemon, session)
      const attempts = [
        { route: "pause", body: { paused: true } },
        { route: "tokens", body: { name: "csrf-less", access: "readOnly" } },
        { route: "sign-out", body: {} }
      ]
      for (const attempt of attempts) {
        const missing = await api(daemon, attempt.route, { method: "POST", headers: withoutCsrf, body: attempt.body })
        expect(missing.status, attempt.route).toBe(403)
        const wrong = await api(daemon, attempt.route, { method: "POST", headers: { ...withoutCsrf, "x-csrf-token": "x".repeat(43) }, body: attempt.body })
        expect(wrong.status, attempt.route).toBe(403)
      }
      // Another session's token is no better.
      const other = await ConsoleDaemon.signIn(daemon)
      expect((await api(daemon, "pause", { method: "POST", headers: { ...withoutCsrf, "x-csrf-token": other.csrf }, body: { paused: true } })).status).toBe(403)
      expect(paused(daemon.home)).toBe(false)
      const after = (await (await api(daemon, "tokens", { headers: { cookie: session.cookie } })).json()) as { tokens: Array<unknown> }
      expect(after.tokens.length).toBe(before.tokens.length)
      // The session was not signed out either.
      expect((await api(daemon, "overview", { headers: { cookie: session.cookie } })).status).toBe(200)
    })

    it("a state-changing request must be JSON (a form post cannot be one)", async () => {
      const session = await ConsoleDaemon.signIn(daemon)
      const form = await api(daemon, "pause", { method: "POST", headers: { ...pageHeaders(daemon, session), "content-type": "application/x-www-form-urlencoded" }, body: "paused=true" })
      expect(form.status).toBe(415)
      expect(paused(daemon.home)).toBe(false)
    })

    it("without a session every read is refused (401)", async () => {
      for (const route of ["overview", "activity", "events", "tokens", "connections", "approvals", "history", "session"]) {
        expect((await api(daemon, route)).status, route).toBe(401)
      }
    })
  })

  describe("headers", () => {
    it("every answer carries a strict CSP, X-Frame-Options: DENY and frame-ancestors 'none'", async () => {
      const session = await ConsoleDaemon.signIn(daemon)
      const answers = await Promise.all([
        fetch(`${daemon.url}/console`),
        fetch(`${daemon.url}/console/assets/console.js`),
        fetch(`${daemon.url}/console/assets/console.css`),
        fetch(`${daemon.url}/console/api/overview`, { headers: { cookie: session.cookie } }),
        fetch(`${daemon.url}/console/api/overview`),
        fetch(`${daemon.url}/console/nothing-here`),
        fetch(`${daemon.url}/console`, { headers: { origin: "https://evil.example" } })
      ])
      for (const response of answers) {
        const csp = response.headers.get("content-security-policy") ?? ""
        expect(csp, response.url).toContain("default-src 'none'")
        expect(csp).toContain("script-src 'self'")
        expect(csp).toContain("frame-ancestors 'none'")
        expect(csp).not.toContain("unsafe-inline")
        expect(csp).not.toContain("unsafe-eval")
        expect(csp).not.toMatch(/https?:/)
        expect(response.headers.get("x-frame-options")).toBe("DENY")
        expect(response.headers.get("x-content-type-options")).toBe("nosniff")
      }
      expect(answers[0]!.status).toBe(200)
      expect(answers[0]!.headers.get("cache-control")).toBe("no-store")
    })

    it("the page has no inline script and loads nothing from elsewhere", async () => {
      const page = await (await fetch(`${daemon.url}/console`)).text()
      for (const match of page.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)) {
        expect(match[1]).toContain('src="/console/assets/')
        expect(match[2]!.trim()).toBe("")
      }
      expect(page).not.toMatch(/(src|href)="(https?:)?\/\//)
      expect(page).not.toMatch(/\son[a-z]+=/i)
    })
  })

  describe("the JSON endpoints", () => {
    it("secrets are never rendered: token lists without secrets; a new token is in its creation's answer only", async () => {
      const session = await ConsoleDaemon.signIn(daemon)
      const created = await api(daemon, "tokens", { method: "POST", headers: pageHeaders(daemon, session), body: { name: "laptop", access: "readOnly", expiresInDays: 30 } })
      expect(created.status).toBe(200)
      const { info, token } = (await created.json()) as { token: string; info: { id: string; expiresAt: string } }
      expect(token).toMatch(/^wmcp_/)
      expect(info.expiresAt).not.toBeNull()
      const listed = await (await api(daemon, "tokens", { headers: { cookie: session.cookie } })).text()
      expect(listed).toContain(info.id)
      expect(listed).not.toContain(token)
      expect(listed).not.toContain(daemon.token)
      expect(listed).not.toMatch(/wmcp_[0-9a-f]{16}_/)
      expect(listed).not.toMatch(/salt|digest|hash/i)
    })

    it("a token created in the console works on /mcp; revoked there, it is refused on the next call", async () => {
      const session = await ConsoleDaemon.signIn(daemon)
      const created = (await (await api(daemon, "tokens", { method: "POST", headers: pageHeaders(daemon, session), body: { name: "from-console", access: "readOnly" } })).json()) as { token: string; info: { id: string } }
      expect((await toolsCall(daemon.url, { authorization: `Bearer ${created.token}` })).status).toBe(200)
      const revoked = await api(daemon, "tokens/revoke", { method: "POST", headers: pageHeaders(daemon, session), body: { id: created.info.id } })
      expect(revoked.status).toBe(200)
      const refused = await toolsCall(daemon.url, { authorization: `Bearer ${created.token}` })
      expect(refused.status).toBe(401)
    })

    it("a token request that makes no sense is refused with the reason, and nothing is created", async () => {
      const session = await ConsoleDaemon.signIn(daemon)
      const before = ((await (await api(daemon, "tokens", { headers: { cookie: session.cookie } })).json()) as { tokens: Array<unknown> }).tokens.length
      for (const body of [{ name: "", access: "readOnly" }, { name: "x", access: "root" }, { name: "x", access: "readOnly", scopes: ["admin"] }, { name: "x", access: "readOnly", extra: 1 }]) {
        const response = await api(daemon, "tokens", { method: "POST", headers: pageHeaders(daemon, session), body })
        expect(response.status, JSON.stringify(body)).toBe(400)
        expect(((await response.json()) as { error: string }).error.length).toBeGreaterThan(0)
      }
      expect((await api(daemon, "tokens", { method: "POST", headers: pageHeaders(daemon, session), body: "{not json" })).status).toBe(400)
      const after = ((await (await api(daemon, "tokens", { headers: { cookie: session.cookie } })).json()) as { tokens: Array<unknown> }).tokens.length
      expect(after).toBe(before)
    })

    it("pausing from the console makes the next tools/call answer -33006; resuming lets it through", async () => {
      const session = await ConsoleDaemon.signIn(daemon)
      const pause = await api(daemon, "pause", { method: "POST", headers: pageHeaders(daemon, session), body: { paused: true } })
      expect(await pause.json()).toEqual({ paused: true })
      expect(paused(daemon.home)).toBe(true)
      const refused = await toolsCall(daemon.url, { authorization: `Bearer ${daemon.token}` })
      expect(refused.status).toBe(503)
      expect(refused.json.error?.code).toBe(-33006)
      await api(daemon, "pause", { method: "POST", headers: pageHeaders(daemon, session), body: { paused: false } })
      expect(paused(daemon.home)).toBe(false)
      expect((await toolsCall(daemon.url, { authorization: `Bearer ${daemon.token}` })).status).toBe(200)
    })

    it("a tools/call appears on the live stream with client, principal, tool, connection, outcome and duration", async () => {
      const session = await ConsoleDaemon.signIn(daemon)
      const controller = new AbortController()
      const stream = await fetch(`${daemon.url}/console/api/events`, { headers: { cookie: session.cookie }, signal: controller.signal })
      expect(stream.headers.get("content-type")).toBe("text/event-stream")
      const reader = stream.body!.getReader()
      const decoder = new TextDecoder()
      let text = ""
      // The stream opens with the pause state; then the call is made.
      while (!text.includes("event: pause")) text += decoder.decode((await reader.read()).value)
      const started = Date.now()
      await fetch(`${daemon.url}/mcp`, {
        method: "POST",
        headers: { ...modernHeaders("tools/call", "list_tables"), accept: "application/json, text/event-stream", authorization: `Bearer ${daemon.token}` },
        body: JSON.stringify(modern("tools/call", { name: "list_tables", arguments: { connection_id: "prod" } }, 7, { "io.modelcontextprotocol/clientInfo": { name: "stream-test", version: "1.0" } }))
      })
      const deadline = Date.now() + 5_000
      while (!text.includes("stream-test") && Date.now() < deadline) text += decoder.decode((await reader.read()).value)
      controller.abort()
      const frame = text.split("\n\n").find((f) => f.includes("stream-test"))!
      expect(frame.startsWith("event: calls\ndata: ")).toBe(true)
      const [call] = JSON.parse(frame.slice("event: calls\ndata: ".length)) as Array<Record<string, unknown>>
      expect(call).toMatchObject({ client: "stream-test", clientVersion: "1.0", principalName: "default", method: "tools/call", tool: "list_tables", connection: "prod", outcome: "tool_error" })
      expect(call!.durationMs).toEqual(expect.any(Number))
      expect(Date.now() - started).toBeLessThan(1_000)
    })

    it("the last hour of calls, the clients seen and each token's last use are listed", async () => {
      const session = await ConsoleDaemon.signIn(daemon)
      await toolsCall(daemon.url, { authorization: `Bearer ${daemon.token}` }, 99)
      const deadline = Date.now() + 3_000
      let activity: { calls: Array<{ tool: string | null }> } = { calls: [] }
      while (!activity.calls.some((c) => c.tool === "list_connections") && Date.now() < deadline) {
        activity = (await (await api(daemon, "activity", { headers: { cookie: session.cookie } })).json()) as typeof activity
      }
      expect(activity.calls.some((c) => c.tool === "list_connections")).toBe(true)
      const tokens = (await (await api(daemon, "tokens", { headers: { cookie: session.cookie } })).json()) as { tokens: Array<{ name: string; lastUsedAt: string | null }> }
      expect(tokens.tokens.find((t) => t.name === "default")?.lastUsedAt).not.toBeNull()
      const overview = (await (await api(daemon, "overview", { headers: { cookie: session.cookie } })).json()) as { clients: Array<{ principalName: string }> }
      expect(overview.clients.some((c) => c.principalName === "default")).toBe(true)
    })

    it("connections are listed without their API key; a test of one that does not answer says so; an unknown one is 404", async () => {
      NodeFs.writeFileSync(NodePath.join(daemon.home, "connections.json"), JSON.stringify({
        version: 1,
        connections: [{ id: "c1", name: "prod", host: "127.0.0.1", port: 1, authMethod: "apiKey", apiKey: "sk-console-secret", safeMode: "readOnly" }]
      }), { mode: 0o600 })
      const session = await ConsoleDaemon.signIn(daemon)
      let listed: { connections: Array<Record<string, unknown>> } = { connections: [] }
      // The store follows the file (a watch, and a poll).
      for (let i = 0; i < 50 && listed.connections.length === 0; i++) {
        const response = await api(daemon, "connections", { headers: { cookie: session.cookie } })
        const text = await response.text()
        expect(text).not.toContain("sk-console-secret")
        listed = JSON.parse(text)
        if (listed.connections.length === 0) await new Promise((resolve) => setTimeout(resolve, 100))
      }
      expect(listed.connections).toEqual([{ id: "c1", name: "prod", url: "http://127.0.0.1:1", aiPolicy: "readWrite", safeMode: "readOnly", connected: false }])
      const checked = await api(daemon, "connections/check", { method: "POST", headers: pageHeaders(daemon, session), body: { id: "c1" } })
      const result = (await checked.json()) as { ok: boolean; error: string }
      expect(result.ok).toBe(false)
      expect(result.error.length).toBeGreaterThan(0)
      expect(JSON.stringify(result)).not.toContain("sk-console-secret")
      const missing = await api(daemon, "connections/check", { method: "POST", headers: pageHeaders(daemon, session), body: { id: "nope" } })
      expect(missing.status).toBe(404)
    })

    it("the history search answers entries, or that the history is off", async () => {
      const session = await ConsoleDaemon.signIn(daemon)
      const response = await api(daemon, "history?q=Article", { headers: { cookie: session.cookie } })
      expect(response.status).toBe(200)
      const body = (await response.json()) as { state: string; entries: Array<unknown> }
      expect(["on", "off"]).toContain(body.state)
      expect(Array.isArray(body.entries)).toBe(true)
    })

    it("a body over 64 KB is refused 413 before it is read", async () => {
      const session = await ConsoleDaemon.signIn(daemon)
      const response = await api(daemon, "tokens", { method: "POST", headers: pageHeaders(daemon, session), body: JSON.stringify({ name: "x".repeat(70_000), access: "readOnly" }) })
      expect(response.status).toBe(413)
    })
  })

  describe("live streams", () => {
    it("at most 8 are open at once; the next is refused 503 until one closes", async () => {
      const session = await ConsoleDaemon.signIn(daemon)
      const controllers: Array<AbortController> = []
      try {
        for (let i = 0; i < MAX_STREAMS; i++) {
          const controller = new AbortController()
          controllers.push(controller)
          const open = await fetch(`${daemon.url}/console/api/events`, { headers: { cookie: session.cookie }, signal: controller.signal })
          expect(open.status).toBe(200)
          await open.body!.getReader().read()
        }
        const refused = await fetch(`${daemon.url}/console/api/events`, { headers: { cookie: session.cookie } })
        expect(refused.status).toBe(503)
        expect(refused.headers.get("retry-after")).toBe("5")
        controllers.pop()!.abort()
        let reopened = 0
        for (let i = 0; i < 50 && reopened !== 200; i++) {
          await new Promise((resolve) => setTimeout(resolve, 20))
          const again = await fetch(`${daemon.url}/console/api/events`, { headers: { cookie: session.cookie }, signal: AbortSignal.timeout(2_000) }).catch(() => undefined)
          reopened = again?.status ?? 0
          if (again?.status === 200) await again.body?.cancel()
        }
        expect(reopened).toBe(200)
      } finally {
        for (const controller of controllers) controller.abort()
      }
    })
  })

  describe("sessions end", () => {
    it("on sign-out-all (the command line's request): every session and its live stream", async () => {
      const one = await ConsoleDaemon.signIn(daemon)
      const two = await ConsoleDaemon.signIn(daemon)
      const controller = new AbortController()
      const stream = await fetch(`${daemon.url}/console/api/events`, { headers: { cookie: one.cookie }, signal: controller.signal })
      const reader = stream.body!.getReader()
      await reader.read()
      const refusedWithoutKey = await api(daemon, "sign-out-all", { method: "POST", headers: { cookie: one.cookie, "x-csrf-token": one.csrf, "content-type": "application/json" }, body: {} })
      expect(refusedWithoutKey.status).toBe(401)
      const ended = await api(daemon, "sign-out-all", { method: "POST", headers: { [KEY_HEADER]: ConsoleDaemon.keyOf(daemon.home), "content-type": "application/json" }, body: {} })
      expect(((await ended.json()) as { ended: number }).ended).toBeGreaterThanOrEqual(2)
      // The stream ends.
      let done = false
      for (let i = 0; i < 10 && !done; i++) done = (await reader.read()).done
      expect(done).toBe(true)
      expect((await api(daemon, "overview", { headers: { cookie: one.cookie } })).status).toBe(401)
      expect((await api(daemon, "overview", { headers: { cookie: two.cookie } })).status).toBe(401)
    })

    it("after their stated lifetime, 12 hours (virtual clock)", async () => {
      const other = await ConsoleDaemon.start()
      try {
        const session = await ConsoleDaemon.signIn(other)
        other.advance(SESSION_TTL_MS - 1)
        expect((await fetch(`${other.url}/console/api/overview`, { headers: { cookie: session.cookie } })).status).toBe(200)
        other.advance(1)
        expect((await fetch(`${other.url}/console/api/overview`, { headers: { cookie: session.cookie } })).status).toBe(401)
      } finally {
        await other.dispose()
      }
    }, 30_000)

    it("on sign-out, for that session only", async () => {
      const one = await ConsoleDaemon.signIn(daemon)
      const two = await ConsoleDaemon.signIn(daemon)
      const out = await api(daemon, "sign-out", { method: "POST", headers: pageHeaders(daemon, one), body: {} })
      expect(out.headers.get("set-cookie")).toContain("Max-Age=0")
      expect((await api(daemon, "overview", { headers: { cookie: one.cookie } })).status).toBe(401)
      expect((await api(daemon, "overview", { headers: { cookie: two.cookie } })).status).toBe(200)
    })

    it("when the daemon restarts (and the old key no longer opens anything)", async () => {
      const other = await ConsoleDaemon.start()
      const session = await ConsoleDaemon.signIn(other)
      const oldKey = ConsoleDaemon.keyOf(other.home)
      await other.dispose()
      expect(NodeFs.existsSync(NodePath.join(other.home, KEY_FILE))).toBe(false)
      const again = await ConsoleDaemon.start({ home: other.home })
      try {
        const old = await fetch(`${again.url}/console/api/overview`, { headers: { cookie: session.cookie } })
        expect(old.status).toBe(401)
        const withOldKey = await fetch(`${again.url}/console/api/code`, { method: "POST", headers: { [KEY_HEADER]: oldKey, "content-type": "application/json" }, body: "{}" })
        expect(withOldKey.status).toBe(401)
      } finally {
        await again.dispose()
      }
    }, 30_000)
  })

  describe("/mcp is untouched", () => {
    it("paths that are neither /mcp nor /console are 404 as before", async () => {
      expect((await fetch(`${daemon.url}/`)).status).toBe(404)
      expect((await fetch(`${daemon.url}/other`)).status).toBe(404)
      expect((await fetch(`${daemon.url}/consolex`)).status).toBe(404)
    })

    it("/mcp keeps its own CORS answer for its allowed origins", async () => {
      const response = await fetch(`${daemon.url}/mcp`, { method: "OPTIONS", headers: { origin: "https://claude.ai", "access-control-request-method": "POST" } })
      expect(response.status).toBe(204)
      expect(response.headers.get("access-control-allow-origin")).toBe("https://claude.ai")
      expect(response.headers.get("content-security-policy")).toBeNull()
    })
  })

  describe("pending approvals", () => {
    it("a question the dialog is asking is listed read-only while it waits, with where to answer it, and gone once answered", async () => {
      const dir = (await import("../support/TestHome.ts")).tempDirSync("weaviate-mcp-console-approval-")
      const answer = NodePath.join(dir, "answer")
      // The approval command waits (bounded: 20 s) for the test to answer, then says no.
      const command = `cat >/dev/null; for i in $(seq 1 400); do [ -f '${answer}' ] && break; sleep 0.05; done; exit 1`
      const other = await ConsoleDaemon.start({ settings: { approvals: "exec", approvalCommand: Option.some(command) } })
      try {
        NodeFs.writeFileSync(NodePath.join(other.home, "connections.json"), JSON.stringify({
          version: 1,
          connections: [{ id: "c1", name: "prod", host: "127.0.0.1", port: 1 }]
        }), { mode: 0o600 })
        const session = await ConsoleDaemon.signIn(other)
        const listed = async () =>
          ((await (await api(other, "approvals", { headers: { cookie: session.cookie } })).json()) as { mode: string; waiting: Array<Record<string, unknown>> })
        expect((await listed()).waiting).toEqual([])
        // The store follows connections.json; then the first access to it asks the user.
        let call: Promise<{ status: number }> | undefined
        let waiting: Array<Record<string, unknown>> = []
        for (let i = 0; i < 100 && waiting.length === 0; i++) {
          if (call === undefined) {
            const known = (await (await api(other, "connections", { headers: { cookie: session.cookie } })).json()) as { connections: Array<unknown> }
            if (known.connections.length > 0) {
              call = fetch(`${other.url}/mcp`, {
                method: "POST",
                headers: { ...modernHeaders("tools/call", "list_tables"), accept: "application/json, text/event-stream", authorization: `Bearer ${other.token}` },
                body: JSON.stringify(modern("tools/call", { name: "list_tables", arguments: { connection_id: "c1" } }, 5, { "io.modelcontextprotocol/clientInfo": { name: "approval-test", version: "1" } }))
              }).then((r) => ({ status: r.status }))
            }
          }
          await new Promise((resolve) => setTimeout(resolve, 50))
          waiting = (await listed()).waiting
        }
        expect(waiting).toEqual([expect.objectContaining({ clientName: "approval-test", principalName: "default", connectionName: "prod", dialog: "exec", title: expect.any(String) })])
        expect((await listed()).mode).toBe("exec")
        // Read-only: nothing in the console answers it.
        expect((await api(other, "approvals", { method: "POST", headers: pageHeaders(other, session), body: {} })).status).toBe(405)
        NodeFs.writeFileSync(answer, "")
        await call
        expect((await listed()).waiting).toEqual([])
      } finally {
        await other.dispose()
      }
    }, 60_000)
  })
})
