/**
 * Rows as files: JSON Lines (one object per line), CSV (a header of column names, then one record per
 * row; RFC 4180 quoting through `csv-stringify` / `csv-parse`) and JSON (one array). Rows have the
 * grid's shape: `uuid`, the properties, then the vector columns (`vector`, or `vector:<name>` for
 * named vectors).
 *
 * In CSV a cell is text: arrays and objects are JSON, `null` is an empty cell and the empty string is
 * a quoted empty cell (`""`), so the two survive a round trip. Records end with `\r\n` (RFC 4180); a
 * reader takes `\n` as well. Reading turns each line (JSONL) or record (CSV) into a `Parsed` item with its
 * 1-based line number, or into a `BadLine` that names the line and what is wrong with it; a bad line
 * never ends the read, except a CSV whose quoting cannot be parsed past a point (the read stops there
 * with a `BadLine` marked `fatal`).
 *
 * @since 0.1.0
 */
import { parse as parseCsv } from "csv-parse"
import { stringify as stringifyCsv } from "csv-stringify/sync"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as NodeFs from "node:fs"
import { StringDecoder } from "node:string_decoder"
import type { Row } from "./Grid.ts"
import { renderCell } from "./Grid.ts"
import { JsonText } from "./ObjectsPage.ts"

// ===== Models =====

/** @category models */
export const Format = Schema.Literal("jsonl", "csv", "json")
export type Format = typeof Format.Type

/**
 * One row read from a file. `values` holds what the file says: typed JSON values from JSONL, text
 * (or `null` for an empty cell) from CSV, where `text` is true.
 *
 * @category models
 */
export interface Parsed {
  readonly _tag: "Parsed"
  readonly line: number
  readonly values: Readonly<Record<string, unknown>>
  /** The values are CSV cells (text to be read as the schema says). */
  readonly text: boolean
  /** Bytes of the file up to the end of this row, when read from a file (progress). */
  readonly offset?: number
}

/** A line that holds no row. @category models */
export interface BadLine {
  readonly _tag: "BadLine"
  readonly line: number
  readonly reason: string
  /** Nothing after this line can be read. */
  readonly fatal: boolean
}

/** @category models */
export type Item = Parsed | BadLine

/** The input file cannot be read at all. @category errors */
export class FileUnreadable extends Schema.TaggedError<FileUnreadable>()("FileUnreadable", {
  path: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `Cannot read ${this.path}: ${this.reason}`
  }
}

// ===== Writing =====

/**
 * Turns rows into the text of a file: `header` once, then `row` for each row (`first` for the first
 * one), then `footer`. Each piece is whole, so a file cut between two pieces holds only whole rows.
 *
 * @category models
 */
export interface Encoder {
  readonly header: string
  readonly row: (row: Row, first: boolean) => string
  readonly footer: (rows: number) => string
}

const csvLine = (cells: ReadonlyArray<string | null>): string =>
  stringifyCsv([cells as Array<string | null>], {
    // RFC 4180: records end with CRLF (a line break inside a quoted cell stays as it is).
    record_delimiter: "\r\n",
    // The empty string is quoted so a reader can tell it from null (an empty unquoted cell).
    cast: { string: (value) => (value === "" ? { value: "", quoted_empty: true } : value) }
  })

/**
 * A row as one JSON object of the given columns, in their order (a missing cell is null). Built cell
 * by cell so a `JsonText` cell (a vector as Weaviate sent it) is copied, not parsed and printed.
 */
const jsonObject = (columns: ReadonlyArray<string>): (row: Row) => string => {
  const keys = columns.map((c, i) => `${i === 0 ? "{" : ","}${JSON.stringify(c)}:`)
  return (row) => {
    let out = ""
    for (let i = 0; i < columns.length; i++) {
      const cell = row[columns[i]!]
      out += keys[i]! + (cell instanceof JsonText ? cell.text : JSON.stringify(cell ?? null))
    }
    return columns.length === 0 ? "{}" : `${out}}`
  }
}

/**
 * The encoder of a format for the given columns (the rows' other keys are left out).
 *
 * @category constructors
 */
export const encoder = (format: Format, columns: ReadonlyArray<string>): Encoder => {
  const json = jsonObject(columns)
  switch (format) {
    case "jsonl":
      return { header: "", row: (row) => `${json(row)}\n`, footer: () => "" }
    case "json":
      return {
        header: "[",
        row: (row, first) => `${first ? "\n" : ",\n"}${json(row)}`,
        footer: (rows) => (rows === 0 ? "]\n" : "\n]\n")
      }
    case "csv":
      return {
        header: csvLine(columns),
        row: (row) => csvLine(columns.map((c) => (row[c] === null || row[c] === undefined ? null : renderCell(row[c])))),
        footer: () => ""
      }
  }
}

// ===== Reading =====

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const jsonLine = (text: string, line: number, offset: number): Item | undefined => {
  if (text.trim().length === 0) return undefined
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (e) {
    return { _tag: "BadLine", line, reason: `malformed JSON (${e instanceof Error ? e.message : String(e)})`, fatal: false }
  }
  return isRecord(value)
    ? { _tag: "Parsed", line, values: value, text: false, offset }
    : { _tag: "BadLine", line, reason: "the line is not a JSON object", fatal: false }
}

/** The lines of a block of whole lines (LF, CRLF or CR; JSON text holds no raw CR inside a string). */
const splitLines = (block: string): Array<string> => (block.includes("\r") ? block.split(/\r\n|\r|\n/) : block.split("\n"))

