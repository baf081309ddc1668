/**
 * `weaviate-mcp setup <client>`: the printed snippet per client, and `--write` merging into an
 * existing config file of each client without losing its other servers or settings, with a backup
 * of the original and 0600 when the file ends up holding a token. Runs the built CLI.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { CLIENTS, clients, configPath } from "../../src/Bridge/ClientConfig.ts"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"

const other = { command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"] }

const existing = (key: string) => ({ theme: "dark", [key]: { memory: other, remote: { url: "https://example.com/mcp" } } })

const mode = (path: string) => NodeFs.statSync(path).mode & 0o777

/** The clients whose files are JSON or JSONC (Continue's YAML has its own tests: SetupClients.test.ts). */
const JSON_CLIENTS = CLIENTS.filter((client) => clients[client].format !== "yaml")

describe("setup --write merges into each client's config file", () => {
  it.each(JSON_CLIENTS)("%s: keeps every other server and setting, backs up the original, adds the bridge", async (client) => {
    const dir = TestHome.tempDirSync()
    const home = TestHome.tempDirSync()
    const file = NodePath.join(dir, "config.json")
    const key = clients[client].key
    const original = JSON.stringify(existing(key), null, 2)
    NodeFs.writeFileSync(file, original, { mode: 0o644 })
    const r = await Cli.run(["setup", client, "--write", "--config", file, "--home", home])
    expect(r.stderr).toBe("")
    expect(r.code).toBe(0)
    const written = JSON.parse(NodeFs.readFileSync(file, "utf8"))
    expect(written.theme).toBe("dark")
    expect(written[key].memory).toEqual(other)
    expect(written[key].remote).toEqual({ url: "https://example.com/mcp" })
    const entry = written[key].weaviate
    expect(entry.args).toEqual([Cli.BIN, "bridge", "--home", home, "--start"])
    expect(entry.command).toBe(process.execPath)
    expect(JSON.stringify(entry)).not.toMatch(/wmcp_|Bearer/)
    expect(NodeFs.readFileSync(`${file}.weaviate-mcp.bak`, "utf8")).toBe(original)
    expect(mode(`${file}.weaviate-mcp.bak`)).toBe(0o600)
    // No temporary file is left behind.
    expect(NodeFs.readdirSync(dir).sort()).toEqual(["config.json", "config.json.weaviate-mcp.bak"])
  })

  it.each(["claude-code", "cursor", "vscode", "cline", "windsurf", "zed"] as const)("%s with --token: HTTP with the bearer header, the file made 0600", async (client) => {
    const dir = TestHome.tempDirSync()
    const home = TestHome.tempDirSync()
    const file = NodePath.join(dir, "config.json")
    const key = clients[client].key
    NodeFs.writeFileSync(file, JSON.stringify(existing(key)), { mode: 0o644 })
    const r = await Cli.run(["setup", client, "--write", "--config", file, "--home", home, "--token", `${client}-token`])
    expect(r.code).toBe(0)
    expect(mode(file)).toBe(0o600)
    const written = JSON.parse(NodeFs.readFileSync(file, "utf8"))
    expect(written[key].memory).toEqual(other)
    const entry = written[key].weaviate
    expect(entry.url ?? entry.serverUrl).toBe("http://127.0.0.1:23518/mcp")
    expect(entry.headers.Authorization).toMatch(/^Bearer \S+$/)
    // The token is printed nowhere: it is in the 0600 file only.
    expect(r.stdout + r.stderr).not.toContain(entry.headers.Authorization.slice(7))
    // It is a real token of the home, stored under the given name.
    const list = await Cli.run(["tokens", "list", "--home", home, "--json"])
    expect(list.stdout).toContain(`${client}-token`)
  })

  it("a strict-JSON client's file that is not plain JSON is left untouched with a clear error", async () => {
    const dir = TestHome.tempDirSync()
    const file = NodePath.join(dir, "mcp.json")
    const original = "{\n  // my servers\n  \"mcpServers\": {}\n}\n"
    NodeFs.writeFileSync(file, original)
    const r = await Cli.run(["setup", "cursor", "--write", "--config", file, "--home", TestHome.tempDirSync()])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("is not plain JSON")
    expect(NodeFs.readFileSync(file, "utf8")).toBe(original)
    expect(NodeFs.readdirSync(dir)).toEqual(["mcp.json"])
  })

  it("a missing config file is created (no backup)", async () => {
    const dir = TestHome.tempDirSync()
    const file = NodePath.join(dir, "nested", "claude_desktop_config.json")
    const r = await Cli.run(["setup", "claude-desktop", "--write", "--config", file, "--home", TestHome.tempDirSync()])
    expect(r.code).toBe(0)
    expect(Object.keys(JSON.parse(NodeFs.readFileSync(file, "utf8")).mcpServers)).toEqual(["weaviate"])
    expect(NodeFs.existsSync(`${file}.weaviate-mcp.bak`)).toBe(false)
  })
})

describe("setup without --write prints the snippet and changes nothing", () => {
  it.each(JSON_CLIENTS)("%s", async (client) => {
    const home = TestHome.tempDirSync()
    const r = await Cli.run(["setup", client, "--home", home])
    expect(r.code).toBe(0)
    const printed = JSON.parse(r.stdout)
    expect(Object.keys(printed)).toEqual([clients[client].key])
    expect(printed[clients[client].key].weaviate.args).toContain("bridge")
    expect(r.stderr).toContain(configPath(client))
  })

  it("claude-desktop cannot take --token (it has no HTTP with headers): usage error, exit 2", async () => {
    const r = await Cli.run(["setup", "claude-desktop", "--token", "x", "--home", TestHome.tempDirSync()])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain("uses the bridge")
  })
})

describe("the real per-platform config paths", () => {
  const env = { APPDATA: "C:\\Users\\u\\AppData\\Roaming", XDG_CONFIG_HOME: "/xdg" }
  it.each([
    ["claude-desktop", "darwin", /Library\/Application Support\/Claude\/claude_desktop_config\.json$/],
    ["claude-desktop", "win32", /Roaming.Claude.claude_desktop_config\.json$/],
    ["claude-desktop", "linux", /^\/xdg\/Claude\/claude_desktop_config\.json$/],
    ["claude-code", "linux", /\.claude\.json$/],
    ["cursor", "darwin", /\.cursor\/mcp\.json$/],
    ["vscode", "darwin", /Library\/Application Support\/Code\/User\/mcp\.json$/],
    ["vscode", "win32", /Roaming.Code.User.mcp\.json$/],
    ["vscode", "linux", /^\/xdg\/Code\/User\/mcp\.json$/],
    ["cline", "linux", /\/\.cline\/data\/settings\/cline_mcp_settings\.json$/],
    ["continue", "win32", /\.continue.config\.yaml$/],
    ["windsurf", "linux", /\/\.codeium\/windsurf\/mcp_config\.json$/],
    ["zed", "linux", /^\/xdg\/zed\/settings\.json$/]
  ] as const)("%s on %s", (client, platform, expected) => {
    expect(configPath(client, platform, env)).toMatch(expected)
  })
})
