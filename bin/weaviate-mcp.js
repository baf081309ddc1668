#!/usr/bin/env node
// Runs the bundle that `npm run build` writes (also run by `prepare`, `prepack` and `npm start`).
// `weaviate-mcp bridge` first tries the bridge's own small entry (dist/bridge.cjs): MCP clients start
// the bridge at every session, and the CLI bundle would add ~200 ms to each start. The entry handles a
// plain bridge invocation and leaves anything else (`bridge --help`, …) to the CLI.
//
// The CLI bundle (dist/weaviate-mcp.cjs) runs through V8's code cache: the first run of a command
// keeps the code V8 compiled for it in the user's cache directory, and later runs of that command
// load it instead of parsing and compiling 2 MB of JavaScript again. The daemon's start went from
// 594 to 411 ms and its idle RSS from 91 to 88 MB (docs/benchmarks.md, "Start and idle memory").
// Node 22's module.enableCompileCache() does the same for modules; Node 20 has only vm.Script's
// cachedData, hence a CommonJS bundle. docs/configuration.md, "The compile cache", says where the cache
// lives and how to turn it off (WEAVIATE_MCP_COMPILE_CACHE).
//
// This file is CommonJS (bin/package.json says so; the package is ESM): an ES module entry starts
// Node's ES module loader, and the bridge's start took about 5 ms longer with one. Only what the
// bridge's path needs is loaded up front; the CLI's own Node modules (child_process, crypto, os, v8,
// vm) are required where they are used, since Node compiles each at its first require (about 2 ms of
// every bridge start; its commit message says how it was measured).
const NodeFs = require("node:fs")
const NodeModule = require("node:module")
const NodePath = require("node:path")

const bridge = NodePath.join(__dirname, "..", "dist", "bridge.cjs")
const bundle = NodePath.join(__dirname, "..", "dist", "weaviate-mcp.cjs")

/**
 * The directory of cached code: WEAVIATE_MCP_COMPILE_CACHE (`off` for none), else the platform's
 * cache directory + weaviate-mcp/compile-cache (the table in docs/configuration.md).
 */
const cacheDirectory = () => {
  const given = process.env.WEAVIATE_MCP_COMPILE_CACHE
  if (given === "off" || given === "0") return undefined
  if (given !== undefined && given !== "") return NodePath.resolve(given)
  const home = require("node:os").homedir()
  const base = process.platform === "win32"
    ? NodePath.join(process.env.LOCALAPPDATA ?? NodePath.join(home, "AppData", "Local"), "weaviate-mcp", "Cache")
    : process.platform === "darwin"
    ? NodePath.join(home, "Library", "Caches", "weaviate-mcp")
    : NodePath.join(process.env.XDG_CACHE_HOME || NodePath.join(home, ".cache"), "weaviate-mcp")
  return NodePath.join(base, "compile-cache")
}

/**
 * Cached code is run as it is, so it is taken only from a directory that is this user's own and that
 * nobody else can write: created 0700, and refused when it is a symbolic link, belongs to someone else
 * or is writable by group or others. `undefined`: no cache.
 */
const privateDirectory = (directory) => {
  try {
    NodeFs.mkdirSync(directory, { recursive: true, mode: 0o700 })
    const stat = NodeFs.lstatSync(directory)
    if (!stat.isDirectory()) return undefined
    if (process.platform !== "win32" && (stat.uid !== process.getuid() || (stat.mode & 0o022) !== 0)) return undefined
    return directory
  } catch {
    return undefined
  }
}

/** The CLI's commands (test/Package/CompileCache.test.ts holds this list to `weaviate-mcp --help`). */
const COMMANDS = new Set([
  "serve", "tokens", "connections", "browse", "tenants", "graphql", "rest", "activity", "clients", "status", "pause", "resume",
  "bridge", "setup", "doctor", "export", "import", "history", "collections", "aggregate", "console"
])

/**
 * One cache file per build of the bundle, Node binary, V8 flags and command: V8 checks its version,
 * its flags and the source's length itself, the name adds the build (`readBundle`), and the command
 * keeps `serve`'s code apart from `tokens list`'s (V8 caches what a run compiled, and never adds to a
 * file).
 */
const cacheFile = (directory, identity) => {
  const { createHash } = require("node:crypto")
  const command = COMMANDS.has(process.argv[2]) ? process.argv[2] : "other"
  const build = createHash("sha256").update(identity).digest("hex").slice(0, 16)
  const node = createHash("sha256").update(`${process.version} ${process.arch} ${process.execArgv.join(" ")}`).digest("hex").slice(0, 8)
  return { build, command, path: NodePath.join(directory, `${build}-${node}-${command}.bin`) }
}

const readCached = (path) => {
  try {
    return NodeFs.readFileSync(path)
  } catch {
    return undefined
  }
}

