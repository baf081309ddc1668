/**
 * `weaviate-mcp doctor [--json]` (issue 30, docs/clients.md), with the real binary: each failing
 * check says what is wrong and the command that fixes it, exit 1; all passing, exit 0; `--json` is
 * one document of a stable shape. The client configs are found under a temporary HOME.
 */
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import * as NodeNet from "node:net"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as ActivityHead from "../../src/Activity/ActivityHead.ts"
import * as Line from "../../src/Activity/ActivityLine.ts"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"

interface Check {
  readonly id: string
  readonly title: string
  readonly status: "ok" | "warn" | "fail" | "skip"
  readonly detail: string
  readonly fix: string | null
}
interface Report {
  readonly version: 1
  readonly ok: boolean
  readonly checks: ReadonlyArray<Check>
}

/** A machine: a weaviate-mcp home and a user's HOME for the client configs. */
const machine = () => {
  const home = TestHome.tempDirSync()
  const user = TestHome.tempDirSync()
  const env = { HOME: user, XDG_CONFIG_HOME: NodePath.join(user, ".config") }
  const cli = (...args: ReadonlyArray<string>) => Cli.run([...args, "--home", home], { env, timeoutMs: 60_000 })
  const doctor = async () => {
    const r = await cli("doctor", "--json")
    const report = JSON.parse(r.stdout) as Report
    return { ...r, report, check: (id: string) => report.checks.find((c) => c.id === id) }
  }
  return { home, user, env, cli, doctor }
}

/** A loopback port nothing listens on. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = NodeNet.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as NodeNet.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

/** The pid of a process that has exited. */
const deadPid = () => {
  const child = NodeChild.spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" })
  return Number(child.stdout)
}

const chain = (n: number) => {
  let prev = Line.GENESIS
  const lines: Array<string> = []
  for (let i = 0; i < n; i++) {
    const line = Line.formatCall({ time: Date.UTC(2026, 0, 1, 0, i), client: "c", clientVersion: null, principal: null, principalName: null, era: "modern", method: "tools/list", tool: null, connection: null, outcome: "ok", code: null, durationMs: 1, statements: [] }, prev)
    lines.push(line.text)
    prev = line.hash
  }
  return lines
}

