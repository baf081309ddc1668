/**
 * Helpers for tests of `subscriptions/listen` against a running daemon on the TestClock: open the
 * stream and read its messages as they arrive, and wait until a timer is set.
 */
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import * as TestServices from "effect/TestServices"
import { assert } from "vitest"
import { bearer, MODERN, modern, modernHeaders, parseFrames, validateMessage } from "../Mcp/support/EndpointHarness.ts"

/** Waits (real time, bounded) until something sleeps on the TestClock until `at`. */
export const untilSleepingUntil = (at: number) =>
  Effect.gen(function*() {
    for (let i = 0; i < 2_000; i++) {
      if (Array.from(yield* TestClock.sleeps()).includes(at)) return
      yield* TestServices.provideLive(Effect.sleep("5 millis"))
    }
    return yield* Effect.die(new Error(`nothing sleeps until ${at}`))
  })

let listens = 0

/**
 * Opens `subscriptions/listen` under a request id of its own (`id`; a stream a failed test left open
 * cannot collide with the next) and reads its messages as they arrive, each validated against the
 * modern schema. `next` takes the first message matching `predicate`, failing the test when none
 * arrives within `within` (real time). The stream is closed with the scope.
 */
export const openListen = (endpoint: string, token: string, notifications: Record<string, unknown>) =>
  Effect.gen(function*() {
    listens += 1
    const id = `listen-${listens}`
    const controller = new AbortController()
    yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
    const response = yield* Effect.promise(() =>
      fetch(endpoint, {
        method: "POST",
        signal: controller.signal,
        headers: { ...modernHeaders("subscriptions/listen"), ...bearer(token) },
        body: JSON.stringify(modern("subscriptions/listen", { notifications }, id))
      })
    )
    assert.strictEqual(response.status, 200)
    assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/)
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    let buffer = ""
    const pending: Array<any> = []
    const next = (predicate: (message: any) => boolean, within: `${number} seconds` = "10 seconds") =>
      Effect.promise(async () => {
        for (;;) {
          const index = pending.findIndex(predicate)
          if (index >= 0) return pending.splice(index, 1)[0]
          const { done, value } = await reader.read()
          if (done) throw new Error(`the stream ended; unmatched messages: ${JSON.stringify(pending)}`)
          buffer += decoder.decode(value, { stream: true })
          const end = buffer.lastIndexOf("\n\n")
          if (end >= 0) {
            for (const message of parseFrames(buffer.slice(0, end + 2))) {
              validateMessage(MODERN, message)
              pending.push(message)
            }
            buffer = buffer.slice(end + 2)
          }
        }
      }).pipe(
        Effect.timeoutFail({ duration: within, onTimeout: () => new Error(`no matching message within ${within}; unmatched: ${JSON.stringify(pending)}`) }),
        Effect.orDie,
        TestServices.provideLive
      )
    return { id, next }
  })
