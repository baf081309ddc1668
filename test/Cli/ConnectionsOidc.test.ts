/**
 * OIDC connections on the real binary against the real Weaviate 1.39 with OIDC on and a real OpenID
 * provider on loopback: `connections add --auth oidc-…` with secrets from standard input,
 * `connections test`, `doctor` and `get_connection_status` (official SDK v1 client over HTTP) show who
 * the connection signs in as and when its token expires; no secret or token appears anywhere.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as NodeChild from "node:child_process"
import * as Cli from "../support/Cli.ts"
import { pages } from "../support/Markdown.ts"
import { validateDef } from "../support/McpSchemas.ts"
import * as TestHome from "../support/TestHome.ts"
import { type OidcProvider, SERVICE_CLIENT_ID, SERVICE_SECRET, startOidcProvider, USERS } from "../weaviate/OidcProvider.ts"
import { type RealWeaviate, startRealWeaviate } from "../weaviate/RealWeaviate.ts"

let provider: OidcProvider
let weaviate: RealWeaviate
let home: string
let given: { access_token: string; refresh_token: string }
/** Every output of every command, to look for secrets in at the end. */
const outputs: Array<string> = []

// The file fallback is asked for: this file is about OIDC, the keychain has its own tests.
const cli = async (args: ReadonlyArray<string>, input?: string) => {
  const r = await Cli.run([...args, "--home", home], { ...(input !== undefined ? { input } : {}), env: { WEAVIATE_MCP_KEYCHAIN: "off" }, timeoutMs: 60_000 })
  outputs.push(r.stdout, r.stderr)
  return r
}

const secrets = () => [USERS["alice"]!, SERVICE_SECRET, given.access_token, given.refresh_token]

beforeAll(async () => {
  provider = await startOidcProvider()
  weaviate = await startRealWeaviate({ anonymousAccess: false, env: provider.weaviateEnv })
  home = TestHome.tempDirSync()
  given = await provider.passwordGrant("alice", USERS["alice"]!)
}, 120_000)

afterAll(async () => {
  await weaviate?.stop()
  await provider?.stop()
})

