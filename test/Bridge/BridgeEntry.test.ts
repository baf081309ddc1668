/**
 * The bridge's own entry (issue 33): `bin/weaviate-mcp.js bridge …` runs `dist/bridge.cjs`, built
 * apart from the CLI and without Effect, for a plain invocation, and leaves every other command line
 * (`--help`, a spelling it does not know) to the full CLI, which behaves as before.
 */
import { build } from "esbuild"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { pathToFileURL } from "node:url"
import { describe, expect, it } from "vitest"
import * as BridgeMain from "../../src/Bridge/BridgeMain.ts"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"

const ROOT = NodePath.resolve(import.meta.dirname, "../..")
const BRIDGE = NodePath.join(ROOT, "dist/bridge.cjs")
const CLI_BUNDLE = NodePath.join(ROOT, "dist/weaviate-mcp.cjs")
const PROBE = pathToFileURL(NodePath.resolve(import.meta.dirname, "../support/loaded-files.mjs")).href

/** Runs the binary with the module probe; the files it loaded, as paths. */
const runProbed = async (args: ReadonlyArray<string>, input = "") => {
  const dir = TestHome.tempDirSync("weaviate-mcp-loaded-")
  const log = NodePath.join(dir, "loaded.txt")
  const builtinsLog = NodePath.join(dir, "builtins.txt")
  NodeFs.writeFileSync(log, "")
  const result = await Cli.run(args, { input, env: { NODE_OPTIONS: `--import=${PROBE}`, LOADED_FILES_LOG: log, LOADED_BUILTINS_LOG: builtinsLog } })
  const loaded = NodeFs.readFileSync(log, "utf8").split("\n").filter((line) => line.length > 0).map((url) => new URL(url).pathname)
  /** Node's own modules the process loaded (`process.moduleLoadList`, e.g. `NativeModule internal/crypto/random`). */
  const builtins = NodeFs.existsSync(builtinsLog) ? NodeFs.readFileSync(builtinsLog, "utf8").split("\n") : []
  return { ...result, loaded, builtins }
}

const fromCli = (loaded: ReadonlyArray<string>) => loaded.filter((path) => path === CLI_BUNDLE)

