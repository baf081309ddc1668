/**
 * The daemon never holds the activity log whole: at start it reads the log in chunks for its last
 * line, its line count and its head; retention reads the lines it drops and copies the rest behind
 * its anchor, a megabyte at a time. A 123 MB log had taken the start from 0.35 s to 0.9–1.6 s and
 * left 215 MB resident (docs/activity.md).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { vi } from "vitest"
import { ActivityLog } from "../../src/Activity/ActivityLog.ts"
import * as ActivityHead from "../../src/Activity/ActivityHead.ts"
import * as Line from "../../src/Activity/ActivityLine.ts"
import * as TestHome from "../support/TestHome.ts"
import { sampleCall } from "./support.ts"

/** Whole reads of an `activity.log` (`readFile`), counted. */
const wholeReads = vi.hoisted(() => ({ count: 0 }))
vi.mock("node:fs/promises", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:fs/promises")>()
  const readFile = ((...args: Parameters<typeof actual.readFile>) => {
    if (String(args[0]).endsWith("activity.log")) wholeReads.count++
    return actual.readFile(...args)
  }) as typeof actual.readFile
  return { ...actual, readFile, default: { ...actual, readFile } }
})

const DAY = 24 * 60 * 60 * 1000

/** A chained log of `n` calls, the first `firstAge` ms ago, one a second after it. */
const writeLog = (dir: string, n: number, firstAge: number) => {
  const start = Date.now() - firstAge
  let prev = Line.GENESIS
  let text = ""
  for (let i = 0; i < n; i++) {
    const line = Line.formatCall(sampleCall({ time: start + i * 1000, connection: `c${i}` }), prev)
    prev = line.hash
    text += `${line.text}\n`
  }
  NodeFs.writeFileSync(NodePath.join(dir, "activity.log"), text, { mode: 0o600 })
  return prev
}

/** Appends `n` recent calls (the last of them now) to the log, chained on `prev`. */
const writeRecent = (dir: string, n: number, prev: string) => {
  let text = ""
  for (let i = 0; i < n; i++) {
    const line = Line.formatCall(sampleCall({ time: Date.now() - (n - i) * 1000, connection: `r${i}` }), prev)
    prev = line.hash
    text += `${line.text}\n`
  }
  NodeFs.appendFileSync(NodePath.join(dir, "activity.log"), text)
}

/** The log's entries after the layer has started, recorded one call and closed. */
const startRecordAndClose = (dir: string) =>
  Effect.gen(function*() {
    const log = yield* ActivityLog
    const readsAtStart = wholeReads.count
    log.record(sampleCall({ connection: "new" }))
    yield* log.flush
    return readsAtStart
  }).pipe(Effect.provide(ActivityLog.layer().pipe(Layer.provide(TestHome.at(dir)))))

