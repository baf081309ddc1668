/**
 * The package as a user gets it: `npm pack` on a copy of the repository's files (no dist/, so
 * `prepare`/`prepack` build it), installed into a fresh project. There the embedding example of
 * docs/design.md runs with plain `node`, the CLI runs without tsx, and every TypeScript and
 * JavaScript block of README.md and docs/*.md (each its own module; JavaScript checked with
 * `checkJs`), with a file using the main exports, typechecks against the installed `.d.ts` with
 * `strict` and `skipLibCheck: false`. A block marked ```ts fragment is left out, and says why.
 * Slow (a build, an install, a typecheck): one file, each step bounded. The rest of the docs:
 * test/Package/Docs.test.ts.
 */
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { beforeAll, describe, expect, it } from "vitest"
import { pages } from "../support/Markdown.ts"
import { tempDirSync } from "../support/TestHome.ts"

const root = fileURLToPath(new URL("../..", import.meta.url))
// The README and the reference pages in docs/: an example lives in one of them.
const readme = ["README.md", ...NodeFs.readdirSync(NodePath.join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)]
  .map((file) => NodeFs.readFileSync(NodePath.join(root, file), "utf8"))
  .join("\n")
const pkg = JSON.parse(NodeFs.readFileSync(NodePath.join(root, "package.json"), "utf8"))

/** The output of a command run to completion (or outliving `timeoutMs`), without blocking the worker. */
const spawn = (command: string, args: ReadonlyArray<string>, cwd: string, timeoutMs: number, env: NodeJS.ProcessEnv = {}) =>
  new Promise<{ readonly status: number | null; readonly signal: NodeJS.Signals | null; readonly stdout: string; readonly stderr: string }>((resolve, reject) => {
    // Asynchronous: a spawnSync of several minutes starves vitest's worker RPC ("Timeout calling onTaskUpdate").
    const child = NodeChild.spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.once("error", (error) => (clearTimeout(timer), reject(error)))
    child.once("close", (status, signal) => (clearTimeout(timer), resolve({ status, signal, stdout, stderr })))
  })

