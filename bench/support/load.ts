/**
 * A bounded keep-alive HTTP load generator, run as its own process so that it does not share an
 * event loop with the server under test: `CONNECTIONS` keep-alive connections (undici `Pool`), each
 * sending the same POST back to back for `DURATION_MS` (and at most `MAX_REQUESTS` in all). Prints one
 * JSON line: `{requests, errors, seconds, requestsPerSecond, p50Ms, p99Ms, firstError?}`; a response
 * whose status is not 200 counts as an error.
 *
 * Input (environment): `LOAD_URL`, `LOAD_BODY`, `LOAD_HEADERS` (JSON object), `CONNECTIONS`,
 * `DURATION_MS`, `MAX_REQUESTS`.
 */
import { performance } from "node:perf_hooks"
import { Pool } from "undici"

const url = new URL(process.env.LOAD_URL ?? "")
const body = process.env.LOAD_BODY ?? ""
const headers = JSON.parse(process.env.LOAD_HEADERS ?? "{}") as Record<string, string>
const connections = Math.min(Math.max(Number(process.env.CONNECTIONS ?? 64), 1), 512)
const durationMs = Math.min(Math.max(Number(process.env.DURATION_MS ?? 5000), 100), 60_000)
const maxRequests = Math.min(Math.max(Number(process.env.MAX_REQUESTS ?? 2_000_000), 1), 10_000_000)

const pool = new Pool(url.origin, { connections, pipelining: 1, keepAliveTimeout: 30_000 })
const latencies = new Float64Array(maxRequests)
let requests = 0
let errors = 0
let firstError: string | undefined
const started = performance.now()
const stopAt = started + durationMs

const worker = async () => {
  while (performance.now() < stopAt && requests < maxRequests) {
    const t0 = performance.now()
    try {
      const response = await pool.request({ path: url.pathname, method: "POST", headers, body })
      const text = Buffer.from(await response.body.arrayBuffer()).toString("utf8")
      if (response.statusCode !== 200) {
        errors++
        firstError ??= `${response.statusCode} ${text.slice(0, 300)}`
      }
    } catch (error) {
      errors++
      firstError ??= String(error)
    }
    if (requests < maxRequests) latencies[requests++] = performance.now() - t0
  }
}

await Promise.all(Array.from({ length: connections }, worker))
const seconds = (performance.now() - started) / 1000
await pool.close()
const sorted = latencies.subarray(0, requests).sort()
const quantile = (q: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!)
const round = (n: number, digits = 3) => Number(n.toFixed(digits))
process.stdout.write(`${JSON.stringify({
  requests,
  errors,
  seconds: round(seconds),
  requestsPerSecond: round(requests / seconds, 1),
  p50Ms: round(quantile(0.5)),
  p99Ms: round(quantile(0.99)),
  ...(firstError === undefined ? {} : { firstError })
})}\n`)
