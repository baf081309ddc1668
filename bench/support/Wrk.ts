/**
 * Keep-alive HTTP load from `wrk` (Debian's package), a C load generator whose ceiling on one core is
 * far above any Node server's: it runs as its own process on the load core (`Cores.onLoadCore`), one
 * thread, `connections` keep-alive connections, POSTing the same request for `durationMs`. A response
 * that is not 2xx counts as an error. The request is passed to wrk's Lua script as a generated file.
 * A body holding `"id":1` gets a fresh id on every request (JSON-RPC ids must be unique among one
 * principal's requests in flight). `alternates` are sent in turn with the first request (a mixed load);
 * `maxRequests` stops the run after that many answers.
 */
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { onLoadCore } from "./Cores.ts"

export interface Target {
  readonly name: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: string
  /** More requests to send in turn with the first (headers and body each), for a mixed load. */
  readonly alternates?: ReadonlyArray<{ readonly headers: Record<string, string>; readonly body: string }>
}

export interface Measurement {
  readonly requests: number
  readonly errors: number
  readonly seconds: number
  readonly requestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  /** The status and start of the body of the first response that was not 2xx. */
  readonly firstError?: string
  /**
   * Time the hypervisor took the machine's CPUs away during the window (`steal` of /proc/stat, all
   * CPUs, ms; 10 ms resolution), when the kernel reports it: a stall nobody on the machine caused.
   */
  readonly stealMs?: number
  /**
   * TCP tail loss probes the machine sent during the window (`TCPLossProbes` of /proc/net/netstat):
   * a sender that waited for an ACK the receiver delayed. On loopback each one is a response that
   * waited; they come with the tail windows.
   */
  readonly lossProbes?: number
  /**
   * wrk's own p99, corrected for coordinated omission (see `TIMING`); `p50Ms` and `p99Ms` are the
   * answers' own latencies when the script could time them (the answers echo the request's id).
   */
  readonly wrkP99Ms: number
  /** The answers' own latencies (see `TIMING`), when the script could time them. */
  readonly timed?: {
    readonly answers: number
    readonly p999Ms: number
    readonly maxMs: number
    /** The slowest of each connection's first request. */
    readonly firstRequestsMaxMs: number
    /** The p99 of every request but each connection's first. */
    readonly othersP99Ms: number
  }
}

/** A counter of the `TcpExt` lines of /proc/net/netstat; undefined where there is none. */
export const tcpExt = (name: string): number | undefined => {
  try {
    const lines = NodeFs.readFileSync("/proc/net/netstat", "utf8").split("\n").filter((line) => line.startsWith("TcpExt:"))
    const names = lines[0]?.split(/\s+/) ?? []
    const values = lines[1]?.split(/\s+/) ?? []
    const at = names.indexOf(name)
    return at < 0 ? undefined : Number(values[at])
  } catch {
    return undefined
  }
}

/** The `steal` column of /proc/stat's first line, in ms (USER_HZ is 100 on Linux); undefined elsewhere. */
export const stealMs = (): number | undefined => {
  try {
    const fields = NodeFs.readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/)
    const ticks = Number(fields[8])
    return Number.isFinite(ticks) ? ticks * 10 : undefined
  } catch {
    return undefined
  }
}

/** Whether `wrk` is on the PATH. */
export const available = (() => {
  try {
    NodeChildProcess.execFileSync("wrk", ["--version"], { stdio: "ignore" })
    return true
  } catch (error) {
    // `wrk --version` prints its usage and exits 1: present all the same.
    return (error as { status?: number }).status === 1
  }
})()

const luaString = (text: string) => `"${[...Buffer.from(text, "utf8")].map((byte) => `\\${byte}`).join("")}"`

const luaTable = (headers: Record<string, string>) =>
  `{ ${Object.entries(headers).map(([name, value]) => `[${luaString(name)}] = ${luaString(value)}`).join(", ")} }`

