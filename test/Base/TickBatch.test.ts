/** Work left behind by requests is handled a turn later, one batch per turn, one batch at a time, in order. */
import { assert, describe, it } from "@effect/vitest"
import { vi } from "vitest"
import * as TickBatch from "../../src/Base/TickBatch.ts"

const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

describe("TickBatch", () => {
  it("with delayMs, what is pushed during the delay after the first item is one batch, handled when the delay is over", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout"] })
    try {
      const batches: Array<ReadonlyArray<number>> = []
      const batch = TickBatch.make<number>((items) => void batches.push(items), () => undefined, { delayMs: 100 })
      batch.push(1)
      await vi.advanceTimersByTimeAsync(60)
      batch.push(2)
      await vi.advanceTimersByTimeAsync(39)
      assert.deepStrictEqual(batches, [])
      await vi.advanceTimersByTimeAsync(1)
      assert.deepStrictEqual(batches, [[1, 2]])
      batch.push(3)
      await batch.drained()
      assert.deepStrictEqual(batches, [[1, 2], [3]], "drained takes what is pending at once")
    } finally {
      vi.useRealTimers()
    }
  })

  it("what is pushed in one turn is handled as one batch on the next turn, not at push", async () => {
    const batches: Array<ReadonlyArray<number>> = []
    const batch = TickBatch.make<number>((items) => void batches.push(items), () => undefined)
    batch.push(1)
    batch.push(2)
    assert.deepStrictEqual(batches, [])
    await turn()
    await batch.drained()
    assert.deepStrictEqual(batches, [[1, 2]])
  })

  it("batches run one at a time, in order; an exclusive task waits for the batch being handled and runs before items not yet batched", async () => {
    const events: Array<string> = []
    let release = () => {}
    const slow = new Promise<void>((resolve) => (release = resolve))
    const batch = TickBatch.make<string>(async (items) => {
      events.push(`start ${items.join(",")}`)
      if (items.includes("a")) await slow
      events.push(`end ${items.join(",")}`)
    }, () => undefined)
    batch.push("a")
    await turn()
    batch.push("b")
    const exclusive = batch.exclusive(async () => void events.push("exclusive"))
    await turn()
    assert.deepStrictEqual(events, ["start a"])
    release()
    await exclusive
    await batch.drained()
    assert.deepStrictEqual(events, ["start a", "end a", "exclusive", "start b", "end b"])
  })

  it("drained handles what is queued now and resolves once every earlier item is handled", async () => {
    const handled: Array<number> = []
    const batch = TickBatch.make<number>((items) => void handled.push(...items), () => undefined)
    batch.push(1)
    await batch.drained()
    assert.deepStrictEqual(handled, [1])
  })

  it("a batch that fails is reported and the next batch still runs", async () => {
    const errors: Array<unknown> = []
    const handled: Array<number> = []
    const batch = TickBatch.make<number>((items) => {
      if (items.includes(1)) throw new Error("disk full")
      handled.push(...items)
    }, (error) => errors.push(error))
    batch.push(1)
    await batch.drained()
    batch.push(2)
    await batch.drained()
    assert.strictEqual(errors.length, 1)
    assert.deepStrictEqual(handled, [2])
  })
})
