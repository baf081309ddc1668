/**
 * Text for a reader that is not a terminal (a pipe, a file, a CI log): no ANSI escape codes, and
 * lines wrapped to a normal width. @effect/cli renders help with colours and pads the command list
 * to its longest synopsis, which makes lines of several hundred columns.
 *
 * @since 0.1.0
 */

/** The width help is wrapped to. @category constants */
export const WIDTH = 80

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g

/** @category formatting */
export const stripAnsi = (text: string): string => text.replace(ANSI, "")

const wrapLine = (line: string, width: number): Array<string> => {
  if (line.length <= width) return [line]
  const indent = /^\s*/.exec(line)![0]
  const hanging = indent + "    "
  const words = line.slice(indent.length).split(/ +/)
  const lines: Array<string> = []
  let current = indent
  for (const word of words) {
    const base = lines.length === 0 ? indent : hanging
    if (current.length > base.length && current.length + 1 + word.length > width) {
      lines.push(current)
      current = hanging + word
    } else {
      current = current.length > base.length ? `${current} ${word}` : current + word
    }
  }
  lines.push(current)
  return lines
}

/**
 * Whether a text is a help page of @effect/cli (printed for `--help`, and for a command group given
 * without its subcommand): it opens with the program's name, its version and `USAGE`.
 *
 * @category predicates
 */
export const isHelp = (text: string): boolean => /^\S+\n\n\S+ \S+\n\nUSAGE\n/.test(stripAnsi(text))

/**
 * Help as plain text: no escape codes, no padding runs (a command's description goes on its own
 * line under the synopsis), every line within `width` columns (a single word longer than that is
 * left whole), no trailing blank lines.
 *
 * @category formatting
 */
export const help = (text: string, width = WIDTH): string =>
  stripAnsi(text)
    .split("\n")
    .flatMap((line) => {
      const padded = /^(\s*- .*?\S)\s{3,}(\S.*)$/.exec(line)
      const lines = padded === null ? [line.trimEnd()] : [padded[1]!, `      ${padded[2]!}`]
      return lines.flatMap((l) => wrapLine(l, width))
    })
    .join("\n")
    .trimEnd()
