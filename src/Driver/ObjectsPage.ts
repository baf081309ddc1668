/**
 * A page of `GET /v1/objects` read for writing out again: every field is parsed as `JSON.parse` would
 * parse it, except the vectors, which stay the text Weaviate sent (`JsonText`).
 *
 * An export writes each vector exactly as it reads it: Weaviate sends a float32 as its shortest
 * decimal, `JSON.parse` turns that into the nearest double and `JSON.stringify` gives back the same
 * decimal, so parsing and printing 384 numbers per row only reproduces the text. That was half of the
 * export's CPU (a profile of 20,000 rows: `JSON.stringify` of the rows 28%, `JSON.parse` of the pages
 * 23%); the bytes written are the same (but for a `-0`, which stays `-0`).
 *
 * The page is walked field by field: strings and nested values are skipped by their delimiters, and
 * only what is not a vector is handed to `JSON.parse`, in pieces. A vector is kept as text only when
 * it is a plain list of JSON numbers (checked whole by `NUMBER_LIST`); anything else (a multi-vector, a
 * list with spaces, null) is parsed. A page the walk cannot follow is parsed whole instead, so the
 * result never depends on the walk: `parse` answers what `JSON.parse(text).objects` answers, with
 * `JsonText` in place of the number lists, or `undefined` when the text is not JSON.
 *
 * @since 0.1.0
 */

/**
 * A JSON value kept as the text the server sent. `toJSON` gives the value, so `JSON.stringify` of
 * something holding one still writes the right JSON (the slow way); the export's encoders copy `text`.
 *
 * @category models
 */
export class JsonText {
  constructor(readonly text: string) {}
  /** The value (parsed on each call). */
  toJSON(): unknown {
    return JSON.parse(this.text)
  }
  /** Whether it is the empty list `[]`. */
  get isEmptyList(): boolean {
    return this.text === "[]"
  }
}

/** A list of JSON numbers with no spaces, as Go's encoder writes a `[]float32`. @category constants */
export const NUMBER_LIST = /^\[(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?(?:,-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)*)?\]$/

/** The walk met something it does not follow: the page is parsed whole instead. */
class Unfollowed extends Error {}

const QUOTE = 34
const BACKSLASH = 92
const COMMA = 44
const COLON = 58
const OPEN_BRACKET = 91
const CLOSE_BRACKET = 93
const OPEN_BRACE = 123
const CLOSE_BRACE = 125

/** The cursor of the walk over one page's text. */
class Walk {
  i = 0
  constructor(readonly text: string) {}

  spaces(): void {
    const t = this.text
    let c = t.charCodeAt(this.i)
    while (c === 32 || c === 10 || c === 13 || c === 9) c = t.charCodeAt(++this.i)
  }

  expect(code: number): void {
    this.spaces()
    if (this.text.charCodeAt(this.i) !== code) throw new Unfollowed()
    this.i++
  }

  /** At a `"`: moves past the closing quote (one not escaped by an odd run of backslashes). */
  skipString(): void {
    const t = this.text
    let from = this.i + 1
    for (;;) {
      const quote = t.indexOf('"', from)
      if (quote < 0) throw new Unfollowed()
      let slashes = 0
      while (t.charCodeAt(quote - 1 - slashes) === BACKSLASH) slashes++
      from = quote + 1
      if (slashes % 2 === 0) break
    }
    this.i = from
  }

  /** Moves past one value (of any kind) and answers where it started. */
  skipValue(): number {
    this.spaces()
    const t = this.text
    const start = this.i
    const first = t.charCodeAt(start)
    if (first === QUOTE) {
      this.skipString()
    } else if (first === OPEN_BRACKET || first === OPEN_BRACE) {
      let depth = 0
      for (;;) {
        const c = t.charCodeAt(this.i)
        if (Number.isNaN(c)) throw new Unfollowed()
        if (c === QUOTE) {
          this.skipString()
          continue
        }
        if (c === OPEN_BRACKET || c === OPEN_BRACE) depth++
        else if (c === CLOSE_BRACKET || c === CLOSE_BRACE) depth--
        this.i++
        if (depth === 0) break
      }
    } else {
      // A number or a literal: up to the next delimiter.
      let c = first
      while (!Number.isNaN(c) && c !== COMMA && c !== CLOSE_BRACE && c !== CLOSE_BRACKET && c > 32) c = t.charCodeAt(++this.i)
      if (this.i === start) throw new Unfollowed()
    }
    return start
  }

