/**
 * Parses a request body as JSON without holding the event loop, with a nesting cap.
 *
 * Why not `JSON.parse` alone: parsing is one synchronous call, ≈ 60–90 ms for 9 MB of small objects
 * on the reference machine, and every other client waits for it (the goal is that another client's
 * `tools/list` is answered within 100 ms while any single request of up to 10 MB is processed).
 * Small bodies (the common case, and `tools/list` itself) still go to `JSON.parse` at once, after a
 * scan that refuses deep nesting; a large body is parsed here in slices of a few milliseconds with
 * the event loop free in between. Both give the same values as `JSON.parse` (`__proto__` included, as
 * an own property).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"

/** Bodies up to this size are parsed in one call. @category constants */
export const SYNC_BYTES = 256 * 1024

/** Longest slice of parsing between two turns of the event loop. @category constants */
export const SLICE_MS = 4

/** @category models */
export type Failure = { readonly _tag: "Syntax" } | { readonly _tag: "TooDeep"; readonly max: number }

/**
 * Whether a JSON text nests deeper than `max` (strings skipped): a scan without allocation.
 *
 * @category predicates
 */
export const nestsDeeperThan = (text: string, max: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 123 || c === 91) {
      if (++depth > max) return true
    } else if (c === 125 || c === 93) depth--
  }
  return false
}

/**
 * The value of a small body, or the failure; `undefined` when the body is large (use `parse`).
 *
 * @category parsing
 */
export const parseSmall = (text: string, maxDepth: number): { readonly value: unknown } | Failure | undefined => {
  if (text.length > SYNC_BYTES) return undefined
  if (nestsDeeperThan(text, maxDepth)) return { _tag: "TooDeep", max: maxDepth }
  try {
    return { value: JSON.parse(text) }
  } catch {
    return { _tag: "Syntax" }
  }
}

/**
 * Parses any body: small ones at once, large ones in slices (interruptible between slices).
 *
 * @category parsing
 */
export const parse = (text: string, maxDepth: number): Effect.Effect<unknown, Failure> => {
  const small = parseSmall(text, maxDepth)
  if (small !== undefined) return "value" in small ? Effect.succeed(small.value) : Effect.fail(small)
  return Effect.async<unknown, Failure>((resume) => {
    const parser = new SlicedParser(text, maxDepth)
    let timer: NodeJS.Immediate | undefined
    const run = () => {
      try {
        if (parser.step(SLICE_MS)) resume(Effect.succeed(parser.result))
        else timer = setImmediate(run)
      } catch (failure) {
        resume(Effect.fail(failure instanceof ParseFailure ? failure.failure : { _tag: "Syntax" }))
      }
    }
    run()
    return Effect.sync(() => {
      if (timer !== undefined) clearImmediate(timer)
    })
  })
}

// ===== The sliced parser =====

class ParseFailure {
  constructor(readonly failure: Failure) {}
}

const syntax = () => new ParseFailure({ _tag: "Syntax" })

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y
// A string token needs JSON.parse when it holds an escape or a (forbidden) control character.
// eslint-disable-next-line no-control-regex
const SPECIAL = /[\u0000-\u001f\\]/

type Frame =
  | { readonly array: Array<unknown> }
  | { readonly object: Record<string, unknown>; key: string | undefined }

/**
 * An iterative JSON parser whose work is cut into slices: `step(ms)` parses for about `ms`
 * milliseconds and tells whether the value is complete.
 */
class SlicedParser {
  private pos = 0
  private readonly stack: Array<Frame> = []
  /** What the parser expects next. */
  private state: "value" | "valueOrEnd" | "keyOrEnd" | "key" | "colon" | "commaOrEnd" | "done" = "value"
  result: unknown = undefined

  constructor(private readonly text: string, private readonly maxDepth: number) {}

