/**
 * What `export` and `import` tell a person while they run and when they end: a progress line on
 * stderr (rows done, rows per second, elapsed time and, when the total is known, an ETA), redrawn in
 * place on a terminal at most 4 times a second, or printed as plain lines once a second with
 * `--progress` when stderr is not a terminal; and the summary at the end, as JSON without a terminal
 * or with `--json`.
 *
 * @since 0.1.0
 */

/** @category models */
export interface Progress {
  /** Rows done so far (the running total), and the share of the work done (0–1) when rows have no total. */
  readonly update: (rows: number, done?: number) => void
  /** The last line, and on a terminal the end of the redrawn line. */
  readonly finish: () => void
}

const clock = (seconds: number): string => {
  const s = Math.max(0, Math.round(seconds))
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const pad = (n: number) => String(n).padStart(2, "0")
  return h > 0 ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`
}

const count = (n: number) => n.toLocaleString("en-US")

/**
 * The progress of one run. `enabled` false gives a progress that prints nothing.
 *
 * @category constructors
 */
export const make = (options: {
  readonly label: string
  readonly enabled: boolean
  readonly total?: number | undefined
  readonly out?: NodeJS.WriteStream
}): Progress => {
  if (!options.enabled) return { update: () => undefined, finish: () => undefined }
  const out = options.out ?? process.stderr
  const tty = out.isTTY === true
  const started = performance.now()
  const interval = tty ? 250 : 1000
  let last = -Infinity
  let rows = 0
  let done: number | undefined
  let width = 0
  const line = () => {
    const seconds = (performance.now() - started) / 1000
    const rate = seconds > 0 ? rows / seconds : 0
    const total = options.total
    const share = total !== undefined && total > 0 ? rows / total : done
    const parts = [
      total !== undefined && total > 0 ? `${count(rows)}/${count(total)} rows` : `${count(rows)} rows`,
      ...(share !== undefined ? [`${Math.min(100, Math.floor(share * 100))}%`] : []),
      `${count(Math.round(rate))} rows/s`,
      `${clock(seconds)} elapsed`,
      ...(share !== undefined && share > 0 && share < 1 ? [`ETA ${clock((seconds * (1 - share)) / share)}`] : [])
    ]
    return `${options.label}: ${parts.join(", ")}`
  }
  const draw = () => {
    const text = line()
    if (tty) {
      // Spaces over the rest of a longer previous line: no terminal escape codes needed.
      out.write(`\r${text}${" ".repeat(Math.max(0, width - text.length))}`)
      width = text.length
    } else {
      out.write(`${text}\n`)
    }
  }
  return {
    update: (n, share) => {
      rows = n
      done = share
      const now = performance.now()
      if (now - last < interval) return
      last = now
      draw()
    },
    finish: () => {
      draw()
      if (tty) out.write("\n")
    }
  }
}

/**
 * Whether progress is shown: on a terminal unless `--json`, or when asked for with `--progress`.
 *
 * @category constructors
 */
export const wanted = (flags: { readonly json: boolean; readonly progress: boolean }): boolean =>
  flags.progress || (!flags.json && process.stderr.isTTY === true)

/**
 * Whether the summary is JSON: with `--json`, or when stdout is not a terminal.
 *
 * @category constructors
 */
export const jsonSummary = (flags: { readonly json: boolean }): boolean => flags.json || process.stdout.isTTY !== true

/** Rows per second, one decimal. @category formatting */
export const rate = (rows: number, seconds: number): number => (seconds > 0 ? Math.round((rows / seconds) * 10) / 10 : rows)
