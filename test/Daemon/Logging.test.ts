/**
 * Structured logs to stderr: JSON with --log-format json, a minimum level, never a secret.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Logging from "../../src/Daemon/Logging.ts"
import * as Redaction from "../../src/Base/Redaction.ts"

const capture = (format: Logging.LogFormat, level: Logging.LogLevelName, program: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    yield* program.pipe(Effect.provide(Logging.layer({ format, level, sink: { write: (line) => lines.push(line) } })))
    return lines
  })

describe("logging", () => {
  it.effect("JSON format writes one JSON object per line with level and annotations", () =>
    Effect.gen(function*() {
      const lines = yield* capture("json", "info", Effect.logInfo("listening").pipe(Effect.annotateLogs({ port: 1234 })))
      assert.strictEqual(lines.length, 1)
      const line = JSON.parse(lines[0]!)
      assert.strictEqual(line.message, "listening")
      assert.strictEqual(line.logLevel, "INFO")
      assert.strictEqual(line.annotations.port, 1234)
    }))

  it.effect("the minimum level drops lower levels", () =>
    Effect.gen(function*() {
      const lines = yield* capture("text", "warning", Effect.all([Effect.logInfo("quiet"), Effect.logWarning("loud")]))
      assert.strictEqual(lines.length, 1)
      assert.include(lines[0], "loud")
    }))

  it.effect("a secret never reaches a log line: bearer values, our tokens, URL credentials, registered keys", () =>
    Effect.gen(function*() {
      const key = "k-" + "9".repeat(20)
      Redaction.global.register(key)
      const lines = yield* capture(
        "json",
        "info",
        Effect.logInfo(`Authorization: Bearer abcdefghijklmnop and wmcp_abcdefghijklmnopqrstuvwx at https://user:pa55word@host/x key ${key}`)
      )
      const text = lines.join("\n")
      for (const secret of ["abcdefghijklmnop", "wmcp_abcdefghijklmnopqrstuvwx", "pa55word", key]) assert.notInclude(text, secret)
      assert.include(text, Redaction.REDACTED)
    }))
})
