/**
 * The head of `activity.log`: the hash of its last line and its line count, kept beside the log in
 * `activity-head.json` (mode 0600, written atomically). A hash chain shows an edited, inserted or
 * removed line in the middle, but not lines cut off at the end; the head does.
 *
 * - **Written after the log, at most once a second.** The daemon appends batches; when the head has
 *   moved, at most once a second and when the log closes, it flushes the log to the disk
 *   (`fdatasync`), then records the new head. A crash in between leaves the log *ahead* of its head:
 *   lines after the one the head names. That is accepted (reported as "extends its head by N lines"); a log
 *   that is shorter than its head, or whose line at the head's position is another line, is not.
 * - **Retention** rewrites the log with an anchor line first and records the new head right after the
 *   rename, under the same lock. A crash between the two leaves a head whose line sits at another
 *   position (or, when nothing was kept, only the anchor naming it as `prev`): both are recognised
 *   as retention's, since only retention puts an anchor first.
 * - The head is the daemon's record, in the same home as the log: it catches a cut made by a tool or
 *   by hand, not someone who rewrites both files.
 *
 * See docs/activity.md.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { FileNames } from "../Base/Home.ts"
import * as SecretFile from "../Base/SecretFile.ts"
import * as Line from "./ActivityLine.ts"

/** The head file, in the home beside `activity.log`. @category constants */
export const HEAD_FILE = "activity-head.json"

/** @category schemas */
export const Head = Schema.Struct({
  version: Schema.Literal(1),
  /** Complete lines in the log when the head was written. */
  lines: Schema.NonNegativeInt,
  /** The hash of the last of them (64 zeros for an empty log). */
  hash: Schema.String,
  updatedAt: Schema.String
})
export type Head = typeof Head.Type

/** The head file of a home directory. @category paths */
export const pathIn = (homeDir: string): string => NodePath.join(homeDir, HEAD_FILE)

const decode = Schema.decodeUnknownOption(Head)

/** The recorded head; `undefined` when none was written (or it is not a head file). @category reading */
export const read = (homeDir: string) =>
  SecretFile.readJsonIfExists(pathIn(homeDir)).pipe(
    Effect.map((json) => (json === undefined ? undefined : decode(json).pipe((o) => (o._tag === "Some" ? o.value : undefined)))),
    Effect.orElseSucceed(() => undefined)
  )

/** The head of a log's text: its complete lines and the hash of the last. @category reading */
export const of = (content: string): { readonly lines: number; readonly hash: string } => {
  let lines = 0
  for (let at = content.indexOf("\n"); at !== -1; at = content.indexOf("\n", at + 1)) lines++
  return { lines, hash: Line.lastHash(content) }
}

/** Records a head (atomically, 0600). @category writing */
export const write = (homeDir: string, head: { readonly lines: number; readonly hash: string }, now: number) =>
  SecretFile.writeJsonAtomic(pathIn(homeDir), { version: 1, lines: head.lines, hash: head.hash, updatedAt: new Date(now).toISOString() })

// ===== Checking =====

/** How a log compares with its head. @category models */
export type Comparison =
  /** No head recorded (a log from before heads, or no call yet). */
  | { readonly _tag: "NoHead"; readonly lines: number }
  /** The log ends where its head says, or extends it by `ahead` lines (written after the head's last update). */
  | { readonly _tag: "Matches"; readonly lines: number; readonly ahead: number; readonly afterRetention: boolean }
  /** The log is shorter than its head: its end was cut off. */
  | { readonly _tag: "Cut"; readonly lines: number; readonly headLines: number; readonly missing: number }
  /** The line at the head's position is not the head's line, and the log is not shorter. */
  | { readonly _tag: "Diverged"; readonly lines: number; readonly headLines: number }

/**
 * What comparing a log with its head needs, gathered in one pass over the log's bytes (`summarizer`):
 * the log is never held whole. (At start the daemon read it as one string, twice: a 128 MB log, three
 * days at a call a second, took the start from 0.35 s to 0.9–1.6 s and left it 215 MB resident.)
 *
 * @category models
 */
export interface Summary {
  /** Complete lines (each ended by a newline). */
  readonly lines: number
  readonly first: string | undefined
  readonly last: string | undefined
  /** The line at the position the head names (its `lines`-th), when the log has one. */
  readonly atHead: string | undefined
  /** In a log that opens with an anchor: the position of the first line whose `hash` is the head's; else -1. */
  readonly headAt: number
  /** Bytes after the last newline: a line a crash left unterminated. */
  readonly unterminated: boolean
}

/**
 * Gathers the `Summary` of a log pushed in chunks of its bytes, in order. Only the lines it keeps are
 * decoded, and none longer than `MAX_LINE_BYTES` is kept; the head's line is found by its hash at the end of a line (`"hash":"…"}`, where the
 * format puts it), and only in a log that opens with an anchor.
 *
 * @category reading
 */