/** Writes the code compiled so far through a rename (0600), and removes the files of other builds. */
const writeCached = (directory, file, script, data = undefined) => {
  const temporary = `${file.path}.${process.pid}.tmp`
  try {
    NodeFs.writeFileSync(temporary, data ?? script.createCachedData(), { mode: 0o600 })
    NodeFs.renameSync(temporary, file.path)
    for (const name of NodeFs.readdirSync(directory)) {
      if (!name.startsWith(file.build)) NodeFs.rmSync(NodePath.join(directory, name), { force: true })
    }
    return true
  } catch {
    // A cache that cannot be written (a full disk) is only a slower next start; no half file stays.
    try {
      NodeFs.rmSync(temporary, { force: true })
    } catch {
      // Nothing more to do.
    }
    return false
  }
}

/**
 * The mark beside the daemon's file when a run shorter than 2 s wrote it at its exit (`<file>.short`,
 * empty). The first run of `serve` after a build writes the file, and that run may have been short
 * (`serve --help`, a start refused because the daemon already runs): the daemon then compiled most
 * of its start at every start, for as long as that build lasted (a 1.6 MB file against 1.95 MB, about
 * 7% of the start; its commit message). The first run that lasts 2 s writes
 * the file again and takes the mark away. Only `serve`: the other commands' starts are not waited on.
 */
const SHORT = ".short"
const MARKED = new Set(["serve"])

/** When the cached code was missing or refused: written once the command has run a while, or at exit. */
const keepCompiled = (directory, file, script) => {
  let written = false
  const write = (short) => {
    if (written) return
    written = true
    if (!writeCached(directory, file, script) || !MARKED.has(file.command)) return
    try {
      if (short) NodeFs.writeFileSync(`${file.path}${SHORT}`, "", { mode: 0o600 })
      else NodeFs.rmSync(`${file.path}${SHORT}`, { force: true })
    } catch {
      // Without the mark the file is only kept as it is.
    }
  }
  setTimeout(() => write(false), 2000).unref()
  process.once("exit", () => write(true))
}

/** When the cached code came from a short run: written again once this run has lasted 2 s. */
const keepWhenLong = (directory, file, script) => {
  setTimeout(() => {
    if (!writeCached(directory, file, script)) return
    try {
      NodeFs.rmSync(`${file.path}${SHORT}`, { force: true })
    } catch {
      // The next long run writes it once more.
    }
  }, 2000).unref()
}

/**
 * V8 refuses cached code written under other flags, and it takes the flags of the moment the code is
 * written. `export` and `import` set `--heap-growing-percent=50` for themselves (src/Cli/BulkHeap.ts)
 * once they run, so their code would be written under that flag and refused by every next run, then
 * written again at its exit: the flag is set here first, before the bundle is compiled, and the
 * command sets it again to the same value. (Given on node's command line, it is left alone.)
 */
const BULK_HEAP_GROWING_PERCENT = 50
const boundBulkHeap = () => {
  const given = process.execArgv.some((arg) => arg.startsWith("--heap-growing-percent") || arg.startsWith("--heap_growing_percent"))
  if ((process.argv[2] === "export" || process.argv[2] === "import") && !given) {
    require("node:v8").setFlagsFromString(`--heap-growing-percent=${BULK_HEAP_GROWING_PERCENT}`)
  }
}

/**
 * `export` runs in a child Node whose young generation is capped (`--max-semi-space-size=4`, in MB),
 * a flag V8 takes only when a process starts. Uncapped, the export's RSS swung by about 45 MB from
 * page to page, so the longer the export the higher its peak: 100,000 rows peaked 14–27 MB above
 * 10,000; capped, 5–7 MB, for the same time (docs/export-import.md, "Memory"). Not on Windows (a
 * detached child gets a console of its own), nor when the flag is given already (on node's command
 * line, in NODE_OPTIONS, or by this parent).
 *
 * The child leads a process group of its own, so a terminal's Ctrl-C reaches this parent only, which
 * passes it on once (a second SIGINT would end the child before it keeps the rows it wrote). Every
 * signal that ends a command is passed on, and Ctrl-Z (SIGTSTP) stops the child with the parent
 * (SIGCONT continues both); when the parent goes (even by SIGKILL) the IPC channel closes and the
 * child stops as on SIGTERM, keeping its rows. The parent exits as the child did.
 */
const BULK_SEMI_SPACE_MB = 4
const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP"]
/** Whether node was started with a young-generation cap (on its command line or in NODE_OPTIONS). */
const givenSemiSpace = () =>
  [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)]
    .some((arg) => arg.startsWith("--max-semi-space-size") || arg.startsWith("--max_semi_space_size"))
