/**
 * `setup cline|continue|windsurf|zed` (issue 33) on real file trees: a temporary HOME (and
 * XDG_CONFIG_HOME) holding each client's config at its documented path, with the config shapes the
 * clients document (other servers, comments in Zed's JSONC and Continue's YAML). Each client's write,
 * merge and remove; symlinks, modes, concurrent changes and backups as for the other clients; the worst
 * inputs (not JSON/YAML, a servers member of the wrong type, an empty file, YAML anchors); Cline's
 * lock; Continue's older config.json. docs/clients.md cites where each path and shape comes from.
 */
import * as Jsonc from "jsonc-parser"
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import * as Yaml from "yaml"
import * as ClientConfig from "../../src/Bridge/ClientConfig.ts"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"

type NewClient = "cline" | "continue" | "windsurf" | "zed"
const NEW: ReadonlyArray<NewClient> = ["cline", "continue", "windsurf", "zed"]

/** Cline's documented shapes (docs/mcp/mcp-overview.mdx in cline/cline). */
const CLINE = `{
  "mcpServers": {
    "local-server": {
      "command": "node",
      "args": ["/path/to/server.js"],
      "env": {
        "API_KEY": "your_api_key"
      },
      "disabled": false,
      "autoApprove": []
    },
    "remote-server": {
      "type": "streamableHttp",
      "url": "https://example.com/mcp",
      "headers": {
        "Authorization": "Bearer your-token"
      },
      "disabled": false,
      "autoApprove": []
    }
  }
}
`

/** Continue's documented config.yaml (docs/reference.mdx, docs/customize/deep-dives/mcp.mdx), as a person edits it. */
const CONTINUE = `# Continue config
name: My Config
version: 1.0.0
schema: v1

models:
  - name: Claude   # the main one
    provider: anthropic
    model: claude-sonnet-4
    apiKey: \${{ secrets.ANTHROPIC_API_KEY }}
    roles: [chat, edit]

# MCP servers
mcpServers:
  - name: SQLite MCP
    command: uvx
    args:
      - mcp-server-sqlite
      - --db-path
      - ./test.db
    env:
      NODE_ENV: production
  - name: Browser search   # playwright
    command: npx
    args: ["@playwright/mcp@latest"]

# nothing below is ours
rules:
  - Always answer in English
`

/** Windsurf's documented mcp_config.json (docs.windsurf.com/windsurf/cascade/mcp). */
const WINDSURF = `{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {
        "GITHUB_PERSONAL_ACCESS_TOKEN": "<YOUR_PERSONAL_ACCESS_TOKEN>"
      }
    },
    "figma": {
      "serverUrl": "https://mcp.figma.com/mcp",
      "headers": {
        "Authorization": "Bearer \${env:FIGMA_TOKEN}"
      }
    }
  }
}
`

/** Zed's settings.json as Zed writes it (comments, trailing commas) with an extension and a custom server (docs/src/ai/mcp.md). */
const ZED = `// Zed settings
//
// For information on how to configure Zed, see the Zed
// documentation: https://zed.dev/docs/configuring-zed
{
  "ui_font_size": 16,
  "buffer_font_size": 15,
  "theme": {
    "mode": "system",
    "light": "One Light",
    "dark": "One Dark",
  },
  // MCP servers
  "context_servers": {
    "mcp-server-github": {
      "settings": {
        "github_personal_access_token": "<token>"
      }
    },
    "local-mcp-server": {
      "command": "some-command", // from the docs
      "args": ["arg-1", "arg-2"],
      "env": {}
    },
  },
}
`

const REALISTIC: Record<NewClient, string> = { cline: CLINE, continue: CONTINUE, windsurf: WINDSURF, zed: ZED }

/** The relative path of each client's file under HOME (Linux, XDG_CONFIG_HOME = HOME/.config). */
const RELATIVE: Record<NewClient, string> = {
  cline: ".cline/data/settings/cline_mcp_settings.json",
  continue: ".continue/config.yaml",
  windsurf: ".codeium/windsurf/mcp_config.json",
  zed: ".config/zed/settings.json"
}

