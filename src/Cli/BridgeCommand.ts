/**
 * `weaviate-mcp bridge [--home DIR] [--start]`: the stdio bridge for AI clients that launch a local
 * process (Claude Desktop) or speak only the legacy revisions. It finds the running daemon through
 * the handshake file; with `--start` it starts one and waits up to 10 seconds for it.
 *
 * A plain invocation never reaches this command: `bin/weaviate-mcp.js` runs the bridge's own entry
 * (`Bridge/BridgeMain.ts`, without the CLI bundle); this command serves `--help` and the spellings
 * that entry leaves to the CLI, with the same code.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as BridgeMain from "../Bridge/BridgeMain.ts"
import * as DaemonLink from "../Bridge/DaemonLink.ts"
import { resolveHomeDir } from "../Base/Home.ts"
import * as CommonOptions from "./CommonOptions.ts"

/** How long `--start` waits for the daemon's handshake file. @category constants */
export const START_WAIT_MS = BridgeMain.START_WAIT_MS

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
        try: () => BridgeMain.findDaemon(home, flags.start),
        catch: (error) =>
          error instanceof DaemonLink.BridgeRefused ? error : new DaemonLink.BridgeRefused({ message: String(error), notRunning: false })
      })
      yield* Effect.promise(() => BridgeMain.serve(home, daemon))
    })
).pipe(Command.withDescription("Connect an AI client over stdio to the running daemon (for clients without HTTP, or legacy-only)"))
