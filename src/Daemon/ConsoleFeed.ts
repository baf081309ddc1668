/**
 * What the console shows of the calls: the last hour of them (for the live table and the charts),
 * each token's last use, and the live stream, all fed by the activity log's writer
 * (`ActivityLog.subscribe`), so the console sees exactly the calls the log records and `/mcp` pays
 * nothing for it.
 *
 * At start the end of `activity.log` (its last `SEED_BYTES`) is read once, so the last hour and the
 * tokens' last use survive a restart of the daemon.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs/promises"
import type { ActivityLog } from "../Activity/ActivityLog.ts"
import * as Line from "../Activity/ActivityLine.ts"

/** How far back the console keeps calls. @category constants */
export const WINDOW_MS = 60 * 60 * 1000

/** Most calls kept in the window (the charts need no more). @category constants */
export const MAX_CALLS = 20_000

/** How much of the end of activity.log is read at start. @category constants */
export const SEED_BYTES = 8 * 1024 * 1024

/** A call as the page sees it. @category models */
export interface CallView {
  readonly time: number
  readonly client: string | null
  readonly clientVersion: string | null
  readonly principal: string | null
  readonly principalName: string | null
  readonly method: string
  readonly tool: string | null
  readonly connection: string | null
  readonly collection: string | null
  readonly outcome: Line.Outcome
  readonly code: number | null
  readonly durationMs: number
}

/** @category conversions */
export const viewOf = (call: Line.Call): CallView => ({
  time: call.time,
  client: call.client,
  clientVersion: call.clientVersion,
  principal: call.principal,
  principalName: call.principalName,
  method: call.method,
  tool: call.tool,
  connection: call.connection,
  collection: call.collection ?? null,
  outcome: call.outcome,
  code: call.code,
  durationMs: Math.round(call.durationMs * 10) / 10
})

/** @category models */
export interface Feed {
  /** The calls of the last hour, oldest first. */
  readonly recent: (now: number) => ReadonlyArray<CallView>
  /** Epoch milliseconds of each principal's last call seen. */
  readonly lastUse: (principal: string) => number | undefined
  /** Live batches of calls; returns what unsubscribes. */
  readonly listen: (listener: (calls: ReadonlyArray<CallView>) => void) => () => void
}

/** The calls at the end of an activity log (at most `SEED_BYTES`), as views; none when it cannot be read. */
const readTail = async (path: string): Promise<ReadonlyArray<CallView>> => {
  const handle = await NodeFs.open(path, "r").catch(() => undefined)
  if (handle === undefined) return []
  try {
    const { size } = await handle.stat()
    const start = Math.max(0, size - SEED_BYTES)
    const buffer = Buffer.alloc(size - start)
    await handle.read(buffer, 0, buffer.length, start)
    const lines = buffer.toString("utf8").split("\n")
    // A read that starts mid-line drops that line; the last one may be unterminated.
    if (start > 0) lines.shift()
    lines.pop()
    const calls: Array<CallView> = []
    for (const text of lines) {
      const entry = Line.parse(text)
      if (entry === undefined || entry.type !== "call") continue
      calls.push(viewOf({ ...entry, time: Date.parse(entry.time), collection: null }))
    }
    return calls
  } finally {
    await handle.close()
  }
}

/**
 * The feed over an activity log (and the file it writes, for the seed).
 *
 * @category constructors
 */
export const make = (log: typeof ActivityLog.Service, path: string, now: () => number) =>
  Effect.gen(function*() {
    let calls: Array<CallView> = []
    const last = new Map<string, number>()
    const listeners = new Set<(calls: ReadonlyArray<CallView>) => void>()
    const add = (views: ReadonlyArray<CallView>) => {
      for (const view of views) {
        calls.push(view)
        if (view.principal !== null) last.set(view.principal, Math.max(last.get(view.principal) ?? 0, view.time))
      }
      trim(now())
    }
    const trim = (at: number) => {
      let drop = 0
      while (drop < calls.length && (calls[drop]!.time < at - WINDOW_MS || calls.length - drop > MAX_CALLS)) drop++
      if (drop > 0) calls = calls.slice(drop)
    }
    // Every seeded call counts for last use; only the last hour stays in the window.
    add(yield* Effect.promise(() => readTail(path)))
    const unsubscribe = log.subscribe((batch) => {
      const views = batch.map(viewOf)
      add(views)
      for (const listener of listeners) listener(views)
    })
    yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
    return {
      recent: (at) => {
        trim(at)
        return calls.slice()
      },
      lastUse: (principal) => last.get(principal),
      listen: (listener) => {
        listeners.add(listener)
        return () => void listeners.delete(listener)
      }
    } satisfies Feed
  })
