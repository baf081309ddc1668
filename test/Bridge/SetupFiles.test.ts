/**
 * `setup --write` and `setup --remove` on real file trees (issue 30): symbolic links followed to
 * their target, JSONC edited in place, modes and owners kept, read-only files and files changed
 * during the write left alone. Each test is named after the rule it checks (docs/clients.md).
 */
import * as Jsonc from "jsonc-parser"
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import * as ClientConfig from "../../src/Bridge/ClientConfig.ts"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"

const mode = (path: string) => NodeFs.statSync(path).mode & 0o777
const bridge: ClientConfig.Target = { kind: "bridge", command: process.execPath, args: [Cli.BIN, "bridge", "--home", "/h", "--start"] }
const setup = (...args: ReadonlyArray<string>) => Cli.run(["setup", ...args, "--home", TestHome.tempDirSync()])
/** The files of a directory other than the ones named. */
const leftovers = (dir: string, ...expected: ReadonlyArray<string>) => NodeFs.readdirSync(dir).filter((f) => !expected.includes(f))

const VSCODE_JSONC = `{
\t// Servers I use every day
\t"servers": {
\t\t"memory": {
\t\t\t"command": "npx", // pinned below
\t\t\t"args": ["-y", "@modelcontextprotocol/server-memory",],
\t\t},
\t},
\t/* inputs last */
\t"inputs": [],
}
`

describe("symbolic links: the link's target is written, the link stays", () => {
  it("a link into another directory: the target gets the entry, the link stays a link, the backup sits beside the target", async () => {
    const dotfiles = TestHome.tempDirSync()
    const home = TestHome.tempDirSync()
    const target = NodePath.join(dotfiles, "cursor-mcp.json")
    const link = NodePath.join(home, "mcp.json")
    NodeFs.writeFileSync(target, JSON.stringify({ mcpServers: { memory: { command: "npx" } } }, null, 2) + "\n")
    NodeFs.symlinkSync(NodePath.relative(home, target), link)
    const r = await setup("cursor", "--write", "--config", link)
    expect(r.code, r.stderr).toBe(0)
    expect(NodeFs.lstatSync(link).isSymbolicLink()).toBe(true)
    expect(NodeFs.readlinkSync(link)).toBe(NodePath.relative(home, target))
    const written = JSON.parse(NodeFs.readFileSync(target, "utf8"))
    expect(Object.keys(written.mcpServers)).toEqual(["memory", "weaviate"])
    expect(NodeFs.existsSync(`${target}.weaviate-mcp.bak`)).toBe(true)
    expect(NodeFs.readdirSync(home)).toEqual(["mcp.json"])
    expect(leftovers(dotfiles, "cursor-mcp.json", "cursor-mcp.json.weaviate-mcp.bak")).toEqual([])
    expect(r.stdout).toContain(`${target} (through the link ${link}, which stays a link)`)
  })

  it("a dangling link: nothing is created anywhere, the error names the missing target and the fix, exit 1", async () => {
    const dir = TestHome.tempDirSync()
    const link = NodePath.join(dir, "mcp.json")
    const missing = NodePath.join(dir, "dotfiles", "mcp.json")
    NodeFs.symlinkSync(missing, link)
    const r = await setup("cursor", "--write", "--config", link)
    expect(r.code).toBe(1)
    expect(r.stderr).toContain(`is a symbolic link to ${missing}, which does not exist`)
    expect(r.stderr).toContain("Create the target first")
    expect(NodeFs.existsSync(NodePath.dirname(missing))).toBe(false)
    expect(NodeFs.readdirSync(dir)).toEqual(["mcp.json"])
    expect(NodeFs.lstatSync(link).isSymbolicLink()).toBe(true)
  })
})