const read = (client: NewClient, text: string): Record<string, unknown> =>
  client === "continue" ? Yaml.parse(text) : client === "zed" ? Jsonc.parse(text, [], { allowTrailingComma: true }) : JSON.parse(text)

/** The client's servers by name (Continue's list by `name`). */
const serversOf = (client: NewClient, text: string): Record<string, Record<string, unknown>> => {
  const value = read(client, text)
  if (client === "continue") {
    return Object.fromEntries((value["mcpServers"] as Array<Record<string, unknown>>).map((item) => [item["name"] as string, item]))
  }
  return value[client === "zed" ? "context_servers" : "mcpServers"] as Record<string, Record<string, unknown>>
}

/** A user's machine: HOME with the client's config, a weaviate-mcp home, and the CLI run there. */
const machine = (client: NewClient, content?: string) => {
  const user = TestHome.tempDirSync()
  const home = TestHome.tempDirSync()
  const file = NodePath.join(user, RELATIVE[client])
  if (content !== undefined) {
    NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
    NodeFs.writeFileSync(file, content, { mode: 0o644 })
  }
  const env = { HOME: user, XDG_CONFIG_HOME: NodePath.join(user, ".config"), APPDATA: NodePath.join(user, "AppData", "Roaming") }
  const setup = (...args: ReadonlyArray<string>) => Cli.run(["setup", client, ...args, "--home", home], { env })
  return { user, home, file, env, setup }
}

const mode = (path: string) => NodeFs.statSync(path).mode & 0o777
const bridge: ClientConfig.Target = { kind: "bridge", command: process.execPath, args: [Cli.BIN, "bridge", "--home", "/h", "--start"] }