  /** One value, parsed. */
  value(): unknown {
    const start = this.skipValue()
    return JSON.parse(this.text.slice(start, this.i))
  }

  /** A vector: its text when it is a list of numbers, else the parsed value. */
  vector(): unknown {
    this.spaces()
    const t = this.text
    if (t.charCodeAt(this.i) === OPEN_BRACKET) {
      const end = t.indexOf("]", this.i) + 1
      const candidate = t.slice(this.i, end)
      if (end > 0 && NUMBER_LIST.test(candidate)) {
        this.i = end
        return new JsonText(candidate)
      }
    }
    return this.value()
  }

  /** `{"name": vector, ...}`: the named vectors of an object. */
  namedVectors(): unknown {
    this.spaces()
    if (this.text.charCodeAt(this.i) !== OPEN_BRACE) return this.value()
    const out: Record<string, unknown> = {}
    this.members((key) => {
      const v = this.vector()
      if (key !== "__proto__") out[key] = v
    })
    return out
  }

  /** `{ "key": value, ... }`, calling `member` at each value (which it must move past). */
  members(member: (key: string) => void): void {
    this.expect(OPEN_BRACE)
    this.spaces()
    if (this.text.charCodeAt(this.i) === CLOSE_BRACE) {
      this.i++
      return
    }
    for (;;) {
      this.spaces()
      if (this.text.charCodeAt(this.i) !== QUOTE) throw new Unfollowed()
      const key = this.value() as string
      this.expect(COLON)
      member(key)
      this.spaces()
      const c = this.text.charCodeAt(this.i++)
      if (c === CLOSE_BRACE) return
      if (c !== COMMA) throw new Unfollowed()
    }
  }

  /** One object of the page. */
  object(): Record<string, unknown> {
    const out: Record<string, unknown> = {}
    this.members((key) => {
      const v = key === "vector" ? this.vector() : key === "vectors" ? this.namedVectors() : this.value()
      // JSON.parse makes "__proto__" an own key; an assignment would set the prototype. No field of
      // the grid is named so: it is left out.
      if (key !== "__proto__") out[key] = v
    })
    return out
  }

  /** `[object, ...]` */
  objects(): Array<Record<string, unknown>> {
    const out: Array<Record<string, unknown>> = []
    this.expect(OPEN_BRACKET)
    this.spaces()
    if (this.text.charCodeAt(this.i) === CLOSE_BRACKET) {
      this.i++
      return out
    }
    for (;;) {
      this.spaces()
      if (this.text.charCodeAt(this.i) !== OPEN_BRACE) throw new Unfollowed()
      out.push(this.object())
      this.spaces()
      const c = this.text.charCodeAt(this.i++)
      if (c === CLOSE_BRACKET) return out
      if (c !== COMMA) throw new Unfollowed()
    }
  }
}

const walk = (text: string): { readonly objects: unknown } => {
  const w = new Walk(text)
  let objects: unknown
  w.members((key) => {
    if (key === "objects") {
      w.spaces()
      objects = w.text.charCodeAt(w.i) === OPEN_BRACKET ? w.objects() : w.value()
    } else {
      w.value()
    }
  })
  w.spaces()
  if (w.i !== text.length) throw new Unfollowed()
  return { objects }
}

/**
 * The `objects` of a page's text (as `JSON.parse(text).objects`), with the vectors (`vector`, and
 * each of `vectors`) that are lists of numbers as `JsonText`, unless `vectorText` is false (then it
 * is `JSON.parse`'s answer itself); `undefined` when the text is not JSON.
 *
 * @category parsing
 */
export const parse = (text: string, options: { readonly vectorText?: boolean } = {}): { readonly objects: unknown } | undefined => {
  if (options.vectorText !== false) {
    try {
      return walk(text)
    } catch (e) {
      if (!(e instanceof Unfollowed) && !(e instanceof SyntaxError)) throw e
    }
  }
  try {
    const whole: unknown = JSON.parse(text)
    return { objects: typeof whole === "object" && whole !== null ? (whole as { objects?: unknown }).objects : undefined }
  } catch {
    return undefined
  }
}
