/**
 * What an approval dialog says, the same on every platform and in the terminal.
 *
 * - The window title and the first line are the server's words: the action, the connection, the
 *   token. Names the user chose are kept to one line.
 * - Text the client supplies about itself (`clientInfo.title` or `name`) gets its own labelled line,
 *   "The client calls itself: …", after the server's sentence and never inside it. It is stripped of
 *   control and invisible formatting characters, kept to one line and capped at 64 characters.
 * - The statement is cut at 2,000 characters exactly like the form's `description` (same marker, same
 *   count; the form itself keeps the verbatim statement), then laid out for reading: a JSON body or
 *   row written on one line is indented (the same tokens, numbers and escapes untouched), real line
 *   breaks are kept, characters that would not show (controls, bidi overrides, zero-width) are shown
 *   as `⟨U+XXXX⟩`, and a line longer than the width is wrapped with `↪` at the start of each
 *   continuation, so a wrap is never mistaken for a line break of the statement.
 * - A cut statement is announced above the statement, so the user knows without scrolling.
 *
 * @since 0.1.0
 */
import { cutStatement, MAX_DESCRIPTION_LENGTH, truncationMarker } from "./ApprovalPayload.js"

/**
 * One question to the user. `exec` commands receive exactly this object as JSON on stdin.
 *
 * @category models
 */
export interface DialogRequest {
  /** The window title: the server's words, naming the action. */
  readonly title: string
  /** The first line: the server's words, naming the action, the connection and the token. */
  readonly message: string
  /** The server's further sentences, shown after the client's labelled line. */
  readonly detail?: string
  /** The exact operation, verbatim (dialogs show at most 2,000 characters, with a marker). */
  readonly statement: string
  /** What the statement is, shown above it; "The operation, exactly as it will be sent" by default. */
  readonly statementLabel?: string
  readonly principalName: string
  readonly connectionName: string
  /** What the client calls itself (`clientInfo`); dialogs show it labelled, cleaned and capped. */
  readonly clientName: string
}

// ===== Constants =====

/** Longest client-supplied name shown, in characters. @category constants */
export const CLIENT_NAME_MAX = 64

/** The width, in monospace columns, every line of the dialog text is kept within. @category constants */
export const COLUMNS = 90

/**
 * The size of every native dialog's window, in pixels: with window decorations it fits a 1024×700
 * screen, and the statement scrolls inside it.
 *
 * @category constants
 */
export const WINDOW = { width: 880, height: 600 } as const

/** What starts each continuation of a wrapped line. @category constants */
export const CONTINUATION = "↪ "

// ===== Names =====

// Controls, format characters (bidi overrides, zero-width), line and paragraph separators.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu
// Combining marks beyond two in a row only pile up ("Zalgo" text); they carry no meaning in a name.
const MARK_PILE = /(\p{M}{2})\p{M}+/gu

/**
 * A name the user chose (connection, token) as one line: line breaks and tabs become spaces, other
 * invisible characters are dropped.
 *
 * @category names
 */
export const oneLine = (text: string): string =>
  text.replace(/[\r\n\t\u2028\u2029]+/g, " ").replace(INVISIBLE, "").replace(/ {2,}/g, " ").trim()

/**
 * Text a client supplies about itself, as the dialog shows it: one line, no control or invisible
 * formatting characters, whitespace runs collapsed, at most 64 characters (the 64th is `…` when cut).
 *
 * @category names
 */
export const clientText = (text: string): string => {
  const chars = Array.from(oneLine(text.replace(MARK_PILE, "$1")).replace(/\s+/gu, " "))
  return chars.length <= CLIENT_NAME_MAX ? chars.join("") : chars.slice(0, CLIENT_NAME_MAX - 1).join("").trimEnd() + "…"
}

/**
 * The labelled line that carries the client's own words about itself.
 *
 * @category names
 */
export const clientLine = (clientName: string): string => {
  const name = clientText(clientName)
  return name === "" ? "The client gave no name." : `The client calls itself: ${name}`
}

/**
 * A user-chosen name inside a server sentence: one line, quoted.
 *
 * @category names
 */
export const quoted = (name: string): string => JSON.stringify(oneLine(name))

// ===== The statement =====

