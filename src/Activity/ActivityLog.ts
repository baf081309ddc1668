/**
 * `activity.log`: what AI clients did, one hash-chained JSON line per MCP call (format in
 * `ActivityLine.ts`), kept 90 days.
 *
 * - **Never blocks a request.** `record` puts the call on an unbounded queue and returns; one writer
 *   fiber takes everything queued, formats the lines (the chain is its state) and appends them.
 * - **Whole lines only.** Each batch of complete lines is appended with one `write(2)` on a file
 *   opened `O_APPEND`; readers (the `activity` command) also ignore a last line without its newline.
 * - **One descriptor, held.** The log is opened once and appended to through that descriptor (opening
 *   and closing it per batch was 12% of a tool call's CPU). It is opened again when the file is
 *   rotated, replaced or removed by someone else (`FileWatch` on the home's renames, and a check of
 *   the file's identity by the first batch after 5 s without one: a new inode, or none), and after
 *   retention's own rewrite.
 * - **Durability.** A call's line is handed to the operating system (`write(2)`) by the writer fiber on
 *   the scheduler turn after the call is answered, batched with the lines of the same turn; it is not
 *   `fsync`ed. At a clean shutdown every line is written before the daemon exits.
 * - **Nothing lost on a clean shutdown.** Closing the layer waits for the batch being written, then
 *   writes whatever is still queued. It is closed after the transport (which has answered or
 *   cancelled every request by then), so the last calls are in the file.
 * - **Retention.** At start and every 24 hours (on the `Clock`), lines older than 90 days are removed
 *   and an anchor line is put first (temp file + rename, by the writer fiber, so no append is lost
 *   and readers see the old or the new file, never half of one).
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import * as FileWatch from "../Base/FileWatch.ts"
import { Home } from "../Base/Home.ts"
import * as ActivityHead from "./ActivityHead.ts"
import * as Line from "./ActivityLine.ts"

/** @category constants */
export const RETENTION: Duration.Duration = Duration.days(90)

/** @category models */
export interface Options {
  /** How long lines are kept (default 90 days). */
  readonly retention?: Duration.DurationInput | undefined
  /** How often retention runs after the start (default 24 hours). */
  readonly pruneEvery?: Duration.DurationInput | undefined
}

/**
 * The log after retention: lines older than `cutoff` removed from the front, replaced by one anchor
 * line that carries the hash of the last removed line and the count of calls removed so far;
 * `undefined` when no call is old enough.
 */
const retained = (content: string, now: number, cutoff: number) => {
  const lines = content.split("\n")
  const tail = lines.pop() ?? ""
  let drop = 0
  let lastDropped = Line.GENESIS
  for (const text of lines) {
    const entry = Line.parse(text)
    const time = entry === undefined ? Number.NaN : Date.parse(entry.time)
    if (entry !== undefined && entry.type === "anchor" && drop === 0) {
      // An anchor stays only while the lines after it are kept.
      drop++
      lastDropped = entry.hash
      continue
    }
    if (!(time < cutoff)) break
    drop++
    lastDropped = entry?.hash ?? lastDropped
  }
  const droppedCalls = lines.slice(0, drop).filter((text) => Line.parse(text)?.type === "call").length
  if (droppedCalls === 0) return undefined
  const kept = lines.slice(drop)
  const previousAnchor = Line.parse(lines[0] ?? "")
  const prunedBefore = previousAnchor?.type === "anchor" ? previousAnchor.pruned : 0
  const anchor = Line.formatAnchor(now, prunedBefore + droppedCalls, lastDropped)
  return { text: [anchor.text, ...kept].join("\n") + "\n" + tail, droppedCalls, anchorHash: anchor.hash, nothingKept: kept.length === 0 }
}

/**
 * @category services
 */
