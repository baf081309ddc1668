/**
 * Structured logs to stderr: JSON with --log-format json, a minimum level, never a secret.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import * as FiberRefs from "effect/FiberRefs"
import * as HashMap from "effect/HashMap"
import * as List from "effect/List"
import * as LogLevel from "effect/LogLevel"
import fc from "fast-check"
import * as LogLines from "../../src/Base/LogLines.ts"
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

describe("lines written as fields (the observer's line per request, Base/LogLines)", () => {
  const fieldName = fc.oneof(
    fc.constantFrom("method", "tool", "principal", "client", "outcome", "code", "durationMs"),
    fc.string({ minLength: 1, maxLength: 12 })
  )
  const fieldValue = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.constantFrom("tools/list", "a b", 'say "hi"', "k=v", "line\nbreak", "wmcp_abcdefghijklmnopqrstuvwx", ""),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true })
  )
  const fields = fc.uniqueArray(fc.tuple(fieldName, fieldValue), { selector: ([name]) => name, maxLength: 9 })

  it("read exactly as the same message logged with the fields as annotations, in text and JSON", () => {
    const fiberId = FiberId.make(71, 0)
    fc.assert(
      fc.property(fc.constantFrom<Logging.LogFormat>("text", "json"), fc.string({ maxLength: 40 }), fields, fc.boolean(), (format, message, given, warn) => {
        const written: Array<string> = []
        const logger = Logging.makeLogger(format, { write: (line) => written.push(line) })
        const date = new Date(1_764_000_000_000)
        const logLevel = warn ? LogLevel.Warning : LogLevel.Info
        logger.log({
          fiberId,
          logLevel,
          message,
          cause: Cause.empty,
          context: FiberRefs.empty(),
          spans: List.empty(),
          annotations: HashMap.fromIterable(given),
          date
        })
        LogLines.writerOf(logger)!.write({ date, logLevel, fiberId, message, fields: given })
        assert.strictEqual(written.length, 2)
        assert.strictEqual(written[1], written[0])
      }),
      { numRuns: 500 }
    )
  })
})

describe("the batched sink (serve's stderr)", () => {
  it.live("the lines written in one tick reach the output in one write, in order, each ending in a newline", () =>
    Effect.gen(function*() {
      const writes: Array<string> = []
      const sink = Logging.batchedSink((text) => writes.push(text))
      sink.write("one")
      sink.write("two")
      sink.write("three")
      assert.deepStrictEqual(writes, [], "nothing is written before the tick ends")
      yield* Effect.promise(() => new Promise<void>((resolve) => queueMicrotask(resolve)))
      assert.deepStrictEqual(writes, ["one\ntwo\nthree\n"])
      sink.write("four")
      yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
      assert.deepStrictEqual(writes, ["one\ntwo\nthree\n", "four\n"])
    }))

  it("whatever is still buffered is written when the process exits", async () => {
    const { execFileSync } = await import("node:child_process")
    const script = `
      import * as Logging from ${JSON.stringify(new URL("../../src/Daemon/Logging.ts", import.meta.url).pathname)}
      const sink = Logging.batchedSink((text) => process.stdout.write(text))
      sink.write("last words")
      process.exit(0)
    `
    const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8" })
    assert.strictEqual(out, "last words\n")
  })

  it.live("an output that fails (a full disk, a closed pipe) loses its lines but does not end the process; later lines still go out", () =>
    Effect.gen(function*() {
      const writes: Array<string> = []
      let failing = true
      const sink = Logging.batchedSink((text) => {
        if (failing) throw new Error("ENOSPC: no space left on device")
        writes.push(text)
      })
      sink.write("lost")
      yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
      failing = false
      sink.write("kept")
      yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
      assert.deepStrictEqual(writes, ["kept\n"])
    }))
})