/**
 * The lines of a JSONL file, one array of items per read of the file (64 KiB): a stream step per
 * read rather than per line (readline and a step per line cost the import a tenth of its CPU). Each
 * item's `offset` is the end of the last whole line of its read. Memory holds one read and one line.
 */
async function* jsonLines(path: string): AsyncGenerator<Array<Item>> {
  const decoder = new StringDecoder("utf8")
  let rest = ""
  let line = 0
  let bytes = 0
  const items = (block: string, offset: number): Array<Item> => {
    const out: Array<Item> = []
    for (const text of splitLines(block)) {
      const item = jsonLine(text, ++line, offset)
      if (item !== undefined) out.push(item)
    }
    return out
  }
  for await (const chunk of NodeFs.createReadStream(path) as AsyncIterable<Buffer>) {
    let text = rest + decoder.write(chunk)
    if (bytes === 0 && text.charCodeAt(0) === 0xfeff) text = text.slice(1)
    bytes += chunk.length
    // The last line break, but not a CR that ends the text: its LF may start the next read.
    const end = Math.max(text.lastIndexOf("\n"), text.lastIndexOf("\r", text.length - 2))
    if (end < 0) {
      rest = text
      continue
    }
    rest = text.slice(end + 1)
    const crlf = text[end] === "\n" && text[end - 1] === "\r"
    const out = items(text.slice(0, crlf ? end - 1 : end), bytes - Buffer.byteLength(rest, "utf8"))
    if (out.length > 0) yield out
  }
  rest += decoder.end()
  if (rest.length > 0) {
    const out = items(rest.endsWith("\r") ? rest.slice(0, -1) : rest, bytes)
    if (out.length > 0) yield out
  }
}

/** Line breaks inside a record's raw text (its own terminator left out). */
const breaksIn = (raw: string): number => (raw.replace(/(\r\n|\n|\r)$/, "").match(/\r\n|\n|\r/g) ?? []).length

async function* csvRecords(path: string): AsyncGenerator<Item> {
  const parser = NodeFs.createReadStream(path).pipe(parseCsv({
    bom: true,
    info: true,
    raw: true,
    relax_column_count: true,
    skip_empty_lines: true,
    // A quoted cell keeps its text; an unquoted empty cell is null.
    cast: (value, context) => (context.quoting ? value : value === "" ? null : value)
  }))
  let header: ReadonlyArray<string> | undefined
  // Lines are counted here: csv-parse's own count drifts after a quoted `\r\n` (it counts two).
  let consumed = 0
  try {
    for await (
      const item of parser as AsyncIterable<{ record: Array<string | null>; info: { bytes: number }; raw: string }>
    ) {
      // A record's raw text starts with the empty lines skipped before it.
      const line = 1 + consumed + (/^(?:\r\n|\n|\r)*/.exec(item.raw)?.[0].replace(/\r\n/g, "\n").length ?? 0)
      consumed += breaksIn(item.raw) + 1
      if (header === undefined) {
        header = item.record.map((c) => c ?? "")
        const dup = header.find((c, i) => header!.indexOf(c) !== i)
        if (dup !== undefined) {
          yield { _tag: "BadLine", line, reason: `the header names the column "${dup}" twice`, fatal: true }
          return
        }
        continue
      }
      if (item.record.length !== header.length) {
        yield {
          _tag: "BadLine",
          line,
          reason: `${item.record.length} cells where the header has ${header.length}`,
          fatal: false
        }
        continue
      }
      const values: Record<string, unknown> = {}
      header.forEach((c, i) => {
        values[c] = item.record[i]
      })
      yield { _tag: "Parsed", line, values, text: true, offset: item.info.bytes }
    }
  } catch (e) {
    const error = e as { lines?: unknown; message?: unknown; code?: unknown }
    if (typeof error.code === "string" && error.code.startsWith("CSV_")) {
      yield {
        _tag: "BadLine",
        line: typeof error.lines === "number" ? error.lines : 0,
        reason: `CSV cannot be read past this line (${String(error.message)})`,
        fatal: true
      }
      return
    }
    throw e
  }
}

/**
 * The rows of a file, one item per line (JSONL) or record (CSV), read as they are consumed: memory
 * does not grow with the file.
 *
 * @category reading
 */
export const read = (path: string, format: "jsonl" | "csv"): Stream.Stream<Item, FileUnreadable> =>
  Stream.unwrap(
    Effect.as(
      Effect.tryPromise({
        try: () => NodeFs.promises.access(path, NodeFs.constants.R_OK),
        catch: (e) => new FileUnreadable({ path, reason: e instanceof Error ? e.message : String(e) })
      }),
      Stream.suspend(() => {
        const unreadable = (e: unknown) => new FileUnreadable({ path, reason: e instanceof Error ? e.message : String(e) })
        return format === "jsonl"
          ? Stream.flattenIterables(Stream.fromAsyncIterable(jsonLines(path), unreadable))
          : Stream.fromAsyncIterable(csvRecords(path), unreadable)
      })
    )
  )

/**
 * The format a file name suggests (`.csv`, `.json`, else JSONL).
 *
 * @category reading
 */
export const formatOfName = (path: string): Format =>
  /\.csv$/i.test(path) ? "csv" : /\.json$/i.test(path) ? "json" : "jsonl"