/** @category models */
export interface ReadableStatement {
  /** The statement laid out for reading, wrapped at the width, ending with the marker when cut. */
  readonly text: string
  /** At least one JSON body or row was indented. */
  readonly laidOut: boolean
  /** At least one line was longer than the width and continues after `↪`. */
  readonly wrapped: boolean
  /** Set when the statement was cut at 2,000 characters. */
  readonly cut?: { readonly shown: number; readonly total: number; readonly marker: string }
}

/**
 * The statement as a dialog shows it.
 *
 * @category rendering
 */
export const readableStatement = (
  statement: string,
  options: { readonly columns?: number; readonly limit?: number } = {}
): ReadableStatement => {
  const columns = options.columns ?? COLUMNS
  const cut = cutStatement(statement, options.limit ?? MAX_DESCRIPTION_LENGTH)
  const lines = cut.kept.replace(/\r\n/g, "\n").split("\n")
  let laidOut = false
  let wrapped = false
  const shown = lines.flatMap((line, index) => {
    // The cut line is the beginning of a JSON text at most; it is laid out as far as it goes.
    const complete = cut.omitted === 0 || index < lines.length - 1
    const json = layoutLine(line, complete)
    if (json !== undefined) laidOut = true
    return (json ?? [line]).flatMap((l) => {
      const pieces = wrapLine(visible(l), columns)
      if (pieces.length > 1) wrapped = true
      return pieces
    })
  })
  if (cut.omitted === 0) return { text: shown.join("\n"), laidOut, wrapped }
  const marker = truncationMarker(cut.omitted)
  return {
    text: [...shown, marker].join("\n"),
    laidOut,
    wrapped,
    cut: { shown: cut.total - cut.omitted, total: cut.total, marker }
  }
}

