/**
 * Benchmark: the stdio bridge's start and its cost per request, against a daemon already running
 * (`weaviate-mcp serve` in a temporary home, as users run it; rate limit off).
 *
 * - `spawn_to_initialize_p50`: from spawning `weaviate-mcp bridge --home H` (with the client's
 *   `initialize` written at once) to the answer, median of `RUNS` (7) starts, against the minimal
 *   bridge (`support/minimal-bridge.cjs`: the handshake file, `server/discover`, the answer;
 *   `minimal-bridge`, the standing target in bench/targets.json) and bare `node -e ''` from spawn to
 *   exit (`node-start`), measured in the same run, interleaved.
 * - `spawn_to_tools_list_p50`: the same start, then `tools/list`, to its answer.
 * - `spawn_to_initialize_p50_cli_bundle`: the start the bridge had before its own entry, still what
 *   `bridge --start=false` runs (the full CLI), for the before/after comparison.
 * - `spawn_to_initialize_cpu_p50` (and `…_cli_bundle`): the CPU time (user + system, every thread,
 *   from /proc) the bridge used up to the `initialize` answer, against what bare `node -e` uses:
 *   the wall-clock figures follow the machine's load, these do not.
 * - `tools_list_p50`: one `tools/list` at a time through one bridge (stdin → answer on stdout), against
 *   the same request (the body the bridge sends) POSTed over HTTP to the daemon with keep-alive
 *   (`daemon-http`), `REQUESTS` each, interleaved in blocks. Target: ≤ 2 ms more at p50.
 * The daemon runs on core 0, the bridges, bare node and the HTTP client on core 1 (`support/Cores.ts`).
 * Merges `bridge` rows into `bench/results.json`. Run with `npm run bench:bridge` (after `npm run build`).
 */
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import * as NodeReadline from "node:readline"
import * as Cores from "./support/Cores.ts"
import * as StartEnv from "./support/StartEnv.ts"
import { merge, percentile, type Row } from "./support/Results.ts"
import { DAEMON_HEAP_FLAG } from "../src/Bridge/BridgeMain.ts"

const RUNS = Math.min(Math.max(Number(process.env.RUNS ?? 7), 1), 30)
const REQUESTS = Math.min(Math.max(Number(process.env.REQUESTS ?? 400), 20), 20_000)
const BLOCK = 20
const MODERN = "2026-07-28"
const LEGACY = "2025-11-25"
const BIN = NodePath.resolve(import.meta.dirname, "..", "bin", "weaviate-mcp.js")
const BRIDGE = NodePath.resolve(import.meta.dirname, "..", "dist", "bridge.cjs")
const MINIMAL_BRIDGE = NodePath.resolve(import.meta.dirname, "support", "minimal-bridge.cjs")

const median = (values: ReadonlyArray<number>) => percentile(values, 50)
const TICK_MS = 1000 / Number(NodeChildProcess.execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim())

/** CPU time (user + system, every thread) a process has used so far, from /proc/PID/stat. */
const cpuMs = (pid: number | "self") => {
  const fields = NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS
}
const round = (n: number) => Math.round(n * 1000) / 1000

/** Bounds every wait of the benchmark. */
const within = <A>(ms: number, what: string, promise: Promise<A>): Promise<A> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)
    promise.then((value) => {
      clearTimeout(timer)
      resolve(value)
    }, (error) => {
      clearTimeout(timer)
      reject(error)
    })
  })

const exited = (child: NodeChildProcess.ChildProcess) =>
  new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once("exit", resolve)))

