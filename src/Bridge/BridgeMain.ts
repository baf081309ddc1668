/**
 * The bridge's own start: `weaviate-mcp bridge [--home DIR] [--start]` without the CLI bundle.
 * `bin/weaviate-mcp.js` requires `dist/bridge.cjs` (this module, bundled alone by `scripts/build.mjs`)
 * before loading the CLI; a bridge invocation with anything else (`--help`, `--start=false`, an
 * unknown or repeated flag) goes to the full CLI (`BridgeCommand.ts`), which runs the same code.
 *
 * It loads no Effect: the handshake file and its checks, the stdio framing, forwarding and the
 * elicitation hand-over are plain Node (measured, CPU of a start: bare node 70 ms, these modules
 * +15 ms, `effect/Schema` alone +40 ms, the CLI bundle +300 ms; docs/bridge.md).
 *
 * @since 0.1.0
 */
import * as NodePath from "node:path"
import { FileNames, resolveDir } from "../Base/HomeDir.ts"
import * as Redaction from "../Base/Redaction.ts"
import * as Bridge from "./Bridge.ts"
import * as DaemonLink from "./DaemonLink.ts"

/**
 * The V8 flag the daemon is started with: its young generation capped at 4 MB a semi-space, so the
 * memory a burst of requests takes comes back (docs/configuration.md, "Memory").
 *
 * @category constants
 */
export const DAEMON_HEAP_FLAG = "--max-semi-space-size=4"

/** How long `--start` waits for the daemon's handshake file. @category constants */
export const START_WAIT_MS = 10_000
const POLL_MS = 100

/** A diagnostic line on stderr (stdout carries protocol only). @category logging */
export const log = (line: string) => {
  process.stderr.write(line + "\n")
}

/**
 * Starts `weaviate-mcp serve --home DIR` detached from the bridge, so it outlives the client.
 * node:child_process is loaded only here (`--start` with no daemon running).
 */
const startDaemon = async (home: string) => {
  const script = process.argv[1]
  if (script === undefined) throw new DaemonLink.BridgeRefused({ message: "cannot find the weaviate-mcp program to start", notRunning: true })
  const NodeChild = await import("node:child_process")
  // The daemon's young generation capped, as `npm start` starts it (bin/weaviate-mcp.js, boundDaemonHeap).
  const child = NodeChild.spawn(process.execPath, [DAEMON_HEAP_FLAG, script, "serve", "--home", home], { detached: true, stdio: "ignore" })
  child.unref()
  log(`weaviate-mcp bridge: started the daemon (pid ${child.pid ?? "?"}) for ${home}`)
}

/** Polls the handshake file (bounded in count and time) until the daemon it names is trusted. */
const waitForDaemon = async (path: string) => {
  const deadline = Date.now() + START_WAIT_MS
  let last: unknown
  for (let attempt = 0; attempt <= START_WAIT_MS / POLL_MS && Date.now() < deadline; attempt++) {
    try {
      return await DaemonLink.locate(path)
    } catch (error) {
      if (!(error instanceof DaemonLink.BridgeRefused) || !error.notRunning) throw error
      last = error
      await new Promise((resolve) => setTimeout(resolve, POLL_MS))
    }
  }
  throw new DaemonLink.BridgeRefused({
    message: `the daemon did not start within ${START_WAIT_MS / 1000} s (${last instanceof Error ? last.message : "no handshake file"})`,
    notRunning: true
  })
}

/**
 * The trusted daemon of `home`; with `start`, starts one when none runs. Throws `BridgeRefused`.
 *
 * @category finding
 */
export const findDaemon = async (home: string, start: boolean): Promise<DaemonLink.Daemon> => {
  const path = NodePath.join(home, FileNames.handshake)
  try {
    return await DaemonLink.locate(path)
  } catch (error) {
    if (!(error instanceof DaemonLink.BridgeRefused) || !error.notRunning) throw error
    if (!start) {
      throw new DaemonLink.BridgeRefused({
        message: `${error.message}. Start it with: weaviate-mcp serve --home ${JSON.stringify(home)} (or run the bridge with --start)`,
        notRunning: true
      })
    }
    await startDaemon(home)
    return await waitForDaemon(path)
  }
}

/**
 * Connects to the daemon of `home` and runs the session until stdin closes.
 *
 * @category running
 */
export const serve = async (home: string, daemon: DaemonLink.Daemon): Promise<void> => {
  log(`weaviate-mcp bridge: connected to the daemon on port ${daemon.file.port} (pid ${daemon.file.pid})`)
  await Bridge.run(daemon, { handshakePath: NodePath.join(home, FileNames.handshake), input: process.stdin, output: process.stdout, log })
}

/** The flags of a bridge invocation. @category models */
export interface Flags {
  readonly home: string | undefined
  readonly start: boolean
}

/**
 * The flags of `weaviate-mcp bridge …` when this entry handles it: `--home DIR`, `--home=DIR` and
 * `--start`, each at most once. `undefined` for any other command line, left to the full CLI.
 *
 * @category parsing
 */
export const parseArgs = (argv: ReadonlyArray<string>): Flags | undefined => {
  if (argv[2] !== "bridge") return undefined
  let home: string | undefined
  let start = false
  const args = argv.slice(3)
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--start" && !start) start = true
    else if (arg.startsWith("--home=") && home === undefined && arg.length > "--home=".length) home = arg.slice("--home=".length)
    else if (arg === "--home" && home === undefined && i + 1 < args.length && args[i + 1]!.length > 0 && !args[i + 1]!.startsWith("-")) {
      home = args[++i]
    } else return undefined
  }
  return { home, start }
}

const messageOf = (error: unknown): string =>
  error instanceof Error && error.message.length > 0 ? error.message : String(error)

/**
 * Runs the bridge as the CLI's `bridge` command would, and resolves with the exit code: 0 when
 * stdin closed, 1 with one redacted line on stderr when the daemon cannot be used (or, as
 * `internal error: …`, when the session failed).
 *
 * @category running
 */
export const run = async (flags: Flags): Promise<number> => {
  const home = resolveDir(flags.home)
  let daemon: DaemonLink.Daemon
  try {
    daemon = await findDaemon(home, flags.start)
  } catch (error) {
    // As the CLI reports the command's failure: BridgeCommand wraps anything else in a BridgeRefused.
    const message = error instanceof DaemonLink.BridgeRefused ? messageOf(error) : String(error)
    process.stderr.write(Redaction.global.redact(message.split("\n")[0] ?? "") + "\n")
    return 1
  }
  try {
    await serve(home, daemon)
    return 0
  } catch (error) {
    process.stderr.write(`internal error: ${Redaction.global.redact(messageOf(error))}\n`)
    return 1
  }
}

/**
 * The entry: starts the bridge when `argv` is a plain bridge invocation and returns `true`; returns
 * `false` (having done nothing) for the full CLI to handle it. SIGINT and SIGTERM end the process with
 * 0, as the CLI's runtime does.
 *
 * @category running
 */
export const start = (argv: ReadonlyArray<string>): boolean => {
  const flags = parseArgs(argv)
  if (flags === undefined) return false
  const stop = () => process.exit(0)
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
  void run(flags).then((code) => {
    process.exitCode = code
    process.removeListener("SIGINT", stop)
    process.removeListener("SIGTERM", stop)
  })
  return true
}