describe("each new client: --write merges into its documented file at its documented path, --remove takes only our entry out again", () => {
  it.each(NEW)("%s: the other servers and settings stay, the backup holds the original, --remove gives back the original text", async (client) => {
    const m = machine(client, REALISTIC[client])
    const written = await m.setup("--write")
    expect(written.stderr).toBe("")
    expect(written.code).toBe(0)
    expect(written.stdout).toContain(`Wrote "weaviate" to ${m.file}`)
    const text = NodeFs.readFileSync(m.file, "utf8")
    const servers = serversOf(client, text)
    const before = serversOf(client, REALISTIC[client])
    for (const [name, entry] of Object.entries(before)) expect(servers[name]).toEqual(entry)
    expect(Object.keys(servers)).toEqual([...Object.keys(before), "weaviate"])
    expect(servers["weaviate"]).toMatchObject({ command: process.execPath, args: [Cli.BIN, "bridge", "--home", m.home, "--start"] })
    expect(NodeFs.readFileSync(`${m.file}.weaviate-mcp.bak`, "utf8")).toBe(REALISTIC[client])
    expect(mode(`${m.file}.weaviate-mcp.bak`)).toBe(0o600)
    expect(mode(m.file)).toBe(0o644)
    expect(NodeFs.readdirSync(NodePath.dirname(m.file)).sort()).toEqual([NodePath.basename(m.file), `${NodePath.basename(m.file)}.weaviate-mcp.bak`].sort())

    const shown = await m.setup("--remove")
    expect(shown.stdout).toContain(`Would remove "weaviate" (the weaviate-mcp bridge) from ${m.file}`)
    expect(NodeFs.readFileSync(m.file, "utf8")).toBe(text)
    const removed = await m.setup("--remove", "--write")
    expect(removed.code, removed.stderr).toBe(0)
    expect(removed.stdout).toContain(`Removed "weaviate" (the weaviate-mcp bridge) from ${m.file}`)
    expect(NodeFs.readFileSync(m.file, "utf8")).toBe(REALISTIC[client])
  })

  it.each(NEW)("%s: with --token the HTTP entry has the bearer header the client's docs name, and the file becomes 0600", async (client) => {
    const m = machine(client, REALISTIC[client])
    const r = await m.setup("--write", "--token", `${client}-token`)
    expect(r.code, r.stderr).toBe(0)
    expect(mode(m.file)).toBe(0o600)
    expect(r.stdout).toContain("readable by you only (0600; it was 0644)")
    const entry = serversOf(client, NodeFs.readFileSync(m.file, "utf8"))["weaviate"]!
    const expected = {
      cline: { type: "streamableHttp", url: "http://127.0.0.1:23518/mcp" },
      continue: { name: "weaviate", type: "streamable-http", url: "http://127.0.0.1:23518/mcp" },
      windsurf: { serverUrl: "http://127.0.0.1:23518/mcp" },
      zed: { url: "http://127.0.0.1:23518/mcp" }
    }[client]
    expect(entry).toMatchObject(expected)
    const header = ClientConfig.endpoint(entry)!.headers["Authorization"]!
    expect(header).toMatch(/^Bearer \S+$/)
    expect(r.stdout + r.stderr).not.toContain(header.slice(7))
    const removed = await m.setup("--remove", "--write")
    expect(removed.stdout).toContain(`Removed "weaviate" (the HTTP endpoint http://127.0.0.1:23518/mcp)`)
    expect(removed.stdout).toContain("Its token stays valid until you revoke it")
    expect(NodeFs.readFileSync(m.file, "utf8")).toBe(REALISTIC[client])
  })

  it.each(NEW)("%s: no file yet: it is created at the documented path (no backup)", async (client) => {
    const m = machine(client)
    const r = await m.setup("--write")
    expect(r.code, r.stderr).toBe(0)
    expect(Object.keys(serversOf(client, NodeFs.readFileSync(m.file, "utf8")))).toEqual(["weaviate"])
    expect(NodeFs.existsSync(`${m.file}.weaviate-mcp.bak`)).toBe(false)
  })

  it.each(NEW)("%s: an empty file gets the entry (Continue's also the name and version its config.yaml requires)", async (client) => {
    const m = machine(client, "")
    const r = await m.setup("--write")
    expect(r.code, r.stderr).toBe(0)
    const text = NodeFs.readFileSync(m.file, "utf8")
    expect(Object.keys(serversOf(client, text))).toEqual(["weaviate"])
    if (client === "continue") expect(Yaml.parse(text)).toMatchObject({ name: "Local Config", version: "1.0.0", schema: "v1" })
  })

  it.each(NEW)("%s: an entry of the same name that is not ours is not removed: exit 1, file untouched", async (client) => {
    const text = client === "continue"
      ? "name: c\nversion: 1.0.0\nmcpServers:\n  - name: weaviate\n    command: npx\n    args: [mcp-server-weaviate]\n"
      : JSON.stringify({ [client === "zed" ? "context_servers" : "mcpServers"]: { weaviate: { command: "npx", args: ["mcp-server-weaviate"] } } })
    const m = machine(client, text)
    const r = await m.setup("--remove", "--write")
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("is not weaviate-mcp's; not removing it")
    expect(NodeFs.readFileSync(m.file, "utf8")).toBe(text)
  })
})

