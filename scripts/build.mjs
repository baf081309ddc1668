// Bundles the command line, dependencies included, into dist/weaviate-mcp.cjs (and the stdio bridge's
// own entry into dist/bridge.cjs). Starting it takes a
// fraction of the time of transpiling the sources on every start, and bundling the dependencies lets
// esbuild drop the parts of `effect` nobody uses (@effect/platform imports the whole barrel):
// `--version` went from ~0.9 s (dependencies external) to ~0.3 s.
import { build } from "esbuild"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { gzipSync } from "node:zlib"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const outfile = fileURLToPath(new URL("../dist/weaviate-mcp.cjs", import.meta.url))
const bridgeFile = fileURLToPath(new URL("../dist/bridge.cjs", import.meta.url))

/** Writes a file of a build through a rename, so a process starting meanwhile reads a whole one. */
const replace = (file) => {
  mkdirSync(dirname(file.path), { recursive: true })
  const temporary = `${file.path}.${process.pid}.tmp`
  writeFileSync(temporary, file.contents)
  renameSync(temporary, file.path)
}

/**
 * The stdio bridge's own entry, dist/bridge.cjs, that bin/weaviate-mcp.js requires before the CLI: a
 * build of its own (no chunk shared with the CLI), so starting the bridge parses ~20 KB instead of
 * the 2 MB CLI. It must not pull Effect in (test/Bridge/BridgeEntry.test.ts; docs/bridge.md).
 * CommonJS, as the bin is: an ES module would start Node's ES module loader for it.
 */
const buildBridge = () =>
  build({
    absWorkingDir: root,
    entryPoints: ["src/bridge.ts"],
    outfile: bridgeFile,
    write: false,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    sourcemap: false,
    minifyWhitespace: process.env.WEAVIATE_MCP_BUILD_READABLE !== "1",
    minifySyntax: process.env.WEAVIATE_MCP_BUILD_READABLE !== "1",
    charset: "ascii",
    legalComments: "external",
    logLevel: "warning"
  })

/** The web console's page (docs/console.md) must stay under this, gzipped, all files together. */
export const CONSOLE_BUDGET_BYTES = 150 * 1024
const consoleDir = fileURLToPath(new URL("../dist/console", import.meta.url))

/**
 * The web console's page: console/main.ts (Preact + htm, uPlot) bundled into dist/console/console.js
 * and console.css, beside a copy of console/index.html. The daemon serves these files and nothing
 * else: no CDN, nothing downloaded at run time. Prints each file's size, gzipped, and the total,
 * which must stay under `CONSOLE_BUDGET_BYTES` (test/Daemon/ConsoleBundle.test.ts checks it too).
 */
export const buildConsole = async ({ quiet = false } = {}) => {
  const result = await build({
    absWorkingDir: root,
    entryPoints: { console: "console/main.ts" },
    outdir: consoleDir,
    write: false,
    bundle: true,
    platform: "browser",
    format: "esm",
    target: ["chrome110", "firefox110", "safari16"],
    minify: true,
    sourcemap: false,
    charset: "utf8",
    legalComments: "none",
    logLevel: "warning"
  })
  const files = [...result.outputFiles.map((f) => ({ path: f.path, contents: f.contents })), {
    path: join(consoleDir, "index.html"),
    contents: readFileSync(join(root, "console", "index.html"))
  }]
  for (const file of files) replace(file)
  const sizes = files.map((f) => ({ name: f.path.slice(consoleDir.length + 1), bytes: f.contents.byteLength, gzipped: gzipSync(f.contents, { level: 9 }).byteLength }))
  const total = sizes.reduce((sum, s) => sum + s.gzipped, 0)
  if (!quiet) {
    const kb = (n) => `${(n / 1024).toFixed(1)} KB`
    console.log(`console: ${sizes.map((s) => `${s.name} ${kb(s.bytes)} (${kb(s.gzipped)} gzipped)`).join(", ")}; total ${kb(total)} gzipped of ${kb(CONSOLE_BUDGET_BYTES)}`)
  }
  if (total > CONSOLE_BUDGET_BYTES) throw new Error(`the console is ${total} bytes gzipped, over its budget of ${CONSOLE_BUDGET_BYTES}`)
  return { sizes, total }
}