export const summarizer = (head: Head | undefined) => {
  let lines = 0
  let first: string | undefined
  let last: string | undefined
  let atHead: string | undefined
  let headAt = -1
  // Only a log that opens with retention's anchor is searched for the head's line (`compareSummary`).
  let anchored = false
  let carry: Buffer | undefined
  let oversized = false
  const headPosition = head === undefined ? -1 : head.lines - 1
  const suffix = head === undefined ? undefined : Buffer.from(`"hash":"${head.hash}"}`)
  /** The complete line `bytes[from, to)`, without its newline. Most lines are only counted. */
  const line = (bytes: Buffer, from: number, to: number) => {
    const index = lines++
    if (index === 0 || index === headPosition) {
      const text = bytes.toString("utf8", from, to)
      if (index === 0) {
        first = text
        anchored = Line.parse(text)?.type === "anchor"
      }
      if (index === headPosition) atHead = text
    }
    if (anchored && headAt === -1 && suffix !== undefined && to - from >= suffix.length &&
      bytes.compare(suffix, 0, suffix.length, to - suffix.length, to) === 0 &&
      Line.parse(bytes.toString("utf8", from, to))?.hash === head!.hash) {
      headAt = index
    }
  }
  return {
    push: (chunk: Buffer): void => {
      let start = 0
      let end = chunk.indexOf(10)
      if (end !== -1 && carry !== undefined) {
        // A line longer than any the daemon writes is counted, not kept (read as no line at all).
        const joined = oversized ? Buffer.alloc(0) : Buffer.concat([carry, chunk.subarray(0, end)])
        carry = undefined
        oversized = false
        line(joined, 0, joined.length)
        last = joined.toString("utf8")
        start = end + 1
        end = chunk.indexOf(10, start)
      }
      let lastFrom = -1
      let lastTo = -1
      while (end !== -1) {
        line(chunk, start, end)
        lastFrom = start
        lastTo = end
        start = end + 1
        end = chunk.indexOf(10, start)
      }
      // Decoded once per chunk, before the caller may reuse the chunk's memory.
      if (lastFrom !== -1) last = chunk.toString("utf8", lastFrom, lastTo)
      if (start < chunk.length) {
        const rest = chunk.subarray(start)
        // The bytes of an unfinished line are kept up to `MAX_LINE_BYTES`: past that only that it is
        // there (a file without newlines is not copied over and over).
        oversized ||= (carry?.length ?? 0) + rest.length > MAX_LINE_BYTES
        carry = oversized ? OVERSIZED : carry === undefined ? Buffer.from(rest) : Buffer.concat([carry, rest])
      }
    },
    end: (): Summary => ({ lines, first, last, atHead, headAt, unterminated: carry !== undefined && carry.length > 0 })
  }
}

/** The longest line a summary keeps: the daemon's lines are well under a kilobyte. @category constants */
export const MAX_LINE_BYTES = 1 << 20

/** What stands for the unfinished bytes of a line past `MAX_LINE_BYTES`. */
const OVERSIZED = Buffer.from(" ")

/** The summary of a log's text. @category reading */
export const summarize = (content: string, head: Head | undefined): Summary => {
  const summary = summarizer(head)
  summary.push(Buffer.from(content, "utf8"))
  return summary.end()
}

/** What is read from the log at a time (the start's summary, retention). @category constants */
export const CHUNK_BYTES = 1 << 20

/**
 * The summary of the log at `path`, read in chunks of 1 MB (an absent log is an empty one).
 *
 * @category reading
 */
export const summarizeFile = async (path: string, head: Head | undefined): Promise<Summary> => {
  const summary = summarizer(head)
  const handle = await NodeFs.open(path, "r").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined
    throw error
  })
  if (handle === undefined) return summary.end()
  try {
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES)
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null)
      if (bytesRead === 0) break
      summary.push(buffer.subarray(0, bytesRead))
    }
  } finally {
    await handle.close()
  }
  return summary.end()
}

/** The head of a summarized log: its complete lines and the hash of the last. @category reading */
export const headOf = (summary: Summary): { readonly lines: number; readonly hash: string } => ({
  lines: summary.lines,
  hash: (summary.last === undefined ? undefined : Line.parse(summary.last)?.hash) ?? Line.GENESIS
})

/**
 * Compares a log (whose chain was checked with `ActivityLine.verify`) with its recorded head.
 *
 * @category verifying
 */
export const compare = (content: string, head: Head | undefined): Comparison => compareSummary(summarize(content, head), head)

/**
 * Compares a summarized log with the head it was summarized for.
 *
 * @category verifying
 */
export const compareSummary = (summary: Summary, head: Head | undefined): Comparison => {
  const count = summary.lines
  if (head === undefined) return { _tag: "NoHead", lines: count }
  if (head.lines === 0 || head.hash === Line.GENESIS) return { _tag: "Matches", lines: count, ahead: count - head.lines, afterRetention: false }
  if (count >= head.lines && Line.parse(summary.atHead ?? "")?.hash === head.hash) {
    return { _tag: "Matches", lines: count, ahead: count - head.lines, afterRetention: false }
  }
  // Retention rewrote the log and a crash came before the head's update: the head's line moved
  // (the anchor line replaced the lines removed before it), or was itself removed and the anchor names it.
  const first = Line.parse(summary.first ?? "")
  if (first?.type === "anchor") {
    const at = summary.headAt
    if (at !== -1) return { _tag: "Matches", lines: count, ahead: count - (at + 1), afterRetention: true }
    if (first.prev === head.hash) return { _tag: "Matches", lines: count, ahead: count - 1, afterRetention: true }
  }
  if (count < head.lines) return { _tag: "Cut", lines: count, headLines: head.lines, missing: head.lines - count }
  return { _tag: "Diverged", lines: count, headLines: head.lines }
}

