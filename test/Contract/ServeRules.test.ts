/**
 * Decisions of `spec/README.md` about `weaviate-mcp serve` that the audit in
 * `docs/contract-coverage.md` found without a test: the first-run token and its client configuration,
 * the default port 23518 with its fallback, and `--allowed-origin`. They run the real binary.
 */
import { assert, describe, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodeNet from "node:net"
import * as NodePath from "node:path"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"

const tempHome = () => TestHome.tempDirSync("weaviate-mcp-contract-")

const discover = (endpoint: string, headers: Record<string, string> = {}) =>
  fetch(endpoint, {
    method: "POST",
    headers: { "content-type": "application/json", "mcp-protocol-version": "2026-07-28", "mcp-method": "server/discover", ...headers },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "server/discover",
      params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } }
    })
  }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }))

/** Stops a daemon with SIGTERM and returns everything it printed. */
const stop = async (daemon: Cli.Running) => {
  daemon.child.kill("SIGTERM")
  return daemon.exited
}

/** Resolves once the daemon's stdout matches (event-driven; bounded so a broken daemon fails the test). */
const printed = (daemon: Cli.Running, pattern: RegExp, ms = 10_000) =>
  new Promise<string>((resolve, reject) => {
    const check = () => {
      if (pattern.test(daemon.stdout())) {
        clearTimeout(timer)
        daemon.child.stdout.off("data", check)
        resolve(daemon.stdout())
      }
    }
    const timer = setTimeout(() => {
      daemon.child.stdout.off("data", check)
      reject(new Error(`not printed within ${ms} ms: ${pattern}\n${daemon.stdout()}`))
    }, ms)
    daemon.child.stdout.on("data", check)
    check()
  })

const listen = (port: number) =>
  new Promise<NodeNet.Server | undefined>((resolve) => {
    const server = NodeNet.createServer()
    server.once("error", () => resolve(undefined))
    server.listen(port, "127.0.0.1", () => resolve(server))
  })

describe("Contract: serve", () => {
  it("First run: an empty token store gets a readWrite `default` token, printed once with a ready-to-paste configuration (URL plus Authorization header); never shown again", async () => {
    const home = tempHome()
    const first = await Cli.serve(["--home", home, "--port", "0"])
    let token: string
    try {
      const out = await printed(first, /Client configuration[^\n]*\n\{[\s\S]*\n\}\n/)
      const json = out.slice(out.indexOf("{", out.indexOf("Client configuration")))
      const config = JSON.parse(json.slice(0, json.lastIndexOf("}") + 1))
      const server = config.mcpServers.weaviate
      assert.strictEqual(server.url, first.endpoint)
      assert.match(server.headers.Authorization, /^Bearer \S+$/)
      token = server.headers.Authorization.slice("Bearer ".length)
      assert.include(out, "\"default\" (readWrite)")
      const answer = await discover(first.endpoint, { authorization: `Bearer ${token}` })
      assert.strictEqual(answer.status, 200)
      assert.strictEqual((await discover(first.endpoint)).status, 401, "authentication is on by default")
      assert.notInclude(NodeFs.readFileSync(NodePath.join(home, "tokens.json"), "utf8"), token)
    } finally {
      await stop(first)
    }
    const second = await Cli.serve(["--home", home, "--port", "0"])
    assert.strictEqual((await discover(second.endpoint, { authorization: `Bearer ${token}` })).status, 200)
    const finished = await stop(second)
    assert.notInclude(finished.stdout, token)
    assert.notInclude(finished.stdout, "First run")
    assert.notInclude(finished.stderr, token)
  }, 30_000)

  it("Port: serve listens on 127.0.0.1:23518 by default and takes a free port when it is taken; the handshake file names the real port", async () => {
    const blocker = await listen(23518)
    const home = tempHome()
    const fallback = await Cli.serve(["--home", home, "--auth", "off"])
    try {
      assert.notStrictEqual(fallback.port, 23518)
      assert.strictEqual(JSON.parse(NodeFs.readFileSync(NodePath.join(home, "mcp-handshake.json"), "utf8")).port, fallback.port)
      assert.strictEqual((await discover(fallback.endpoint)).status, 200)
    } finally {
      await stop(fallback)
    }
    // Only when this test could hold 23518 itself does it know that the port is free now.
    if (blocker !== undefined) {
      await new Promise((resolve) => blocker.close(resolve))
      const preferred = await Cli.serve(["--home", tempHome(), "--auth", "off"])
      try {
        assert.strictEqual(preferred.port, 23518)
        assert.strictEqual(preferred.endpoint, "http://127.0.0.1:23518/mcp")
      } finally {
        await stop(preferred)
      }
    }
  }, 30_000)

  it("Origins: --allowed-origin replaces the two default origins (repeatable); every other Origin gets 403 forbidden_origin", async () => {
    const daemon = await Cli.serve(["--home", tempHome(), "--port", "0", "--auth", "off", "--allowed-origin", "https://one.example", "--allowed-origin", "https://two.example"])
    try {
      for (const origin of ["https://one.example", "https://two.example"]) {
        const allowed = await discover(daemon.endpoint, { origin })
        assert.strictEqual(allowed.status, 200, origin)
      }
      for (const origin of ["https://claude.ai", "https://app.cursor.com", "https://three.example"]) {
        const refused = await discover(daemon.endpoint, { origin })
        assert.strictEqual(refused.status, 403, origin)
        assert.strictEqual(refused.body.error.data.code, "forbidden_origin")
      }
    } finally {
      await stop(daemon)
    }
  }, 30_000)
})