/** Starts the daemon on the server core and resolves once its handshake file names a trusted port. */
const startDaemon = async (home: string) => {
  const [command, argv] = Cores.onServerCore(process.execPath, [DAEMON_HEAP_FLAG, BIN, "serve", "--home", home, "--port", "0", "--rate-limit", "0", "--approvals", "deny"])
  const child = NodeChildProcess.spawn(command, argv, { env: StartEnv.startEnv({ NODE_ENV: "production" }), stdio: ["ignore", "pipe", "pipe"] })
  let out = ""
  child.stdout!.on("data", (d: Buffer) => (out += d))
  child.stderr!.on("data", (d: Buffer) => (out += d))
  const handshake = NodePath.join(home, "mcp-handshake.json")
  const ready = new Promise<void>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the daemon exited with ${code}:\n${out}`)))
    child.stdout!.on("data", () => {
      if (/listening on http/.test(out) && NodeFs.existsSync(handshake)) resolve()
    })
  })
  await within(15_000, "the daemon's start", ready)
  const file = JSON.parse(NodeFs.readFileSync(handshake, "utf8")) as { port: number; token: string }
  return { child, port: file.port, token: file.token }
}

/** A bridge process and a newline-delimited JSON-RPC client over its stdio. */
const spawnBridge = (args: ReadonlyArray<string>, script: ReadonlyArray<string> = [BIN, "bridge"]) => {
  const [command, argv] = Cores.onLoadCore(process.execPath, [...script, ...args])
  const child = NodeChildProcess.spawn(command, argv, { env: StartEnv.startEnv(), stdio: ["pipe", "pipe", "pipe"] })
  let stderr = ""
  child.stderr!.on("data", (d: Buffer) => (stderr += d))
  const waiting = new Map<number, (message: { result?: unknown; error?: unknown }) => void>()
  NodeReadline.createInterface({ input: child.stdout! }).on("line", (line) => {
    const message = JSON.parse(line) as { id?: number; result?: unknown; error?: unknown }
    if (typeof message.id === "number") waiting.get(message.id)?.(message)
  })
  const send = (message: object) => child.stdin!.write(JSON.stringify(message) + "\n")
  const request = (id: number, method: string, params: object) => {
    const answered = new Promise<{ result?: unknown; error?: unknown }>((resolve) => waiting.set(id, resolve))
    send({ jsonrpc: "2.0", id, method, params })
    return within(20_000, `${method} through the bridge (${stderr})`, answered).then((message) => {
      waiting.delete(id)
      if (message.error !== undefined) throw new Error(`${method} failed: ${JSON.stringify(message.error)}`)
      return message
    })
  }
  const close = async () => {
    child.stdin!.end()
    const code = await within(10_000, "the bridge's exit", exited(child))
    if (code !== 0) throw new Error(`the bridge exited with ${code}: ${stderr}`)
  }
  return { child, send, request, close }
}

const initializeParams = { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "weaviate-mcp-bench", version: "0.0.0" } }

/** spawn → initialize answered, spawn → first tools/list answered, for one start of the bridge. */
const oneStart = async (home: string, args: ReadonlyArray<string>) => {
  const t0 = performance.now()
  const bridge = spawnBridge(["--home", home, ...args])
  await bridge.request(1, "initialize", initializeParams)
  const initialize = performance.now() - t0
  const initializeCpu = cpuMs(bridge.child.pid!)
  bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" })
  await bridge.request(2, "tools/list", {})
  const toolsList = performance.now() - t0
  await bridge.close()
  return { initialize, toolsList, initializeCpu }
}

/** spawn → initialize answered by the minimal bridge (`support/minimal-bridge.cjs`), the floor of a bridge's start. */
const minimalStart = async (home: string) => {
  const t0 = performance.now()
  const bridge = spawnBridge([NodePath.join(home, "mcp-handshake.json")], [MINIMAL_BRIDGE])
  await bridge.request(1, "initialize", initializeParams)
  const initialize = performance.now() - t0
  await bridge.close()
  return initialize
}

/** Bare node: spawn to exit of `node -e ''`, on the same core as the bridge. */
const bareNode = async () => {
  const t0 = performance.now()
  const [command, argv] = Cores.onLoadCore(process.execPath, ["-e", ""])
  const child = NodeChildProcess.spawn(command, argv, { env: StartEnv.startEnv(), stdio: "ignore" })
  await within(10_000, "node -e ''", exited(child))
  return performance.now() - t0
}

/** The CPU time of a bare node start: `node -e` reading its own /proc entry as its last act. */
const bareNodeCpu = async () => {
  const script = `const f=require("fs").readFileSync("/proc/self/stat","utf8").split(") ")[1].split(" ");process.stdout.write(String(+f[11] + +f[12]))`
  const [command, argv] = Cores.onLoadCore(process.execPath, ["-e", script])
  const child = NodeChildProcess.spawn(command, argv, { env: StartEnv.startEnv(), stdio: ["ignore", "pipe", "ignore"] })
  let out = ""
  child.stdout!.on("data", (d: Buffer) => (out += d))
  await within(10_000, "node -e", exited(child))
  return Number(out) * TICK_MS
}

/** `tools/list` latencies through one bridge and over HTTP, interleaved in blocks of `BLOCK`. */
const perRequest = async (home: string, port: number, token: string) => {
  const bridge = spawnBridge(["--home", home])
  await bridge.request(1, "initialize", initializeParams)
  bridge.send({ jsonrpc: "2.0", method: "notifications/initialized" })
  // The request the bridge sends the daemon for a legacy client's tools/list.
  const body = (id: string) => JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "tools/list",
    params: { _meta: { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/clientInfo": initializeParams.clientInfo } }
  })
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": MODERN,
    "mcp-method": "tools/list",
    authorization: `Bearer ${token}`
  }
  const overHttp = async (id: number) => {
    const response = await fetch(`http://127.0.0.1:${port}/mcp`, { method: "POST", headers, body: body(`bench-${id}`) })
    const message = JSON.parse(await response.text()) as { result?: unknown }
    if (response.status !== 200 || message.result === undefined) throw new Error(`tools/list over HTTP: ${response.status}`)
  }
  const viaBridge: Array<number> = []
  const viaHttp: Array<number> = []
  let id = 10
  // Warm-up: both paths' connections and JIT.
  for (let i = 0; i < BLOCK; i++) {
    await bridge.request(++id, "tools/list", {})
    await overHttp(++id)
  }
  const bridgeCpu0 = cpuMs(bridge.child.pid!)
  while (viaBridge.length < REQUESTS) {
    for (let i = 0; i < BLOCK; i++) {
      const t0 = performance.now()
      await bridge.request(++id, "tools/list", {})
      viaBridge.push(performance.now() - t0)
    }
    for (let i = 0; i < BLOCK; i++) {
      const t0 = performance.now()
      await overHttp(++id)
      viaHttp.push(performance.now() - t0)
    }
  }
  const bridgeCpuPerRequest = (cpuMs(bridge.child.pid!) - bridgeCpu0) / viaBridge.length
  await bridge.close()
  return { viaBridge, viaHttp, bridgeCpuPerRequest }
}

