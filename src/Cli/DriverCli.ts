/**
 * What the driver commands (`connections`, `browse`, `graphql`, `rest`) share: the driver layer for
 * a `--home`, an aligned text table, and reading a statement from stdin.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import { ConnectionStore } from "../Driver/ConnectionStore.ts"
import { Driver } from "../Driver/Driver.ts"
import { renderCell } from "../Driver/Grid.ts"
import { homeLayer } from "./CommonOptions.ts"

/** The connection store and the driver for a command's `--home`. @category layers */
export const driverLayer = (home: Option.Option<string>): Layer.Layer<Driver | ConnectionStore> =>
  Driver.layer.pipe(Layer.provideMerge(ConnectionStore.layer), Layer.provide(homeLayer(home)))

const MAX_CELL = 60

const cellText = (value: unknown): string => {
  const text = renderCell(value).replace(/\r?\n/g, "\\n").replace(/\t/g, " ")
  return text.length > MAX_CELL ? `${text.slice(0, MAX_CELL - 1)}…` : text
}

/**
 * An aligned table: a header, a rule, one line per row; long cells are cut at 60 characters.
 *
 * @category rendering
 */
export const formatTable = (
  columns: ReadonlyArray<string>,
  rows: ReadonlyArray<Readonly<Record<string, unknown>>>
): string => {
  const cells = rows.map((row) => columns.map((c) => cellText(row[c])))
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => [...r[i]!].length)))
  const line = (values: ReadonlyArray<string>) =>
    values.map((v, i) => (i === values.length - 1 ? v : v + " ".repeat(widths[i]! - [...v].length))).join("  ").trimEnd()
  return [line(columns), widths.map((w) => "-".repeat(w)).join("  "), ...cells.map(line)].join("\n")
}

/** Reads all of stdin as text. @category io */
export const readStdin: Effect.Effect<string> = Effect.async<string>((resume) => {
  const chunks: Array<Buffer> = []
  const onData = (chunk: Buffer) => chunks.push(chunk)
  const onEnd = () => resume(Effect.succeed(Buffer.concat(chunks).toString("utf8")))
  process.stdin.on("data", onData)
  process.stdin.once("end", onEnd)
  return Effect.sync(() => {
    process.stdin.off("data", onData)
    process.stdin.off("end", onEnd)
  })
})
