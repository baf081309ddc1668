/**
 * Benchmark: start time and memory of the daemon as users run it (`weaviate-mcp serve`, the built CLI,
 * default configuration: token authentication on; rate limit off so that the load below is not
 * refused), against a bare `node:http` server started the same way (`node -e`), in the same run.
 *
 * - `startup`: from spawning the process to the first answered `server/discover` (a bare server: its
 *   first answer), median of `RUNS` starts (after one daemon has run 3 s, as an installed one has:
 *   the code cache is then the one a daemon writes), each in a fresh home (a first start: the first-run token
 *   is created and printed); reported, no target (it starts once per login). Also a restart (the home of an
 *   earlier start, its token kept), against the bare server started again in the same run.
 * - `memory`: resident set size (`VmRSS`) when idle, 2 s after the first answer, and
 *   settled, `SETTLE_S` (default 40) s after it, once V8's memory reducer has given back the young
 *   generation the start grew (standing target: ≤ 70 MB);
 *   and after 100,000 mixed requests (`tools/list`, `server/discover`, `resources/list`,
 *   `prompts/list`, `resources/templates/list`; wrk on the load core, 64 connections), measured after
 *   2 s of rest and once settled (`SETTLE_S`); then the same load twice more, each settled. The daemon
 *   is started as `npm start` starts it (`--max-semi-space-size=4`). Standing targets
 *   (bench/targets.json): settled after the first load within 15 MB of the settled idle
 *   (`idle-settled`), and the third load's settled RSS within 5 MB of the first's (`first-100k-settled`).
 * Servers run on core 0, wrk on core 1 (`bench/support/Cores.ts`). Merges `startup` and `memory` rows
 * into `bench/results.json`. Run with `npm run bench:startup-memory` (after `npm run build`).
 */
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import * as Cores from "./support/Cores.ts"
import * as StartEnv from "./support/StartEnv.ts"
import { merge, type Row } from "./support/Results.ts"
import * as Wrk from "./support/Wrk.ts"
import { DAEMON_HEAP_FLAG } from "../src/Bridge/BridgeMain.ts"

const RUNS = Math.min(Math.max(Number(process.env.RUNS ?? 7), 1), 30)
/** When the settled idle RSS is read, after the first answer (V8's memory reducer has run by then). */
const SETTLE_MS = Math.min(Math.max(Number(process.env.SETTLE_S ?? 40), 3), 120) * 1000
/** How long one daemon runs before anything is timed: past the 2 s at which it writes its code cache. */
const PRIME_MS = 3000
const REQUESTS = Math.min(Math.max(Number(process.env.REQUESTS ?? 100_000), 1000), 1_000_000)
/** How many times the mixed load is sent to the same daemon (growth is the third's settled RSS against the first's). */
const LOADS = Math.min(Math.max(Number(process.env.LOADS ?? 3), 1), 10)
const MODERN = "2026-07-28"
const BIN = NodePath.resolve(import.meta.dirname, "..", "bin", "weaviate-mcp.js")
const BUNDLE = NodePath.resolve(import.meta.dirname, "..", "dist", "weaviate-mcp.cjs")

const BARE = `
const http = require("node:http")
const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { supportedVersions: ["${MODERN}"] } }))
const server = http.createServer((req, res) => {
  req.resume()
  req.on("end", () => { res.writeHead(200, { "content-type": "application/json", "content-length": body.length }); res.end(body) })
})
server.listen(0, "127.0.0.1", () => console.log("listening on http://127.0.0.1:" + server.address().port + "/mcp"))
`

const meta = (method: string) => ({
  _meta: {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientInfo": { name: "weaviate-mcp-bench", version: "0.0.0" },
    "io.modelcontextprotocol/clientCapabilities": {}
  },
  ...(method === "tools/list" ? {} : {})
})

const request = (method: string) => ({
  headers: {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
    "mcp-method": method
  },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: meta(method) })
})

interface Started {
  readonly child: NodeChildProcess.ChildProcess
  readonly url: string
  readonly token: string | undefined
  readonly millis: number
}

