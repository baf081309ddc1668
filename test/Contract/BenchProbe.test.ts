/**
 * The counting rules of the benchmarks' allocation probe (bench/support/alloc-probe.mjs), which every
 * "alloc" and "GC" figure of `npm run bench` comes from: bytes allocated between two points, and what
 * the collections in between cost (main-thread pauses, bytes promoted to the old generation).
 */
import { assert, describe, it } from "@effect/vitest"
import { allocated, collected } from "../../bench/support/alloc-probe.mjs"
import * as ServerCost from "../../bench/support/ServerCost.ts"

const heap = (used: number, oldSpace: number) => ({
  heapStatistics: { usedHeapSize: used },
  heapSpaceStatistics: [{ spaceName: "new_space", spaceUsedSize: used - oldSpace }, { spaceName: "old_space", spaceUsedSize: oldSpace }]
})

const statistics = [
  // A scavenge: 10 MB in use, 2 MB left; the old space grew by 300 KB (promoted).
  { gcType: "Scavenge", cost: 1500, beforeGC: heap(10_000_000, 1_000_000), afterGC: heap(2_000_000, 1_300_000) },
  // A full collection: the old space shrinks; nothing is promoted.
  { gcType: "MarkSweepCompact", cost: 12_000, beforeGC: heap(9_000_000, 1_300_000), afterGC: heap(1_500_000, 900_000) },
  { gcType: "IncrementalMarking", cost: 500, beforeGC: heap(3_000_000, 900_000), afterGC: heap(3_000_000, 900_000) },
  { gcType: "Scavenge", cost: 1000, beforeGC: heap(11_000_000, 900_000), afterGC: heap(1_200_000, 1_000_000) }
]

describe("Bench probe", () => {
  it("bytes allocated are the heap in use before each collection minus what the one before left, plus the growth since the last", () => {
    assert.strictEqual(allocated(1_000_000, statistics, 1_700_000), 9_000_000 + 7_000_000 + 1_500_000 + 8_000_000 + 500_000)
  })

  it("promoted bytes are the old space's growth across each scavenge; only a mark-compact counts as a full collection, and every non-scavenge pause as its pause", () => {
    const gc = collected(statistics)
    assert.deepStrictEqual(gc, { scavenges: 2, scavengeMs: 2.5, fullCollections: 1, fullMs: 12.5, promotedBytes: 400_000 })
  })

  it.skipIf(process.platform !== "linux")("a process's CPU is its threads' run time in the scheduler's nanoseconds, not 10 ms clock ticks, and agrees with the kernel's own count", () => {
    const before = ServerCost.cpuMs(process.pid)!
    const usage = process.cpuUsage()
    let x = 0
    for (let i = 0; i < 20_000_000 && x >= 0; i++) x += i % 7
    const measured = ServerCost.cpuMs(process.pid)! - before
    const used = process.cpuUsage(usage)
    const kernel = (used.user + used.system) / 1000
    assert.isAbove(measured, 1)
    // Ticks would give whole multiples of 10 ms.
    assert.notStrictEqual(Math.round(measured * 1e6) % 10_000_000, 0)
    assert.approximately(measured, kernel, Math.max(5, kernel * 0.1))
    assert.isAtMost(ServerCost.mainThreadCpuMs(process.pid)!, ServerCost.cpuMs(process.pid)!)
  })
})
