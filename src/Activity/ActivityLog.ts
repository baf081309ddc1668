/**
 * `activity.log`: what AI clients did, one hash-chained JSON line per MCP call (format in
 * `ActivityLine.ts`), kept 90 days.
 *
 * - **Never blocks a request.** `record` puts the call on an unbounded queue and returns; the calls
 *   recorded in one turn of the event loop are formatted (the chain is the writer's state) and appended
 *   as one batch on the next turn (`Base/TickBatch`: no fiber is woken per call).
 * - **Whole lines only.** Each batch of complete lines is appended with one `write(2)` on a file
 *   opened `O_APPEND`; readers (the `activity` command) also ignore a last line without its newline.
 * - **One descriptor, held.** The log is opened once and appended to through that descriptor (opening
 *   and closing it per batch was 12% of a tool call's CPU). It is opened again when the file is
 *   rotated, replaced or removed by someone else (`FileWatch` on the home's renames, and a check of
 *   the file's identity by the first batch after 5 s without one: a new inode, or none), and after
 *   retention's own rewrite.
 * - **Durability.** A call's line is handed to the operating system (`write(2)`) by the writer on the
 *   event-loop turn after the call is answered, batched with the lines of the same turn; it is not
 *   `fsync`ed. At a clean shutdown every line is written before the daemon exits.
 * - **Nothing lost on a clean shutdown.** Closing the layer waits for the batch being written, then
 *   writes whatever is still queued. It is closed after the transport (which has answered or
 *   cancelled every request by then), so the last calls are in the file.
 * - **Retention.** At start and every 24 hours (on the `Clock`), lines older than 90 days are removed
 *   and an anchor line is put first (temp file + rename, by the writer fiber, so no append is lost
 *   and readers see the old or the new file, never half of one).
 * - **Never held whole.** The start reads the log in chunks for its last line, its count and its head
 *   (`ActivityHead.Summary`); retention reads from the start the lines it drops (decoded) up to the
 *   first it keeps, and only when it drops a call copies the rest, a megabyte at a time.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import * as NodeFsSync from "node:fs"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import * as FileWatch from "../Base/FileWatch.ts"
import { Home } from "../Base/Home.ts"
import * as TickBatch from "../Base/TickBatch.ts"
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

/** What retention did: calls removed, and the log's head after it. */
interface Pruned {
  readonly droppedCalls: number
  readonly head: { readonly lines: number; readonly hash: string }
}

/**
 * Retention, streamed: the lines older than `cutoff` at the front of the log (after a leading anchor)
 * are replaced by one anchor line that carries the hash of the last removed line and the count of
 * calls removed so far; the rest is copied behind it into a temp file renamed over the log, so
 * readers see the old or the new file, never half of one. The log is never held whole: a log with
 * nothing to drop costs one read from its start, up to its first line. `lastHash` is the hash of its
 * last complete line. `undefined` when no call is old enough (or there is no log).
 */