describe("the worst inputs: a clear error, the file untouched, nothing left beside it", () => {
  const refused = async (client: NewClient, text: string, message: string) => {
    const m = machine(client, text)
    const r = await m.setup("--write")
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(message)
    expect(NodeFs.readFileSync(m.file, "utf8")).toBe(text)
    expect(NodeFs.readdirSync(NodePath.dirname(m.file))).toEqual([NodePath.basename(m.file)])
  }

  it("not JSON (Cline, Windsurf: strict JSON), not JSONC (Zed), not YAML (Continue)", async () => {
    await refused("cline", `{\n  // mine\n  "mcpServers": {}\n}\n`, "is not plain JSON")
    await refused("windsurf", `{"mcpServers": {"a": {"command": "x",}}}`, "is not plain JSON")
    await refused("zed", `{\n  "theme": "One Dark"\n  "context_servers": {}\n}\n`, "is not valid JSONC (CommaExpected")
    await refused("continue", `name: c\nmcpServers:\n  - name: a\n   command: x\n`, "is not valid YAML (")
  })

  it("a servers member of the wrong type: context_servers a list, mcpServers a string, Continue's mcpServers a mapping", async () => {
    await refused("zed", `{ "context_servers": [] }`, `"context_servers" is not an object`)
    await refused("cline", `{ "mcpServers": "none" }`, `"mcpServers" is not an object`)
    await refused("windsurf", `{ "mcpServers": null }`, `"mcpServers" is not an object`)
    await refused("continue", `name: c\nversion: 1.0.0\nmcpServers:\n  memory:\n    command: npx\n`, `"mcpServers" is not a list (a mapping)`)
  })

  it("YAML that is not one mapping: a list, two documents, a duplicate key", async () => {
    await refused("continue", "- a\n- b\n", "does not hold a YAML mapping")
    await refused("continue", "name: a\n---\nname: b\n", "Source contains multiple documents")
    await refused("continue", "name: a\nname: b\n", "Map keys must be unique")
  })

  it("YAML anchors: the servers list as an alias is refused; anchors and aliases elsewhere stay as they were", async () => {
    await refused("continue", "name: c\nversion: 1.0.0\nshared: &servers\n  - name: a\n    command: x\nmcpServers: *servers\n", "is an alias of a list defined elsewhere")
    const anchored = `name: c
version: 1.0.0
x-env: &env
  LOG: debug
mcpServers:
  - &sqlite
    name: SQLite MCP
    command: uvx
    env: *env
  - name: other
    command: npx
    env:
      <<: *env
`
    const m = machine("continue", anchored)
    const r = await m.setup("--write")
    expect(r.code, r.stderr).toBe(0)
    const text = NodeFs.readFileSync(m.file, "utf8")
    expect(text.startsWith(anchored)).toBe(true)
    expect(Yaml.parse(text).mcpServers[0].env).toEqual({ LOG: "debug" })
    expect((await m.setup("--remove", "--write")).code).toBe(0)
    expect(NodeFs.readFileSync(m.file, "utf8")).toBe(anchored)
  })

  it("YAML: the result is parsed again; removing an entry of ours that an alias elsewhere points to is refused, the file untouched", async () => {
    const m = machine("continue")
    const text = `name: c\nversion: 1.0.0\nmcpServers:\n  - name: weaviate\n    command: ${process.execPath}\n    args: [${JSON.stringify(Cli.BIN)}, bridge]\n    env: &env\n      LOG: debug\n  - name: other\n    command: npx\n    env: *env\n`
    NodeFs.mkdirSync(NodePath.dirname(m.file), { recursive: true })
    NodeFs.writeFileSync(m.file, text)
    const r = await m.setup("--remove", "--write")
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("its YAML cannot be changed without changing other values")
    expect(NodeFs.readFileSync(m.file, "utf8")).toBe(text)
    expect(NodeFs.readdirSync(NodePath.dirname(m.file))).toEqual(["config.yaml"])
  })

  it("Continue: an empty servers key (`mcpServers:`) or a flow list gets the entry through the yaml library, and the output says so", async () => {
    for (const text of ["name: c\nversion: 1.0.0\n# servers\nmcpServers:\n", "name: c\nversion: 1.0.0\nmcpServers: [] # none yet\n"]) {
      const m = machine("continue", text)
      const r = await m.setup("--write")
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toContain("the yaml library wrote the file again")
      const written = NodeFs.readFileSync(m.file, "utf8")
      expect(written).toMatch(/# servers|# none yet/)
      expect(Yaml.parse(written).mcpServers.map((s: { name: string }) => s.name)).toEqual(["weaviate"])
    }
  })

  it("Continue: removing the only server leaves an empty list (`mcpServers: []`), which Continue accepts, not a null", async () => {
    const m = machine("continue", "name: c\nversion: 1.0.0\n")
    expect((await m.setup("--write")).code).toBe(0)
    expect((await m.setup("--remove", "--write")).code).toBe(0)
    expect(NodeFs.readFileSync(m.file, "utf8")).toBe("name: c\nversion: 1.0.0\nmcpServers: []\n")
  })

  it("Continue: a YAML list that is not indented under its key, CRLF line ends: the new item looks like its neighbours", async () => {
    const text = "name: c\r\nversion: 1.0.0\r\nmcpServers:\r\n- name: a\r\n  command: x\r\n  args:\r\n  - y\r\n"
    const m = machine("continue", text)
    expect((await m.setup("--write")).code).toBe(0)
    const written = NodeFs.readFileSync(m.file, "utf8")
    expect(written.startsWith(text)).toBe(true)
    expect(written.slice(text.length)).toMatch(/^- name: weaviate\r\n {2}command: .*\r\n {2}args:\r\n {2}- /)
    expect(written.replace(/\r\n/g, "")).not.toContain("\n")
  })
})

describe("symbolic links, modes, concurrent changes: as for the other clients", () => {
  it.each(NEW)("%s: a link into a dotfiles directory: its target gets the entry, the link stays, the backup sits beside the target", async (client) => {
    const m = machine(client)
    const dotfiles = TestHome.tempDirSync()
    const target = NodePath.join(dotfiles, NodePath.basename(m.file))
    NodeFs.writeFileSync(target, REALISTIC[client])
    NodeFs.mkdirSync(NodePath.dirname(m.file), { recursive: true })
    NodeFs.symlinkSync(target, m.file)
    const r = await m.setup("--write")
    expect(r.code, r.stderr).toBe(0)
    expect(NodeFs.lstatSync(m.file).isSymbolicLink()).toBe(true)
    expect(serversOf(client, NodeFs.readFileSync(target, "utf8"))["weaviate"]).toBeDefined()
    expect(NodeFs.readFileSync(`${target}.weaviate-mcp.bak`, "utf8")).toBe(REALISTIC[client])
    expect(r.stdout).toContain(`(through the link ${m.file}, which stays a link)`)
  })

  it.each(NEW)("%s: a dangling link is refused and nothing is created", async (client) => {
    const m = machine(client)
    const missing = NodePath.join(m.user, "dotfiles", "gone")
    NodeFs.mkdirSync(NodePath.dirname(m.file), { recursive: true })
    NodeFs.symlinkSync(missing, m.file)
    const r = await m.setup("--write")
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("which does not exist (a dangling link)")
    expect(NodeFs.existsSync(NodePath.dirname(missing))).toBe(false)
  })

  it.each(NEW)("%s: a 0640 file keeps its mode (and, run as root, its owner); a read-only one is not changed", async (client) => {
    const m = machine(client, REALISTIC[client])
    NodeFs.chmodSync(m.file, 0o640)
    if (process.getuid?.() === 0) NodeChild.execFileSync("chown", ["nobody:nogroup", m.file])
    const before = NodeFs.statSync(m.file)
    expect((await m.setup("--write")).code).toBe(0)
    const after = NodeFs.statSync(m.file)
    expect(after.mode & 0o7777).toBe(0o640)
    expect([after.uid, after.gid]).toEqual([before.uid, before.gid])
    const readOnly = machine(client, REALISTIC[client])
    NodeFs.chmodSync(readOnly.file, 0o444)
    const r = await readOnly.setup("--write")
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("is read-only (mode 0444)")
    expect(NodeFs.readFileSync(readOnly.file, "utf8")).toBe(REALISTIC[client])
  })

  it.each(NEW)("%s: a file changed by someone else during the write is not overwritten; no temp file or backup left", async (client) => {
    const m = machine(client, REALISTIC[client])
    const theirs = REALISTIC[client].replace("server", "servers")
    const attempt = ClientConfig.merge(m.file, client, "weaviate", bridge, { beforeRename: async (target) => NodeFs.writeFileSync(target, theirs) })
    await expect(attempt).rejects.toBeInstanceOf(ClientConfig.ConfigChanged)
    expect(NodeFs.readFileSync(m.file, "utf8")).toBe(theirs)
    expect(NodeFs.readdirSync(NodePath.dirname(m.file))).toEqual([NodePath.basename(m.file)])
  })
})

describe("Cline: its shared file, its lock, its older file", () => {
  it("the lock Cline's writers hold (<file>.lock) is taken for the edit and released after it", async () => {
    const m = machine("cline", CLINE)
    const lock = `${m.file}.lock`
    let held: Array<string> = []
    await ClientConfig.merge(m.file, "cline", "weaviate", bridge, { beforeRename: async () => void (held = NodeFs.readdirSync(lock)) })
    expect(held).toHaveLength(1)
    expect(held[0]).toMatch(/^owner\./)
    expect(NodeFs.existsSync(lock)).toBe(false)
  })

  it("a lock held by a Cline writing the file right now: not changed, exit 1, the fix named", async () => {
    const m = machine("cline", CLINE)
    NodeFs.mkdirSync(`${m.file}.lock`)
    NodeFs.writeFileSync(NodePath.join(`${m.file}.lock`, "owner.1.2.cline"), "cline")
    const r = await m.setup("--write")
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("is being changed by its client right now")
    expect(r.stderr).toContain(`rm -r ${JSON.stringify(`${m.file}.lock`)}`)
    expect(NodeFs.readFileSync(m.file, "utf8")).toBe(CLINE)
    expect(NodeFs.readdirSync(`${m.file}.lock`)).toEqual(["owner.1.2.cline"])
    expect(NodeFs.readdirSync(NodePath.dirname(m.file)).sort()).toEqual(["cline_mcp_settings.json", "cline_mcp_settings.json.lock"])
  })

  it("CLINE_MCP_SETTINGS_PATH, CLINE_DATA_DIR and CLINE_DIR move the file, as in Cline's resolveMcpSettingsPath", () => {
    expect(ClientConfig.configPath("cline", "linux", { CLINE_MCP_SETTINGS_PATH: "/x/mcp.json" })).toBe("/x/mcp.json")
    expect(ClientConfig.configPath("cline", "linux", { CLINE_DATA_DIR: "/d" })).toBe("/d/settings/cline_mcp_settings.json")
    expect(ClientConfig.configPath("cline", "win32", { CLINE_DIR: "/c" })).toBe("/c/data/settings/cline_mcp_settings.json")
  })

  it("a Cline before 4.0 (its file in VS Code's global storage, no shared file yet): setup says where, and how to write that one", async () => {
    const m = machine("cline")
    const older = NodePath.join(m.user, ".config", "Code", "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json")
    NodeFs.mkdirSync(NodePath.dirname(older), { recursive: true })
    NodeFs.writeFileSync(older, CLINE)
    const r = await m.setup()
    expect(r.code).toBe(0)
    expect(r.stderr).toContain(`Note: ${older} exists. Cline before 4.0 read its servers from VS Code's global storage`)
    expect(r.stderr).toContain(`--config ${JSON.stringify(older)}`)
    const written = await m.setup("--write", "--config", older)
    expect(written.code, written.stderr).toBe(0)
    expect(Object.keys(serversOf("cline", NodeFs.readFileSync(older, "utf8")))).toEqual(["local-server", "remote-server", "weaviate"])
  })
})

describe("Continue: config.yaml, and the older config.json", () => {
  it("a config.json without a config.yaml: no config.yaml is created (Continue would read it instead); the migration is named", async () => {
    const m = machine("continue")
    const json = NodePath.join(m.user, ".continue", "config.json")
    NodeFs.mkdirSync(NodePath.dirname(json), { recursive: true })
    NodeFs.writeFileSync(json, JSON.stringify({ models: [] }))
    const r = await m.setup("--write")
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("this Continue reads config.json, the older format")
    expect(r.stderr).toContain("https://docs.continue.dev/reference/yaml-migration")
    expect(NodeFs.readdirSync(NodePath.dirname(json))).toEqual(["config.json"])
  })

  it("CONTINUE_GLOBAL_DIR moves the file, as in Continue's core/util/paths.ts", () => {
    expect(ClientConfig.configPath("continue", "linux", { CONTINUE_GLOBAL_DIR: "/g" })).toBe("/g/config.yaml")
  })

  it("setup continue prints a YAML snippet to paste under mcpServers", async () => {
    const m = machine("continue")
    const r = await m.setup()
    expect(r.code).toBe(0)
    expect(Yaml.parse(r.stdout)).toEqual({ mcpServers: [{ name: "weaviate", command: process.execPath, args: [Cli.BIN, "bridge", "--home", m.home, "--start"] }] })
    expect(r.stderr).toContain(`Add this to ${m.file}`)
  })
})

describe("the real per-platform paths of the new clients", () => {
  const env = { APPDATA: "C:\\Users\\u\\AppData\\Roaming", XDG_CONFIG_HOME: "/xdg" }
  it.each([
    ["cline", "darwin", /\/\.cline\/data\/settings\/cline_mcp_settings\.json$/],
    ["cline", "win32", /\.cline.data.settings.cline_mcp_settings\.json$/],
    ["continue", "linux", /\/\.continue\/config\.yaml$/],
    ["windsurf", "darwin", /\/\.codeium\/windsurf\/mcp_config\.json$/],
    ["windsurf", "win32", /\.codeium.windsurf.mcp_config\.json$/],
    ["zed", "darwin", /\/\.config\/zed\/settings\.json$/],
    ["zed", "linux", /^\/xdg\/zed\/settings\.json$/],
    ["zed", "win32", /Roaming.Zed.settings\.json$/]
  ] as const)("%s on %s", (client, platform, expected) => {
    expect(ClientConfig.configPath(client, platform, env)).toMatch(expected)
  })
})

describe("docs/clients.md: each new client's snippets are what setup prints", () => {
  const docs = NodeFs.readFileSync(NodePath.join(import.meta.dirname, "../../docs/clients.md"), "utf8")
  /** The code blocks of the section `### <title>`. */
  const blocks = (title: string) => {
    const from = docs.indexOf(`\n### ${title}\n`)
    expect(from, `a section "### ${title}" in docs/clients.md`).toBeGreaterThan(-1)
    const section = docs.slice(from + 1).split(/\n#{2,3} /)[0]!
    return [...section.matchAll(/```(json|jsonc|yaml)\n([\s\S]*?)```/g)].map((m) => m[2]!.trimEnd())
  }
  const placeholders = (text: string, home: string) =>
    text.replaceAll(process.execPath, "/usr/local/bin/node").replaceAll(Cli.BIN, "/usr/local/lib/node_modules/weaviate-mcp/bin/weaviate-mcp.js")
      .replaceAll(home, "/home/me/.local/share/weaviate-mcp")
  const TITLES: Record<NewClient, string> = { cline: "Cline", continue: "Continue", windsurf: "Windsurf", zed: "Zed" }

  it.each(NEW)("%s: the bridge snippet (setup <client>) and the HTTP one (--token)", async (client) => {
    const m = machine(client)
    const printed = await m.setup()
    expect(printed.code).toBe(0)
    const [bridgeBlock, httpBlock] = blocks(TITLES[client])
    expect(bridgeBlock).toBe(placeholders(printed.stdout.trimEnd(), m.home))
    const http = await ClientConfig.snippet(client, "weaviate", { kind: "http", url: "http://127.0.0.1:23518/mcp", token: "wmcp_…" })
    expect(httpBlock).toBe(http)
  })
})