const rss = (pid: number) => {
  const status = NodeFs.readFileSync(`/proc/${pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024
}

const discover = async (url: string, token: string | undefined) => {
  const { headers, body } = request("server/discover")
  const response = await fetch(url, {
    method: "POST",
    headers: token === undefined ? headers : { ...headers, authorization: `Bearer ${token}` },
    body
  })
  await response.arrayBuffer()
  return response.status === 200
}

/** Spawns a server on core 0 and resolves once it answers `server/discover`; bounded to 15 s. */
const start = (file: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, knownToken?: string): Promise<Started> =>
  new Promise((resolve, reject) => {
    const t0 = performance.now()
    const [command, argv] = Cores.onServerCore(file, args)
    const child = NodeChildProcess.spawn(command, argv, { env, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let settled = false
    const timer = setTimeout(() => fail(new Error(`no answer within 15 s:\n${out}`)), 15_000)
    const fail = (error: Error) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      child.kill("SIGKILL")
      reject(error)
    }
    const onData = (chunk: Buffer) => {
      out += chunk.toString("utf8")
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1]
      if (url === undefined || settled) return
      const token = knownToken ?? /Bearer (wmcp_[A-Za-z0-9_-]+)/.exec(out)?.[1]
      // The first-run token is printed after the URL: wait for it when the daemon prints one.
      if (file === process.execPath && args.includes(BIN) && token === undefined && !out.includes("}\n}\n")) return
      settled = true
      discover(url, token).then((ok) => {
        clearTimeout(timer)
        if (!ok) return fail(new Error(`server/discover was refused:\n${out}`))
        resolve({ child, url, token, millis: performance.now() - t0 })
      }, fail)
    }
    child.stdout!.on("data", onData)
    child.stderr!.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
    child.on("exit", (code) => fail(new Error(`exited with ${code}:\n${out}`)))
  })

const stop = (child: NodeChildProcess.ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.removeAllListeners("exit")
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
    setTimeout(() => child.kill("SIGKILL"), 5000).unref()
  })

const ourServer = () => {
  const home = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-bench-"))
  return {
    home,
    start: (knownToken?: string) =>
      // As `npm start` and the bridge's `--start` start it: the young generation capped.
      start(process.execPath, [DAEMON_HEAP_FLAG, BIN, "serve", "--home", home, "--port", "0", "--rate-limit", "0", "--approvals", "deny"], StartEnv.startEnv({
        NODE_ENV: "production"
      }), knownToken)
  }
}

const bareServer = () => start(process.execPath, ["-e", BARE], StartEnv.startEnv())

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const round = (n: number) => Math.round(n * 1000) / 1000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** 100,000 mixed requests from one wrk run that stops at that count (bounded to 120 s). */
const mixedLoad = async (url: string, token: string | undefined) => {
  const methods = ["tools/list", "server/discover", "resources/list", "prompts/list", "resources/templates/list"]
  const withToken = (method: string) => {
    const { headers, body } = request(method)
    return { headers: token === undefined ? headers : { ...headers, authorization: `Bearer ${token}` }, body }
  }
  const [first, ...alternates] = methods.map(withToken)
  const result = await Wrk.run(
    { name: "mixed", url, ...first!, alternates },
    { connections: 64, durationMs: 120_000, maxRequests: REQUESTS }
  )
  if (result.errors > 0) throw new Error(`${result.errors} of ${result.requests} mixed requests failed; the first: ${result.firstError}`)
  return result.requests
}

/** `RUNS` starts of ours, each followed by one of the bare server's: their times to the first answer. */
const interleavedStarts = async (startOurs: () => Promise<Started>) => {
  const ours: Array<number> = []
  const bare: Array<number> = []
  for (let i = 0; i < RUNS; i++) {
    const started = await startOurs()
    ours.push(started.millis)
    await stop(started.child)
    const baseline = await bareServer()
    bare.push(baseline.millis)
    await stop(baseline.child)
  }
  return { ours, bare }
}

const main = async () => {
  if (!NodeFs.existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run npm run build first`)
  if (!Wrk.available) throw new Error("wrk is not installed: apt-get install wrk")
  console.log(`startup and memory: ${RUNS} starts each; ${Cores.placement()}; ${NodeOs.cpus().length} CPUs`)
  StartEnv.printNote()
  const homes: Array<string> = []
  // The code cache as an installed daemon finds it: the first `serve` that runs 2 s after a build
  // writes it whole (a file written by a shorter run is written again then; docs/configuration.md,
  // "The compile cache"). Unprimed, every timed start ran from what the first, stopped start had
  // compiled, and the daemon measured idle below was the one that wrote the file again (6 MB more).
  const primer = ourServer()
  homes.push(primer.home)
  const primed = await primer.start()
  await sleep(PRIME_MS)
  await stop(primed.child)
  const { ours, bare } = await interleavedStarts(() => {
    const server = ourServer()
    homes.push(server.home)
    return server.start()
  })
  console.log(`start to first server/discover: ours median ${median(ours).toFixed(0)} ms (${ours.map((n) => n.toFixed(0)).join(", ")}); node:http ${median(bare).toFixed(0)} ms`)
  // A restart: the home of an earlier start, its token kept (no first-run token to create and print).
  const kept = ourServer()
  homes.push(kept.home)
  const first = await kept.start()
  await stop(first.child)
  const { ours: restarts, bare: bareAgain } = await interleavedStarts(() => kept.start(first.token))
  console.log(`restart to first server/discover: ours median ${median(restarts).toFixed(0)} ms (${restarts.map((n) => n.toFixed(0)).join(", ")}); node:http ${median(bareAgain).toFixed(0)} ms`)

  const server = ourServer()
  homes.push(server.home)
  const daemon = await server.start()
  const baseline = await bareServer()
  try {
    await sleep(2000)
    const idle = rss(daemon.child.pid!)
    const bareIdle = rss(baseline.child.pid!)
    console.log(`idle RSS: ours ${idle.toFixed(1)} MB, node:http ${bareIdle.toFixed(1)} MB`)
    // V8 keeps the young generation the start grew (16 MB) until its memory reducer runs, 25–35 s
    // after the start on this machine: the settled figure is the one a daemon left idle shows.
    await sleep(SETTLE_MS - 2000)
    const settled = rss(daemon.child.pid!)
    const bareSettled = rss(baseline.child.pid!)
    console.log(`idle RSS ${SETTLE_MS / 1000} s after the start: ours ${settled.toFixed(1)} MB, node:http ${bareSettled.toFixed(1)} MB`)
    const oursCount = await mixedLoad(daemon.url, daemon.token)
    const bareCount = await mixedLoad(baseline.url, undefined)
    await sleep(2000)
    const after = rss(daemon.child.pid!)
    const bareAfter = rss(baseline.child.pid!)
    console.log(
      `RSS 2 s after ${oursCount} mixed requests: ours ${after.toFixed(1)} MB (${(after - idle).toFixed(1)} MB over idle); ` +
        `node:http after ${bareCount}: ${bareAfter.toFixed(1)} MB`
    )
    // As after the start: what the load left once V8's memory reducer has run.
    await sleep(SETTLE_MS - 2000)
    const afterSettled = rss(daemon.child.pid!)
    const bareAfterSettled = rss(baseline.child.pid!)
    console.log(
      `RSS ${SETTLE_MS / 1000} s after the mixed requests: ours ${afterSettled.toFixed(1)} MB (${(afterSettled - settled).toFixed(1)} MB over the settled idle); ` +
        `node:http ${bareAfterSettled.toFixed(1)} MB`
    )
    // The same load twice more: what a daemon keeps must not grow from one burst to the next.
    let thirdSettled = afterSettled
    for (let load = 2; load <= LOADS; load++) {
      await mixedLoad(daemon.url, daemon.token)
      await sleep(SETTLE_MS)
      thirdSettled = rss(daemon.child.pid!)
      console.log(`RSS ${SETTLE_MS / 1000} s after load ${load} of ${LOADS}: ours ${thirdSettled.toFixed(1)} MB (${(thirdSettled - afterSettled).toFixed(1)} MB over the first load's)`)
    }
    const rows: Array<Row> = [
      { scenario: "startup", metric: "start_to_first_discover_p50", unit: "ms", ours: round(median(ours)), baseline: round(median(bare)), baselineName: "node:http", ratio: round(median(ours) / median(bare)) },
      { scenario: "startup", metric: "restart_to_first_discover_p50", unit: "ms", ours: round(median(restarts)), baseline: round(median(bareAgain)), baselineName: "node:http", ratio: round(median(restarts) / median(bareAgain)) },
      { scenario: "memory", metric: "idle_rss", unit: "MB", ours: round(idle), baseline: round(bareIdle), baselineName: "node:http", ratio: round(idle / bareIdle) },
      { scenario: "memory", metric: "idle_rss_settled", unit: "MB", ours: round(settled), baseline: round(bareSettled), baselineName: "node:http", ratio: round(settled / bareSettled) },
      { scenario: "memory", metric: "rss_after_100k_requests", unit: "MB", ours: round(after), baseline: round(bareAfter), baselineName: "node:http", ratio: round(after / bareAfter) },
      { scenario: "memory", metric: "rss_after_100k_requests_settled", unit: "MB", ours: round(afterSettled), baseline: round(bareAfterSettled), baselineName: "node:http", ratio: round(afterSettled / bareAfterSettled) },
      // Against the daemon itself: what the load left over its settled idle, and growth over three loads.
      { scenario: "memory", metric: "rss_after_100k_requests_settled", unit: "MB", ours: round(afterSettled), baseline: round(settled), baselineName: "idle-settled", ratio: 0 },
      { scenario: "memory", metric: `rss_after_${LOADS}x100k_requests_settled`, unit: "MB", ours: round(thirdSettled), baseline: round(afterSettled), baselineName: "first-100k-settled", ratio: 0 }
    ]
    merge(rows.map((row) => ({ ...row, ratio: round(row.ours / row.baseline) })))
  } finally {
    await stop(daemon.child)
    await stop(baseline.child)
    for (const home of homes) NodeFs.rmSync(home, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
