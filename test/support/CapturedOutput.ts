/**
 * What a command run in-process prints: `console.log` (stdout), `console.error` and
 * `process.stderr.write` (stderr), captured in every test of the file that calls `captureOutput()`.
 */
import * as Effect from "effect/Effect"
import { afterEach, beforeEach, vi } from "vitest"

/** A value and what was printed while it was computed. */
export interface Captured<A> {
  readonly value: A
  readonly stdout: string
  readonly stderr: string
}

/** Installs the capture around each test; `run` computes an effect with fresh captures. */
export const captureOutput = () => {
  let stdout: Array<string> = []
  let stderr: Array<string> = []
  beforeEach(() => {
    stdout = []
    stderr = []
    vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => void stdout.push(args.map(String).join(" ")))
    vi.spyOn(console, "error").mockImplementation((...args: Array<unknown>) => void stderr.push(args.map(String).join(" ")))
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      stderr.push(String(chunk).replace(/\n$/, ""))
      return true
    })
  })
  afterEach(() => {
    vi.restoreAllMocks()
  })
  const run = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<Captured<A>, E, R> =>
    Effect.gen(function*() {
      stdout = []
      stderr = []
      const value = yield* effect
      return { value, stdout: stdout.join("\n"), stderr: stderr.join("\n") }
    })
  return { run }
}