/** The body split around its `"id":1`, for a fresh id per request; the whole body when it has none. */
const split = (body: string) => {
  const at = body.indexOf(`"id":1`)
  return at < 0
    ? { before: body, after: undefined }
    : { before: body.slice(0, at + `"id":`.length), after: body.slice(at + `"id":1`.length) }
}

/** What the script says once `maxRequests` answers have come. */
const MAX_REACHED = "wrk: the requests asked for were answered"

/**
 * Each answer's own latency, timed in the script (LuaJIT's FFI, `clock_gettime(CLOCK_MONOTONIC)`) from
 * the request's making to its answer, matched by the JSON-RPC id the answer echoes: the latencies as
 * they were, with none added. wrk's own percentiles are corrected for coordinated omission: each answer
 * slower than twice the mean interval of a connection is counted again at every interval below it
 * (`stats_correct` in wrk's source), so a handful of slow answers (the first answer on a connection
 * the server accepted late, `bench/support/tools-list-servers.mjs` says why) make a p99 of their own.
 * Requests 1 to `connections` are each connection's first (wrk writes them all before any answer can
 * come): their slowest is reported apart, with the p99 of the others.
 */
const TIMING = [
  `local ffi = require("ffi")`,
  `ffi.cdef[[ typedef struct { long tv_sec; long tv_nsec; } wmcp_timespec; int clock_gettime(int, wmcp_timespec *); ]]`,
  `local clock = ffi.new("wmcp_timespec")`,
  `local function now_us() ffi.C.clock_gettime(1, clock); return tonumber(clock.tv_sec) * 1000000 + tonumber(clock.tv_nsec) / 1000 end`,
  // Each thread's Lua state records in global numbers; done() runs in the main state and reads them
  // with thread:get (wrk copies a table between states wrongly: numbers only). The buckets are 10 µs
  // wide below 1 ms, 100 µs below 10 ms, 1 ms below 100 ms, 10 ms below 1 s, 100 ms up to 10 s.
  `local BUCKETS = 460`,
  `local function bucket(us)`,
  `  if us < 1000 then return math.floor(us / 10) end`,
  `  if us < 10000 then return 100 + math.floor((us - 1000) / 100) end`,
  `  if us < 100000 then return 190 + math.floor((us - 10000) / 1000) end`,
  `  if us < 1000000 then return 280 + math.floor((us - 100000) / 10000) end`,
  `  return math.min(BUCKETS - 1, 370 + math.floor((us - 1000000) / 100000))`,
  `end`,
  `local function bucket_top(b)`,
  `  if b < 100 then return (b + 1) * 10 end`,
  `  if b < 190 then return 1000 + (b - 99) * 100 end`,
  `  if b < 280 then return 10000 + (b - 189) * 1000 end`,
  `  if b < 370 then return 100000 + (b - 279) * 10000 end`,
  `  return 1000000 + (b - 369) * 100000`,
  `end`,
  `local names = { all = {}, later = {} }`,
  `for b = 0, BUCKETS - 1 do names.all[b] = "timed_all_" .. b; names.later[b] = "timed_later_" .. b end`,
  `timed_all_n, timed_all_max, timed_later_n, timed_first_max = 0, 0, 0, 0`,
  `local sent = {}`,
  `local function count(set, us) local name = names[set][bucket(us)]; _G[name] = (_G[name] or 0) + 1 end`,
  `local function answered_in_time(body)`,
  `  local id = tonumber(string.match(string.sub(body, 1, 64), '"id":(%d+)'))`,
  `  local t = id and sent[id]`,
  `  if t == nil then return end`,
  `  sent[id] = nil`,
  `  local us = now_us() - t`,
  `  count("all", us); timed_all_n = timed_all_n + 1`,
  `  if us > timed_all_max then timed_all_max = us end`,
  `  if id <= connections_count then`,
  `    if us > timed_first_max then timed_first_max = us end`,
  `  else`,
  `    count("later", us); timed_later_n = timed_later_n + 1`,
  `  end`,
  `end`,
  `local threads = {}`,
  `setup = function(thread) table.insert(threads, thread) end`,
  `local function gather(set)`,
  `  local counts, n = {}, 0`,
  `  for _, thread in ipairs(threads) do`,
  `    for b = 0, BUCKETS - 1 do counts[b] = (counts[b] or 0) + (thread:get(names[set][b]) or 0) end`,
  `    n = n + thread:get("timed_" .. set .. "_n")`,
  `  end`,
  `  return counts, n`,
  `end`,
  `local function percentile(counts, n, p)`,
  `  if n == 0 then return 0 end`,
  `  local rank, seen = math.ceil(n * p / 100), 0`,
  `  for b = 0, BUCKETS - 1 do seen = seen + counts[b]; if seen >= rank then return bucket_top(b) end end`,
  `  return 0`,
  `end`
]