describe("the activity log at the daemon's start", () => {
  it.scopedLive("a log within retention is never read whole, and the next line chains on its last", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir()
      const last = writeLog(dir, 5000, 2 * DAY)
      assert.isAbove(NodeFs.statSync(NodePath.join(dir, "activity.log")).size, 2 << 20)
      wholeReads.count = 0
      const readsAtStart = yield* startRecordAndClose(dir)
      assert.strictEqual(readsAtStart, 0)
      const text = NodeFs.readFileSync(NodePath.join(dir, "activity.log"), "utf8")
      const entries = text.split("\n").filter((l) => l.length > 0).map((l) => Line.parse(l)!)
      assert.strictEqual(entries.length, 5001)
      assert.strictEqual(entries[5000]!.prev, last)
      assert.deepStrictEqual(Line.verify(text), { _tag: "Valid", lines: 5001 })
    }))

  it.scopedLive("a log whose first calls are past retention is pruned without being read whole, its anchor first and its chain intact", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir()
      // 3,000 calls 91 days old (more than the megabyte retention reads at a time), then 2,000 recent ones.
      const dropped = writeLog(dir, 3000, 91 * DAY)
      const oldPart = NodeFs.readFileSync(NodePath.join(dir, "activity.log"), "utf8")
      writeRecent(dir, 2000, dropped)
      assert.isAbove(oldPart.length, 1 << 20)
      wholeReads.count = 0
      const readsAtStart = yield* startRecordAndClose(dir)
      assert.strictEqual(readsAtStart, 0)
      const text = NodeFs.readFileSync(NodePath.join(dir, "activity.log"), "utf8")
      const entries = text.split("\n").filter((l) => l.length > 0).map((l) => Line.parse(l)!)
      const anchor = entries[0]!
      assert.strictEqual(anchor.type, "anchor")
      assert.strictEqual(anchor.type === "anchor" && anchor.pruned, 3000)
      assert.strictEqual(anchor.prev, dropped)
      assert.deepStrictEqual(entries.slice(1).map((e) => (e.type === "call" ? e.connection : e.type)), [...Array.from({ length: 2000 }, (_, i) => `r${i}`), "new"])
      assert.deepStrictEqual(Line.verify(text), { _tag: "Valid", lines: 2002 })
      // The head names the log's last line.
      const head = yield* ActivityHead.read(dir)
      assert.deepStrictEqual(ActivityHead.compare(text, head), { _tag: "Matches", lines: 2002, ahead: 0, afterRetention: false })
    }))

  it.scopedLive("retention of a log that opens with an anchor adds to its count; a log left with nothing keeps its unterminated tail", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir()
      const log = NodePath.join(dir, "activity.log")
      // An earlier retention's anchor (7 calls), 5 calls past retention, 5 within it.
      const anchor = Line.formatAnchor(Date.now() - 100 * DAY, 7, Line.GENESIS)
      let prev = anchor.hash
      let text = `${anchor.text}\n`
      const ages = [95, 94, 93, 92, 91, 5, 4, 3, 2, 1]
      const hashes: Array<string> = []
      for (const [i, age] of ages.entries()) {
        const line = Line.formatCall(sampleCall({ time: Date.now() - age * DAY, connection: `c${i}` }), prev)
        prev = line.hash
        hashes.push(line.hash)
        text += `${line.text}\n`
      }
      NodeFs.writeFileSync(log, text, { mode: 0o600 })
      yield* startRecordAndClose(dir)
      const entries = NodeFs.readFileSync(log, "utf8").split("\n").filter((l) => l.length > 0).map((l) => Line.parse(l)!)
      const first = entries[0]!
      assert.isTrue(first.type === "anchor" && first.pruned === 12 && first.prev === hashes[4])
      assert.deepStrictEqual(entries.slice(1).map((e) => (e.type === "call" ? e.connection : e.type)), ["c5", "c6", "c7", "c8", "c9", "new"])
      assert.deepStrictEqual(Line.verify(NodeFs.readFileSync(log, "utf8")), { _tag: "Valid", lines: 7 })

      // Every call past retention, and a last line a crash left unterminated: the anchor, then that tail.
      const dir2 = yield* TestHome.tempDir()
      const log2 = NodePath.join(dir2, "activity.log")
      const last = writeLog(dir2, 20, 95 * DAY)
      NodeFs.appendFileSync(log2, `{"v":1,"type":"call","tru`)
      const dropped = yield* Effect.gen(function*() {
        return yield* Effect.flatMap(ActivityLog, (activity) => activity.prune)
      }).pipe(Effect.provide(ActivityLog.layer().pipe(Layer.provide(TestHome.at(dir2)))))
      const after = NodeFs.readFileSync(log2, "utf8")
      const lines = after.split("\n")
      const only = Line.parse(lines[0]!)!
      assert.isTrue(only.type === "anchor" && only.pruned === 20 && only.prev === last, after.slice(0, 300))
      assert.strictEqual(lines[1], `{"v":1,"type":"call","tru`)
      assert.strictEqual(dropped, 0, "the start pruned them already")
      const head = yield* ActivityHead.read(dir2)
      assert.deepStrictEqual(head?.lines, 1)
      assert.deepStrictEqual(head?.hash, only.hash)
    }))
})

