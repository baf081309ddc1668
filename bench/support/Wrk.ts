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

const script = (target: Target, maxRequests: number | undefined) => {
  const all = [{ headers: target.headers, body: target.body }, ...(target.alternates ?? [])]
  const requests = all.map(({ headers, body }) => {
    const { before, after } = split(body)
    return `{ headers = ${luaTable(headers)}, before = ${luaString(before)}, after = ${after === undefined ? "nil" : luaString(after)} }`
  })
  return [
    `wrk.method = "POST"`,
    `wrk.body = ${luaString(target.body)}`,
    ...Object.entries(target.headers).map(([name, value]) => `wrk.headers[${luaString(name)}] = ${luaString(value)}`),
    `local requests = { ${requests.join(", ")} }`,
    `local counter = 0`,
    `request = function()`,
    `  counter = counter + 1`,
    `  local r = requests[(counter % #requests) + 1]`,
    `  local body = r.after == nil and r.before or (r.before .. counter .. r.after)`,
    `  return wrk.format(nil, nil, r.headers, body)`,
    `end`,
    `local first = nil`,
    `local done = 0`,
    `response = function(status, headers, body)`,
    `  if first == nil and (status < 200 or status > 299) then first = status .. " " .. string.sub(body, 1, 300); io.stderr:write("first error: " .. first .. "\\n") end`,
    // wrk's main thread sleeps for the whole duration whatever its threads do: the count reached is
    // said on stderr, and `run` ends wrk with SIGINT (which wrk takes as the end, and reports).
    ...(maxRequests === undefined ? [] : [`  done = done + 1`, `  if done == ${maxRequests} then io.stderr:write("${MAX_REACHED}\\n"); wrk.thread:stop() end`]),
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
  return {
    requests,
    errors: non2xx + socketErrors,
    seconds,
    requestsPerSecond: Math.round(rps * 10) / 10,
    p50Ms: latency("50"),
    p99Ms: latency("99"),
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
    NodeFs.writeFileSync(file, script(target, options.maxRequests))
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