describe("the bridge's own entry", () => {
  it("dist/bridge.cjs is built without Effect and without any module of the CLI: its inputs are the bridge's modules, their Effect-free helpers and env-paths", async () => {
    const result = await build({
      absWorkingDir: ROOT,
      entryPoints: ["src/bridge.ts"],
      bundle: true,
      platform: "node",
      format: "cjs",
      target: "node20",
      write: false,
      metafile: true,
      logLevel: "silent"
    })
    const inputs = Object.keys(result.metafile.inputs).sort()
    // env-paths (the platform's data directory) and its one dependency.
    expect(inputs.filter((path) => path.includes("node_modules"))).toEqual(["node_modules/env-paths/index.js", "node_modules/is-safe-filename/index.js"])
    expect(inputs.filter((path) => !path.includes("node_modules"))).toEqual([
      "src/Base/HomeDir.ts",
      "src/Base/Redaction.ts",
      "src/Bridge/Bridge.ts",
      "src/Bridge/BridgeMain.ts",
      "src/Bridge/DaemonLink.ts",
      "src/Daemon/HandshakeWire.ts",
      "src/bridge.ts"
    ])
  })

  it("dist/bridge.cjs loads nothing but Node's own modules (no chunk of the CLI bundle), and has no static import", () => {
    const source = NodeFs.readFileSync(BRIDGE, "utf8")
    // CommonJS: an ES module would start Node's ES module loader at every bridge start.
    expect(source).not.toMatch(/^\s*import\b|\bfrom\s*["'][^"']+["']\s*;/m)
    // `require` at start; `import()` only where the bridge starts the daemon (child_process).
    const specifiers = [...source.matchAll(/\brequire\s*\(\s*["']([^"']+)["']\s*\)|\bimport\s*\(\s*["']([^"']+)["']\s*\)/g)]
      .map((match) => match[1] ?? match[2])
    expect(specifiers.length).toBeGreaterThan(0)
    expect(specifiers.filter((specifier) => !specifier!.startsWith("node:"))).toEqual([])
  })

  it("the bin and the bridge's entry are CommonJS, so a bridge start never starts Node's ES module loader", () => {
    expect(JSON.parse(NodeFs.readFileSync(NodePath.join(ROOT, "bin/package.json"), "utf8")).type).toBe("commonjs")
    const code = NodeFs.readFileSync(NodePath.join(ROOT, "bin/weaviate-mcp.js"), "utf8").split("\n").filter((line) => !line.trimStart().startsWith("//")).join("\n")
    expect(code).not.toMatch(/^\s*import\b|\bimport\.meta\b|\bimport\s*\(/m)
    expect(code).toContain("require(bridge)")
  })

  it("a plain `bridge --home H` loads dist/bridge.cjs and never the CLI bundle nor Node's crypto (daemon running: initialize answered)", async () => {
    const home = TestHome.tempDirSync("weaviate-mcp-bridge-entry-")
    const daemon = await Cli.serve(["--home", home, "--port", "0"])
    try {
      const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } }
      const r = await runProbed(["bridge", "--home", home], JSON.stringify(initialize) + "\n")
      expect(r.code).toBe(0)
      expect(JSON.parse(r.stdout.split("\n")[0]!).result.protocolVersion).toBe("2025-11-25")
      expect(r.loaded).toContain(BRIDGE)
      expect(fromCli(r.loaded)).toEqual([])
      // Node's crypto took about 3 ms of a bridge start (its session id was a random UUID).
      expect(r.builtins.length).toBeGreaterThan(0)
      expect(r.builtins.filter((name) => name.includes("crypto"))).toEqual([])
    } finally {
      daemon.child.kill("SIGTERM")
      await daemon.exited
    }
  })

  it("without a running daemon, the entry prints the CLI's line and exits 1, like `bridge --start=false` through the CLI", async () => {
    const home = TestHome.tempDirSync()
    const entry = await runProbed(["bridge", `--home=${home}`])
    const cli = await runProbed(["bridge", "--home", home, "--start=false"])
    expect(fromCli(entry.loaded)).toEqual([])
    expect(cli.loaded).toContain(CLI_BUNDLE)
    expect(entry.code).toBe(1)
    expect(cli.code).toBe(1)
    expect(entry.stdout).toBe("")
    expect(entry.stderr).toBe(cli.stderr)
    expect(entry.stderr).toContain(`Start it with: weaviate-mcp serve --home "${home}"`)
  })

  it("`bridge --help` and a flag the entry does not know go to the full CLI: its help, its usage error (exit 2)", async () => {
    const help = await runProbed(["bridge", "--help"])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain("--start")
    expect(help.stdout).toContain("--home")
    expect(help.loaded).toContain(CLI_BUNDLE)
    const unknown = await Cli.run(["bridge", "--frobnicate"])
    expect(unknown.code).toBe(2)
    expect(unknown.stdout).toBe("")
  })
})

describe("BridgeMain.parseArgs", () => {
  const argv = (...args: Array<string>) => ["node", "weaviate-mcp.js", "bridge", ...args]

  it("the entry handles --home DIR, --home=DIR and --start, each at most once, in any order", () => {
    expect(BridgeMain.parseArgs(argv())).toEqual({ home: undefined, start: false })
    expect(BridgeMain.parseArgs(argv("--home", "/h"))).toEqual({ home: "/h", start: false })
    expect(BridgeMain.parseArgs(argv("--start", "--home=/h"))).toEqual({ home: "/h", start: true })
    expect(BridgeMain.parseArgs(argv("--home", "/h", "--start"))).toEqual({ home: "/h", start: true })
  })

  it("every other command line is left to the full CLI", () => {
    for (const args of [
      ["--help"], ["-h"], ["--version"], ["--start=false"], ["--start", "--start"], ["--home", "/a", "--home", "/b"], ["--home"],
      ["--home", "--start"], ["--home="], ["--json"], ["extra"], ["--log-level", "debug"]
    ]) {
      expect(BridgeMain.parseArgs(argv(...args)), args.join(" ")).toBeUndefined()
    }
    expect(BridgeMain.parseArgs(["node", "weaviate-mcp.js", "serve"])).toBeUndefined()
    expect(BridgeMain.parseArgs(["node", "weaviate-mcp.js"])).toBeUndefined()
  })
})