describe("JSONC: VS Code's files keep their comments, trailing commas, key order and indentation", () => {
  it("mcp.json with comments and trailing commas gets the entry and keeps every other byte", async () => {
    const dir = TestHome.tempDirSync()
    const file = NodePath.join(dir, "mcp.json")
    NodeFs.writeFileSync(file, VSCODE_JSONC)
    const r = await setup("vscode", "--write", "--config", file)
    expect(r.code, r.stderr).toBe(0)
    const text = NodeFs.readFileSync(file, "utf8")
    for (const kept of ["\t// Servers I use every day", "\"command\": \"npx\", // pinned below", "\"@modelcontextprotocol/server-memory\",]", "\t/* inputs last */"]) {
      expect(text).toContain(kept)
    }
    const errors: Array<Jsonc.ParseError> = []
    const parsed = Jsonc.parse(text, errors, { allowTrailingComma: true })
    expect(errors).toEqual([])
    expect(Object.keys(parsed)).toEqual(["servers", "inputs"])
    expect(Object.keys(parsed.servers)).toEqual(["memory", "weaviate"])
    expect(parsed.servers.weaviate.args).toContain("bridge")
    // Tab indentation, as the file had it: the new entry's lines are indented with tabs only.
    expect(text).toMatch(/^\t\t"weaviate": \{$/m)
    expect(text).not.toMatch(/^ +\S/m)
    // Removing it again gives back the original text.
    const removed = await setup("vscode", "--remove", "--write", "--config", file)
    expect(removed.code, removed.stderr).toBe(0)
    expect(NodeFs.readFileSync(file, "utf8").replace(/,(\s*)\}/, "$1}")).toBe(VSCODE_JSONC.replace(/,(\s*)\}/, "$1}"))
  })

  it("settings.json: the entry goes under mcp.servers, the settings and comments stay", async () => {
    const dir = TestHome.tempDirSync()
    const file = NodePath.join(dir, "settings.json")
    NodeFs.writeFileSync(file, `{\n  // my editor\n  "editor.fontSize": 14,\n}\n`)
    const r = await setup("vscode", "--write", "--config", file)
    expect(r.code, r.stderr).toBe(0)
    const text = NodeFs.readFileSync(file, "utf8")
    expect(text).toContain("// my editor")
    const parsed = Jsonc.parse(text, [], { allowTrailingComma: true })
    expect(parsed["editor.fontSize"]).toBe(14)
    expect(parsed.mcp.servers.weaviate.args).toContain("bridge")
  })

  it("a strict-JSON file stays strict JSON, with its key order and its 4-space indentation", async () => {
    const dir = TestHome.tempDirSync()
    const file = NodePath.join(dir, "claude.json")
    const original = { zeta: 1, mcpServers: { memory: { command: "npx" } }, alpha: [1, 2] }
    NodeFs.writeFileSync(file, JSON.stringify(original, null, 4) + "\n")
    const r = await setup("claude-code", "--write", "--config", file)
    expect(r.code, r.stderr).toBe(0)
    const text = NodeFs.readFileSync(file, "utf8")
    const parsed = JSON.parse(text)
    expect(Object.keys(parsed)).toEqual(["zeta", "mcpServers", "alpha"])
    expect(Object.keys(parsed.mcpServers)).toEqual(["memory", "weaviate"])
    expect(text).toContain(`\n    "zeta": 1,\n`)
    expect(text).toMatch(/^ {8}"weaviate": \{$/m)
  })
})

describe("modes and owners stay; a file that holds a token becomes 0600 and the output says so", () => {
  it("a 0640 file keeps its mode (and, run as root, its owner)", async () => {
    const dir = TestHome.tempDirSync()
    const file = NodePath.join(dir, "mcp.json")
    NodeFs.writeFileSync(file, "{}\n", { mode: 0o640 })
    NodeFs.chmodSync(file, 0o640)
    const root = process.getuid?.() === 0
    if (root) NodeChild.execFileSync("chown", ["nobody:nogroup", file])
    const before = NodeFs.statSync(file)
    const r = await setup("cursor", "--write", "--config", file)
    expect(r.code, r.stderr).toBe(0)
    const after = NodeFs.statSync(file)
    expect(after.mode & 0o7777).toBe(0o640)
    expect([after.uid, after.gid]).toEqual([before.uid, before.gid])
    expect(after.ino).not.toBe(before.ino)
  })

  it("with --token the 0644 file becomes 0600, and the output says so and never shows the token", async () => {
    const dir = TestHome.tempDirSync()
    const file = NodePath.join(dir, "mcp.json")
    NodeFs.writeFileSync(file, "{}\n", { mode: 0o644 })
    const r = await setup("cursor", "--write", "--config", file, "--token", "cursor")
    expect(r.code, r.stderr).toBe(0)
    expect(mode(file)).toBe(0o600)
    expect(r.stdout).toContain("readable by you only (0600; it was 0644)")
    const token = JSON.parse(NodeFs.readFileSync(file, "utf8")).mcpServers.weaviate.headers.Authorization.slice(7)
    expect(r.stdout + r.stderr).not.toContain(token)
  })

  it("a read-only file is not changed: exit 1, the fix named, content and mode as they were", async () => {
    const dir = TestHome.tempDirSync()
    const file = NodePath.join(dir, "mcp.json")
    NodeFs.writeFileSync(file, "{}\n")
    NodeFs.chmodSync(file, 0o444)
    const r = await setup("cursor", "--write", "--config", file)
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("is read-only (mode 0444)")
    expect(r.stderr).toContain("chmod u+w")
    expect(NodeFs.readFileSync(file, "utf8")).toBe("{}\n")
    expect(mode(file)).toBe(0o444)
    expect(NodeFs.readdirSync(dir)).toEqual(["mcp.json"])
  })

  it("with --token, a file that cannot be written leaves no usable token behind (the one created is revoked)", async () => {
    const dir = TestHome.tempDirSync()
    const home = TestHome.tempDirSync()
    const file = NodePath.join(dir, "mcp.json")
    NodeFs.writeFileSync(file, "{}\n")
    NodeFs.chmodSync(file, 0o444)
    const r = await Cli.run(["setup", "cursor", "--write", "--config", file, "--token", "unused", "--home", home])
    expect(r.code).toBe(1)
    const tokens = JSON.parse((await Cli.run(["tokens", "list", "--json", "--home", home])).stdout) as Array<{ name: string; status: string }>
    expect(tokens.filter((t) => t.name === "unused").map((t) => t.status)).toEqual(["revoked"])
  })
})

