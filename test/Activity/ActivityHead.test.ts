/**
 * The head of activity.log (issue 30, docs/activity.md): the daemon records the last line's hash and
 * the line count after each batch and each retention; `activity --verify` reports a log shorter than
 * its head as cut at its end, accepts a log that extends its head (a crash between a batch and its
 * head update), and rejects one that diverges from it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as TestClock from "effect/TestClock"
import * as TestServices from "effect/TestServices"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Head from "../../src/Activity/ActivityHead.ts"
import * as Line from "../../src/Activity/ActivityLine.ts"
import { ActivityLog } from "../../src/Activity/ActivityLog.ts"
import { Home } from "../../src/Base/Home.ts"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"
import { sampleCall } from "./support.ts"

const call = (time: number, i: number, tool = "execute_query"): Line.Call => sampleCall({ time, durationMs: i, tool })

/** `n` chained lines after `prev`. */
const chain = (n: number, prev = Line.GENESIS, tool = "execute_query", from = 0) => {
  const lines: Array<string> = []
  for (let i = from; i < from + n; i++) {
    const line = Line.formatCall(call(Date.UTC(2026, 0, 1, 0, i), i, tool), prev)
    lines.push(line.text)
    prev = line.hash
  }
  return lines
}
const text = (lines: ReadonlyArray<string>) => lines.join("\n") + "\n"
const headOf = (lines: ReadonlyArray<string>): Head.Head => ({ version: 1, ...Head.of(text(lines)), updatedAt: "2026-01-01T00:00:00.000Z" })

describe("ActivityHead.compare", () => {
  it("a log that ends at its head matches", () => {
    const lines = chain(10)
    assert.deepStrictEqual(Head.compare(text(lines), headOf(lines)), { _tag: "Matches", lines: 10, ahead: 0, afterRetention: false })
  })

  it("a log shorter than its head is cut at its end, with how many lines are missing", () => {
    const lines = chain(100)
    const comparison = Head.compare(text(lines.slice(0, 50)), headOf(lines))
    assert.deepStrictEqual(comparison, { _tag: "Cut", lines: 50, headLines: 100, missing: 50 })
    assert.isTrue(Head.failed(comparison))
    assert.strictEqual(Head.describe(comparison), "the log is cut at its end: 50 lines missing (it has 50, its head recorded 100)")
  })

  it("a crash between a batch and its head update is not tampering: a log that extends its head is accepted", () => {
    const lines = chain(12)
    const comparison = Head.compare(text(lines), headOf(lines.slice(0, 9)))
    assert.deepStrictEqual(comparison, { _tag: "Matches", lines: 12, ahead: 3, afterRetention: false })
    assert.isFalse(Head.failed(comparison))
    assert.match(Head.describe(comparison), /extends its head by 3 lines/)
  })

  it("a log whose end was replaced by another valid chain diverges from its head", () => {
    const lines = chain(10)
    const replaced = [...lines.slice(0, 5), ...chain(6, Line.parse(lines[4]!)!.hash, "other_tool", 5)]
    assert.strictEqual(Line.verify(text(replaced))._tag, "Valid")
    const comparison = Head.compare(text(replaced), headOf(lines))
    assert.deepStrictEqual(comparison, { _tag: "Diverged", lines: 11, headLines: 10 })
    assert.isTrue(Head.failed(comparison))
  })

  it("a crash between retention's rewrite and its head update is not tampering (the head's line moved after an anchor)", () => {
    const lines = chain(10)
    const anchor = Line.formatAnchor(Date.UTC(2026, 5, 1), 6, Line.parse(lines[5]!)!.hash)
    const pruned = [anchor.text, ...lines.slice(6)]
    const comparison = Head.compare(text(pruned), headOf(lines))
    assert.deepStrictEqual(comparison, { _tag: "Matches", lines: 5, ahead: 0, afterRetention: true })
    // Retention that kept nothing: the anchor alone names the head's line.
    const emptied = [Line.formatAnchor(Date.UTC(2026, 5, 1), 10, Line.parse(lines[9]!)!.hash).text]
    assert.strictEqual(Head.compare(text(emptied), headOf(lines))._tag, "Matches")
    // But a pruned log cut at its end is still cut.
    assert.strictEqual(Head.compare(text(pruned.slice(0, 3)), headOf(lines))._tag, "Cut")
  })

  it("without a head, only the chain is known, and the sentence says a cut cannot be seen", () => {
    const comparison = Head.compare(text(chain(3)), undefined)
    assert.strictEqual(comparison._tag, "NoHead")
    assert.match(Head.describe(comparison), /no head recorded yet/)
  })
})

