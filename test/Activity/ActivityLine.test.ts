import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import * as NodeFs from "node:fs/promises"
import * as Line from "../../src/Activity/ActivityLine.ts"
import { ActivityLog } from "../../src/Activity/ActivityLog.ts"
import { Home } from "../../src/Base/Home.ts"
import * as TestHome from "../support/TestHome.ts"
import { sampleCall } from "./support.ts"

const call = (time: number, i: number): Line.Call =>
  sampleCall({ time, durationMs: i, statements: [Line.statementDigest(`{ Get { Article${i} { title } } }`)] })

const chain = (n: number) => {
  let prev = Line.GENESIS
  const lines: Array<string> = []
  for (let i = 0; i < n; i++) {
    const line = Line.formatCall(call(Date.UTC(2026, 0, 1, 0, i), i), prev)
    lines.push(line.text)
    prev = line.hash
  }
  return lines
}
const file = (lines: ReadonlyArray<string>) => lines.join("\n") + "\n"

describe("activity.log hash chain", () => {
  it("an intact chain verifies", () => {
    assert.deepStrictEqual(Line.verify(file(chain(5))), { _tag: "Valid", lines: 5 })
  })
  it("an edited line is named (1-based)", () => {
    const lines = chain(5)
    lines[2] = lines[2]!.replace('"outcome":"ok"', '"outcome":"error"')
    const result = Line.verify(file(lines))
    assert.strictEqual(result._tag, "Broken")
    assert.strictEqual(result._tag === "Broken" && result.line, 3)
  })
  it("a deleted line is named: the line after the gap", () => {
    const lines = chain(5)
    lines.splice(1, 1)
    const result = Line.verify(file(lines))
    assert.strictEqual(result._tag === "Broken" && result.line, 2)
  })
  it("a reordered pair is named", () => {
    const lines = chain(5)
    ;[lines[3], lines[2]] = [lines[2]!, lines[3]!]
    const result = Line.verify(file(lines))
    assert.strictEqual(result._tag === "Broken" && result.line, 3)
  })
  it("a deleted first line is named: the log no longer starts at its beginning", () => {
    const result = Line.verify(file(chain(3).slice(1)))
    assert.strictEqual(result._tag === "Broken" && result.line, 1)
  })
  it("a line still being written (no newline yet) is not counted", () => {
    const lines = chain(3)
    assert.deepStrictEqual(Line.verify(file(lines) + lines[0]!.slice(0, 20)), { _tag: "Valid", lines: 3 })
  })
})

describe("ActivityLog", () => {
  it.scoped("retention: lines older than 90 days are removed, an anchor is put first, and the chain still verifies (TestClock)", () =>
    Effect.gen(function*() {
      const home = yield* Home
      const log = yield* ActivityLog.make({ pruneEvery: "1 day" })
      const day = 86_400_000
      // The TestClock starts at 0: calls on days 0..9, then time moves to day 95.
      for (let d = 0; d < 10; d++) log.record(call(d * day, d))
      yield* log.flush
      yield* TestClock.adjust("95 days")
      // Retention reads the time from the Clock. Its daily run (the same effect on a schedule) may have
      // woken during the adjustment and pruned first: the anchor below counts what was removed either way.
      yield* log.prune
      log.record(call(95 * day, 95))
      yield* log.flush
      const content = yield* Effect.promise(() => NodeFs.readFile(home.path("activity"), "utf8"))
      const lines = content.trimEnd().split("\n")
      const first = Line.parse(lines[0]!)
      assert.strictEqual(first?.type, "anchor")
      assert.strictEqual(first?.type === "anchor" && first.pruned, 5)
      // Days 5..9 are kept (within 90 days of day 95), then the new call.
      assert.deepStrictEqual(lines.slice(1).map((l) => Line.parse(l)!.time), [5, 6, 7, 8, 9, 95].map((d) => new Date(d * day).toISOString()))
      assert.deepStrictEqual(Line.verify(content), { _tag: "Valid", lines: 7 })
      // Removing the anchor shows.
      assert.strictEqual(Line.verify(lines.slice(1).join("\n") + "\n")._tag, "Broken")
    }).pipe(Effect.provide(TestHome.layer)))

  it.scoped("a log that cannot be written never fails or blocks the call that records into it", () =>
    Effect.gen(function*() {
      const home = yield* Home
      // A directory where the file should be: every append fails.
      yield* Effect.promise(() => NodeFs.mkdir(home.path("activity")))
      const log = yield* ActivityLog.make()
      const started = performance.now()
      for (let i = 0; i < 1000; i++) log.record(call(i, i))
      // Recording is synchronous queueing: a thousand calls take no measurable I/O time.
      assert.isBelow(performance.now() - started, 250)
      yield* log.flush
    }).pipe(Effect.provide(TestHome.layer)))

  it.scoped("a clean close writes every recorded call; statements appear only as digests", () =>
    Effect.gen(function*() {
      const home = yield* Home
      yield* Effect.scoped(Effect.gen(function*() {
        const log = yield* ActivityLog.make()
        for (let i = 0; i < 500; i++) log.record(call(i, i))
      }))
      const content = yield* Effect.promise(() => NodeFs.readFile(home.path("activity"), "utf8"))
      assert.deepStrictEqual(Line.verify(content), { _tag: "Valid", lines: 500 })
      assert.notInclude(content, "Article1")
      assert.include(content, Line.statementDigest("{ Get { Article1 { title } } }"))
      const stat = yield* Effect.promise(() => NodeFs.stat(home.path("activity")))
      assert.strictEqual(stat.mode & 0o777, 0o600)
    }).pipe(Effect.provide(TestHome.layer)))
})
