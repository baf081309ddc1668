/**
 * The standing targets (`bench/targets.json`) judged against the rows a run measured. Each scenario
 * judges the rows it wrote as it merges them (`Results.merge`), so a scenario run alone prints its own
 * targets and fails on its own misses; `npm run bench` (`bench/run.ts`) collects every row of the run
 * and ends with one table over all of them. A target whose row this run did not measure is `not run`:
 * it never fails a run that did not measure it, and `npm run bench` says which are missing.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { Row } from "./Results.ts"

export const TARGETS = NodePath.join(import.meta.dirname, "..", "targets.json")

/** A bound on a figure: at most `max`, at least `min`, or both. */
export interface Bound {
  readonly max?: number
  readonly min?: number
}

export interface Target {
  readonly name: string
  readonly scenario: Row["scenario"]
  readonly metric: string
  readonly baselineName: Row["baselineName"]
  /** What the bound is on: ours / baseline, the figure itself, ours − baseline (in the row's unit), or nothing (reported only). */
  readonly on: "ratio" | "ours" | "difference" | "none"
  /** The standing target: a run that misses it fails. */
  readonly bound?: Bound
  /** Where we want to be: reported, never fails. */
  readonly aim?: Bound
  readonly note?: string
}

export type Verdict = "held" | "missed" | "reported" | "not run"

export interface Judged {
  readonly target: Target
  readonly row: Row | undefined
  readonly figure: number | undefined
  readonly verdict: Verdict
  /** Whether the aim is reached (undefined without an aim or a row). */
  readonly atAim: boolean | undefined
}

const isBound = (u: unknown): u is Bound =>
  typeof u === "object" && u !== null && Object.keys(u).length > 0 &&
  Object.entries(u).every(([k, v]) => (k === "max" || k === "min") && typeof v === "number" && Number.isFinite(v))

/** Reads and checks a targets file: a malformed target is an error, never a silent pass. */
export const load = (file = TARGETS): ReadonlyArray<Target> => {
  const parsed = JSON.parse(NodeFs.readFileSync(file, "utf8")) as { targets?: unknown }
  if (!Array.isArray(parsed.targets)) throw new Error(`${file}: "targets" is not an array`)
  return parsed.targets.map((t: Record<string, unknown>, i: number) => {
    const where = `${file}: target ${i + 1} (${String(t.name)})`
    for (const key of ["name", "scenario", "metric", "baselineName"]) {
      if (typeof t[key] !== "string" || t[key] === "") throw new Error(`${where}: "${key}" must be a non-empty string`)
    }
    if (t.on !== "ratio" && t.on !== "ours" && t.on !== "difference" && t.on !== "none") {
      throw new Error(`${where}: "on" must be ratio, ours, difference or none`)
    }
    if (t.bound !== undefined && !isBound(t.bound)) throw new Error(`${where}: "bound" must be {max?, min?}`)
    // A target with an aim and no bound is one not reached yet: reported against its aim, never failing.
    if (t.on !== "none" && !isBound(t.bound) && !isBound(t.aim)) throw new Error(`${where}: a target on ${t.on} needs a bound {max?, min?} or an aim`)
    if (t.on === "none" && t.bound !== undefined) throw new Error(`${where}: a reported figure (on: none) has no bound`)
    if (t.aim !== undefined && !isBound(t.aim)) throw new Error(`${where}: "aim" must be {max?, min?}`)
    return t as unknown as Target
  })
}

const within = (figure: number, bound: Bound) =>
  (bound.max === undefined || figure <= bound.max) && (bound.min === undefined || figure >= bound.min)

const figureOf = (target: Target, row: Row) =>
  target.on === "ours" ? row.ours : target.on === "difference" ? Math.round((row.ours - row.baseline) * 1000) / 1000 : row.ratio

/** The last row measured for the target (a later merge replaces an earlier one, as in results.json). */
const rowFor = (target: Target, rows: ReadonlyArray<Row>) =>
  rows.filter((r) => r.scenario === target.scenario && r.metric === target.metric && r.baselineName === target.baselineName).at(-1)

export const judge = (targets: ReadonlyArray<Target>, rows: ReadonlyArray<Row>): ReadonlyArray<Judged> =>
  targets.map((target) => {
    const row = rowFor(target, rows)
    if (row === undefined) return { target, row, figure: undefined, verdict: "not run", atAim: undefined }
    const figure = target.on === "none" ? row.ratio : figureOf(target, row)
    const verdict: Verdict = target.on === "none" || target.bound === undefined ? "reported" : within(figure, target.bound) ? "held" : "missed"
    return { target, row, figure, verdict, atAim: target.aim === undefined ? undefined : within(figure, target.aim) }
  })

const boundText = (bound: Bound | undefined, on: Target["on"], unit: string) => {
  if (bound === undefined) return "—"
  const suffix = on === "ours" || on === "difference" ? ` ${unit}` : "×"
  const sign = on === "difference" ? "+" : ""
  return [bound.min !== undefined ? `≥ ${sign}${bound.min}${suffix}` : "", bound.max !== undefined ? `≤ ${sign}${bound.max}${suffix}` : ""]
    .filter((s) => s !== "").join(", ")
}

/** A figure as a table shows it: three significant digits, no exponent. */
const fmt = (n: number) => Math.abs(n) >= 100 ? n.toFixed(0) : Number(n.toPrecision(3)).toString()

const measuredText = (j: Judged) => {
  if (j.row === undefined) return "not measured in this run"
  const { row } = j
  const figures = `${fmt(row.ours)} against ${fmt(row.baseline)} ${row.unit} (${row.baselineName})`
  if (j.target.on === "difference") return `${j.figure! >= 0 ? "+" : ""}${fmt(j.figure!)} ${row.unit}: ${figures}`
  return j.target.on === "ours" ? `${fmt(row.ours)} ${row.unit} (${row.baselineName} ${fmt(row.baseline)})` : `${fmt(row.ratio)}×: ${figures}`
}

/** The targets table, aligned, one line per target. */
export const table = (judged: ReadonlyArray<Judged>): string => {
  const header = ["target", "measured", "standing target", "aim", "verdict"]
  const lines = judged.map((j) => [
    j.target.name,
    measuredText(j),
    boundText(j.target.bound, j.target.on, j.row?.unit ?? ""),
    boundText(j.target.aim, j.target.on === "none" ? "ratio" : j.target.on, j.row?.unit ?? ""),
    j.verdict + (j.atAim === true && j.verdict !== "missed" ? " (at aim)" : j.atAim === false && j.verdict === "reported" ? " (aim not reached)" : "")
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)))
  const render = (cells: ReadonlyArray<string>) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()
  return [render(header), render(widths.map((w) => "-".repeat(w))), ...lines.map(render)].join("\n")
}

/**
 * Judges `rows` against the targets of their scenarios only, prints the table and returns whether
 * every standing target among them held.
 */
export const report = (rows: ReadonlyArray<Row>, options: { readonly targets?: ReadonlyArray<Target>; readonly all?: boolean } = {}) => {
  const targets = options.targets ?? load()
  const scenarios = new Set(rows.map((r) => r.scenario))
  const judged = judge(options.all === true ? targets : targets.filter((t) => scenarios.has(t.scenario)), rows)
  if (judged.length === 0) return true
  const missed = judged.filter((j) => j.verdict === "missed")
  console.log(`\nTargets (bench/targets.json)${options.all === true ? "" : ` for ${[...scenarios].join(", ")}`}:\n${table(judged)}`)
  if (missed.length > 0) console.log(`MISSED: ${missed.map((j) => j.target.name).join("; ")}`)
  return missed.length === 0
}
