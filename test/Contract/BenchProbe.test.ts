/**
 * The counting rules of the benchmarks' allocation probe (bench/support/alloc-probe.mjs), which every
 * "alloc" and "GC" figure of `npm run bench` comes from: bytes allocated between two points, and what
 * the collections in between cost (main-thread pauses, bytes promoted to the old generation).
 */
import { assert, describe, it } from "@effect/vitest"
import { allocated, collected } from "../../bench/support/alloc-probe.mjs"

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
})