  step(ms: number): boolean {
    const until = performance.now() + ms
    let n = 0
    while (this.state !== "done") {
      if ((++n & 1023) === 0 && performance.now() >= until) return false
      this.token()
    }
    this.skipSpace()
    if (this.pos !== this.text.length) throw syntax()
    return true
  }

  private skipSpace() {
    const text = this.text
    let pos = this.pos
    for (;;) {
      const c = text.charCodeAt(pos)
      if (c === 32 || c === 10 || c === 13 || c === 9) pos++
      else break
    }
    this.pos = pos
  }

  private readString(): string {
    const text = this.text
    const start = this.pos
    let end = start + 1
    for (;;) {
      end = text.indexOf("\"", end)
      if (end === -1) throw syntax()
      let backslashes = 0
      while (text.charCodeAt(end - 1 - backslashes) === 92) backslashes++
      if (backslashes % 2 === 0) break
      end++
    }
    this.pos = end + 1
    const token = text.slice(start, end + 1)
    if (!SPECIAL.test(token)) return token.slice(1, -1)
    try {
      return JSON.parse(token) as string
    } catch {
      throw syntax()
    }
  }

  private readScalar(): unknown {
    const text = this.text
    const c = text.charCodeAt(this.pos)
    if (c === 34) return this.readString()
    if (text.startsWith("true", this.pos)) return (this.pos += 4, true)
    if (text.startsWith("false", this.pos)) return (this.pos += 5, false)
    if (text.startsWith("null", this.pos)) return (this.pos += 4, null)
    NUMBER.lastIndex = this.pos
    const match = NUMBER.exec(text)
    if (match === null || match[0].length === 0) throw syntax()
    this.pos += match[0].length
    return Number(match[0])
  }

  /** Places a complete value in its container (or as the result) and sets what comes next. */
  private place(value: unknown) {
    const top = this.stack[this.stack.length - 1]
    if (top === undefined) {
      this.result = value
      this.state = "done"
    } else if ("array" in top) {
      top.array.push(value)
      this.state = "commaOrEnd"
    } else {
      const key = top.key!
      if (key === "__proto__") Object.defineProperty(top.object, key, { value, enumerable: true, writable: true, configurable: true })
      else top.object[key] = value
      top.key = undefined
      this.state = "commaOrEnd"
    }
  }

  private open(frame: Frame) {
    if (this.stack.length >= this.maxDepth) throw new ParseFailure({ _tag: "TooDeep", max: this.maxDepth })
    this.stack.push(frame)
  }

  private close() {
    const frame = this.stack.pop()!
    this.place("array" in frame ? frame.array : frame.object)
  }

  private token() {
    this.skipSpace()
    const c = this.text.charCodeAt(this.pos)
    switch (this.state) {
      case "value":
      case "valueOrEnd": {
        if (c === 93 && this.state === "valueOrEnd") {
          this.pos++
          return this.close()
        }
        if (c === 123) {
          this.pos++
          this.open({ object: {}, key: undefined })
          this.state = "keyOrEnd"
          return
        }
        if (c === 91) {
          this.pos++
          this.open({ array: [] })
          this.state = "valueOrEnd"
          return
        }
        return this.place(this.readScalar())
      }
      case "keyOrEnd":
      case "key": {
        if (c === 125 && this.state === "keyOrEnd") {
          this.pos++
          return this.close()
        }
        if (c !== 34) throw syntax()
        ;(this.stack[this.stack.length - 1] as { key: string | undefined }).key = this.readString()
        this.state = "colon"
        return
      }
      case "colon": {
        if (c !== 58) throw syntax()
        this.pos++
        this.state = "value"
        return
      }
      case "commaOrEnd": {
        const top = this.stack[this.stack.length - 1]!
        const isArray = "array" in top
        if (c === 44) {
          this.pos++
          this.state = isArray ? "value" : "key"
          return
        }
        if (c === (isArray ? 93 : 125)) {
          this.pos++
          return this.close()
        }
        throw syntax()
      }
      case "done":
        return
    }
  }
}
