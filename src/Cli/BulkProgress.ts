/**
 * What `export` and `import` tell a person while they run and when they end: a progress line on
 * stderr (rows done, rows per second, the elapsed time and, when the total is known, a bar, a
 * percentage and an ETA), drawn by `cli-progress`: redrawn in place on a terminal 4 times a second,
 * or printed as plain lines once a second with `--progress` when stderr is not a terminal; and the
 * summary at the end, as JSON without a terminal or with `--json`.
 *
 * The total is the row count (export, from `Aggregate`) or the file's size in bytes (import: rows are
 * read a few batches ahead of the ones answered, and the file's length in rows is not known until it
 * is read). The ETA is `cli-progress`'s, from the rate of the last updates.
 *
 * @since 0.1.0
 */
import CliProgress from "cli-progress"

/** @category models */
export interface Progress {
  /** Rows done so far (the running total) and, when the total is in bytes, the bytes done. */
  readonly update: (rows: number, bytes?: number) => void
  /**
   * A line (ending with a new line) for stderr: on a terminal it is written above the progress line,
   * which is drawn again below it.
   */
  readonly log: (line: string) => void
  /** The last progress line; the progress is over (later calls do nothing). */
  readonly finish: () => void
}

/** The total of the work, when it is known. @category models */
export type Total = { readonly rows: number } | { readonly bytes: number }

/** `1:05`, `1:02:05`. @category formatting */
export const clock = (seconds: number): string => {
  const s = Math.max(0, Math.round(seconds))
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const pad = (n: number) => String(n).padStart(2, "0")
  return h > 0 ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`
}

const count = (n: number) => n.toLocaleString("en-US")

/**
 * The progress line: `export [=====-----] 4,500/10,000 rows, 45%, 1,234 rows/s, 0:04 elapsed, ETA 0:05`
 * (the bar on a terminal only).
 */
const formatter = (label: string, total: Total | undefined, tty: boolean): CliProgress.GenericFormatter =>
(options, params, payload: { readonly rows: number }) => {
  const seconds = ((params.stopTime ?? Date.now()) - params.startTime) / 1000
  const rows = payload.rows
  const known = total !== undefined && params.total > 0
  // cli-progress's ETA is a number of seconds, or the text INF or NULL while it cannot tell.
  const eta: unknown = params.eta
  const parts = [
    known && "rows" in total ? `${count(rows)}/${count(params.total)} rows` : `${count(rows)} rows`,
    ...(known ? [`${Math.floor(params.progress * 100)}%`] : []),
    `${count(Math.round(seconds > 0 ? rows / seconds : 0))} rows/s`,
    `${clock(seconds)} elapsed`,
    ...(known && params.progress < 1 && typeof eta === "number" ? [`ETA ${clock(eta)}`] : [])
  ]
  const bar = tty && known ? ` [${CliProgress.Format.BarFormat(params.progress, options)}]` : ""
  return `${label}${bar}: ${parts.join(", ")}`
}

/**
 * The progress of one run, on `out` (default stderr). `enabled` false gives a progress that shows
 * nothing (logged lines are written as they are). Call `finish` on every way out: the progress keeps
 * a timer until then.
 *
 * @category constructors
 */
export const make = (options: {
  readonly label: string
  readonly enabled: boolean
  readonly total?: Total | undefined
  readonly out?: NodeJS.WriteStream
}): Progress => {
  const out = options.out ?? process.stderr
  if (!options.enabled) return { update: () => undefined, log: (line) => out.write(line), finish: () => undefined }
  const tty = out.isTTY === true
  const settings: CliProgress.Options = {
    stream: out,
    format: formatter(options.label, options.total, tty),
    fps: 4,
    barsize: 20,
    etaBuffer: 20,
    // Trimmed to the terminal's width; the terminal's line wrapping and cursor are left alone.
    linewrap: true,
    hideCursor: false,
    gracefulExit: false,
    // Without a terminal (--progress): a plain line once a second, and no blank line at the end.
    noTTYOutput: true,
    notTTYSchedule: 1000,
    clearOnComplete: !tty,
    // Redrawn even when unchanged: a line logged above it clears it.
    forceRedraw: true
  }
  const total = options.total === undefined ? 0 : "rows" in options.total ? options.total.rows : options.total.bytes
  const byBytes = options.total !== undefined && "bytes" in options.total
  let done = false
  if (tty) {
    // A MultiBar of one bar: it writes logged lines above the bar (a SingleBar has no log).
    const multi = new CliProgress.MultiBar(settings)
    const bar = multi.create(total, 0, { rows: 0 })
    return {
      update: (rows, bytes) => bar.update(byBytes ? bytes ?? 0 : rows, { rows }),
      log: (line) => multi.log(line),
      finish: () => {
        if (done) return
        done = true
        // Logged lines still buffered are written first.
        multi.update()
        multi.stop()
      }
    }
  }
  const bar = new CliProgress.SingleBar(settings)
  bar.start(total, 0, { rows: 0 })
  return {
    update: (rows, bytes) => bar.update(byBytes ? bytes ?? 0 : rows, { rows }),
    log: (line) => out.write(line),
    finish: () => {
      if (done) return
      done = true
      bar.stop()
    }
  }
}

/**
 * Whether progress is shown: on a terminal unless `--json`, or when asked for with `--progress`.
 *
 * @category constructors
 */
export const wanted = (flags: { readonly json: boolean; readonly progress: boolean }, stderr: { readonly isTTY?: boolean } = process.stderr): boolean =>
  flags.progress || (!flags.json && stderr.isTTY === true)

/**
 * Whether the summary is JSON: with `--json`, or when stdout is not a terminal.
 *
 * @category constructors
 */
export const jsonSummary = (flags: { readonly json: boolean }): boolean => flags.json || process.stdout.isTTY !== true

/** Rows per second, one decimal. @category formatting */
export const rate = (rows: number, seconds: number): number => (seconds > 0 ? Math.round((rows / seconds) * 10) / 10 : rows)