describe("doctor with the daemon down", () => {
  it("the daemon check fails with the command that starts it; exit 1; --json is one document of the documented shape", async () => {
    const m = machine()
    const r = await m.doctor()
    expect(r.code).toBe(1)
    expect(Object.keys(r.report)).toEqual(["version", "ok", "checks"])
    expect(r.report.version).toBe(1)
    expect(r.report.ok).toBe(false)
    for (const c of r.report.checks) expect(Object.keys(c)).toEqual(["id", "title", "status", "detail", "fix"])
    expect(r.check("daemon")).toMatchObject({ status: "fail", fix: `weaviate-mcp serve --home ${m.home}` })
    expect(r.check("node")?.status).toBe("ok")
    expect(r.check("activity-log")?.status).toBe("ok")
    // The text form: one line per check, the fix under a failing one.
    const text = await m.cli("doctor")
    expect(text.code).toBe(1)
    expect(text.stdout).toMatch(/^FAIL {2}daemon: the daemon is not running: no handshake file\n {6}fix: weaviate-mcp serve --home /m)
    expect(text.stdout).toMatch(/1 check\(s\) failed\.\n$/)
  })

  it("a stale handshake file (its pid is gone): the fix is serve, which takes it over", async () => {
    const m = machine()
    const file = NodePath.join(m.home, "mcp-handshake.json")
    NodeFs.writeFileSync(file, JSON.stringify({ version: 1, port: await closedPort(), pid: deadPid(), instanceId: "gone", protocolVersion: "2026-07-28", startedAt: new Date().toISOString(), token: "wmcp_bridge_secret", tokenExpiresAt: new Date(Date.now() + 3600_000).toISOString() }), { mode: 0o600 })
    const r = await m.doctor()
    expect(r.code).toBe(1)
    expect(r.check("handshake")?.status).toBe("ok")
    expect(r.check("daemon")?.detail).toContain("stale handshake file")
    expect(r.check("daemon")?.fix).toContain("takes over the stale handshake file")
    expect(r.stdout).not.toContain("wmcp_bridge_secret")
  })

  it("a handshake file readable by others: the fix is chmod 600", async () => {
    const m = machine()
    const file = NodePath.join(m.home, "mcp-handshake.json")
    NodeFs.writeFileSync(file, "{}")
    NodeFs.chmodSync(file, 0o644)
    const r = await m.doctor()
    expect(r.check("handshake")).toMatchObject({ status: "fail", fix: `chmod 600 ${file}` })
  })

  it.skipIf(process.getuid?.() !== 0)("a handshake file that belongs to another user: the fix removes it and starts the daemon as yourself", async () => {
    const m = machine()
    const file = NodePath.join(m.home, "mcp-handshake.json")
    NodeFs.writeFileSync(file, "{}", { mode: 0o600 })
    NodeChild.execFileSync("chown", ["nobody:nogroup", file])
    const r = await m.doctor()
    expect(r.check("handshake")?.status).toBe("fail")
    expect(r.check("handshake")?.detail).toMatch(/belongs to uid \d+, not to you/)
    expect(r.check("handshake")?.fix).toBe(`rm ${file}, then start the daemon as yourself: weaviate-mcp serve --home ${m.home}`)
  })

  it("an unreachable connection: its check fails naming it, with the commands that fix and test it", async () => {
    const m = machine()
    const added = await m.cli("connections", "add", "--name", "gone", "--host", "127.0.0.1", "--port", String(await closedPort()), "--json")
    expect(added.code, added.stderr).toBe(0)
    const id = JSON.parse(added.stdout).id
    const r = await m.doctor()
    expect(r.code).toBe(1)
    expect(r.check(`connection:${id}`)?.status).toBe("fail")
    expect(r.check(`connection:${id}`)?.detail).toMatch(/gone .* does not answer its health check: .*connection refused/)
    expect(r.check(`connection:${id}`)?.fix).toContain("weaviate-mcp connections test gone")
  })

  it("a Weaviate older than the oldest supported: its version check fails (a loopback server answering /v1/meta)", async () => {
    const m = machine()
    const server = NodeHttp.createServer((_req, res) => {
      res.setHeader("content-type", "application/json")
      res.end(JSON.stringify({ version: "1.20.3", modules: {}, hostname: "http://[::]:8080" }))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const port = (server.address() as NodeNet.AddressInfo).port
      const added = await m.cli("connections", "add", "--name", "old", "--host", "127.0.0.1", "--port", String(port), "--json")
      expect(added.code, added.stderr).toBe(0)
      const id = JSON.parse(added.stdout).id
      const r = await m.doctor()
      expect(r.check(`connection:${id}`)?.status).toBe("ok")
      expect(r.check(`weaviate:${id}`)).toMatchObject({ status: "fail" })
      expect(r.check(`weaviate:${id}`)?.detail).toContain("Weaviate 1.20.3 is older than 1.25.0")
    } finally {
      server.close()
    }
  })

  it("a connections file that cannot be read is a failing check, not a crash of doctor", async () => {
    const m = machine()
    NodeFs.writeFileSync(NodePath.join(m.home, "connections.json"), "{ not json", { mode: 0o600 })
    const r = await m.doctor()
    expect(r.code).toBe(1)
    expect(r.check("connections")?.status).toBe("fail")
    expect(r.check("connections")?.fix).toContain("connections.json")
    expect(r.check("node")?.status).toBe("ok")
  })

  it("a cut activity log: the activity-log check fails with the lines missing", async () => {
    const m = machine()
    const lines = chain(30)
    NodeFs.writeFileSync(NodePath.join(m.home, "activity.log"), lines.slice(0, 25).join("\n") + "\n", { mode: 0o600 })
    NodeFs.writeFileSync(ActivityHead.pathIn(m.home), JSON.stringify({ version: 1, ...ActivityHead.of(lines.join("\n") + "\n"), updatedAt: new Date().toISOString() }), { mode: 0o600 })
    const r = await m.doctor()
    expect(r.code).toBe(1)
    expect(r.check("activity-log")?.status).toBe("fail")
    expect(r.check("activity-log")?.detail).toContain("the log is cut at its end: 5 lines missing")
    expect(r.check("activity-log")?.fix).toContain(".damaged")
  })

  it("a broken client config (its weaviate-mcp no longer exists): fails with the setup command that rewrites it", async () => {
    const m = machine()
    const file = NodePath.join(m.user, ".cursor", "mcp.json")
    NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
    const gone = NodePath.join(m.user, "old-checkout", "bin", "weaviate-mcp.js")
    NodeFs.writeFileSync(file, JSON.stringify({ mcpServers: { weaviate: { command: process.execPath, args: [gone, "bridge", "--home", m.home, "--start"] }, other: { command: "npx" } } }))
    const r = await m.doctor()
    expect(r.check("client:cursor:weaviate")).toMatchObject({ status: "fail", fix: `weaviate-mcp setup cursor --write --home ${m.home}` })
    expect(r.check("client:cursor:weaviate")?.detail).toContain(`points at ${gone}, which does not exist`)
    // Only our entry is looked at.
    expect(r.report.checks.filter((c) => c.id.startsWith("client:"))).toHaveLength(1)
  })
})

describe("doctor reads the new clients' configs (Cline, Continue, Windsurf, Zed) at their documented paths", () => {
  it("an entry of ours whose weaviate-mcp is gone fails in each, with the setup command that rewrites it; other entries are not looked at", async () => {
    const m = machine()
    const gone = NodePath.join(m.user, "old-checkout", "bin", "weaviate-mcp.js")
    const ours = { command: process.execPath, args: [gone, "bridge", "--home", m.home, "--start"] }
    const files: Record<string, [string, string]> = {
      cline: [".cline/data/settings/cline_mcp_settings.json", JSON.stringify({ mcpServers: { weaviate: ours, other: { command: "npx" } } })],
      continue: [".continue/config.yaml", `# mine\nname: c\nversion: 1.0.0\nmcpServers:\n  - name: other\n    command: npx\n  - name: weaviate\n    command: ${process.execPath}\n    args: [${JSON.stringify(gone)}, bridge, --home, ${JSON.stringify(m.home)}, --start]\n`],
      windsurf: [".codeium/windsurf/mcp_config.json", JSON.stringify({ mcpServers: { weaviate: ours, figma: { serverUrl: "https://mcp.figma.com/mcp" } } })],
      zed: [".config/zed/settings.json", `// Zed settings\n{\n  "theme": "One Dark",\n  "context_servers": { "weaviate": ${JSON.stringify(ours)}, },\n}\n`]
    }
    for (const [file, text] of Object.values(files)) {
      NodeFs.mkdirSync(NodePath.dirname(NodePath.join(m.user, file)), { recursive: true })
      NodeFs.writeFileSync(NodePath.join(m.user, file), text)
    }
    const r = await m.doctor()
    for (const client of Object.keys(files)) {
      expect(r.check(`client:${client}:weaviate`), client).toMatchObject({ status: "fail", fix: `weaviate-mcp setup ${client} --write --home ${m.home}` })
      expect(r.check(`client:${client}:weaviate`)?.detail).toContain(`points at ${gone}, which does not exist`)
    }
    expect(r.report.checks.filter((c) => c.id.startsWith("client:"))).toHaveLength(4)
  })

  it("a config that cannot be parsed (Continue's YAML, Zed's JSONC) is a warning naming the file, not a crash", async () => {
    const m = machine()
    const yaml = NodePath.join(m.user, ".continue", "config.yaml")
    const zed = NodePath.join(m.user, ".config", "zed", "settings.json")
    NodeFs.mkdirSync(NodePath.dirname(yaml), { recursive: true })
    NodeFs.mkdirSync(NodePath.dirname(zed), { recursive: true })
    NodeFs.writeFileSync(yaml, "name: c\nmcpServers:\n  - name: a\n   command: x\n")
    NodeFs.writeFileSync(zed, "{ \"theme\": ")
    const r = await m.doctor()
    expect(r.check("client:continue")).toMatchObject({ status: "warn", fix: `fix ${yaml} by hand` })
    expect(r.check("client:continue")?.detail).toContain("is not valid YAML")
    expect(r.check("client:zed")).toMatchObject({ status: "warn", fix: `fix ${zed} by hand` })
    expect(r.check("node")?.status).toBe("ok")
  })
})

describe("doctor with the daemon running", () => {
  const m = machine()
  let daemon: Cli.Running
  let token = ""
  let weaviate: WeaviateTestInstance
  let connection = ""
  beforeAll(async () => {
    weaviate = await startTestWeaviate()
    const added = await m.cli("connections", "add", "--name", "local", "--host", "127.0.0.1", "--port", String(weaviate.port), "--json")
    expect(added.code, added.stderr).toBe(0)
    connection = JSON.parse(added.stdout).id
    daemon = await Cli.serve(["--port", "0", "--home", m.home, "--approvals", "deny"], { env: m.env })
    expect((await m.cli("setup", "cursor", "--write")).code).toBe(0)
    const vscode = await m.cli("setup", "vscode", "--write", "--token", "doctor-vscode")
    expect(vscode.code, vscode.stderr).toBe(0)
    const written = JSON.parse(NodeFs.readFileSync(NodePath.join(m.user, ".config", "Code", "User", "mcp.json"), "utf8"))
    token = written.servers.weaviate.headers.Authorization.slice(7)
    // setup wrote the default port (no daemon port known to the test's setup); point it at this daemon.
    written.servers.weaviate.url = daemon.endpoint
    NodeFs.writeFileSync(NodePath.join(m.user, ".config", "Code", "User", "mcp.json"), JSON.stringify(written))
    // The new clients (issue 33): Zed and Cline with the bridge, Continue (YAML, requestOptions.headers)
    // and Windsurf (serverUrl) over HTTP with a token each.
    for (const client of ["zed", "cline"]) expect((await m.cli("setup", client, "--write")).code).toBe(0)
    for (const [client, file] of [["continue", ".continue/config.yaml"], ["windsurf", ".codeium/windsurf/mcp_config.json"]] as const) {
      const r = await m.cli("setup", client, "--write", "--token", `doctor-${client}`)
      expect(r.code, r.stderr).toBe(0)
      const path = NodePath.join(m.user, file)
      NodeFs.writeFileSync(path, NodeFs.readFileSync(path, "utf8").replace("http://127.0.0.1:23518/mcp", daemon.endpoint))
    }
  }, 120_000)
  afterAll(async () => {
    daemon.child.kill("SIGTERM")
    await daemon.exited
    await weaviate.close()
  })

  it("the daemon answers with its handshake's instance, each client entry lists the tools, the headless approval mode is a warning; exit 0", async () => {
    const r = await m.doctor()
    expect(r.check("handshake")?.status).toBe("ok")
    expect(r.check("daemon")?.status).toBe("ok")
    expect(r.check("daemon")?.detail).toMatch(/server\/discover names instance \S+, as its handshake file does/)
    expect(r.check("client:cursor:weaviate")?.status, r.check("client:cursor:weaviate")?.detail).toBe("ok")
    expect(r.check("client:cursor:weaviate")?.detail).toMatch(/its bridge \(.*\) starts and lists \d+ tools/)
    expect(r.check("client:vscode:weaviate")?.status, r.check("client:vscode:weaviate")?.detail).toBe("ok")
    for (const client of ["zed", "cline"]) {
      expect(r.check(`client:${client}:weaviate`)?.detail).toMatch(/its bridge \(.*\) starts and lists \d+ tools/)
      expect(r.check(`client:${client}:weaviate`)?.status).toBe("ok")
    }
    for (const client of ["continue", "windsurf"]) {
      expect(r.check(`client:${client}:weaviate`)?.detail).toMatch(/lists \d+ tools with the entry's token/)
      expect(r.check(`client:${client}:weaviate`)?.status).toBe("ok")
    }
    expect(r.check(`connection:${connection}`)?.status, r.check(`connection:${connection}`)?.detail).toBe("ok")
    expect(r.check(`weaviate:${connection}`)).toMatchObject({ status: "ok", detail: `Weaviate ${weaviate.version} is supported (1.25.0 or newer)` })
    // A single-node server is a cluster of one healthy node.
    expect(r.check(`cluster:${connection}`)).toMatchObject({ status: "ok", detail: "1 node(s), healthy" })
    expect(r.check("approvals")?.status).toBe("warn")
    expect(r.check("approvals")?.detail).toContain("headless")
    expect(r.check("approvals")?.fix).toContain("--approvals exec --approval-command")
    expect(r.report.ok, JSON.stringify(r.report.checks.filter((c) => c.status === "fail"))).toBe(true)
    expect(r.code).toBe(0)
    expect(r.stdout + r.stderr).not.toContain(token)
  }, 60_000)

  it("a handshake file naming the live daemon's port with another instanceId: the daemon check fails (not the daemon it names)", async () => {
    const other = TestHome.tempDirSync()
    const real = JSON.parse(NodeFs.readFileSync(NodePath.join(m.home, "mcp-handshake.json"), "utf8"))
    NodeFs.writeFileSync(NodePath.join(other, "mcp-handshake.json"), JSON.stringify({ ...real, instanceId: "someone-else" }), { mode: 0o600 })
    const r = await Cli.run(["doctor", "--json", "--home", other], { env: m.env, timeoutMs: 60_000 })
    expect(r.code).toBe(1)
    const report = JSON.parse(r.stdout) as Report
    const daemonCheck = report.checks.find((c) => c.id === "daemon")
    expect(daemonCheck?.status).toBe("fail")
    expect(daemonCheck?.detail).toContain("answers with another instance id")
    expect(r.stdout).not.toContain(real.token)
  }, 60_000)

  it("a client entry whose token was revoked fails, and the token is not printed", async () => {
    const list = JSON.parse((await m.cli("tokens", "list", "--json")).stdout) as Array<{ id: string; name: string }>
    const id = list.find((t) => t.name === "doctor-vscode")!.id
    expect((await m.cli("tokens", "revoke", id)).code).toBe(0)
    const r = await m.doctor()
    expect(r.code).toBe(1)
    expect(r.check("client:vscode:weaviate")).toMatchObject({ status: "fail" })
    expect(r.check("client:vscode:weaviate")?.detail).toContain("its token is not accepted")
    expect(r.stdout + r.stderr).not.toContain(token)
  }, 60_000)
})
