/**
 * The activity log's writer: one descriptor held open across batches (no open and close per call),
 * opened again when another process rotates, replaces or removes the file, and no line lost on the way.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { Home } from "../../src/Base/Home.ts"
import { ActivityLog } from "../../src/Activity/ActivityLog.ts"
import type { Call } from "../../src/Activity/ActivityLine.ts"
import * as TestHome from "../support/TestHome.ts"

const call = (n: number): Call => ({
  time: Date.now(),
  client: "test",
  clientVersion: null,
  principal: "p",
  principalName: "p",
  era: "modern",
  method: "tools/call",
  tool: `tool-${n}`,
  connection: null,
  outcome: "ok",
  code: null,
  durationMs: 1,
  statements: []
})

const lines = (file: string) => NodeFs.existsSync(file) ? NodeFs.readFileSync(file, "utf8").split("\n").filter((l) => l.length > 0) : []

/** The descriptors of this process open on `file` (Linux: /proc/self/fd). */
const descriptorsOn = (file: string) =>
  NodeFs.readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return NodeFs.readlinkSync(`/proc/self/fd/${fd}`) === file
    } catch {
      return false
    }
  })

const withLog = <A, E>(use: (log: ActivityLog["Type"], file: string) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const home = yield* Home
    const log = yield* ActivityLog
    return yield* use(log, home.path("activity"))
  }).pipe(Effect.provide(ActivityLog.layer().pipe(Layer.provideMerge(TestHome.layer))))

/** Records and flushes calls until a line reaches `file` (the watcher has reopened it); bounded to 200 tries. */
const untilLineIn = (log: ActivityLog["Type"], file: string, first: number) =>
  Effect.gen(function*() {
    for (let n = first; n < first + 200; n++) {
      log.record(call(n))
      yield* log.flush
      if (lines(file).length > 0) return n
      yield* Effect.sleep("25 millis")
    }
    return assert.fail(`no line reached ${file}`)
  })

describe.skipIf(process.platform !== "linux")("ActivityLog (descriptors read from /proc/self/fd)", () => {
  it.live("the log is appended through one descriptor held open across batches, not opened per batch", () =>
    withLog((log, file) =>
      Effect.gen(function*() {
        log.record(call(1))
        yield* log.flush
        const first = descriptorsOn(file)
        assert.lengthOf(first, 1, "one descriptor open on activity.log after a batch")
        log.record(call(2))
        yield* log.flush
        assert.deepStrictEqual(descriptorsOn(file), first, "the same descriptor after the next batch")
        assert.lengthOf(lines(file), 2)
      })
    ))

  it.live("a log rotated by another process (renamed away) is opened again at its path, and no line is lost", () =>
    withLog((log, file) =>
      Effect.gen(function*() {
        log.record(call(1))
        yield* log.flush
        const rotated = `${file}.1`
        NodeFs.renameSync(file, rotated)
        const last = yield* untilLineIn(log, file, 2)
        const all = [...lines(rotated), ...lines(file)].map((l) => JSON.parse(l).tool as string)
        assert.deepStrictEqual(all, Array.from({ length: last }, (_, i) => `tool-${i + 1}`), "every call once, in order")
        assert.strictEqual(NodeFs.statSync(file).mode & 0o777, 0o600)
        assert.lengthOf(descriptorsOn(rotated), 0, "the rotated file is no longer held")
      })
    ))

  it.live("a log removed by another process is created again at its path", () =>
    withLog((log, file) =>
      Effect.gen(function*() {
        log.record(call(1))
        yield* log.flush
        NodeFs.rmSync(file)
        yield* untilLineIn(log, file, 2)
        assert.isAbove(lines(file).length, 0)
        assert.strictEqual(NodePath.basename(file), "activity.log")
      })
    ))
})