const pruneFile = async (path: string, now: number, cutoff: number, lastHash: string): Promise<Pruned | undefined> => {
  // The front: lines dropped while they are older than the cutoff, up to the first kept one. Read from
  // the byte after the last line dropped (`cut`), a megabyte at a time; only these lines are decoded.
  let cut = 0
  let drop = 0
  let droppedCalls = 0
  let lastDropped = Line.GENESIS
  let prunedBefore = 0
  const source = await NodeFs.open(path, "r").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined
    throw error
  })
  if (source === undefined) return undefined
  try {
    const buffer = Buffer.allocUnsafe(ActivityHead.CHUNK_BYTES)
    scan: for (;;) {
      const { bytesRead } = await source.read(buffer, 0, ActivityHead.CHUNK_BYTES, cut)
      const chunk = buffer.subarray(0, bytesRead)
      let start = 0
      // A last line without its newline (a crash) is never removed: it stays as the log's tail.
      for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
        const entry = Line.parse(chunk.toString("utf8", start, end))
        if (entry !== undefined && entry.type === "anchor" && drop === 0) {
          // An anchor stays only while the lines after it are kept.
          prunedBefore = entry.pruned
          lastDropped = entry.hash
        } else {
          const time = entry === undefined ? Number.NaN : Date.parse(entry.time)
          if (!(time < cutoff)) break scan
          if (entry?.type === "call") droppedCalls++
          lastDropped = entry?.hash ?? lastDropped
        }
        drop++
        cut += end + 1 - start
        start = end + 1
      }
      // The end of the log, or a line longer than a chunk (kept, with all after it).
      if (start === 0) break
    }
  } finally {
    await source.close()
  }
  if (droppedCalls === 0) return undefined
  const anchor = Line.formatAnchor(now, prunedBefore + droppedCalls, lastDropped)
  // The kept rest, copied behind the anchor; its complete lines are counted on the way.
  const temp = `${path}.${process.pid}.tmp`
  let kept = 0
  try {
    const out = await NodeFs.open(temp, "w", 0o600)
    try {
      await out.write(`${anchor.text}\n`)
      for await (const chunk of NodeFsSync.createReadStream(path, { start: cut, highWaterMark: ActivityHead.CHUNK_BYTES }) as AsyncIterable<Buffer>) {
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) kept++
        await out.write(chunk)
      }
    } finally {
      await out.close()
    }
    await NodeFs.rename(temp, path)
  } catch (error) {
    await NodeFs.rm(temp, { force: true })
    throw error
  }
  return { droppedCalls, head: { lines: kept + 1, hash: kept === 0 ? anchor.hash : lastHash } }
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
  /**
   * Hands each batch of recorded calls to `listener` as the writer takes it, before it is appended
   * (the console's live activity); returns what unsubscribes. The request path pays nothing for it:
   * listeners are called by the writer, once per batch.
   */
  readonly subscribe: (listener: (calls: ReadonlyArray<Line.Call>) => void) => () => void
}>() {
  static readonly make = (options: Options = {}) =>
    Effect.gen(function*() {
      const home = yield* Home
      const path = home.path("activity")
      const retentionMs = Duration.toMillis(Duration.decode(options.retention ?? RETENTION))
      const clock = yield* Effect.clock
      // The writer runs outside any fiber (TickBatch); what it reports goes through this runtime's loggers.
      const runtime = yield* Effect.runtime<never>()
      const report = (effect: Effect.Effect<void>) => void Runtime.runFork(runtime)(effect)

      const file = heldFile(path)

      // The log is read in chunks, never held whole (`ActivityHead.Summary`): its last line, its line
      // count and what the recorded head needs.
      const recorded = yield* ActivityHead.read(home.dir)
      const summary = yield* Effect.tryPromise(() => ActivityHead.summarizeFile(path, recorded)).pipe(
        Effect.catchAll((error) => Effect.as(Effect.logError("cannot read activity.log", String(error.error)), ActivityHead.summarize("", recorded)))
      )
      // The head (last hash, line count) beside the log, recorded after each batch and each retention: ActivityHead.ts.
      const head = yield* ActivityHead.tracker(home.dir, { summary, head: recorded })
      let prev = ActivityHead.headOf(summary).hash
      // A last line left unterminated by a crash stays as it is (verification reports it); new lines start on a line of their own.
      let needsNewline = summary.unterminated
      let checkedAt = clock.unsafeCurrentTimeMillis()

      const listeners = new Set<(calls: ReadonlyArray<Line.Call>) => void>()
      /** One batch: its lines formatted (the chain is the writer's state) and appended with one write. */
      const append = async (calls: ReadonlyArray<Line.Call>) => {
        // Nobody listening (no console page open): not even an iterator is made.
        if (listeners.size > 0) {
          for (const listener of listeners) {
            try {
              listener(calls)
            } catch (error) {
              report(Effect.logError("an activity listener failed", String(error)))
            }
          }
        }
        let text = needsNewline ? "\n" : ""
        let next = prev
        for (const call of calls) {
          const line = Line.formatCall(call, next)
          text += line.text + "\n"
          next = line.hash
        }
        // Without a rename event (a filesystem without them), the file's identity is checked by the
        // first batch after `REPLACED_CHECK_MS`: never per call, and with no polling fiber.
        const now = clock.unsafeCurrentTimeMillis()
        if (now - checkedAt >= REPLACED_CHECK_MS) {
          checkedAt = now
          await file.reopenIfReplaced()
        }
        try {
          await file.append(text)
        } catch (error) {
          report(Effect.logError("cannot write activity.log", String(error)))
          await file.close()
          return
        }
        prev = next
        needsNewline = false
        head.appended(calls.length, next)
      }
      // One writer at a time: batches, retention and the final drain share the chain.
      const batch = TickBatch.make(append, (error) => report(Effect.logError("cannot write activity.log", String(error))))
      const exclusive = (effect: Effect.Effect<number>) => Effect.promise(() => batch.exclusive(() => Runtime.runPromise(runtime)(effect)))

      const prune = exclusive(Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const result = yield* Effect.tryPromise(() => pruneFile(path, now, now - retentionMs, prev)).pipe(
          Effect.catchAll((error) => Effect.as(Effect.logError("cannot prune activity.log", String(error.error)), undefined))
        )
        if (result === undefined) return 0
        yield* head.rewritten(result.head)
        yield* Effect.promise(file.close)
        prev = result.head.hash
        yield* Effect.logInfo("activity log pruned").pipe(Effect.annotateLogs({ removed: result.droppedCalls }))
        return result.droppedCalls
      }))

      yield* prune
      yield* FileWatch.follow(
        home.dir,
        NodePath.basename(path),
        { pollInterval: "none", events: "rename" },
        Effect.promise(() => batch.exclusive(file.reopenIfReplaced))
      )
      yield* Effect.forkScoped(
        Effect.sleep(options.pruneEvery ?? Duration.days(1)).pipe(Effect.zipRight(prune), Effect.forever)
      )

      // Closing waits for the batch being written and writes what is still queued.
      yield* Effect.addFinalizer(() =>
        Effect.promise(batch.drained).pipe(Effect.zipRight(head.flush), Effect.zipRight(Effect.promise(file.close)))
      )

      return ActivityLog.of({
        record: batch.push,
        flush: Effect.promise(batch.drained),
        prune,
        subscribe: (listener) => {
          listeners.add(listener)
          return () => void listeners.delete(listener)
        }
      })
    })

  /** Needs the home. */
  static readonly layer = (options: Options = {}): Layer.Layer<ActivityLog, never, Home> =>
    Layer.scoped(ActivityLog, ActivityLog.make(options))
}

/** How often, at most, a batch checks the log's identity without a file event (rotation by another process). */
const REPLACED_CHECK_MS = 5_000

/**
 * The log's descriptor, held: opened on the first append and again after the file was replaced
 * (`reopenIfReplaced`: another process rotated, replaced or removed it, so the next append opens the
 * file at its path).
 */
const heldFile = (path: string) => {
  let handle: NodeFs.FileHandle | undefined
  const close = async () => {
    const held = handle
    handle = undefined
    await held?.close().catch(() => undefined)
  }
  return {
    append: async (text: string) => {
      handle ??= await NodeFs.open(path, "a", 0o600)
      await appendAll(handle, text)
    },
    close,
    reopenIfReplaced: async () => {
      const held = handle
      if (held === undefined) return
      const [open, named] = await Promise.all([held.stat(), NodeFs.stat(path).catch(() => undefined)])
      if (named === undefined || named.ino !== open.ino || named.dev !== open.dev) await close()
    }
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