/** A REST console line with its body on the same line: `POST /v1/objects {...}`. */
const REST_WITH_BODY = /^([A-Za-z]+[ \t]+\S+)[ \t]+([[{].*)$/s

/** The lines a statement line becomes when it holds one-line JSON; `undefined` to keep it as it is. */
const layoutLine = (line: string, complete: boolean): ReadonlyArray<string> | undefined => {
  const rest = REST_WITH_BODY.exec(line)
  if (rest !== null) {
    const body = layoutJson(rest[2]!, complete)
    return body === undefined ? undefined : [rest[1]!, ...body]
  }
  return /^\s*[[{]/.test(line) ? layoutJson(line, complete) : undefined
}

const isJson = (text: string) => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/**
 * One-line JSON indented by two spaces per level. Works on the tokens as written, so numbers, escapes
 * and duplicate keys show exactly as they will be sent; only whitespace between tokens changes.
 */
const layoutJson = (text: string, complete: boolean): ReadonlyArray<string> | undefined => {
  const leading = /^\s*/.exec(text)![0]
  const json = text.slice(leading.length)
  if (complete && !isJson(json)) return undefined
  const lines: Array<string> = []
  let depth = 0
  let current = leading
  const newline = () => {
    lines.push(current)
    current = leading + "  ".repeat(depth)
  }
  for (let i = 0; i < json.length; i++) {
    const c = json[i]!
    if (c === "\"") {
      let j = i + 1
      while (j < json.length && json[j] !== "\"") j += json[j] === "\\" ? 2 : 1
      current += json.slice(i, j + 1)
      i = j
    } else if (c === "{" || c === "[") {
      const close = c === "{" ? "}" : "]"
      let j = i + 1
      while (j < json.length && /\s/.test(json[j]!)) j++
      if (json[j] === close) {
        current += c + close
        i = j
      } else {
        current += c
        depth++
        newline()
      }
    } else if (c === "}" || c === "]") {
      depth = Math.max(0, depth - 1)
      newline()
      current += c
    } else if (c === ",") {
      current += c
      newline()
    } else if (c === ":") {
      current += ": "
    } else if (!/\s/.test(c)) {
      current += c
    }
  }
  if (current.trim() !== "") lines.push(current)
  return lines
}

/** A character a reader would not see, or that would reorder what they see, shown by its code point. */
const visible = (line: string) =>
  line.replace(/\t/g, "    ").replace(
    INVISIBLE,
    (c) => `⟨U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟩`
  )

/**
 * A statement line cut into pieces of at most `columns` characters; each continuation starts with the
 * line's indentation and `↪ `.
 */
const wrapLine = (line: string, columns: number): ReadonlyArray<string> => {
  const chars = Array.from(line)
  if (chars.length <= columns) return [line]
  const indent = Math.min(/^ */.exec(line)![0].length, Math.floor(columns / 2))
  const prefix = " ".repeat(indent) + CONTINUATION
  const room = Math.max(1, columns - Array.from(prefix).length)
  const pieces = [chars.slice(0, columns).join("")]
  for (let at = columns; at < chars.length; at += room) pieces.push(prefix + chars.slice(at, at + room).join(""))
  return pieces
}

// ===== The whole text =====

const width = (text: string) => Array.from(text).length

/**
 * Prose wrapped at spaces within `columns`; a word longer than the width is cut. Continuation lines
 * start with `hang` (the client's line is indented under its label, so no part of the client's words
 * starts a line as if the server said it).
 *
 * @category rendering
 */
export const wrapProse = (text: string, columns: number = COLUMNS, hang: string = ""): ReadonlyArray<string> =>
  text.split("\n").flatMap((paragraph) => {
    const lines: Array<string> = []
    let current = ""
    for (const word of paragraph.split(/ +/)) {
      for (let rest = word; rest.length > 0;) {
        const room = current === "" || current === hang ? columns - width(current) : columns - width(current) - 1
        if (width(rest) <= room) {
          current = current === "" || current === hang ? current + rest : `${current} ${rest}`
          rest = ""
        } else if (current !== "" && current !== hang) {
          lines.push(current)
          current = hang
        } else {
          const chars = Array.from(current + rest)
          lines.push(chars.slice(0, columns).join(""))
          current = hang
          rest = chars.slice(columns).join("")
        }
      }
    }
    lines.push(current)
    return lines
  })

/** The parts of a dialog, for the platforms that show a headline apart from the scrolling text. @category models */
export interface DialogParts {
  /** The server's first line: the action, the connection, the token. */
  readonly headline: string
  /** The client's labelled line, the server's further sentences and the cut notice. */
  readonly context: ReadonlyArray<string>
  /** The label above the statement. */
  readonly label: string
  readonly statement: ReadableStatement
}

/**
 * The parts of a dialog for this request.
 *
 * @category rendering
 */
export const dialogParts = (request: DialogRequest, columns: number = COLUMNS): DialogParts => {
  const statement = readableStatement(request.statement, { columns })
  const context = [
    clientLine(request.clientName),
    ...(request.detail === undefined ? [] : [request.detail]),
    ...(statement.cut === undefined ? [] : [
      `Only the first ${statement.cut.shown.toLocaleString("en-US")} of ${
        statement.cut.total.toLocaleString("en-US")
      } characters are shown below; the end is marked "${statement.cut.marker}".`
    ])
  ]
  const notes = [
    ...(statement.laidOut ? ["JSON laid out for reading"] : []),
    ...(statement.wrapped ? ["↪ continues a long line"] : [])
  ]
  const label = `${request.statementLabel ?? "The operation, exactly as it will be sent"}${
    notes.length > 0 ? ` (${notes.join("; ")})` : ""
  }:`
  return { headline: oneLine(request.message), context, label, statement }
}

/**
 * The context lines wrapped within `columns`, the client's line with a hanging indent.
 *
 * @category rendering
 */
export const contextLines = (parts: DialogParts, columns: number = COLUMNS): ReadonlyArray<string> =>
  parts.context.flatMap((line, index) => wrapProse(line, columns, index === 0 ? "    " : ""))

/**
 * The whole text of a dialog, every line within `columns`: the server's headline, the client's
 * labelled line, the server's further sentences, then the statement between two rules.
 *
 * @category rendering
 */
export const dialogText = (request: DialogRequest, columns: number = COLUMNS): string => {
  const parts = dialogParts(request, columns)
  const rule = "─".repeat(columns)
  return [
    ...wrapProse(parts.headline, columns),
    "",
    ...contextLines(parts, columns),
    "",
    ...wrapProse(parts.label, columns),
    rule,
    parts.statement.text,
    rule
  ].join("\n")
}
