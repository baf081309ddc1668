/**
 * What the console shows of the calls, at no cost to a daemon nobody watches:
 *
 * - **Live**: the calls as the activity log's writer takes them (`ActivityLog.subscribe`, once per
 *   batch, off the request path), and only while a console page is listening: the subscription is
 *   made for the first live stream and dropped with the last.
 * - **The last hour, and each token's last use**: read from the end of `activity.log` (its last
 *   `TAIL_BYTES`) when a page asks, after the log has written what it holds; a read is reused for
 *   `REUSE_MS` while the log has not grown. So the console keeps nothing in memory between pages, and a restart loses nothing.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs/promises"
import type { ActivityLog } from "../Activity/ActivityLog.ts"
import * as Line from "../Activity/ActivityLine.ts"
import type * as Wire from "./ConsoleWire.ts"

/** How far back the console shows calls. @category constants */
export const WINDOW_MS = 60 * 60 * 1000

/** Most calls of the window sent to a page (the charts need no more). @category constants */
export const MAX_CALLS = 20_000

/** How much of the end of activity.log is read. @category constants */
export const TAIL_BYTES = 8 * 1024 * 1024

/** How long a read of the log's end is reused (several sections ask at once). @category constants */
export const REUSE_MS = 2_000

/** A call as the page sees it (`ConsoleWire.CallView`), its outcome one of the log's. @category models */
export interface CallView extends Wire.CallView {
  readonly outcome: Line.Outcome
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

/** What the end of the log says. @category models */
export interface Tail {
  /** The calls of the window, oldest first (at most `MAX_CALLS`). */
  readonly calls: ReadonlyArray<CallView>
  /** Epoch milliseconds of each principal's last call in the part read. */
  readonly lastUse: ReadonlyMap<string, number>
}

/** @category models */
export interface Feed {
  readonly tail: Effect.Effect<Tail>
  /** Live batches of calls; returns what unsubscribes. */
  readonly listen: (listener: (calls: ReadonlyArray<CallView>) => void) => () => void
}

/** The calls at the end of an activity log (at most `TAIL_BYTES`); none when it cannot be read. */
const readTail = async (path: string, since: number): Promise<Tail> => {
  const calls: Array<CallView> = []
  const lastUse = new Map<string, number>()
  const handle = await NodeFs.open(path, "r").catch(() => undefined)
  if (handle === undefined) return { calls, lastUse }
  try {
    const { size } = await handle.stat()
    const start = Math.max(0, size - TAIL_BYTES)
    const buffer = Buffer.alloc(size - start)
    await handle.read(buffer, 0, buffer.length, start)
    const lines = buffer.toString("utf8").split("\n")
    // A read that starts mid-line drops that line; the last one may be unterminated.
    if (start > 0) lines.shift()
    lines.pop()
    for (const text of lines) {
      const entry = Line.parse(text)
      if (entry === undefined || entry.type !== "call") continue
      const time = Date.parse(entry.time)
      if (entry.principal !== null) lastUse.set(entry.principal, Math.max(lastUse.get(entry.principal) ?? 0, time))
      if (time >= since) calls.push(viewOf({ ...entry, time, collection: null }))
    }
    return { calls: calls.length > MAX_CALLS ? calls.slice(calls.length - MAX_CALLS) : calls, lastUse }
  } finally {
    await handle.close()
  }
}

/**
 * The feed over an activity log and the file it writes.
 *
 * @category constructors
 */
export const make = (log: typeof ActivityLog.Service, path: string, now: () => number) =>
  Effect.gen(function*() {
    const listeners = new Set<(calls: ReadonlyArray<CallView>) => void>()
    let unsubscribe: (() => void) | undefined
    yield* Effect.addFinalizer(() => Effect.sync(() => unsubscribe?.()))
    // The log only grows between its prunes: the same size is the same content.
    let reused: { readonly at: number; readonly size: number; readonly tail: Promise<Tail> } | undefined
    const tail = Effect.zipRight(
      log.flush,
      Effect.promise(async () => {
        const at = performance.now()
        const size = (await NodeFs.stat(path).catch(() => undefined))?.size ?? -1
        if (reused === undefined || reused.size !== size || at - reused.at > REUSE_MS) reused = { at, size, tail: readTail(path, now() - WINDOW_MS) }
        return reused.tail
      })
    )
    return {
      tail,
      listen: (listener) => {
        listeners.add(listener)
        unsubscribe ??= log.subscribe((batch) => {
          const views = batch.map(viewOf)
          for (const each of listeners) each(views)
        })
        return () => {
          listeners.delete(listener)
          if (listeners.size > 0) return
          unsubscribe?.()
          unsubscribe = undefined
        }
      }
    } satisfies Feed
  })
