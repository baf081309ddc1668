/**
 * The two charts, with uPlot: calls per minute by client (a time series), and the latency
 * distribution by tool (each tool's latencies sorted, by percentile). uPlot draws on a canvas and
 * styles its elements through the CSSOM, which the page's CSP allows (no inline style attribute).
 */
import uPlot from "uplot"
import "uplot/dist/uPlot.min.css"
import type { CallView } from "./api.ts"

/** Colour-blind-safe colours (Okabe–Ito), dark enough on white. */
const COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#8a6d00", "#56B4E9", "#000000"]
const colour = (i: number) => COLOURS[i % COLOURS.length]!

const widthOf = (el: HTMLElement) => Math.max(260, Math.floor(el.getBoundingClientRect().width || el.clientWidth || 600))
const HEIGHT = 220

const keyOf = (series: ReadonlyArray<string>) => series.join("\u0000")

/** A chart whose series can change: rebuilt when they do, given new data otherwise. */
abstract class Chart {
  private plot: uPlot | undefined
  private key = ""
  constructor(private readonly el: HTMLElement) {}

  protected abstract options(series: ReadonlyArray<string>, width: number): uPlot.Options

  protected draw(series: ReadonlyArray<string>, data: uPlot.AlignedData) {
    const key = keyOf(series)
    if (this.plot === undefined || key !== this.key) {
      this.plot?.destroy()
      this.key = key
      this.plot = new uPlot(this.options(series, widthOf(this.el)), data, this.el)
      return
    }
    this.plot.setData(data)
  }

  resize() {
    this.plot?.setSize({ width: widthOf(this.el), height: HEIGHT })
  }
}

/** Calls per minute over the last hour, one line per client. */
export class CallsPerMinute extends Chart {
  protected options(series: ReadonlyArray<string>, width: number): uPlot.Options {
    return {
      width,
      height: HEIGHT,
      legend: { show: true },
      scales: { x: { time: true } },
      axes: [{}, { label: "calls / min", size: 60 }],
      series: [{}, ...series.map((name, i) => ({ label: name, stroke: colour(i), width: 2, points: { show: false } }))]
    }
  }

  update(calls: ReadonlyArray<CallView>, now: number) {
    const end = Math.floor(now / 60_000) * 60_000
    const minutes = Array.from({ length: 60 }, (_, i) => end - (59 - i) * 60_000)
    const clients = Array.from(new Set(calls.map((c) => c.client ?? "unknown"))).sort()
    const counts = clients.map(() => new Array<number>(60).fill(0))
    for (const call of calls) {
      const slot = 59 - Math.floor((end - Math.floor(call.time / 60_000) * 60_000) / 60_000)
      if (slot < 0 || slot > 59) continue
      counts[clients.indexOf(call.client ?? "unknown")]![slot]!++
    }
    this.draw(clients, [minutes.map((m) => m / 1000), ...counts])
  }
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!

const byTool = (calls: ReadonlyArray<CallView>) => {
  const out = new Map<string, Array<number>>()
  for (const call of calls) {
    const tool = call.tool ?? call.method
    let list = out.get(tool)
    if (list === undefined) out.set(tool, (list = []))
    list.push(call.durationMs)
  }
  for (const list of out.values()) list.sort((a, b) => a - b)
  return new Map(Array.from(out.entries()).sort(([a], [b]) => a.localeCompare(b)))
}

const STEPS = Array.from({ length: 21 }, (_, i) => i * 5)

/** The latency of each tool by percentile (0 to 100), on a logarithmic scale. */
export class LatencyByTool extends Chart {
  /** p50, p95 and the maximum of each tool: the chart's text alternative. */
  static summary(calls: ReadonlyArray<CallView>) {
    return Array.from(byTool(calls).entries()).map(([tool, sorted]) => ({
      tool,
      count: sorted.length,
      p50: Math.round(percentile(sorted, 50) * 10) / 10,
      p95: Math.round(percentile(sorted, 95) * 10) / 10,
      max: Math.round((sorted[sorted.length - 1] ?? 0) * 10) / 10
    }))
  }

  protected options(series: ReadonlyArray<string>, width: number): uPlot.Options {
    return {
      width,
      height: HEIGHT,
      legend: { show: true },
      scales: { x: { time: false }, y: { distr: 3 } },
      axes: [{ label: "percentile", values: (_u, ticks) => ticks.map((t) => `p${t}`) }, { label: "ms", size: 60 }],
      series: [{ label: "percentile" }, ...series.map((name, i) => ({ label: name, stroke: colour(i), width: 2, points: { show: false } }))]
    }
  }

  update(calls: ReadonlyArray<CallView>) {
    const tools = byTool(calls)
    // A log scale has no zero: the smallest value shown is 0.1 ms.
    const data = Array.from(tools.values()).map((sorted) => STEPS.map((p) => Math.max(0.1, percentile(sorted, Math.max(p, 1)))))
    this.draw(Array.from(tools.keys()), [STEPS, ...data])
  }
}