const main = async () => {
  if (!NodeFs.existsSync(BRIDGE)) throw new Error(`${BRIDGE} is missing: run npm run build first`)
  console.log(`bridge: ${RUNS} starts each, ${REQUESTS} tools/list each way; ${Cores.placement()}; ${NodeOs.cpus().length} CPUs`)
  StartEnv.printNote()
  const home = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-bench-bridge-"))
  const daemon = await startDaemon(home)
  try {
    const bare: Array<number> = []
    const minimal: Array<number> = []
    const initialize: Array<number> = []
    const toolsList: Array<number> = []
    const cliInitialize: Array<number> = []
    const bareCpu: Array<number> = []
    const initializeCpu: Array<number> = []
    const cliInitializeCpu: Array<number> = []
    // Interleaved, so that a change of the machine's load touches every series alike.
    await oneStart(home, [])
    await minimalStart(home)
    for (let i = 0; i < RUNS; i++) {
      bare.push(await bareNode())
      minimal.push(await minimalStart(home))
      bareCpu.push(await bareNodeCpu())
      const start = await oneStart(home, [])
      initialize.push(start.initialize)
      initializeCpu.push(start.initializeCpu)
      toolsList.push(start.toolsList)
      const cli = await oneStart(home, ["--start=false"])
      cliInitialize.push(cli.initialize)
      cliInitializeCpu.push(cli.initializeCpu)
    }
    const list = (values: ReadonlyArray<number>) => values.map((n) => n.toFixed(0)).join(", ")
    const ratio = (a: number, b: number) => (a / b).toFixed(2)
    console.log(`bare node -e '': median ${median(bare).toFixed(0)} ms (${list(bare)})`)
    console.log(`minimal bridge (handshake file, server/discover, initialize answered): median ${median(minimal).toFixed(0)} ms (${list(minimal)})`)
    console.log(
      `spawn → initialize: median ${median(initialize).toFixed(0)} ms (${list(initialize)}), ${ratio(median(initialize), median(minimal))}× the minimal bridge, ` +
        `${ratio(median(initialize), median(bare))}× bare node`
    )
    console.log(`spawn → tools/list: median ${median(toolsList).toFixed(0)} ms (${list(toolsList)}), ${ratio(median(toolsList), median(bare))}× bare node`)
    console.log(`spawn → initialize through the full CLI (bridge --start=false, the start before dist/bridge.cjs): median ${median(cliInitialize).toFixed(0)} ms (${list(cliInitialize)}), ${ratio(median(cliInitialize), median(bare))}× bare node`)
    console.log(
      `CPU time of a start (user + system, all threads; ticks of ${TICK_MS} ms, so robust to a loaded machine): bare node ${median(bareCpu).toFixed(0)} ms, ` +
        `the bridge up to initialize answered ${median(initializeCpu).toFixed(0)} ms (${ratio(median(initializeCpu), median(bareCpu))}×), ` +
        `the full CLI ${median(cliInitializeCpu).toFixed(0)} ms (${ratio(median(cliInitializeCpu), median(bareCpu))}×)`
    )
    const { viaBridge, viaHttp, bridgeCpuPerRequest } = await perRequest(home, daemon.port, daemon.token)
    const p50Bridge = median(viaBridge)
    const p50Http = median(viaHttp)
    console.log(
      `tools/list p50: through the bridge ${p50Bridge.toFixed(3)} ms, over HTTP ${p50Http.toFixed(3)} ms: ` +
        `+${(p50Bridge - p50Http).toFixed(3)} ms (target ≤ 2 ms), ${ratio(p50Bridge, p50Http)}×; p99 ${percentile(viaBridge, 99).toFixed(3)} vs ${percentile(viaHttp, 99).toFixed(3)} ms`
    )
    console.log(`the bridge's CPU time per tools/list: ${bridgeCpuPerRequest.toFixed(3)} ms`)
    const row = (metric: string, unit: string, ours: number, baseline: number, baselineName: Row["baselineName"]): Row => ({
      scenario: "bridge",
      metric,
      unit,
      ours: round(ours),
      baseline: round(baseline),
      baselineName,
      ratio: round(round(ours) / round(baseline))
    })
    merge([
      row("spawn_to_initialize_p50", "ms", median(initialize), median(minimal), "minimal-bridge"),
      row("spawn_to_initialize_p50", "ms", median(initialize), median(bare), "node-start"),
      row("spawn_to_tools_list_p50", "ms", median(toolsList), median(bare), "node-start"),
      row("spawn_to_initialize_p50_cli_bundle", "ms", median(cliInitialize), median(bare), "node-start"),
      row("spawn_to_initialize_cpu_p50", "ms", median(initializeCpu), median(bareCpu), "node-start"),
      row("spawn_to_initialize_cpu_p50_cli_bundle", "ms", median(cliInitializeCpu), median(bareCpu), "node-start"),
      row("tools_list_p50", "ms", p50Bridge, p50Http, "daemon-http")
    ])
  } finally {
    daemon.child.kill("SIGTERM")
    await within(10_000, "the daemon's exit", exited(daemon.child)).catch(() => daemon.child.kill("SIGKILL"))
    NodeFs.rmSync(home, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
