/**
 * The rule that the README and the pages of docs/ speak of the product to its users: no issue
 * numbers, and no "session" in the sense of a stretch of work ("the ninth session", "this session").
 *
 * `issue` stays where it means a problem ("a known issue"); only `issue` followed by a number is
 * refused. `session` stays where it is one of the protocol's or the product's terms, each listed in
 * `SESSION_TERMS` with what it names. The MCP protocol has sessions only in its legacy era, so a bare
 * `session` is also allowed on a line that speaks of that era (it names `legacy`, `Legacy` or
 * `Mcp-Session-Id`), as the state table of the legacy session does. Whatever the line, a `session`
 * counted or pointed at as a stretch of work (`ninth session`, `this session`, `each session's`) is
 * refused.
 */

/** An issue number, in any case: `issue 27`, `Issue 33`, `issue #21`, `issues 14`. */
const ISSUE_NUMBER = /\bissues?\s*#?\s*\d+/gi

/** The protocol's and the product's session terms. */
export const SESSION_TERMS: ReadonlyArray<{ readonly form: RegExp; readonly names: string }> = [
  { form: /Mcp-Session-Id/g, names: "the legacy era's session header" },
  { form: /\blegacy sessions?\b/gi, names: "a session of the protocol's legacy era (`initialize`)" },
  { form: /\bLegacySessions\b/g, names: "the module that keeps the legacy sessions" },
  { form: /\bMCP sessions?\b/g, names: "the protocol's session" },
  { form: /\bsession ids?\b/gi, names: "the id of a legacy session, or the one the bridge gives its client" },
  { form: /\bsession cookie\b/gi, names: "the REST console's cookie" },
  { form: /\bconsole sessions?\b/gi, names: "a browser signed in to the web console" }
]

/** A line about the protocol's legacy era, where `session` can only be the protocol's. */
const LEGACY_LINE = /\blegacy\b|Mcp-Session-Id/i

/** `session` as a stretch of work: counted, ordered or pointed at. Refused on every line. */
const WORK_SESSION =
  /\b(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|\d+(?:st|nd|rd|th)|this|each|next|previous|last|earlier|later|another)\s+sessions?\b|\bsession-by-session\b/gi

export interface Finding {
  readonly file: string
  readonly line: number
  readonly text: string
  readonly why: string
}

/** What a page says against the rule: each issue number and each `session` that is not a product term. */
export const check = (file: string, source: string): ReadonlyArray<Finding> => {
  const found: Array<Finding> = []
  source.split("\n").forEach((text, index) => {
    const at = { file, line: index + 1 }
    for (const m of text.matchAll(ISSUE_NUMBER)) found.push({ ...at, text: m[0], why: "an issue number" })
    for (const m of text.matchAll(WORK_SESSION)) found.push({ ...at, text: m[0], why: "a session of work" })
    if (LEGACY_LINE.test(text)) return
    const blank = (m: string) => " ".repeat(m.length)
    const rest = SESSION_TERMS.reduce((line, term) => line.replace(term.form, blank), text.replace(WORK_SESSION, blank))
    for (const m of rest.matchAll(/\bsessions?\b/gi)) {
      found.push({ ...at, text: m[0], why: "`session` that is none of the protocol's terms (SESSION_TERMS)" })
    }
  })
  return found
}