export class ActivityLog extends Context.Tag("weaviate-mcp/ActivityLog")<ActivityLog, {
  /** Queues a call for the log; synchronous, never blocks, never fails. */
  readonly record: (call: Line.Call) => void
  /** Waits until everything recorded so far is in the file. */
  readonly flush: Effect.Effect<void>
  /** Runs retention now (also run at start and every `pruneEvery`); how many lines it removed. */
  readonly prune: Effect.Effect<number>
}>() {
  static readonly make = (options: Options = {}) =>
    Effect.gen(function*() {
      const home = yield* Home
      const path = home.path("activity")
      const retentionMs = Duration.toMillis(Duration.decode(options.retention ?? RETENTION))
      // Calls wait in a plain array; the queue only wakes the writer, so interrupting the writer never loses a call.
      let pending: Array<Line.Call> = []
      const wake = yield* Queue.sliding<void>(1)
      // One writer at a time: the writer fiber, the final drain and retention share the chain.
      const lock = yield* Effect.makeSemaphore(1)

      const file = heldFile(path)

      const existing = yield* readIfExists(path)
      // The head (last hash, line count) beside the log, recorded after each batch and each retention: ActivityHead.ts.
      const head = yield* ActivityHead.tracker(home.dir, existing)
      let prev = Line.lastHash(existing)
      // A last line left unterminated by a crash stays as it is (verification reports it); new lines start on a line of their own.
      let needsNewline = existing.length > 0 && !existing.endsWith("\n")
      let written = 0
      const waiters: Array<{ readonly upTo: number; readonly done: () => void }> = []
      let recorded = 0

      let checkedAt = yield* Clock.currentTimeMillis
      const append = (calls: ReadonlyArray<Line.Call>) =>
        Effect.gen(function*() {
          if (calls.length === 0) return
          let text = needsNewline ? "\n" : ""
          let next = prev
          for (const call of calls) {
            const line = Line.formatCall(call, next)
            text += line.text + "\n"
            next = line.hash
          }
          // Without a rename event (a filesystem without them), the file's identity is checked by the
          // first batch after `REPLACED_CHECK_MS`: never per call, and with no polling fiber.
          const now = yield* Clock.currentTimeMillis
          if (now - checkedAt >= REPLACED_CHECK_MS) {
            checkedAt = now
            yield* file.reopenIfReplaced
          }
          yield* Effect.tryPromise(() => file.append(text)).pipe(
            Effect.tap(() =>
              Effect.sync(() => {
                prev = next
                needsNewline = false
              })
            ),
            Effect.tap(() => head.appended(text, next)),
            Effect.catchAll((error) => Effect.zipRight(Effect.logError("cannot write activity.log", String(error.error)), file.close))
          )
          written += calls.length
          for (let i = waiters.length - 1; i >= 0; i--) {
            if (waiters[i]!.upTo <= written) {
              waiters[i]!.done()
              waiters.splice(i, 1)
            }
          }
        }).pipe(lock.withPermits(1), Effect.uninterruptible)

      const takePending = () => {
        const batch = pending
        pending = []
        return batch
      }
      // Interruption can only come while waiting to be woken: a batch taken is written.
      const writer = yield* Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(restore(Queue.take(wake)), () => append(takePending()))
      ).pipe(Effect.forever, Effect.forkDaemon)

      const prune = Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const result = retained(yield* readIfExists(path), now, now - retentionMs)
        if (result === undefined) return 0
        yield* Effect.tryPromise(() => replace(path, result.text)).pipe(
          Effect.zipRight(head.rewritten(result.text)),
          Effect.catchAll((error) => Effect.logError("cannot prune activity.log", String(error.error)))
        )
        yield* file.close
        if (result.nothingKept) prev = result.anchorHash
        yield* Effect.logInfo("activity log pruned").pipe(Effect.annotateLogs({ removed: result.droppedCalls }))
        return result.droppedCalls
      }).pipe(lock.withPermits(1), Effect.uninterruptible)

      const reopenIfReplaced = file.reopenIfReplaced.pipe(lock.withPermits(1), Effect.uninterruptible)

      yield* prune
      yield* FileWatch.follow(home.dir, NodePath.basename(path), { pollInterval: "none", events: "rename" }, reopenIfReplaced)
      yield* Effect.forkScoped(
        Effect.sleep(options.pruneEvery ?? Duration.days(1)).pipe(Effect.zipRight(prune), Effect.forever)
      )

      yield* Effect.addFinalizer(() =>
        Effect.gen(function*() {
          // The writer is interrupted between batches (a batch is written uninterruptibly), then the rest is written.
          yield* Fiber.interrupt(writer)
          yield* append(takePending())
          yield* head.flush
          yield* file.close
          for (const waiter of waiters.splice(0)) waiter.done()
        })
      )

      return ActivityLog.of({
        record: (call) => {
          recorded++
          pending.push(call)
          wake.unsafeOffer(undefined)
        },
        flush: Effect.suspend(() => {
          const upTo = recorded
          if (written >= upTo) return Effect.void
          return Effect.async<void>((resume) => {
            waiters.push({ upTo, done: () => resume(Effect.void) })
          })
        }),
        prune
      })
    })

  /** Needs the home. */
  static readonly layer = (options: Options = {}): Layer.Layer<ActivityLog, never, Home> =>
    Layer.scoped(ActivityLog, ActivityLog.make(options))
}

/** The log's text ("" when absent); a log that cannot be read is reported, never a reason to stop the daemon. */
const readIfExists = (path: string) =>
  Effect.tryPromise(() =>
    NodeFs.readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return ""
      throw error
    })
  ).pipe(Effect.catchAll((error) => Effect.as(Effect.logError("cannot read activity.log", String(error.error)), "")))

/** How often, at most, a batch checks the log's identity without a file event (rotation by another process). */
const REPLACED_CHECK_MS = 5_000

/**
 * The log's descriptor, held: opened on the first append and again after the file was replaced
 * (`reopenIfReplaced`: another process rotated, replaced or removed it, so the next append opens the
 * file at its path).
 */
const heldFile = (path: string) => {
  let handle: NodeFs.FileHandle | undefined
  const close = Effect.suspend(() => {
    const held = handle
    handle = undefined
    return held === undefined ? Effect.void : Effect.promise(() => held.close().catch(() => undefined))
  })
  return {
    append: async (text: string) => {
      handle ??= await NodeFs.open(path, "a", 0o600)
      await appendAll(handle, text)
    },
    close,
    reopenIfReplaced: Effect.suspend(() => {
      const held = handle
      if (held === undefined) return Effect.void
      return Effect.promise(async () => {
        const [open, named] = await Promise.all([held.stat(), NodeFs.stat(path).catch(() => undefined)])
        return named === undefined || named.ino !== open.ino || named.dev !== open.dev
      }).pipe(Effect.flatMap((replaced) => (replaced ? close : Effect.void)))
    })
  }
}

/** Appends whole lines with one write on the `O_APPEND` descriptor (mode 0600: the log names clients and principals). */
const appendAll = async (handle: NodeFs.FileHandle, text: string) => {
  const bytes = Buffer.from(text, "utf8")
  let offset = 0
  // A regular file takes the whole buffer in one write; the loop only guards against a short write.
  while (offset < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, offset, bytes.length - offset)
    offset += bytesWritten
  }
}

const replace = async (path: string, text: string) => {
  const temp = `${path}.${process.pid}.tmp`
  await NodeFs.writeFile(temp, text, { mode: 0o600 })
  await NodeFs.rename(temp, path)
}
