/**
 * Following a file the daemon reads but other processes write (`tokens.json`, `connections.json`,
 * `settings.json`): a watch on its directory (an atomic rewrite replaces the file's inode, so the
 * directory is watched, not the file) wakes the follower at once, and a poll wakes it anyway every
 * `pollInterval` for filesystems without events. The follower decides whether anything changed
 * (usually by `SecretFile.signature`), so nothing is stat'ed or read per request.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as NodeFs from "node:fs"

/** @category models */
export interface Options {
  /** `false` turns the directory watch off (the poll alone follows the file). Default on. */
  readonly fsEvents?: boolean | undefined
  /**
   * How often the file is looked at without an event (default 500 ms); `"none"` for a follower that
   * checks the file itself when it is used (see `ConnectionStore`).
   */
  readonly pollInterval?: Duration.DurationInput | "none" | undefined
  /**
   * `"rename"`: wake only when the name is created, replaced or removed, not when the file's content
   * changes (a file the follower itself appends to). Default: every event.
   */
  readonly events?: "all" | "rename" | undefined
}

/** @category constants */
export const DEFAULT_POLL: Duration.Duration = Duration.millis(500)

/**
 * Runs `onWake` on every event for `fileName` in `dir` and at least every `pollInterval`, for the
 * life of the scope. The watch never keeps the process alive.
 *
 * @category constructors
 */
export const follow = (
  dir: string,
  fileName: string,
  options: Options,
  onWake: Effect.Effect<void>
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    const wake = yield* Queue.sliding<void>(1)
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        if (options.fsEvents === false) return undefined
        try {
          const renamesOnly = options.events === "rename"
          const watcher = NodeFs.watch(dir, { persistent: false }, (event, changed) => {
            if (renamesOnly && event !== "rename") return
            if (changed === null || changed === fileName) Queue.unsafeOffer(wake, undefined)
          })
          watcher.on("error", () => watcher.close())
          return watcher
        } catch {
          return undefined
        }
      }),
      (watcher) => Effect.sync(() => watcher?.close())
    )
    const poll = options.pollInterval
    const woken = poll === "none" ? Queue.take(wake) : Effect.raceFirst(Queue.take(wake), Effect.sleep(Duration.decode(poll ?? DEFAULT_POLL)))
    yield* woken.pipe(Effect.zipRight(onWake), Effect.forever, Effect.forkScoped)
  })