describe("connections add --auth oidc-…", () => {
  it("saves each method with its secrets from standard input, and never prints them", async () => {
    const url = `http://127.0.0.1:${weaviate.port}`
    const pw = await cli(["connections", "add", "--name", "pw", "--url", url, "--auth", "oidc-password", "--oidc-username", "alice", "--oidc-password-stdin"], `${USERS["alice"]}\n`)
    assert.strictEqual(pw.code, 0, pw.stderr)
    const cc = await cli(["connections", "add", "--name", "cc", "--url", url, "--auth", "oidc-client-credentials", "--oidc-client-id", SERVICE_CLIENT_ID, "--oidc-client-secret-stdin"], SERVICE_SECRET)
    assert.strictEqual(cc.code, 0, cc.stderr)
    const tok = await cli(["connections", "add", "--name", "tok", "--url", url, "--auth", "oidc-token", "--oidc-access-token-stdin", "--oidc-refresh-token-stdin"], `${given.access_token}\n${given.refresh_token}\n`)
    assert.strictEqual(tok.code, 0, tok.stderr)
    const shown = await cli(["connections", "show", "tok"])
    assert.match(shown.stdout, /auth method\s+OIDC token/)
    assert.match(shown.stdout, /secrets\s+OIDC access token in connections\.json \(0600\), OIDC refresh token in connections\.json \(0600\)/)
  })

  it("an OIDC method without its secret is refused with the flag that gives it", async () => {
    const r = await cli(["connections", "add", "--name", "nosecret", "--host", "127.0.0.1", "--auth", "oidc-client-credentials"])
    assert.strictEqual(r.code, 2)
    assert.include(r.stderr, "OIDC client credentials needs a client secret (--oidc-client-secret-stdin)")
  })

  it("connections test shows who each connection signs in as and when its token expires", async () => {
    for (const [name, subject] of [["pw", "alice"], ["cc", SERVICE_CLIENT_ID], ["tok", "alice"]] as const) {
      const r = await cli(["connections", "test", name])
      assert.strictEqual(r.code, 0, r.stderr)
      assert.match(r.stdout, new RegExp(`signed in as ${subject} \\(OIDC [^)]* at ${provider.issuer.replace(/[.]/g, "\\.")}, client [a-z]+\\); token expires \\d{4}-\\d\\d-\\d\\dT`))
      const json = JSON.parse((await cli(["connections", "test", name, "--json"])).stdout)
      assert.strictEqual(json.signIn.subject, subject)
      assert.isTrue(Date.parse(json.signIn.expiresAt) > Date.now())
    }
  })

  it("doctor shows the sign-in of each OIDC connection", async () => {
    const r = await cli(["doctor", "--json"])
    const checks = JSON.parse(r.stdout).checks as Array<{ id: string; status: string; detail: string }>
    const signIns = checks.filter((c) => c.id.startsWith("signin:"))
    assert.strictEqual(signIns.length, 3)
    for (const c of signIns) {
      assert.strictEqual(c.status, "ok")
      assert.match(c.detail, /^signed in as (alice|service) .*token expires/)
    }
  })

  it("get_connection_status shows the sign-in to an AI client (official SDK v1, over HTTP)", async () => {
    const id = JSON.parse((await cli(["connections", "show", "pw", "--json"])).stdout).id as string
    // Access to the connection granted up front: no approval dialog runs here.
    const created = await cli(["tokens", "create", "--name", "ai", "--access", "readOnly", "--connections", id, "--json"])
    const token = JSON.parse(created.stdout).token as string
    const running = await Cli.serve(["--port", "0", "--home", home], { env: { WEAVIATE_MCP_KEYCHAIN: "off" } })
    try {
      const sdk = new Client({ name: "oidc-test", version: "1.0.0" })
      await sdk.connect(new StreamableHTTPClientTransport(new URL(running.endpoint), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
      const status = await sdk.callTool({ name: "get_connection_status", arguments: { connection_id: id } })
      validateDef("2025-11-25", "CallToolResult", status)
      assert.notStrictEqual(status.isError, true)
      const signIn = (status.structuredContent as { signIn: { subject: string; method: string; expiresAt: string } }).signIn
      assert.strictEqual(signIn.subject, "alice")
      assert.strictEqual(signIn.method, "oidcPassword")
      const text = (status.content as Array<{ text: string }>)[0]!.text
      assert.match(text, /signed in as alice/)
      outputs.push(JSON.stringify(status))
      await sdk.close()
    } finally {
      running.child.kill("SIGTERM")
      const finished = await running.exited
      outputs.push(finished.stdout, finished.stderr)
    }
  }, 60_000)

  it("no secret or token appears in any output, the activity log or an error", async () => {
    // An error too: a refused password names the provider's answer, never the password.
    const bad = await cli(["connections", "add", "--name", "bad", "--url", `http://127.0.0.1:${weaviate.port}`, "--auth", "oidc-password", "--oidc-username", "alice", "--oidc-password-stdin"], "wrong-password-5a1c\n")
    assert.strictEqual(bad.code, 0, bad.stderr)
    const refused = await cli(["connections", "test", "bad"])
    assert.notStrictEqual(refused.code, 0)
    assert.include(refused.stderr, "refused the username and password")
    assert.notInclude(refused.stderr + refused.stdout, "wrong-password-5a1c")
    const activity = NodePath.join(home, "activity.log")
    if (NodeFs.existsSync(activity)) outputs.push(NodeFs.readFileSync(activity, "utf8"))
    const all = outputs.join("\n")
    assert.isAbove(all.length, 1000)
    for (const secret of secrets()) assert.notInclude(all, secret)
  })
})

/** `sh -e -c script`, bounded to 60 s. */
const runShell = (script: string, options: { readonly env: NodeJS.ProcessEnv }) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = NodeChild.spawn("sh", ["-e", "-c", script], { env: options.env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
    child.once("exit", (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
  })

describe("docs/connections.md: each OIDC worked example runs as shown", () => {
  const examples = pages().find((p) => p.file === "docs/connections.md")!.blocks.filter((b) => b.info.split(/\s+/).includes("oidc-example"))

  it("there is one for each OIDC method", () => {
    assert.deepStrictEqual(examples.map((b) => /--auth (\S+)/.exec(b.text)?.[1]), ["oidc-client-credentials", "oidc-password", "oidc-token"])
  })

  it.each(examples.map((b) => [`docs/connections.md:${b.line}`, b] as const))("%s", async (_, block) => {
    // `weaviate-mcp` on PATH is this package's binary; the home is a fresh one; the example's
    // address is the real Weaviate's of this file.
    const dir = TestHome.tempDirSync()
    NodeFs.writeFileSync(NodePath.join(dir, "weaviate-mcp"), `#!/bin/sh\nexec "${process.execPath}" "${Cli.BIN}" "$@"\n`, { mode: 0o755 })
    const tokens = await provider.passwordGrant("alice", USERS["alice"]!)
    const script = block.text.replaceAll("http://127.0.0.1:8080", `http://127.0.0.1:${weaviate.port}`)
    // Asynchronously: the provider answers from this very process.
    const r = await runShell(script, {
      env: {
        PATH: `${dir}:${process.env["PATH"]}`,
        WEAVIATE_MCP_HOME: NodePath.join(dir, "home"),
        WEAVIATE_MCP_KEYCHAIN: "off",
        CLIENT_SECRET: SERVICE_SECRET,
        ALICE_PASSWORD: USERS["alice"]!,
        ACCESS_TOKEN: tokens.access_token,
        REFRESH_TOKEN: tokens.refresh_token
      }
    })
    assert.strictEqual(r.status, 0, r.stderr)
    assert.match(r.stdout, /^signed in as (alice|service) \(OIDC /m)
    for (const secret of [SERVICE_SECRET, USERS["alice"]!, tokens.access_token, tokens.refresh_token]) assert.notInclude(r.stdout + r.stderr, secret)
  }, 60_000)
})