describe("a file changed by someone else between our read and our rename is not overwritten", () => {
  it("an existing file changed during the write: ConfigChanged, their content stays, no temp file or backup left", async () => {
    const dir = TestHome.tempDirSync()
    const file = NodePath.join(dir, "mcp.json")
    NodeFs.writeFileSync(file, JSON.stringify({ mcpServers: { memory: {} } }))
    const theirs = JSON.stringify({ mcpServers: { memory: {}, added: { command: "x" } } })
    const attempt = ClientConfig.merge(file, "cursor", "weaviate", bridge, { beforeRename: async (target) => NodeFs.writeFileSync(target, theirs) })
    await expect(attempt).rejects.toBeInstanceOf(ClientConfig.ConfigChanged)
    await expect(attempt).rejects.toThrow("was changed by someone else while setup was writing it; it was not overwritten")
    expect(NodeFs.readFileSync(file, "utf8")).toBe(theirs)
    expect(NodeFs.readdirSync(dir)).toEqual(["mcp.json"])
  })

  it("a file created by someone else during the write of a new one: not overwritten", async () => {
    const dir = TestHome.tempDirSync()
    const file = NodePath.join(dir, "mcp.json")
    const attempt = ClientConfig.merge(file, "cursor", "weaviate", bridge, { beforeRename: async (target) => NodeFs.writeFileSync(target, "{\"theirs\":1}") })
    await expect(attempt).rejects.toBeInstanceOf(ClientConfig.ConfigChanged)
    expect(NodeFs.readFileSync(file, "utf8")).toBe("{\"theirs\":1}")
    expect(NodeFs.readdirSync(dir)).toEqual(["mcp.json"])
  })

  it("an unchanged file is replaced (the hook ran, nothing changed)", async () => {
    const dir = TestHome.tempDirSync()
    const file = NodePath.join(dir, "mcp.json")
    NodeFs.writeFileSync(file, "{}")
    let ran = false
    const outcome = await ClientConfig.merge(file, "cursor", "weaviate", bridge, { beforeRename: async () => void (ran = true) })
    expect(ran).toBe(true)
    expect(outcome.changed).toBe(true)
    expect(Object.keys(JSON.parse(NodeFs.readFileSync(file, "utf8")).mcpServers)).toEqual(["weaviate"])
  })
})

describe("setup <client> --remove removes our entry, and only ours", () => {
  it("without --write it shows what it would remove and changes nothing; with --write only our entry goes", async () => {
    const dir = TestHome.tempDirSync()
    const file = NodePath.join(dir, "mcp.json")
    const added = await setup("cursor", "--write", "--config", file, "--token", "t")
    expect(added.code, added.stderr).toBe(0)
    const withOurs = JSON.parse(NodeFs.readFileSync(file, "utf8"))
    withOurs.mcpServers.memory = { command: "npx" }
    withOurs.theme = "dark"
    NodeFs.writeFileSync(file, JSON.stringify(withOurs, null, 2))
    const token = withOurs.mcpServers.weaviate.headers.Authorization.slice(7)

    const shown = await setup("cursor", "--remove", "--config", file)
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toContain(`Would remove "weaviate" (the HTTP endpoint http://127.0.0.1:23518/mcp)`)
    expect(shown.stdout + shown.stderr).not.toContain(token)
    expect(JSON.parse(NodeFs.readFileSync(file, "utf8"))).toEqual(withOurs)

    const removed = await setup("cursor", "--remove", "--write", "--config", file)
    expect(removed.code, removed.stderr).toBe(0)
    expect(removed.stdout + removed.stderr).not.toContain(token)
    expect(removed.stdout).toContain("Its token stays valid until you revoke it")
    expect(JSON.parse(NodeFs.readFileSync(file, "utf8"))).toEqual({ mcpServers: { memory: { command: "npx" } }, theme: "dark" })

    const again = await setup("cursor", "--remove", "--write", "--config", file)
    expect(again.code).toBe(0)
    expect(again.stdout).toContain("nothing to remove")
  })

  it("an entry of the same name that is not weaviate-mcp's is not removed: exit 1", async () => {
    const dir = TestHome.tempDirSync()
    const file = NodePath.join(dir, "mcp.json")
    const original = JSON.stringify({ mcpServers: { weaviate: { command: "npx", args: ["-y", "mcp-server-weaviate"] } } })
    NodeFs.writeFileSync(file, original)
    const r = await setup("cursor", "--remove", "--write", "--config", file)
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("is not weaviate-mcp's; not removing it")
    expect(NodeFs.readFileSync(file, "utf8")).toBe(original)
  })
})