describe("the daemon records the head", () => {
  /** Waits (bounded, real time) until the head's saver, woken on the TestClock, has written `lines`. */
  const headWith = (dir: string, lines: number) =>
    Effect.gen(function*() {
      for (let i = 0; i < 300; i++) {
        const head = yield* Head.read(dir)
        if (head?.lines === lines) return head
        yield* TestServices.provideLive(Effect.sleep("10 millis"))
      }
      return assert.fail(`no head with ${lines} lines was written`)
    })

  it.scoped("when it moved, at most once a second: activity-head.json (0600) names the last line and the line count", () =>
    Effect.gen(function*() {
      const home = yield* Home
      const log = yield* ActivityLog.make()
      for (let i = 0; i < 7; i++) log.record(call(i, i))
      yield* log.flush
      yield* TestClock.adjust("1 second")
      const head = yield* headWith(home.dir, 7)
      const content = NodeFs.readFileSync(home.path("activity"), "utf8")
      assert.strictEqual(head.hash, Line.lastHash(content))
      assert.strictEqual(NodeFs.statSync(Head.pathIn(home.dir)).mode & 0o777, 0o600)
      assert.deepStrictEqual(Head.compare(content, head), { _tag: "Matches", lines: 7, ahead: 0, afterRetention: false })
    }).pipe(Effect.provide(TestHome.layer)))

  it.scoped("not per batch: batches within the same second leave the head file alone until the second has passed", () =>
    Effect.gen(function*() {
      const home = yield* Home
      const log = yield* ActivityLog.make()
      log.record(call(0, 0))
      yield* log.flush
      yield* TestClock.adjust("1 second")
      yield* headWith(home.dir, 1)
      const written = NodeFs.statSync(Head.pathIn(home.dir)).ino
      for (let i = 1; i < 20; i++) {
        log.record(call(i, i))
        yield* log.flush
      }
      assert.strictEqual(NodeFs.statSync(Head.pathIn(home.dir)).ino, written, "not rewritten within the second")
      assert.strictEqual((yield* Head.read(home.dir))?.lines, 1)
      yield* TestClock.adjust("1 second")
      yield* headWith(home.dir, 20)
    }).pipe(Effect.provide(TestHome.layer)))

  it.effect("the head is recorded when the log closes, however recent the last batch", () =>
    Effect.gen(function*() {
      const dir = TestHome.tempDirSync()
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* ActivityLog.make()
        for (let i = 0; i < 3; i++) log.record(call(i, i))
      })).pipe(Effect.provide(TestHome.at(dir)))
      assert.strictEqual((yield* Head.read(dir))?.lines, 3)
    }))

  it.scoped("retention updates the head in the same step (TestClock)", () =>
    Effect.gen(function*() {
      const home = yield* Home
      const log = yield* ActivityLog.make({ pruneEvery: "1 day" })
      const day = 86_400_000
      for (let d = 0; d < 10; d++) log.record(call(d * day, d))
      yield* log.flush
      yield* TestClock.adjust("95 days")
      yield* log.prune
      const content = NodeFs.readFileSync(home.path("activity"), "utf8")
      const head = yield* Head.read(home.dir)
      // The anchor and days 5..9.
      assert.strictEqual(head?.lines, 6)
      assert.strictEqual(head?.hash, Line.lastHash(content))
      assert.deepStrictEqual(Head.compare(content, head), { _tag: "Matches", lines: 6, ahead: 0, afterRetention: false })
    }).pipe(Effect.provide(TestHome.layer)))
})

describe("the daemon at start", () => {
  it.scoped("a log that no longer matches its head is logged as an error naming the lines missing", () =>
    Effect.gen(function*() {
      const dir = TestHome.tempDirSync()
      const lines = chain(12)
      yield* Head.write(dir, Head.of(text(lines)), 0)
      const messages: Array<string> = []
      const logger = Logger.make(({ logLevel, message }) => messages.push(`${logLevel.label} ${Array.isArray(message) ? message.join(" ") : String(message)}`))
      const log = NodePath.join(dir, "activity.log")
      NodeFs.writeFileSync(log, text(lines.slice(0, 10)), { mode: 0o600 })
      const recorded = yield* Head.read(dir)
      const summary = yield* Effect.promise(() => Head.summarizeFile(log, recorded))
      yield* Head.tracker(dir, { summary, head: recorded }).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
      assert.deepStrictEqual(messages, ["ERROR activity.log at start: the log is cut at its end: 2 lines missing (it has 10, its head recorded 12); run weaviate-mcp activity --verify"])
    }))
})