/** Runs a command to completion; throws with its output when it fails or outlives `timeoutMs`. */
const run = async (command: string, args: ReadonlyArray<string>, cwd: string, timeoutMs: number, env: NodeJS.ProcessEnv = {}) => {
  const result = await spawn(command, args, cwd, timeoutMs, env)
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed (${result.status ?? result.signal}):\n${result.stdout}\n${result.stderr}`)
  }
  return result.stdout
}

/** The first `language` block after `after` in README.md or docs/. */
const readmeBlock = (language: string, after: string) => {
  const from = readme.indexOf(after)
  const match = new RegExp("```" + language + "\\n([\\s\\S]*?)```").exec(readme.slice(from))
  if (from < 0 || match === null) throw new Error(`no ${language} block after ${after} in README.md or docs/`)
  return match[1]!
}

let project = ""
let tarball = ""

beforeAll(async () => {
  // A copy of the files git would check out (committed or not), with the repository's node_modules.
  const copy = tempDirSync("weaviate-mcp-pack-src-")
  const files = (await run("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], root, 30_000)).split("\0").filter((f) => f !== "")
  for (const file of files) {
    if (!NodeFs.existsSync(NodePath.join(root, file))) continue
    NodeFs.mkdirSync(NodePath.dirname(NodePath.join(copy, file)), { recursive: true })
    NodeFs.copyFileSync(NodePath.join(root, file), NodePath.join(copy, file))
  }
  NodeFs.symlinkSync(NodePath.join(root, "node_modules"), NodePath.join(copy, "node_modules"), "dir")
  const out = tempDirSync("weaviate-mcp-pack-")
  await run("npm", ["pack", "--pack-destination", out, "--loglevel", "error"], copy, 240_000)
  tarball = NodePath.join(out, `${pkg.name}-${pkg.version}.tgz`)
  project = tempDirSync("weaviate-mcp-host-")
  NodeFs.writeFileSync(NodePath.join(project, "package.json"), JSON.stringify({ name: "host", private: true, type: "module" }))
  // The registry is reachable, but the cache that installed the repository has every package.
  await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel", "error", tarball, `@types/node@${pkg.devDependencies["@types/node"]}`], project, 240_000)
}, 600_000)

describe("the packed package", () => {
  it("ships dist/ with its declarations, no source map over 1 MB, and runtime dependencies only", async () => {
    const listing = (await run("tar", ["tzvf", tarball], project, 30_000)).trim().split("\n")
    const files = new Map(listing.map((line) => {
      const parts = line.trim().split(/\s+/)
      return [parts[parts.length - 1]!.replace(/^package\//, ""), Number(parts[2])] as const
    }))
    expect(files.has("dist/index.js")).toBe(true)
    expect(files.has("dist/index.d.ts")).toBe(true)
    expect(files.has("dist/weaviate-mcp.cjs")).toBe(true)
    expect(files.has("dist/bridge.cjs")).toBe(true)
    for (const [file, size] of files) if (file.endsWith(".map")) expect(size, file).toBeLessThanOrEqual(1024 * 1024)
    expect(Object.keys(pkg.dependencies)).not.toContain("esbuild")
    expect(Object.keys(pkg.dependencies)).not.toContain("tsx")
    expect(NodeFs.existsSync(NodePath.join(project, "node_modules/tsx"))).toBe(false)
    expect(NodeFs.existsSync(NodePath.join(project, "node_modules/esbuild"))).toBe(false)
  })

  it("internals are not importable: only the package and its public modules are exported", () => {
    const probe = (specifier: string) =>
      NodeChild.spawnSync(process.execPath, ["--input-type=module", "-e", `await import(${JSON.stringify(specifier)})`], { cwd: project, encoding: "utf8", timeout: 60_000 })
    expect(probe("weaviate-mcp/Driver").status).toBe(0)
    expect(probe("weaviate-mcp/McpHttpApp").status).toBe(0)
    const internal = probe("weaviate-mcp/dist/Mcp/Dispatcher.js")
    expect(internal.status).not.toBe(0)
    expect(internal.stderr).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED")
  }, 120_000)

  it("npm start runs the daemon with its young generation capped (--max-semi-space-size=4), as the bridge's --start does", async () => {
    const BridgeMain = await import("../../src/Bridge/BridgeMain.ts")
    expect(pkg.scripts.start).toMatch(new RegExp(`exec node ${BridgeMain.DAEMON_HEAP_FLAG} bin/weaviate-mcp\\.js serve$`))
  })

  it("the CLI runs from the bundle with plain node (no tsx)", async () => {
    const version = await run(process.execPath, [NodePath.join(project, "node_modules/.bin/weaviate-mcp"), "--version"], project, 60_000)
    expect(version).toContain(pkg.version)
  }, 120_000)

  it("the embedding example of docs/design.md runs with plain node: it serves, and SIGINT ends it with 0", async () => {
    NodeFs.writeFileSync(NodePath.join(project, "main.mjs"), readmeBlock("js", "## Embedding"))
    const home = tempDirSync("weaviate-mcp-host-home-")
    const child = NodeChild.spawn(process.execPath, ["main.mjs"], { cwd: project, env: { ...process.env, MY_APP_HOME: home }, stdio: "pipe" })
    let output = ""
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    try {
      const endpoint = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "MCP at" line within 60 s:\n${output}`)), 60_000)
        const onData = (data: Buffer) => {
          output += data
          const match = /MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(output)
          if (match) (clearTimeout(timer), resolve(match[1]!))
        }
        child.stdout.on("data", onData)
        child.stderr.on("data", onData)
        void exited.then(() => (clearTimeout(timer), reject(new Error(`exited early:\n${output}`))))
      })
      // Authentication is on in the example: the endpoint refuses an anonymous initialize (-33009).
      const response = await fetch(endpoint, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } } })
      })
      expect(response.status).toBe(401)
      expect(((await response.json()) as { error: { code: unknown } }).error.code).toBe(-33009)
      expect(NodeFs.existsSync(NodePath.join(home, "mcp-handshake.json"))).toBe(true)
      child.kill("SIGINT")
      expect(await exited).toBe(0)
      expect(NodeFs.existsSync(NodePath.join(home, "mcp-handshake.json"))).toBe(false)
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL")
    }
  }, 120_000)

  it("every TypeScript and JavaScript block of the docs, and a file using the main exports, typechecks strictly with skipLibCheck: false, 0 errors", async () => {
    const examples = pages().flatMap((page) =>
      page.blocks
        .filter((b) => /^(ts|typescript|js|javascript|mjs)$/.test(b.language) && !b.info.split(/\s+/).includes("fragment"))
        .map((b) => ({ ...b, name: `${page.file.replace(/[/.]/g, "_")}_${b.line}.${b.language.startsWith("t") ? "ts" : "mjs"}` }))
    )
    // the design page's three, the export page's one at least: a block that stops being found must fail here
    expect(examples.length).toBeGreaterThanOrEqual(4)
    for (const example of examples) NodeFs.writeFileSync(NodePath.join(project, example.name), example.text)
    NodeFs.writeFileSync(NodePath.join(project, "consumer.ts"), `
import { Effect, Layer, Option } from "effect"
import { ConnectionStore, Daemon, Driver, Home, Lifecycle, McpHttpApp, Settings } from "weaviate-mcp"
import * as DriverModule from "weaviate-mcp/Driver"

export const firstPage = Effect.gen(function* () {
  const driver = yield* DriverModule.Driver
  return yield* driver.browse("local", "Article", { limit: 10 })
}).pipe(Effect.provide(Driver.Driver.layer.pipe(
  Layer.provideMerge(ConnectionStore.ConnectionStore.layer),
  Layer.provide(Home.Home.layer(Option.none()))
)))
export const daemon = (settings: Settings.ServeSettings) => Daemon.layer({ settings, port: 0 })
export const route = McpHttpApp.handler
export const lifecycle = Lifecycle.layer
`)
    NodeFs.writeFileSync(NodePath.join(project, "tsconfig.json"), JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        exactOptionalPropertyTypes: true,
        skipLibCheck: false,
        noEmit: true,
        types: ["node"],
        allowJs: true,
        checkJs: true
      },
      include: ["consumer.ts", ...examples.map((e) => e.name)]
    }))
    const tsc = NodePath.join(root, "node_modules/typescript/bin/tsc")
    const result = await spawn(process.execPath, [tsc, "-p", project], project, 240_000)
    expect(result.stdout + result.stderr).toBe("")
    expect(result.status).toBe(0)
  }, 300_000)
})
