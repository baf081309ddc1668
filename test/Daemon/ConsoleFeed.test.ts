/**
 * The console's view of the calls costs nothing while nobody watches: it subscribes to the activity
 * log's writer only while a live stream listens (and drops the subscription with the last one), and
 * reads the last hour and each token's last use from the end of activity.log when a page asks. The
 * real ActivityLog in a temporary home.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { ActivityLog } from "../../src/Activity/ActivityLog.ts"
import type { Call } from "../../src/Activity/ActivityLine.ts"
import { Home } from "../../src/Base/Home.ts"
import * as ConsoleFeed from "../../src/Daemon/ConsoleFeed.ts"
import * as TestHome from "../support/TestHome.ts"

const call = (over: Partial<Call> = {}): Call => ({
  time: Date.now(),
  client: "claude-code",
  clientVersion: "1.0",
  principal: "tok_1",
  principalName: "laptop",
  era: "modern",
  method: "tools/call",
  tool: "count_rows",
  connection: "local",
  outcome: "ok",
  code: null,
  durationMs: 12.34,
  statements: [],
  collection: "Article",
  ...over
})

/** The real log, with its subscriptions counted. */
const counted = Effect.gen(function*() {
  const log = yield* ActivityLog
  let active = 0
  const spied: typeof ActivityLog.Service = {
    ...log,
    subscribe: (listener) => {
      active++
      const off = log.subscribe(listener)
      return () => {
        active--
        off()
      }
    }
  }
  return { log: spied, active: () => active }
})

describe("the console's feed", () => {
  it.scoped("subscribes to the activity log only while a live stream listens", () =>
    Effect.gen(function*() {
      const { active, log } = yield* counted
      const home = yield* Home
      const feed = yield* ConsoleFeed.make(log, home.path("activity"), Date.now)
      assert.strictEqual(active(), 0)
      const seen: Array<ConsoleFeed.CallView> = []
      const stopOne = feed.listen((calls) => seen.push(...calls))
      const stopTwo = feed.listen(() => undefined)
      assert.strictEqual(active(), 1)
      log.record(call())
      yield* log.flush
      assert.deepStrictEqual(seen.map((c) => [c.client, c.principalName, c.tool, c.connection, c.collection, c.outcome, c.durationMs]), [
        ["claude-code", "laptop", "count_rows", "local", "Article", "ok", 12.3]
      ])
      stopOne()
      assert.strictEqual(active(), 1)
      stopTwo()
      assert.strictEqual(active(), 0)
      log.record(call())
      yield* log.flush
      assert.strictEqual(seen.length, 1)
    }).pipe(Effect.provide(ActivityLog.layer()), Effect.provide(TestHome.layer)))

  it.scoped("reads the last hour and each principal's last use from the end of activity.log", () =>
    Effect.gen(function*() {
      const log = yield* ActivityLog
      const home = yield* Home
      const now = Date.now()
      log.record(call({ time: now - 2 * 60 * 60 * 1000, principal: "tok_old", tool: "old_call" }))
      log.record(call({ time: now - 60_000, principal: "tok_1" }))
      log.record(call({ time: now - 1_000, principal: "tok_1", tool: "list_tables" }))
      const feed = yield* ConsoleFeed.make(log, home.path("activity"), () => now)
      const tail = yield* feed.tail
      assert.deepStrictEqual(tail.calls.map((c) => c.tool), ["count_rows", "list_tables"])
      assert.strictEqual(tail.lastUse.get("tok_1"), now - 1_000)
      assert.strictEqual(tail.lastUse.get("tok_old"), now - 2 * 60 * 60 * 1000)
      // A call recorded since is in the next read (the log has grown).
      log.record(call({ time: now, tool: "get_row" }))
      assert.include((yield* feed.tail).calls.map((c) => c.tool), "get_row")
    }).pipe(Effect.provide(ActivityLog.layer()), Effect.provide(TestHome.layer)))

  it.scoped("a listener that throws loses nothing: the call is still written to activity.log", () =>
    Effect.gen(function*() {
      const log = yield* ActivityLog
      const home = yield* Home
      const off = log.subscribe(() => {
        throw new Error("listener broke")
      })
      log.record(call({ tool: "after_a_broken_listener" }))
      yield* log.flush
      off()
      const feed = yield* ConsoleFeed.make(log, home.path("activity"), Date.now)
      assert.include((yield* feed.tail).calls.map((c) => c.tool), "after_a_broken_listener")
    }).pipe(Effect.provide(ActivityLog.layer()), Effect.provide(TestHome.layer)))
})
