/**
 * The compile cache of bin/weaviate-mcp.js (docs/configuration.md, "The compile cache"): the CLI
 * bundle runs through V8's code cache, kept per command in a directory that is the user's own.
 * Cached code is run as it is, so these rules are about where it is taken from as much as whether it
 * is used.
 */
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { VERSION } from "../../src/Base/Version.ts"
import { describe, expect, it } from "vitest"
import { RUNNABLE } from "../support/AsNobody.ts"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"

const files = (dir: string) => (NodeFs.existsSync(dir) ? NodeFs.readdirSync(dir).sort() : [])

/** The cache file a command wrote (exactly one per run of a new command). */
const only = (dir: string, command: string) => {
  const written = files(dir).filter((name) => name.endsWith(`-${command}.bin`))
  expect(written).toHaveLength(1)
  return NodePath.join(dir, written[0]!)
}

const version = (env: NodeJS.ProcessEnv) => Cli.run(["--version"], { env })
const help = (env: NodeJS.ProcessEnv) => Cli.run(["tokens", "--help"], { env })

describe("the compile cache", () => {
  it("the CLI bundle has no import(): a function V8 takes from the code cache cannot run one on Node 20", () => {
    const bundle = NodeFs.readFileSync(NodePath.join(NodePath.dirname(Cli.BIN), "..", "dist", "weaviate-mcp.cjs"), "latin1")
    // `import(` as a call, not a method of the same name (the macOS dialog's script says `ObjC.import(`).
    const calls = [...bundle.matchAll(/(?<![\w$.])import\(/g)].map((match) => bundle.slice(Math.max(0, match.index - 60), match.index + 40))
    expect(calls).toEqual([])
  })

  it("the first run of a command keeps its code (a 0600 file in a 0700 directory); the next run loads it and leaves it as it is", async () => {
    const dir = NodePath.join(TestHome.tempDirSync("weaviate-mcp-cc-"), "compile-cache")
    const env = { WEAVIATE_MCP_COMPILE_CACHE: dir }
    const first = await help(env)
    expect(first.code).toBe(0)
    expect(NodeFs.statSync(dir).mode & 0o777).toBe(0o700)
    const file = only(dir, "tokens")
    expect(NodeFs.statSync(file).mode & 0o777).toBe(0o600)
    // V8's code cache of a 2 MB bundle: far more than a header.
    expect(NodeFs.statSync(file).size).toBeGreaterThan(100_000)
    const before = NodeFs.statSync(file)
    const second = await help(env)
    expect(second).toEqual(first)
    const after = NodeFs.statSync(file)
    expect([after.ino, after.mtimeMs, after.size]).toEqual([before.ino, before.mtimeMs, before.size])
  })

  it("each command keeps a file of its own, and the output is the same with the cache, without it and with it turned off", async () => {
    const dir = TestHome.tempDirSync("weaviate-mcp-cc-")
    const uncached = await version({ WEAVIATE_MCP_COMPILE_CACHE: "off" })
    const cold = await version({ WEAVIATE_MCP_COMPILE_CACHE: dir })
    const warm = await version({ WEAVIATE_MCP_COMPILE_CACHE: dir })
    await help({ WEAVIATE_MCP_COMPILE_CACHE: dir })
    expect(uncached.code).toBe(0)
    expect(cold).toEqual(uncached)
    expect(warm).toEqual(uncached)
    expect(files(dir).map((name) => name.replace(/^[0-9a-f]+-[0-9a-f]+-/, ""))).toEqual(["other.bin", "tokens.bin"])
  })

  it("WEAVIATE_MCP_COMPILE_CACHE=off writes nothing, not even in the default directory", async () => {
    const user = TestHome.tempDirSync("weaviate-mcp-cc-user-")
    const env = { WEAVIATE_MCP_COMPILE_CACHE: "off", HOME: user, XDG_CACHE_HOME: NodePath.join(user, ".cache") }
    expect((await version(env)).code).toBe(0)
    expect(files(user)).toEqual([])
  })

  it("without WEAVIATE_MCP_COMPILE_CACHE the cache is $XDG_CACHE_HOME/weaviate-mcp/compile-cache", async () => {
    const user = TestHome.tempDirSync("weaviate-mcp-cc-user-")
    const cache = NodePath.join(user, "xdg-cache")
    expect((await version({ HOME: user, XDG_CACHE_HOME: cache })).code).toBe(0)
    only(NodePath.join(cache, "weaviate-mcp", "compile-cache"), "other")
  })

  it("a file V8 refuses (damaged) is written again, and the command runs as without it", async () => {
    const dir = TestHome.tempDirSync("weaviate-mcp-cc-")
    const env = { WEAVIATE_MCP_COMPILE_CACHE: dir }
    const good = await help(env)
    const file = only(dir, "tokens")
    NodeFs.writeFileSync(file, Buffer.alloc(4096, 0x5a))
    const again = await help(env)
    expect(again).toEqual(good)
    expect(NodeFs.statSync(file).size).toBeGreaterThan(100_000)
    expect(NodeFs.readFileSync(file).subarray(0, 4096).equals(Buffer.alloc(4096, 0x5a))).toBe(false)
  })

  it("a directory others can write, or a symbolic link, is passed over: nothing is read or written there, and the command runs", async () => {
    const open = TestHome.tempDirSync("weaviate-mcp-cc-open-")
    NodeFs.chmodSync(open, 0o777)
    const target = TestHome.tempDirSync("weaviate-mcp-cc-target-")
    const link = NodePath.join(TestHome.tempDirSync("weaviate-mcp-cc-link-"), "cache")
    NodeFs.symlinkSync(target, link)
    for (const dir of [open, link]) {
      // A planted file with a name the CLI would look for is neither used nor replaced.
      const warm = TestHome.tempDirSync("weaviate-mcp-cc-")
      await version({ WEAVIATE_MCP_COMPILE_CACHE: warm })
      const name = NodePath.basename(only(warm, "other"))
      NodeFs.writeFileSync(NodePath.join(dir, name), "planted")
      const result = await version({ WEAVIATE_MCP_COMPILE_CACHE: dir })
      expect(result.code).toBe(0)
      expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
      expect(files(dir)).toEqual([name])
      expect(NodeFs.readFileSync(NodePath.join(dir, name), "utf8")).toBe("planted")
    }
  })

  it("the bin's list of commands (one cache file each, `other` for the rest) is the CLI's list of commands", async () => {
    const helpText = (await Cli.run(["--help"])).stdout
    const commands = new Set([...helpText.matchAll(/^  - ([a-z]+)/gm)].map((match) => match[1]!))
    const bin = NodeFs.readFileSync(Cli.BIN, "utf8")
    const listed = /const COMMANDS = new Set\(\[([^\]]*)\]\)/.exec(bin)?.[1]
    expect(listed).toBeDefined()
    expect(new Set([...listed!.matchAll(/"([a-z-]+)"/g)].map((match) => match[1]!))).toEqual(commands)
    // A word that is not a command shares `other` (no file per typo).
    const dir = TestHome.tempDirSync("weaviate-mcp-cc-")
    expect((await Cli.run(["frobnicate"], { env: { WEAVIATE_MCP_COMPILE_CACHE: dir } })).code).toBe(2)
    only(dir, "other")
  })

  it("a cache path that is a file, or a cache file that is a directory, is passed over: the command runs and nothing half-written stays", async () => {
    const parent = TestHome.tempDirSync("weaviate-mcp-cc-")
    const notADirectory = NodePath.join(parent, "file")
    NodeFs.writeFileSync(notADirectory, "x")
    expect((await version({ WEAVIATE_MCP_COMPILE_CACHE: notADirectory })).code).toBe(0)
    expect(NodeFs.readFileSync(notADirectory, "utf8")).toBe("x")
    const dir = TestHome.tempDirSync("weaviate-mcp-cc-")
    const warm = TestHome.tempDirSync("weaviate-mcp-cc-")
    await version({ WEAVIATE_MCP_COMPILE_CACHE: warm })
    const name = NodePath.basename(only(warm, "other"))
    NodeFs.mkdirSync(NodePath.join(dir, name))
    const result = await version({ WEAVIATE_MCP_COMPILE_CACHE: dir })
    expect(result.code).toBe(0)
    expect(files(dir)).toEqual([name])
    expect(NodeFs.statSync(NodePath.join(dir, name)).isDirectory()).toBe(true)
  })

  it("a bundle changed in place, even to the same length, is a new build: its code never comes from the old build's file", () => {
    // A copy of the package's runnable part, so that its bundle can be edited.
    const root = TestHome.tempDirSync("weaviate-mcp-cc-package-")
    const source = NodePath.join(NodePath.dirname(Cli.BIN), "..")
    for (const part of RUNNABLE) {
      NodeFs.mkdirSync(NodePath.dirname(NodePath.join(root, part)), { recursive: true })
      NodeFs.copyFileSync(NodePath.join(source, part), NodePath.join(root, part))
    }
    const dir = TestHome.tempDirSync("weaviate-mcp-cc-")
    const version = () =>
      NodeChild.spawnSync(process.execPath, [NodePath.join(root, "bin", "weaviate-mcp.js"), "--version"], {
        env: { ...process.env, WEAVIATE_MCP_COMPILE_CACHE: dir },
        encoding: "utf8",
        timeout: 30_000
      }).stdout.trim()
    expect(version()).toBe(VERSION)
    const first = only(dir, "other")
    expect(version()).toBe(VERSION)
    // The same bytes but the version's digits: same length, same file (inode), written in place.
    const bundle = NodePath.join(root, "dist", "weaviate-mcp.cjs")
    const text = NodeFs.readFileSync(bundle, "latin1")
    const other = VERSION.replace(/[0-9]/g, "9") === VERSION ? VERSION.replace(/[0-9]/g, "8") : VERSION.replace(/[0-9]/g, "9")
    const edited = text.replace(`VERSION="${VERSION}"`, `VERSION="${other}"`)
    expect(edited).not.toBe(text)
    const inode = NodeFs.statSync(bundle).ino
    NodeFs.writeFileSync(bundle, edited, "latin1")
    expect([NodeFs.statSync(bundle).ino, NodeFs.statSync(bundle).size]).toEqual([inode, Buffer.byteLength(text, "latin1")])
    expect(version()).toBe(other)
    // Written anew under the new build, the old build's file removed.
    expect(only(dir, "other")).not.toBe(first)
    expect(version()).toBe(other)
  })

  it("the files of other builds are removed when a new one is written", async () => {
    const dir = TestHome.tempDirSync("weaviate-mcp-cc-")
    NodeFs.writeFileSync(NodePath.join(dir, "0000000000000000-00000000-serve.bin"), "an older build", { mode: 0o600 })
    await version({ WEAVIATE_MCP_COMPILE_CACHE: dir })
    expect(files(dir).filter((name) => name.startsWith("0000000000000000"))).toEqual([])
    only(dir, "other")
  })

  it("a file a short run of the daemon's command wrote (serve --help) is marked, kept by short runs, and written again by the first daemon that runs 2 s", async () => {
    const dir = TestHome.tempDirSync("weaviate-mcp-cc-")
    const env = { WEAVIATE_MCP_COMPILE_CACHE: dir }
    expect((await Cli.run(["serve", "--help"], { env })).code).toBe(0)
    const file = only(dir, "serve")
    const mark = `${file}.short`
    expect(NodeFs.existsSync(mark)).toBe(true)
    const short = NodeFs.statSync(file)
    // Another short run takes the marked file and leaves it as it is.
    expect((await Cli.run(["serve", "--help"], { env })).code).toBe(0)
    expect([NodeFs.statSync(file).ino, NodeFs.statSync(file).mtimeMs]).toEqual([short.ino, short.mtimeMs])
    const daemon = await Cli.serve(["--home", TestHome.tempDirSync(), "--port", "0"], { env })
    try {
      // Bounded: 100 looks at the directory, 100 ms apart, well past the 2 s.
      for (let i = 0; i < 100 && NodeFs.existsSync(mark); i++) await new Promise((resolve) => setTimeout(resolve, 100))
      expect(NodeFs.existsSync(mark)).toBe(false)
      // The daemon's start and its first seconds hold far more code than `serve --help` compiled.
      expect(NodeFs.statSync(only(dir, "serve")).size).toBeGreaterThan(short.size * 1.1)
      expect(daemon.child.exitCode).toBeNull()
    } finally {
      daemon.child.kill("SIGTERM")
      await daemon.exited
    }
  })

  it("the daemon keeps its code while it runs (2 s in), without waiting for its exit", async () => {
    const dir = TestHome.tempDirSync("weaviate-mcp-cc-")
    const home = TestHome.tempDirSync()
    const daemon = await Cli.serve(["--home", home, "--port", "0"], { env: { WEAVIATE_MCP_COMPILE_CACHE: dir } })
    try {
      // Bounded: 100 looks at the directory, 100 ms apart, well past the 2 s. Until the cache file itself
      // is there: the file it is written to first, then renamed, is not it (seen once, on a loaded machine).
      const written = () => files(dir).some((name) => name.endsWith("-serve.bin"))
      for (let i = 0; i < 100 && !written(); i++) await new Promise((resolve) => setTimeout(resolve, 100))
      only(dir, "serve")
      expect(daemon.child.exitCode).toBeNull()
    } finally {
      daemon.child.kill("SIGTERM")
      await daemon.exited
    }
  })
})
