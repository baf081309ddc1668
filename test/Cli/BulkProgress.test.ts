/**
 * The progress of `export` and `import` (cli-progress underneath), on a stream that says it is a
 * terminal and on one that does not. cli-progress reads `Date.now` and schedules its redraws with
 * `setTimeout`: both are vitest's fake timers here, so the elapsed time, the rate and the ETA are exact.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import * as NodeStream from "node:stream"
import * as BulkProgress from "../../src/Cli/BulkProgress.ts"

/** A stream that keeps what is written; `isTTY` as asked (a terminal 100 columns wide). */
const sink = (isTTY: boolean) => {
  let text = ""
  const stream = new NodeStream.Writable({
    write(chunk: Buffer, _encoding, done) {
      text += chunk.toString()
      done()
    }
  }) as NodeStream.Writable & { isTTY?: boolean; columns?: number }
  if (isTTY) {
    stream.isTTY = true
    stream.columns = 100
  }
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => text }
}

/** The text a terminal would show last on each line: what follows the last carriage return or cursor move. */
// eslint-disable-next-line no-control-regex
const plain = (text: string) => text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "\r").split("\n").map((l) => l.split("\r").filter((p) => p.length > 0).at(-1) ?? "")

beforeEach(() => {
  vi.useFakeTimers({ now: new Date("2026-01-01T00:00:00Z") })
})
afterEach(() => {
  vi.useRealTimers()
})

describe("BulkProgress", () => {
  it("on a terminal: rows done of the total, a bar, the percentage, rows/s, the elapsed time and an ETA, redrawn in place", () => {
    const out = sink(true)
    const progress = BulkProgress.make({ label: "export", enabled: true, total: { rows: 10_000 }, out: out.stream })
    vi.advanceTimersByTime(2_000)
    progress.update(2_000)
    vi.advanceTimersByTime(250)
    const drawn = out.text()
    // Redrawn in place: the line is rewritten (cursor moved to column 0, the rest cleared), not appended.
    expect(drawn).not.toContain("\n")
    expect(drawn).toContain("\x1b[1G")
    expect(plain(drawn).at(-1)).toBe("export [====----------------]: 2,000/10,000 rows, 20%, 889 rows/s, 0:02 elapsed, ETA 0:08")
    vi.advanceTimersByTime(1_750)
    progress.update(10_000)
    progress.finish()
    expect(plain(out.text()).at(-2)).toBe("export [====================]: 10,000/10,000 rows, 100%, 2,500 rows/s, 0:04 elapsed")
    expect(out.text().endsWith("\n")).toBe(true)
  })

  it("an import's total is the file's size: the share and the ETA follow the bytes read, the rate the rows", () => {
    const out = sink(true)
    const progress = BulkProgress.make({ label: "import", enabled: true, total: { bytes: 1_000_000 }, out: out.stream })
    vi.advanceTimersByTime(3_000)
    progress.update(600, 250_000)
    vi.advanceTimersByTime(250)
    expect(plain(out.text()).at(-1)).toBe("import [=====---------------]: 600 rows, 25%, 185 rows/s, 0:03 elapsed, ETA 0:09")
    progress.finish()
  })

  it("a line logged during progress on a terminal is written above the progress line, which is drawn again", () => {
    const out = sink(true)
    const progress = BulkProgress.make({ label: "import", enabled: true, total: { bytes: 100 }, out: out.stream })
    progress.update(10, 50)
    progress.log("line 7: column \"n\": expected an integer, got \"x\"\n")
    vi.advanceTimersByTime(250)
    progress.finish()
    const lines = plain(out.text())
    expect(lines[0]).toBe("line 7: column \"n\": expected an integer, got \"x\"")
    expect(lines[1]).toMatch(/^import \[=+-*\]: 10 rows, 50%, /)
  })

  it("without a terminal, progress (asked for with --progress) is one plain line a second, no escape codes, no bar", () => {
    const out = sink(false)
    const progress = BulkProgress.make({ label: "export", enabled: true, total: { rows: 300 }, out: out.stream })
    vi.advanceTimersByTime(1_000)
    progress.update(100)
    vi.advanceTimersByTime(1_000)
    progress.update(300)
    progress.finish()
    expect(out.text()).not.toContain("\x1b")
    expect(out.text().split("\n")).toEqual([
      "export: 0/300 rows, 0%, 0 rows/s, 0:00 elapsed",
      "export: 0/300 rows, 0%, 0 rows/s, 0:01 elapsed",
      "export: 100/300 rows, 33%, 50 rows/s, 0:02 elapsed, ETA 0:02",
      "export: 300/300 rows, 100%, 150 rows/s, 0:02 elapsed",
      ""
    ])
  })

  it("without a total there is no share and no ETA", () => {
    const out = sink(false)
    const progress = BulkProgress.make({ label: "export", enabled: true, out: out.stream })
    vi.advanceTimersByTime(2_000)
    progress.update(50)
    progress.finish()
    expect(out.text().split("\n").at(-2)).toBe("export: 50 rows, 25 rows/s, 0:02 elapsed")
  })

  it("disabled, it shows nothing and keeps no timer; logged lines are written as they are", () => {
    const out = sink(true)
    const progress = BulkProgress.make({ label: "export", enabled: false, total: { rows: 10 }, out: out.stream })
    progress.update(5)
    progress.log("line 2: bad\n")
    expect(vi.getTimerCount()).toBe(0)
    progress.finish()
    expect(out.text()).toBe("line 2: bad\n")
  })

  it("progress is shown on a terminal unless --json, and without one only with --progress", () => {
    expect(BulkProgress.wanted({ json: false, progress: false }, { isTTY: true })).toBe(true)
    expect(BulkProgress.wanted({ json: true, progress: false }, { isTTY: true })).toBe(false)
    expect(BulkProgress.wanted({ json: false, progress: false }, {})).toBe(false)
    expect(BulkProgress.wanted({ json: true, progress: true }, {})).toBe(true)
  })

  it("finish ends the progress: its timer is gone, and a second finish writes nothing", () => {
    const out = sink(true)
    const progress = BulkProgress.make({ label: "export", enabled: true, total: { rows: 10 }, out: out.stream })
    expect(vi.getTimerCount()).toBe(1)
    progress.finish()
    expect(vi.getTimerCount()).toBe(0)
    const written = out.text()
    progress.finish()
    expect(out.text()).toBe(written)
  })
})