const capsYoungGeneration = () => process.argv[2] === "export" && process.platform !== "win32" && !givenSemiSpace()
const runCapped = () => {
  const child = require("node:child_process").spawn(
    process.execPath,
    [...process.execArgv, `--max-semi-space-size=${BULK_SEMI_SPACE_MB}`, __filename, ...process.argv.slice(2)],
    { stdio: ["inherit", "inherit", "inherit", "ipc"], detached: true }
  )
  const forward = (signal) => child.kill(signal)
  for (const signal of FORWARDED) process.on(signal, forward)
  // Ctrl-Z: the export stops with its command, and goes on when the shell continues the command.
  const suspend = () => {
    child.kill("SIGSTOP")
    process.kill(process.pid, "SIGSTOP")
  }
  const resume = () => child.kill("SIGCONT")
  process.on("SIGTSTP", suspend)
  process.on("SIGCONT", resume)
  child.once("error", (error) => {
    process.stderr.write(`weaviate-mcp: cannot start the export: ${error.message}\n`)
    process.exit(1)
  })
  child.once("exit", (code, signal) => {
    for (const s of FORWARDED) process.removeListener(s, forward)
    process.removeListener("SIGTSTP", suspend)
    process.removeListener("SIGCONT", resume)
    if (signal !== null) process.kill(process.pid, signal)
    else process.exit(code ?? 1)
  })
}

/** In the capped child: the parent gone (its IPC channel closed) ends the export as SIGTERM does. */
const followParent = () => {
  if (process.argv[2] !== "export" || process.channel === undefined) return
  process.channel.unref()
  process.once("disconnect", () => process.kill(process.pid, "SIGTERM"))
}

/**
 * The bundle's source, and which build it is: its device, inode, size and times, read through the
 * descriptor the source is read from. Writing the file (a rebuild, an install, an edit) changes its
 * ctime, which no copy or tool can set back, so a changed bundle is a new build; read while it was
 * being written (its size or times moved during the read), it is no build at all, and runs without
 * the cache. Reading and hashing the 2 MB source took 4.9–5.6 ms of every start, against 1.4–2.6 ms
 * for reading it this way (its commit message).
 */
const readBundle = () => {
  const fd = NodeFs.openSync(bundle, "r")
  try {
    const before = NodeFs.fstatSync(fd, { bigint: true })
    const source = NodeFs.readFileSync(fd, "latin1")
    const after = NodeFs.fstatSync(fd, { bigint: true })
    const steady = before.size === after.size && before.mtimeNs === after.mtimeNs && before.ctimeNs === after.ctimeNs &&
      BigInt(source.length) === after.size
    return { source, identity: steady ? `${after.dev}:${after.ino}:${after.size}:${after.mtimeNs}:${after.ctimeNs}` : undefined }
  } finally {
    NodeFs.closeSync(fd)
  }
}

/**
 * The daemon's young generation is capped too (`--max-semi-space-size=4`): under load V8 grew it to
 * 2 × 16 MB and kept it, so a daemon that had served a burst of requests stayed 30-40 MB above its
 * idle size for minutes (docs/configuration.md, "Memory"). Node takes the flag only on its command
 * line: `npm start` and the bridge's `--start` give it. When `serve` runs without it, it is set here
 * all the same, before the bundle is compiled: it does not cap the heap then, but it keeps V8's flags
 * the same for every `serve`, so the code cache one writes is the one the next accepts.
 */
const DAEMON_SEMI_SPACE_MB = 4
const boundDaemonHeap = () => {
  if (process.argv[2] !== "serve" || givenSemiSpace()) return
  require("node:v8").setFlagsFromString(`--max-semi-space-size=${DAEMON_SEMI_SPACE_MB}`)
}

const runCli = () => {
  if (!NodeFs.existsSync(bundle)) {
    process.stderr.write("weaviate-mcp: dist/weaviate-mcp.cjs is missing; run `npm run build` in the package first\n")
    process.exit(1)
  }
  boundBulkHeap()
  boundDaemonHeap()
  const { identity, source } = readBundle()
  const requested = identity === undefined ? undefined : cacheDirectory()
  const directory = requested === undefined ? undefined : privateDirectory(requested)
  const file = directory === undefined ? undefined : cacheFile(directory, identity)
  const cachedData = file === undefined ? undefined : readCached(file.path)
  const script = new (require("node:vm").Script)(NodeModule.wrap(source), {
    filename: bundle,
    // No `importModuleDynamically`: the bundle has no `import()` (scripts/build.mjs says why).
    ...(cachedData === undefined ? {} : { cachedData })
  })
  if (file !== undefined && (cachedData === undefined || script.cachedDataRejected === true)) keepCompiled(directory, file, script)
  else if (file !== undefined && MARKED.has(file.command) && NodeFs.existsSync(`${file.path}${SHORT}`)) keepWhenLong(directory, file, script)
  const module = { exports: {} }
  script.runInThisContext().call(module.exports, module.exports, NodeModule.createRequire(bundle), module, bundle, NodePath.dirname(bundle))
}

const handled = process.argv[2] === "bridge" && NodeFs.existsSync(bridge) && require(bridge).handled === true
if (handled) {
  // The bridge ran.
} else if (capsYoungGeneration()) {
  runCapped()
} else {
  followParent()
  runCli()
}
