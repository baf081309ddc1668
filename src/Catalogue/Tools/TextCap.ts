/**
 * The size cap of every tool's text answer, errors included: `MAX_TEXT_CHARS` characters (about
 * 8,000 tokens). A longer text is cut at a line end and ends saying so; a result's text says how to
 * narrow or page, as its `structuredContent` is not cut (the listings page it instead).
 *
 * @since 0.1.0
 */

/** The most characters of a tool's text answer. @category constants */
export const MAX_TEXT_CHARS = 32_000

/** What a result's cut text ends with when the tool names no better way. */
const DEFAULT_NARROW = "ask for less (a filter, fewer columns or rows, a smaller limit)"

const count = (n: number) => n.toLocaleString("en-US")

/** `text` cut at the last line end that leaves room for `note` within the cap, then `note`. */
const cut = (text: string, note: string): string => {
  if (text.length <= MAX_TEXT_CHARS) return text
  const room = MAX_TEXT_CHARS - note.length - 1
  const end = text.lastIndexOf("\n", room)
  return `${text.slice(0, end > 0 ? end : room)}\n${note}`
}

/**
 * A result's text within `MAX_TEXT_CHARS`, its last line saying how much was left out and how to
 * narrow or page (`narrow`).
 *
 * @category rendering
 */
export const capText = (text: string, narrow: string = DEFAULT_NARROW): string =>
  cut(
    text,
    `[cut: this text is capped at ${count(MAX_TEXT_CHARS)} characters and held ${count(text.length)}; structuredContent has all of it. ` +
      `To see the rest, narrow or page: ${narrow}]`
  )

/**
 * An error's text within `MAX_TEXT_CHARS` (a database can answer with a very long message).
 *
 * @category rendering
 */
export const capError = (text: string): string =>
  cut(text, `[cut: this error message is capped at ${count(MAX_TEXT_CHARS)} characters and held ${count(text.length)}]`)
