/**
 * How the benchmarks read latency from `wrk` (bench/support/Wrk.ts): the p50 and p99 they report are
 * each answer's own latency, timed by wrk's script and tied to its request by the JSON-RPC id the answer
 * echoes, not wrk's percentiles, which add answers for coordinated omission; each connection's first
 * request is reported apart; a server whose answers do not echo the id falls back to wrk's figures.
 */
import { assert, describe, it } from "@effect/vitest"
import * as NodeHttp from "node:http"
import type { AddressInfo } from "node:net"
import * as Wrk from "../../bench/support/Wrk.ts"

const report = (timedLine: string | undefined) =>
  [
    "Running 1s test @ http://127.0.0.1:1/mcp",
    "  Latency Distribution",
    "     50%    1.20ms",
    "     75%    2.00ms",
    "     90%    3.00ms",
    "     99%  120.50ms",
    "  10000 requests in 1.00s, 650.00MB read",
    "Requests/sec:  10000.00",
    "Transfer/sec:    650.00MB",
    ...(timedLine === undefined ? [] : [timedLine]),
    "wrk corrected: p99 120500 p99.9 180000 max 190000 us"
  ].join("\n")

describe("Bench wrk", () => {
  it("the p50 and p99 reported are the answers' own latencies when the script timed them, wrk's corrected p99 beside them", () => {
    const m = Wrk.parse(report("timed: 10000 answers, p50 1100 p99 8600 p99.9 90000 max 190000 us; first requests max 190000 us; the others p99 8500 us"), 1)
    assert.strictEqual(m.p50Ms, 1.1)
    assert.strictEqual(m.p99Ms, 8.6)
    assert.strictEqual(m.wrkP99Ms, 120.5)
    assert.deepStrictEqual(m.timed, { answers: 10000, p999Ms: 90, maxMs: 190, firstRequestsMaxMs: 190, othersP99Ms: 8.5 })
  })

  it("a run whose answers could not be timed (fewer than 90% echoed their id) reports wrk's percentiles", () => {
    const few = Wrk.parse(report("timed: 1 answers, p50 10 p99 10 p99.9 10 max 10 us; first requests max 10 us; the others p99 0 us"), 1)
    assert.strictEqual(few.p99Ms, 120.5)
    assert.strictEqual(few.p50Ms, 1.2)
    assert.strictEqual(few.timed, undefined)
    assert.strictEqual(Wrk.parse(report(undefined), 1).p99Ms, 120.5)
  })

  describe.skipIf(!Wrk.available)(`against a server whose first answer on each connection is slow${Wrk.available ? "" : " (skipped: wrk is not installed: apt-get install wrk)"}`, () => {
    it("each connection's first request is reported apart, and does not make the p99 that wrk's correction makes of it", async () => {
      const FIRST_MS = 150
      const answered = new WeakSet<object>()
      const server = NodeHttp.createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          const id = /"id":(\d+)/.exec(Buffer.concat(chunks).toString("latin1"))?.[1] ?? "null"
          const answer = () => response.end(`{"jsonrpc":"2.0","id":${id},"result":{}}`)
          const first = !answered.has(request.socket)
          answered.add(request.socket)
          if (first) setTimeout(answer, FIRST_MS)
          else answer()
        })
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      try {
        const { port } = server.address() as AddressInfo
        const m = await Wrk.run(
          { name: "slow-first", url: `http://127.0.0.1:${port}/mcp`, headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) },
          { connections: 8, durationMs: 1000 }
        )
        assert.strictEqual(m.errors, 0)
        assert.isDefined(m.timed, "every answer echoes its id, so every answer is timed")
        assert.isAtLeast(m.timed!.firstRequestsMaxMs, FIRST_MS)
        assert.isAtLeast(m.timed!.maxMs, FIRST_MS)
        // 8 slow answers among hundreds or more: below the 1% the p99 sees.
        assert.isAtLeast(m.timed!.answers, 1000)
        assert.isBelow(m.p99Ms, FIRST_MS)
        assert.isBelow(m.timed!.othersP99Ms, FIRST_MS)
        // wrk counts each slow answer again at every mean interval below it.
        assert.isAtLeast(m.wrkP99Ms, FIRST_MS / 2)
      } finally {
        await new Promise((resolve) => server.close(resolve))
      }
    })
  })
})
