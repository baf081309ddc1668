/**
 * The README and the pages of docs/ as the docs tests read them: fenced code blocks with their info
 * strings, the prose around them, headings with GitHub's anchors, and relative links. A small reader
 * of the CommonMark subset these pages use (backtick fences, ATX headings, inline links), not a
 * Markdown renderer.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"

export const ROOT = fileURLToPath(new URL("../..", import.meta.url))

/** A fenced code block. `info` is the whole info string (`ts fragment`), `language` its first word. */
export interface Block {
  readonly file: string
  /** 1-based line of the opening fence. */
  readonly line: number
  readonly info: string
  readonly language: string
  readonly text: string
}

/** A line outside every fenced block. */
export interface ProseLine {
  readonly file: string
  readonly line: number
  readonly text: string
}

export interface Heading {
  readonly level: number
  readonly text: string
  readonly anchor: string
  readonly line: number
}

export interface Page {
  /** Relative to the repository root, with `/`: `README.md`, `docs/cli.md`. */
  readonly file: string
  readonly source: string
  readonly blocks: ReadonlyArray<Block>
  readonly prose: ReadonlyArray<ProseLine>
  readonly headings: ReadonlyArray<Heading>
}

/**
 * GitHub's heading anchor: lower case, inline markup and punctuation removed (letters, digits,
 * spaces, `-` and `_` stay), each space a `-`; a repeated anchor gets `-1`, `-2`, ….
 */
export const slug = (heading: string): string =>
  heading
    .replace(/`/g, "")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, "")
    .replace(/ /g, "-")

const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/

/** Reads one page. */
export const parse = (file: string, source: string): Page => {
  const lines = source.split("\n")
  const blocks: Array<Block> = []
  const prose: Array<ProseLine> = []
  const headings: Array<Heading> = []
  const seen = new Map<string, number>()
  let open: { fence: string; info: string; line: number; body: Array<string>; indent: number } | undefined
  lines.forEach((text, index) => {
    const fence = FENCE.exec(text) ?? /^(\s*)(`{3,})(.*)$/.exec(text)
    if (open !== undefined) {
      if (fence !== null && fence[2]!.startsWith(open.fence) && fence[3]!.trim() === "") {
        const info = open.info
        blocks.push({ file, line: open.line, info, language: info.split(/\s+/)[0] ?? "", text: open.body.join("\n") })
        open = undefined
      } else {
        open.body.push(text.slice(Math.min(open.indent, text.length - text.trimStart().length)))
      }
      return
    }
    if (fence !== null) {
      open = { fence: fence[2]!, info: fence[3]!.trim(), line: index + 1, body: [], indent: fence[1]!.length }
      return
    }
    prose.push({ file, line: index + 1, text })
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(text)
    if (heading !== null) {
      const base = slug(heading[2]!)
      const count = seen.get(base) ?? 0
      seen.set(base, count + 1)
      headings.push({ level: heading[1]!.length, text: heading[2]!, anchor: count === 0 ? base : `${base}-${count}`, line: index + 1 })
    }
  })
  if (open !== undefined) throw new Error(`${file}:${open.line}: a code block that never closes`)
  return { file, source, blocks, prose, headings }
}

/** README.md and every page of docs/, read from the working tree. */
export const pages = (): ReadonlyArray<Page> =>
  ["README.md", ...NodeFs.readdirSync(NodePath.join(ROOT, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)]
    .map((file) => parse(file, NodeFs.readFileSync(NodePath.join(ROOT, file), "utf8")))

/** Inline code spans of a prose line. */
export const codeSpans = (text: string): ReadonlyArray<string> => [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!)

/** Links of a prose line: `[text](target)` and images, with the target as written. */
export const links = (text: string): ReadonlyArray<string> => {
  const withoutCode = text.replace(/`[^`]*`/g, "")
  return [...withoutCode.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!)
}
