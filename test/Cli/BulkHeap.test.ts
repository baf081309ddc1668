/**
 * `BulkHeap.bound()`: a bulk command's garbage in V8's large-object space (a page of rows with vectors
 * is one string of megabytes) is collected when the heap reaches 1.5 times what is live, not about 4
 * times. Measured in child processes (the flag is process-wide): the same allocation (25 MB kept,
 * 400 strings of 4 MB decoded as undici decodes a response, two alive at a time) with and without it.
 */
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import * as BulkHeap from "../../src/Cli/BulkHeap.ts"
import * as TestHome from "../support/TestHome.ts"

const MODULE = NodePath.resolve(import.meta.dirname, "../../src/Cli/BulkHeap.ts")

/** The peak of V8's used heap, in MB, in a child that allocates like a bulk command; `bound` calls BulkHeap.bound() first. */
const peakOf = (bound: boolean, nodeFlags: ReadonlyArray<string> = []) => {
  const dir = TestHome.tempDirSync("weaviate-mcp-heap-")
  const script = NodePath.join(dir, "allocate.mts")
  NodeFs.writeFileSync(script, `
import * as NodeV8 from "node:v8"
import * as BulkHeap from ${JSON.stringify(MODULE)}
if (${bound}) BulkHeap.bound()
const kept = Array.from({ length: 200 }, (_, i) => Buffer.alloc(100_000, 97 + (i % 20)).toString("latin1"))
const decoder = new TextDecoder()
const page = Buffer.alloc(4_000_000, 120)
let peak = 0
let sum = 0
// Two pages in flight, as while one is written and the next read: each outlives the young generation.
const inFlight: Array<string> = []
for (let i = 0; i < 400; i++) {
  inFlight.push(decoder.decode(page))
  if (inFlight.length > 2) inFlight.shift()
  sum += inFlight[0]!.charCodeAt(i)
  peak = Math.max(peak, NodeV8.getHeapStatistics().used_heap_size)
}
process.stdout.write(JSON.stringify({ peakMb: peak / 1048576, kept: kept.length, sum }))
`)
  const out = NodeChild.execFileSync(process.execPath, [...nodeFlags, "--import", "tsx", script], { encoding: "utf8", timeout: 60_000 })
  return (JSON.parse(out) as { peakMb: number }).peakMb
}

describe("BulkHeap", () => {
  it("a bulk command collects its garbage at 1.5x the live heap: the peak is about half of V8's default", () => {
    const plain = peakOf(false)
    const bound = peakOf(true)
    // About 180 MB and 90 MB here (the child's own live heap, tsx included, is about 45 MB).
    expect(plain).toBeGreaterThan(130)
    expect(bound).toBeLessThan(plain * 0.65)
  }, 120_000)

  it("a --heap-growing-percent given when Node started is left alone", () => {
    expect(BulkHeap.givenByUser(["--heap-growing-percent=300"])).toBe(true)
    expect(BulkHeap.givenByUser(["--max-old-space-size=100", "--heap_growing_percent", "300"])).toBe(true)
    expect(BulkHeap.givenByUser(["--max-old-space-size=100", "--inspect"])).toBe(false)
    // Given on node's command line (NODE_OPTIONS does not take it), the process's own value stays.
    expect(peakOf(true, ["--heap-growing-percent=300"])).toBeGreaterThan(130)
  }, 120_000)

  it("bin/weaviate-mcp.js sets the same value for export and import before it compiles the bundle (so their compiled code is not refused for a flag)", () => {
    const bin = NodeFs.readFileSync(NodePath.resolve(import.meta.dirname, "../../bin/weaviate-mcp.js"), "utf8")
    expect(Number(/const BULK_HEAP_GROWING_PERCENT = (\d+)/.exec(bin)?.[1])).toBe(BulkHeap.HEAP_GROWING_PERCENT)
  })
})
