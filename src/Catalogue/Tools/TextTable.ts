/**
 * The readable `content` text of a grid: a compact pipe table (one line per row, cells cut at 60
 * characters, vectors abbreviated to their first values and dimension), followed by a marker when
 * rows were left out by `max_rows` or paging.
 *
 * @since 0.1.0
 */

const MAX_CELL = 60

/**
 * A count with its noun: "1 row", "2 rows", "0 rows".
 *
 * @category rendering
 */
export const count = (n: number, noun: string): string => `${n} ${n === 1 ? noun : `${noun}s`}`

const vectorText = (vector: ReadonlyArray<unknown>) =>
  vector.length <= 3 ? JSON.stringify(vector) : `[${vector.slice(0, 3).map(String).join(", ")}, … ${vector.length} dims]`

/**
 * A cell as one short line.
 *
 * @category rendering
 */
export const cell = (value: unknown, column?: string): string => {
  const text = value === null || value === undefined
    ? ""
    : column === "vector" && Array.isArray(value)
    ? vectorText(value)
    : typeof value === "string"
    ? value
    : typeof value === "object"
    ? JSON.stringify(value)
    : String(value)
  const line = text.replace(/\r?\n/g, "\\n").replace(/\|/g, "\\|")
  return line.length > MAX_CELL ? `${line.slice(0, MAX_CELL - 1)}…` : line
}

/**
 * A pipe table of `rows` under `columns`.
 *
 * @category rendering
 */
export const render = (columns: ReadonlyArray<string>, rows: ReadonlyArray<Readonly<Record<string, unknown>>>): string => {
  if (columns.length === 0) return rows.length === 0 ? "(no rows)" : `(${rows.length} rows without columns)`
  const lines = [
    `| ${columns.map((c) => cell(c)).join(" | ")} |`,
    `|${columns.map(() => "---").join("|")}|`,
    ...rows.map((row) => `| ${columns.map((c) => cell(row[c], c)).join(" | ")} |`)
  ]
  return rows.length === 0 ? `${lines.join("\n")}\n(no rows)` : lines.join("\n")
}

/**
 * The marker of rows left out by `max_rows`.
 *
 * @category rendering
 */
export const truncationMarker = (shown: number, total: number | undefined): string =>
  total === undefined
    ? `[truncated: only the first ${shown} rows are shown (max_rows)]`
    : `[truncated: ${shown} of ${total} rows shown (max_rows)]`