const script = (target: Target, maxRequests: number | undefined, connections: number) => {
  const all = [{ headers: target.headers, body: target.body }, ...(target.alternates ?? [])]
  const requests = all.map(({ headers, body }) => {
    const { before, after } = split(body)
    return `{ headers = ${luaTable(headers)}, before = ${luaString(before)}, after = ${after === undefined ? "nil" : luaString(after)} }`
  })
  // `BENCH_WRK_FIRST_DELAY_MS=n` (an experiment): each connection's first request waits n ms, so that
  // the server accepts every connection before the load starts. wrk then times every request through a
  // timer (its `delay` path), which costs it a little per request.
  const firstDelayMs = Number(process.env.BENCH_WRK_FIRST_DELAY_MS ?? 0)
  return [
    `wrk.method = "POST"`,
    `wrk.body = ${luaString(target.body)}`,
    ...Object.entries(target.headers).map(([name, value]) => `wrk.headers[${luaString(name)}] = ${luaString(value)}`),
    `local connections_count = ${connections}`,
    ...TIMING,
    `local requests = { ${requests.join(", ")} }`,
    `local counter = 0`,
    `request = function()`,
    `  counter = counter + 1`,
    `  local r = requests[(counter % #requests) + 1]`,
    `  local body = r.after == nil and r.before or (r.before .. counter .. r.after)`,
    `  if r.after ~= nil then sent[counter] = now_us() end`,
    `  return wrk.format(nil, nil, r.headers, body)`,
    `end`,
    ...(firstDelayMs > 0
      ? [`local delayed = 0`, `delay = function() delayed = delayed + 1; if delayed <= ${connections} then return ${Math.round(firstDelayMs)} end return 0 end`]
      : []),
    `local first = nil`,
    `local answered = 0`,
    `response = function(status, headers, body)`,
    `  if first == nil and (status < 200 or status > 299) then first = status .. " " .. string.sub(body, 1, 300); io.stderr:write("first error: " .. first .. "\\n") end`,
    `  answered_in_time(body)`,
    // wrk's main thread sleeps for the whole duration whatever its threads do: the count reached is
    // said on stderr, and `run` ends wrk with SIGINT (which wrk takes as the end, and reports).
    ...(maxRequests === undefined ? [] : [`  answered = answered + 1`, `  if answered == ${maxRequests} then io.stderr:write("${MAX_REACHED}\\n"); wrk.thread:stop() end`]),
    `end`,
    `done = function(summary, latency, requests)`,
    `  local all, n = gather("all")`,
    `  local later, later_n = gather("later")`,
    `  local max, first_max = 0, 0`,
    `  for _, thread in ipairs(threads) do max = math.max(max, thread:get("timed_all_max")); first_max = math.max(first_max, thread:get("timed_first_max")) end`,
    `  io.write(string.format("timed: %d answers, p50 %d p99 %d p99.9 %d max %d us; first requests max %d us; the others p99 %d us\\n", n, percentile(all, n, 50), percentile(all, n, 99), percentile(all, n, 99.9), max, first_max, percentile(later, later_n, 99)))`,
    `  io.write(string.format("wrk corrected: p99 %d p99.9 %d max %d us\\n", latency:percentile(99), latency:percentile(99.9), latency.max))`,
    `end`
  ].join("\n")
}

