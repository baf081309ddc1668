/**
 * `weaviate-mcp bridge [--home DIR] [--start]`: the stdio bridge for AI clients that launch a local
 * process (Claude Desktop) or speak only the legacy revisions. It finds the running daemon through
 * the handshake file; with `--start` it starts one and waits up to 10 seconds for it.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as NodeChild from "node:child_process"
import * as Bridge from "../Bridge/Bridge.ts"
import * as DaemonLink from "../Bridge/DaemonLink.ts"
import { resolveHomeDir, FileNames } from "../Base/Home.ts"
import * as NodePath from "node:path"
import * as CommonOptions from "./CommonOptions.ts"

/** How long `--start` waits for the daemon's handshake file. @category constants */
export const START_WAIT_MS = 10_000
const POLL_MS = 100

const log = (line: string) => {
  process.stderr.write(line + "\n")
}

/** Starts `weaviate-mcp serve --home DIR` detached from the bridge, so it outlives the client. */
const startDaemon = (home: string) => {
  const script = process.argv[1]
  if (script === undefined) throw new DaemonLink.BridgeRefused({ message: "cannot find the weaviate-mcp program to start", notRunning: true })
  const child = NodeChild.spawn(process.execPath, [script, "serve", "--home", home], { detached: true, stdio: "ignore" })
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

const findDaemon = async (home: string, start: boolean) => {
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
    startDaemon(home)
    return await waitForDaemon(path)
  }
}

/** `bridge`. @category commands */
export const bridgeCommand = Command.make(
  "bridge",
  {
    home: CommonOptions.home,
    start: Options.boolean("start").pipe(Options.withDescription("Start the daemon when it is not running (waits up to 10 s)"))
  },
  (flags) =>
    Effect.gen(function*() {
      const home = resolveHomeDir(flags.home)
      const daemon = yield* Effect.tryPromise({
        try: () => findDaemon(home, flags.start),
        catch: (error) =>
          error instanceof DaemonLink.BridgeRefused ? error : new DaemonLink.BridgeRefused({ message: String(error), notRunning: false })
      })
      log(`weaviate-mcp bridge: connected to the daemon on port ${daemon.file.port} (pid ${daemon.file.pid})`)
      yield* Effect.promise(() =>
        Bridge.run(daemon, { handshakePath: NodePath.join(home, FileNames.handshake), input: process.stdin, output: process.stdout, log })
      )
    })
).pipe(Command.withDescription("Connect an AI client over stdio to the running daemon (for clients without HTTP, or legacy-only)"))