describe("activity --verify compares the log with its head", () => {
  const homeWith = (log: ReadonlyArray<string>, head: ReadonlyArray<string>) => {
    const home = TestHome.tempDirSync()
    NodeFs.writeFileSync(NodePath.join(home, "activity.log"), text(log), { mode: 0o600 })
    NodeFs.writeFileSync(Head.pathIn(home), JSON.stringify(headOf(head)), { mode: 0o600 })
    return home
  }

  it("a log with its last 50 lines cut off: exit 1, cut at its end, 50 lines missing", async () => {
    const lines = chain(200)
    const r = await Cli.run(["activity", "--verify", "--home", homeWith(lines.slice(0, 150), lines)])
    assert.strictEqual(r.code, 1)
    assert.include(r.stderr, "activity.log: the log is cut at its end: 50 lines missing (it has 150, its head recorded 200)")
  })

  it("a log ahead of its head (crash before the head update): exit 0, says so", async () => {
    const lines = chain(20)
    const r = await Cli.run(["activity", "--verify", "--home", homeWith(lines, lines.slice(0, 18))])
    assert.strictEqual(r.code, 0, r.stderr)
    assert.include(r.stdout, "20 lines, the hash chain is intact and the log extends its head by 2 lines")
  })

  it("a log that ends at its head: exit 0", async () => {
    const lines = chain(20)
    const r = await Cli.run(["activity", "--verify", "--home", homeWith(lines, lines)])
    assert.strictEqual(r.code, 0, r.stderr)
    assert.include(r.stdout, "activity.log: 20 lines, the hash chain is intact and the log ends at its head")
  })
})

describe("a log is summarized in chunks, never held whole", () => {
  it("the summary of a log pushed in chunks of any size is the summary of its whole text", () => {
    // Retention's anchor first, six calls, an unterminated last line (a crash); the head names the
    // third call, recorded before retention moved it (at the fifth line then).
    const anchor = Line.formatAnchor(Date.UTC(2026, 0, 1), 3, Line.GENESIS)
    const lines = [anchor.text, ...chain(6, anchor.hash)]
    const content = `${text(lines)}{"v":1,"type":"call","tru`
    const head = { ...headOf(lines.slice(0, 4)), lines: 5 }
    const whole = Head.summarize(content, head)
    assert.strictEqual(whole.lines, 7)
    assert.strictEqual(whole.first, lines[0])
    assert.strictEqual(whole.last, lines[6])
    assert.strictEqual(whole.atHead, lines[4])
    assert.strictEqual(whole.headAt, 3)
    assert.isTrue(whole.unterminated)
    assert.deepStrictEqual(Head.compareSummary(whole, head), { _tag: "Matches", lines: 7, ahead: 3, afterRetention: true })
    const bytes = Buffer.from(content, "utf8")
    for (const size of [1, 2, 3, 7, 64, 333, 1000, bytes.length]) {
      const summary = Head.summarizer(head)
      for (let at = 0; at < bytes.length; at += size) summary.push(Buffer.from(bytes.subarray(at, at + size)))
      assert.deepStrictEqual(summary.end(), whole, `chunks of ${size} bytes`)
    }
  })

  it("a chunk's memory may be reused once pushed: the summary keeps no view of it", () => {
    const lines = chain(4)
    const bytes = Buffer.from(text(lines), "utf8")
    const summary = Head.summarizer(undefined)
    const chunk = Buffer.alloc(50)
    for (let at = 0; at < bytes.length; at += chunk.length) {
      const n = bytes.copy(chunk, 0, at, at + chunk.length)
      summary.push(chunk.subarray(0, n))
    }
    chunk.fill(0)
    assert.deepStrictEqual(summary.end(), Head.summarize(text(lines), undefined))
  })

  it.effect("a log file's summary is its text's, read in chunks; an absent log is an empty one", () =>
    Effect.promise(async () => {
      const dir = TestHome.tempDirSync()
      const log = NodePath.join(dir, "activity.log")
      const lines = chain(3000)
      NodeFs.writeFileSync(log, text(lines), { mode: 0o600 })
      assert.isAbove(NodeFs.statSync(log).size, 1 << 20)
      const head = headOf(lines.slice(0, 2500))
      assert.deepStrictEqual(await Head.summarizeFile(log, head), Head.summarize(text(lines), head))
      assert.deepStrictEqual(await Head.summarizeFile(NodePath.join(dir, "none.log"), head), Head.summarize("", head))
    }))

  it("a line longer than MAX_LINE_BYTES is counted, not kept: a log without newlines is not held", () => {
    const lines = chain(3)
    const huge = "x".repeat(Head.MAX_LINE_BYTES + 10)
    const summary = Head.summarizer(undefined)
    // The over-long line first, pushed in pieces, then the chain; then an unfinished over-long tail.
    for (let at = 0; at < huge.length; at += 100_000) summary.push(Buffer.from(huge.slice(at, at + 100_000)))
    summary.push(Buffer.from(`\n${text(lines)}`))
    for (let i = 0; i < 30; i++) summary.push(Buffer.from(huge.slice(0, 100_000)))
    const result = summary.end()
    assert.strictEqual(result.lines, 4)
    assert.strictEqual(result.first, "")
    assert.strictEqual(result.last, lines[2])
    assert.isTrue(result.unterminated)
    // Lines under the bound are kept whole, across chunks.
    const fits = Head.summarize(`${"y".repeat(Head.MAX_LINE_BYTES - 1)}\n`, undefined)
    assert.strictEqual(fits.first?.length, Head.MAX_LINE_BYTES - 1)
  })
})