/**
 * Builds in memory and replaces the bundle with a rename: a CLI started while another build runs
 * (a test's `npm start` beside the CLI tests) reads the old bundle or the new one, never half of one.
 */
export const buildCli = async () => {
  const [bridge, , result] = await Promise.all([buildBridge(), buildConsole(), build({
    absWorkingDir: root,
    entryPoints: ["src/bin.ts"],
    outfile,
    write: false,
    bundle: true,
    platform: "node",
    // A package's ES module build (`module`) before its CommonJS one (`main`), which esbuild prefers
    // for node by default: ES modules are tree-shaken, CommonJS is taken whole. graphql went from
    // 410 KB of the bundle to 59 (the driver uses its parser and printer); jsonc-parser's `main` is a
    // UMD wrapper whose inner `require`s esbuild cannot follow at all. Idle RSS 101 -> 95 MB.
    mainFields: ["module", "main"],
    // CommonJS, because bin/weaviate-mcp.js runs it through vm.Script with V8's code cache (Node 20
    // has no compile cache for ES modules). Code loaded on demand (the OpenTelemetry exporter, started
    // only with --otlp) stays in the file but is compiled only when called.
    format: "cjs",
    target: "node20",
    // No `import()` in the bundle: esbuild turns each into a `require` (of a Node module, or of code
    // in the bundle). On Node 20 a function V8 took from the code cache has lost the script's dynamic
    // import callback, so an `import()` failed with ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING on every run
    // after the first: the OTLP exporter's first export (its HTTP transport), and the bridge starting
    // the daemon.
    supported: { "dynamic-import": false },
    // A native module (the query history's SQLite) cannot be bundled: it stays a \`require\` of the
    // installed package, resolved from dist/ (the bin runs the bundle with a require rooted there), and
    // it is required only when a history opens (src/History/HistoryStore.ts), never on a start without one.
    // The OS keychain's binding (@napi-rs/keyring) likewise, loaded when a secret is first stored or read.
    external: ["better-sqlite3", "@napi-rs/keyring"],
    // Where the module is, for the console's page (src/Daemon/Console.ts finds dist/console from it).
    define: { "import.meta.dirname": "__dirname" },
    // The sources are ES modules, which are strict; a CommonJS file is strict only when it says so.
    banner: { js: '"use strict";' },
    // No source map: one for a bundle of every dependency weighs 12 MB (2 MB without sources), and
    // the library's own modules in dist/ carry small maps of their own.
    sourcemap: false,
    // Whitespace and comments out, identifiers kept (stack traces and profiles stay readable): the
    // bundle is 3.5 MB instead of 4.9, and V8 keeps its source as a one-byte string (a comment with one
    // non-ASCII character made the whole source two-byte: 9.8 MB of heap). Idle RSS 112 → 105 MB.
    // WEAVIATE_MCP_BUILD_READABLE=1 (npm run bench:profile) keeps lines as they are, so a CPU profile's
    // line numbers point somewhere a person can read.
    minifyWhitespace: process.env.WEAVIATE_MCP_BUILD_READABLE !== "1",
    minifySyntax: process.env.WEAVIATE_MCP_BUILD_READABLE !== "1",
    charset: "ascii",
    // Licence comments go to dist/weaviate-mcp.cjs.LEGAL.txt (kept in the package, out of the source V8 holds).
    legalComments: "external",
    logLevel: "warning"
  })])
  for (const file of [...bridge.outputFiles, ...result.outputFiles]) replace(file)
  // What earlier builds wrote and this one does not: the ES module bundle and its chunks.
  for (const old of ["../dist/weaviate-mcp.mjs", "../dist/weaviate-mcp.mjs.LEGAL.txt", "../dist/cli-chunks"]) {
    rmSync(new URL(old, import.meta.url), { recursive: true, force: true })
  }
  return result
}

// `--clean` empties dist/ first, so a module removed from src/ cannot linger in the package.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes("--clean")) rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true })
  else await buildCli()
}
