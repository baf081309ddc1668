/**
 * Pausing AI access: `weaviate-mcp pause` / `resume` flip `paused` in `settings.json`; the running
 * daemon follows within a second (`fs.watch` on the home directory, which survives the atomic
 * rename, plus a 500 ms poll for filesystems without events). While paused every MCP request is
 * answered 503 `-33006` and the calls in flight when it paused are cancelled; the command line,
 * which works on the home's files, keeps working.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodePath from "node:path"
import { InFlight } from "../Cancellation/InFlight.ts"
import { PauseSwitch } from "../Mcp/PauseSwitch.ts"
import * as FileWatch from "../Base/FileWatch.ts"
import { Home } from "../Base/Home.ts"
import * as Settings from "./Settings.ts"
import * as SecretFile from "../Base/SecretFile.ts"

/** The reason calls cancelled by a pause carry. @category constants */
export const PAUSED = "AI access was paused"

/** Reads `paused` from settings.json (false when absent or unreadable). @category reading */
export const readPaused = Effect.map(
  Settings.readSettingsFile().pipe(Effect.orElseSucceed(() => ({} as Record<string, unknown>))),
  (settings) => settings.paused === true
)

/**
 * Sets `paused` in settings.json, keeping every other setting (atomic write, mode 0600).
 *
 * @category writing
 */
export const setPaused = Effect.fn("Pause.setPaused")(function*(paused: boolean) {
  const home = yield* Home
  const settings = yield* Settings.readSettingsFile()
  yield* SecretFile.writeJsonAtomic(home.path("settings"), { ...settings, paused })
})

/**
 * Flipping the switch from inside the daemon (the console): settings.json is written as `pause` writes
 * it, and the switch follows at once rather than on the file's event, so the next request already
 * sees the new state.
 *
 * @category services
 */
export class PauseControl extends Context.Tag("weaviate-mcp/PauseControl")<PauseControl, {
  readonly set: (paused: boolean) => Effect.Effect<void, SecretFile.SecretFileError>
}>() {}

/**
 * The daemon's switch: follows settings.json and cancels every call in flight when access pauses.
 *
 * @category layers
 */
export const layer = (options: FileWatch.Options = {}): Layer.Layer<PauseSwitch | PauseControl, never, Home | InFlight> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const home = yield* Home
      const inFlight = yield* InFlight
      const listeners: Array<(paused: boolean) => void> = []
      let paused = yield* readPaused
      const settingsName = NodePath.basename(home.path("settings"))
      const follow = Effect.gen(function*() {
        const now = yield* readPaused
        if (now === paused) return
        paused = now
        for (const listener of listeners) listener(now)
        if (now) {
          const cancelled = yield* inFlight.cancelAllBecause(PAUSED)
          yield* Effect.logWarning("AI access paused").pipe(Effect.annotateLogs({ cancelled }))
        } else {
          yield* Effect.logWarning("AI access resumed")
        }
      })
      yield* FileWatch.follow(home.dir, settingsName, options, Effect.provideService(follow, Home, home))
      if (paused) yield* Effect.logWarning("AI access is paused (weaviate-mcp resume turns it back on)")
      // One flip at a time, so the file and the switch end in the same state.
      const lock = yield* Effect.makeSemaphore(1)
      return Context.make(PauseSwitch, {
        isPaused: () => paused,
        changes: (listener: (paused: boolean) => void) => {
          listeners.push(listener)
          listener(paused)
        }
      }).pipe(Context.add(PauseControl, {
        set: (next: boolean) => lock.withPermits(1)(Effect.zipRight(setPaused(next), follow).pipe(Effect.provideService(Home, home)))
      }))
    })
  )
