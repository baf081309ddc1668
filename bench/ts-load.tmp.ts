// Time series of latencies under 64-connection saturation: which requests are slow, and when.
import { performance } from "node:perf_hooks"
import { Pool } from "undici"
const url = new URL(process.env.LOAD_URL!)
const headers = JSON.parse(process.env.LOAD_HEADERS!) as Record<string, string>
const method = process.env.LOAD_METHOD ?? "tools/list"
const conns = 64
const pool = new Pool(url.origin, { connections: conns, pipelining: 1 })
const t0 = performance.now()
const stopAt = t0 + Number(process.env.DURATION_MS ?? 6000)
const samples: Array<[number, number, number]> = []
let n = 0
const worker = async (c: number) => {
  while (performance.now() < stopAt) {
    const s = performance.now()
    const r = await pool.request({ path: url.pathname, method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: ++n, method, params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientInfo": { name: "p", version: "0" }, "io.modelcontextprotocol/clientCapabilities": {} } } }) })
    await r.body.arrayBuffer()
    samples.push([s - t0, performance.now() - s, c])
  }
}
await Promise.all(Array.from({ length: conns }, (_, c) => worker(c)))
await pool.close()
const lat = samples.map((s) => s[1]).sort((a, b) => a - b)
const q = (p: number) => lat[Math.floor(p * lat.length)]!.toFixed(1)
console.log(`n=${samples.length} rps=${(samples.length / ((stopAt - t0) / 1000)).toFixed(0)} p50=${q(0.5)} p90=${q(0.9)} p99=${q(0.99)} max=${lat.at(-1)!.toFixed(1)}`)
// slow requests: when did they start, which connection
const slow = samples.filter((s) => s[1] > Number(q(0.99)))
const buckets = new Map<number, number>()
for (const s of slow) buckets.set(Math.floor(s[0] / 100), (buckets.get(Math.floor(s[0] / 100)) ?? 0) + 1)
console.log("slow (>p99) requests per 100 ms window of their start:", [...buckets].sort((a, b) => a[0] - b[0]).map(([k, v]) => `${k * 100}:${v}`).join(" "))
const perConn = new Map<number, number>(); for (const s of slow) perConn.set(s[2], (perConn.get(s[2]) ?? 0) + 1)
console.log("slow per connection:", [...perConn].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([k, v]) => `${k}:${v}`).join(" "), "distinct", perConn.size)
const counts = new Map<number, number>(); for (const s of samples) counts.set(s[2], (counts.get(s[2]) ?? 0) + 1)
const cs = [...counts.values()].sort((a, b) => a - b)
console.log("requests per connection min/median/max:", cs[0], cs[Math.floor(cs.length / 2)], cs.at(-1))