const toMs = (value: string, unit: string) =>
  Number(value) * (unit === "us" ? 0.001 : unit === "ms" ? 1 : unit === "s" ? 1000 : unit === "m" ? 60_000 : Number.NaN)

/** Parses wrk's `--latency` report. */
export const parse = (output: string, seconds: number): Measurement => {
  const requests = Number(/(\d+) requests in/.exec(output)?.[1] ?? Number.NaN)
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0)
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output)
  const socketErrors = socket === null ? 0 : socket.slice(1).reduce((sum, n) => sum + Number(n), 0)
  const latency = (percent: string) => {
    const match = new RegExp(`^\\s+${percent}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, "m").exec(output)
    return match === null ? Number.NaN : toMs(match[1]!, match[2]!)
  }
  const firstError = /^first error: (.*)$/m.exec(output)?.[1] ?? /Socket errors: .*/.exec(output)?.[0]
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? Number.NaN)
  if (!Number.isFinite(requests) || !Number.isFinite(rps)) throw new Error(`unreadable wrk report:\n${output}`)
  const timed = /^timed: (\d+) answers, p50 (\d+) p99 (\d+) p99\.9 (\d+) max (\d+) us; first requests max (\d+) us; the others p99 (\d+) us$/m.exec(output)
  const us = (i: number) => Number(timed![i]) / 1000
  // Timed only when (nearly) every answer echoed its request's id: a server answering fixed bytes does not.
  const wasTimed = timed !== null && Number(timed[1]) >= 0.9 * requests
  return {
    requests,
    errors: non2xx + socketErrors,
    seconds,
    requestsPerSecond: Math.round(rps * 10) / 10,
    p50Ms: wasTimed ? us(2) : latency("50"),
    p99Ms: wasTimed ? us(3) : latency("99"),
    wrkP99Ms: latency("99"),
    ...(wasTimed ? { timed: { answers: Number(timed[1]), p999Ms: us(4), maxMs: us(5), firstRequestsMaxMs: us(6), othersP99Ms: us(7) } } : {}),
    ...(firstError === undefined ? {} : { firstError })
  }
}

/** Runs wrk against a target; bounded by its duration plus a margin. */
export const run = (
  target: Target,
  options: { readonly connections: number; readonly durationMs: number; readonly maxRequests?: number }
) =>
  new Promise<Measurement>((resolve, reject) => {
    const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-wrk-"))
    const file = NodePath.join(dir, "request.lua")
    NodeFs.writeFileSync(file, script(target, options.maxRequests, options.connections))
    const seconds = Math.max(1, Math.round(options.durationMs / 1000))
    const [command, args] = onLoadCore("wrk", [
      "-t1", `-c${options.connections}`, `-d${seconds}s`, "--latency", "--timeout", "10s", "-s", file, target.url
    ])
    const stealBefore = stealMs()
    const probesBefore = tcpExt("TCPLossProbes")
    const child = NodeChildProcess.spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let interrupted = false
    child.stdout.on("data", (chunk) => (out += chunk))
    child.stderr.on("data", (chunk) => {
      out += chunk
      if (!interrupted && out.includes(MAX_REACHED)) {
        interrupted = true
        child.kill("SIGINT")
      }
    })
    const timer = setTimeout(() => child.kill("SIGKILL"), seconds * 1000 + 30_000)
    child.on("exit", (code) => {
      clearTimeout(timer)
      if (process.env.WRK_KEEP === undefined) NodeFs.rmSync(dir, { recursive: true, force: true })
      if (code !== 0) return reject(new Error(`wrk exited with ${code}:\n${out}`))
      try {
        const stealAfter = stealMs()
        const probesAfter = tcpExt("TCPLossProbes")
        const measured = parse(out, seconds)
        resolve({
          ...measured,
          ...(stealBefore === undefined || stealAfter === undefined ? {} : { stealMs: stealAfter - stealBefore }),
          ...(probesBefore === undefined || probesAfter === undefined ? {} : { lossProbes: probesAfter - probesBefore })
        })
      } catch (error) {
        reject(error)
      }
    })
  })