const thousands = (n: number) => n.toLocaleString("en-US")

/** One sentence on a comparison, as `activity --verify` and `doctor` print it. @category formatting */
export const describe = (comparison: Comparison): string => {
  switch (comparison._tag) {
    case "NoHead":
      return `${thousands(comparison.lines)} lines, the hash chain is intact; no head recorded yet (${HEAD_FILE}), so a cut at its end cannot be seen`
    case "Matches":
      return comparison.ahead === 0
        ? `${thousands(comparison.lines)} lines, the hash chain is intact and the log ends at its head`
        : `${thousands(comparison.lines)} lines, the hash chain is intact and the log extends its head by ${thousands(comparison.ahead)} line${comparison.ahead === 1 ? "" : "s"}` +
          ` (written after the head's last update${comparison.afterRetention ? ", around retention" : ""}; the head catches up with the next batch)`
    case "Cut":
      return `the log is cut at its end: ${thousands(comparison.missing)} line${comparison.missing === 1 ? "" : "s"} missing` +
        ` (it has ${thousands(comparison.lines)}, its head recorded ${thousands(comparison.headLines)})`
    case "Diverged":
      return `the log does not match its head: line ${thousands(comparison.headLines)} is not the line the head recorded (the end of the log was replaced)`
  }
}

/** Whether a comparison is a failure (exit 1). @category verifying */
export const failed = (comparison: Comparison): boolean => comparison._tag === "Cut" || comparison._tag === "Diverged"

// ===== The daemon's hook =====

/** What `ActivityLog` tells the head: lines appended, or the log rewritten (retention). @category models */
export interface Tracker {
  /** A batch of `lines` lines was appended, `hash` its last line's: the head moves to it (synchronous, per batch). */
  readonly appended: (lines: number, hash: string) => void
  /** The log was rewritten by retention, and this is its head now: recorded at once. */
  readonly rewritten: (head: { readonly lines: number; readonly hash: string }) => Effect.Effect<void>
  /** Records the head now if it changed (the log is closing). */
  readonly flush: Effect.Effect<void>
}

/**
 * The head of the log in `homeDir`, kept up to date by `ActivityLog`, from what the daemon found at
 * start (`existing`: the log's summary and the head recorded beside it). A log that does not
 * match its head at start is reported (the daemon keeps running; `activity --verify` says more).
 * A head that cannot be written is logged, never a reason to fail a call.
 *
 * @category constructors
 */
export const tracker = (
  homeDir: string,
  existing: { readonly summary: Summary; readonly head: Head | undefined },
  options: { readonly saveEvery?: Duration.DurationInput } = {}
) =>
  Effect.gen(function*() {
    let current = headOf(existing.summary)
    const comparison = compareSummary(existing.summary, existing.head)
    if (failed(comparison)) yield* Effect.logError(`activity.log at start: ${describe(comparison)}; run weaviate-mcp activity --verify`)
    // The log's lines reach the disk before the head that names them: after a power loss the head
    // may lag the log (accepted), never claim lines the log lost (which would read as a cut).
    const logPath = NodePath.join(homeDir, FileNames.activity)
    let saved = current
    const save = Effect.suspend(() => {
      if (saved === current) return Effect.void
      const next = current
      return Effect.tryPromise(() => syncFile(logPath)).pipe(
        Effect.catchAll((error) => Effect.logWarning("cannot sync activity.log before its head", String(error.error))),
        Effect.zipRight(Clock.currentTimeMillis),
        Effect.flatMap((now) => write(homeDir, next, now)),
        Effect.tap(() => Effect.sync(() => (saved = next))),
        Effect.catchAll((error) => Effect.logError("cannot write activity-head.json", error.reason))
      )
    })
    // Written when it changed, at most once per `saveEvery` (a second), and when the log closes: a
    // state file is not rewritten (nor the log flushed to disk) per call.
    const changed = yield* Queue.sliding<void>(1)
    yield* Effect.forkScoped(
      Queue.take(changed).pipe(
        Effect.zipRight(Effect.sleep(options.saveEvery ?? Duration.seconds(1))),
        Effect.zipRight(save),
        Effect.forever
      )
    )
    return {
      appended: (lines, hash) => {
        current = { lines: current.lines + lines, hash }
        Queue.unsafeOffer(changed, undefined)
      },
      rewritten: (rewrittenHead) =>
        Effect.suspend(() => {
          current = rewrittenHead
          return save
        }),
      flush: save
    } satisfies Tracker
  })

/** Flushes a file's data to the disk (any descriptor of the file will do). */
const syncFile = async (path: string) => {
  const handle = await NodeFs.open(path, "r")
  try {
    await handle.datasync()
  } finally {
    await handle.close()
  }
}
