/**
 * `text/event-stream` responses: a request with `_meta.progressToken` is answered as a stream of
 * frames without event names, each a JSON-RPC message, the final response last; `subscriptions/listen`
 * streams notifications with keep-alive comments.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type { ProgressToken } from "../Schema/McpWire.ts"

/** Response headers of every stream. @category constants */
export const headers: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no"
}

/** One frame carrying a JSON-RPC message (JSON text never holds a raw line break). @category encoding */
export const frame = (message: unknown): string => `data: ${JSON.stringify(message)}\n\n`

/** A comment line: ignored by clients, keeps idle connections and proxies alive. @category encoding */
export const keepAlive = ": keep-alive\n\n"

/**
 * A progress reporter for `RequestContext.progress`: sends `notifications/progress` (`total` 1.0) only
 * when the value advances; a non-advancing update is dropped. `extraMeta` (the request's trace
 * context) is carried on every notification.
 *
 * @category constructors
 */
export const progressReporter = (
  token: ProgressToken,
  send: (frame: string) => Effect.Effect<void>,
  extraMeta: Readonly<Record<string, unknown>> | undefined
) => {
  let last = Number.NEGATIVE_INFINITY
  return (progress: number, message: string): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (!Number.isFinite(progress) || progress <= last) return Effect.void
      last = progress
      return send(frame({
        jsonrpc: "2.0",
        method: "notifications/progress",
        params: {
          progressToken: token,
          progress,
          total: 1.0,
          message,
          ...(extraMeta === undefined ? {} : { _meta: extraMeta })
        }
      }))
    })
}
