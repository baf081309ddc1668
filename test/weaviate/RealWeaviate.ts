/**
 * The real Weaviate server (built by scripts/weaviate.mjs) started on 127.0.0.1: every port it opens
 * is a free loopback port picked here (REST or TLS, gRPC, Raft, Raft internal RPC, gossip, data), its
 * data lives in a fresh PERSISTENCE_DATA_PATH, telemetry and the profiling listener are off, and
 * Weaviate's own MCP server is on at /v1/mcp. `text2vec-transformers` is the one module, backed by a
 * tiny deterministic embedding server on loopback (Embedder.ts), so nearText and hybrid work.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { weaviateBinary, weaviateVersion } from "../../scripts/weaviate.mjs"
import { type Embedder, startEmbedder } from "./Embedder.ts"
import { progress } from "../support/Progress.ts"
import { type GeneratedTls, generateTls } from "./Tls.ts"

export interface RealWeaviateOptions {
  /** REST (or TLS) port; default a free one */
  readonly port?: number
  /** AUTHENTICATION_APIKEY_ALLOWED_KEYS; when given, API-key auth is on */
  readonly apiKeys?: ReadonlyArray<string>
  /** default: true when no apiKeys, false otherwise */
  readonly anonymousAccess?: boolean
  /** HTTPS only, with a certificate made at start */
  readonly tls?: boolean
  /** QUERY_MAXIMUM_RESULTS (Weaviate's default 10000) */
  readonly maxResults?: number
  /** ENABLE_MODULES beside text2vec-transformers, e.g. ["text2vec-bigram"] */
  readonly modules?: ReadonlyArray<string>
  /** more environment for the server (OIDC, RBAC, …), applied last so it overrides the defaults above */
  readonly env?: Readonly<Record<string, string>>
}

export interface RealWeaviate {
  readonly url: string
  readonly port: number
  readonly grpcPort: number
  readonly caPem: string | undefined
  /** the certificate it serves (tls only), for a proxy in front of it */
  readonly tls: GeneratedTls | undefined
  readonly version: string
  /** the key the harness uses for its own requests (reset), when auth needs one */
  readonly adminKey: string | undefined
  /** milliseconds from spawn to ready */
  readonly startupMs: number
  /** SIGTERM, then SIGKILL after 10 s; removes the data directory */
  readonly stop: () => Promise<void>
  /** the weaviate-server process itself (not its supervising shell), for fault tests that signal it */
  readonly serverPid: () => number | undefined
}

/** A free TCP port on 127.0.0.1 (the OS picks one; it is free again when this resolves). */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

let embedder: Promise<Embedder> | undefined
const sharedEmbedder = () => (embedder ??= startEmbedder())

const live = new Set<ChildProcess>()
let exitHook = false
/** Ends the whole process group of every server still running (the shell and Weaviate). */
const killGroup = (child: ChildProcess) => {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
  } catch {
    // already gone
  }
}
const killOnExit = () => {
  if (exitHook) return
  exitHook = true
  process.once("exit", () => {
    for (const child of live) killGroup(child)
  })
}

/**
 * Weaviate runs under a small shell that holds a pipe from this process: when the pipe closes (stop,
 * or this worker dying in any way, SIGKILL included) the shell sends Weaviate SIGTERM. No server
 * outlives the test file that started it.
 */
const SUPERVISOR = [
  "exec 3<&0",
  '"$0" "$@" </dev/null 3<&- & pid=$!',
  "( cat <&3 >/dev/null; kill -TERM $pid 2>/dev/null ) &",
  "exec 3<&-",
  "wait $pid"
].join("\n")

/** Where the servers' data directories go: the run's directory (globalSetup removes it) or the temp dir. */
const dataRoot = () => process.env["WEAVIATE_MCP_TEST_RUN_DIR"] ?? os.tmpdir()

const READY_TIMEOUT_MS = 90_000
const SLOW_START_MS = 10_000

const attempt = async (binary: string, options: RealWeaviateOptions, embedderUrl: string) => {
  const [rest, grpc, raft, raftRpc, gossip, data] = await Promise.all([
    options.port !== undefined ? Promise.resolve(options.port) : freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort(),
    freePort()
  ])
  const dir = fs.mkdtempSync(path.join(dataRoot(), "weaviate-mcp-real-"))
  const apiKeys = options.apiKeys
  const anonymous = options.anonymousAccess ?? apiKeys === undefined
  const env: Record<string, string> = {
    PATH: process.env["PATH"] ?? "",
    HOME: process.env["HOME"] ?? os.homedir(),
    PERSISTENCE_DATA_PATH: path.join(dir, "data"),
    DISABLE_TELEMETRY: "true",
    GO_PROFILING_DISABLE: "true",
    LOG_LEVEL: "warning",
    CLUSTER_HOSTNAME: "node1",
    CLUSTER_BIND_ADDR: "127.0.0.1",
    CLUSTER_ADVERTISE_ADDR: "127.0.0.1",
    CLUSTER_GOSSIP_BIND_PORT: String(gossip),
    CLUSTER_DATA_BIND_PORT: String(data),
    GRPC_PORT: String(grpc),
    RAFT_PORT: String(raft),
    RAFT_INTERNAL_RPC_PORT: String(raftRpc),
    RAFT_BOOTSTRAP_EXPECT: "1",
    // One node: a 1 s election instead of the production 5 s keeps the start near 3 s.
    RAFT_TIMEOUTS_MULTIPLIER: "1",
    ENABLE_MODULES: ["text2vec-transformers", ...(options.modules ?? [])].join(","),
    TRANSFORMERS_INFERENCE_API: embedderUrl,
    MCP_SERVER_ENABLED: "true",
    MCP_SERVER_WRITE_ACCESS_ENABLED: "true",
    AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED: String(anonymous),
    QUERY_MAXIMUM_RESULTS: String(options.maxResults ?? 10_000)
  }
  if (apiKeys !== undefined) {
    env["AUTHENTICATION_APIKEY_ENABLED"] = "true"
    env["AUTHENTICATION_APIKEY_ALLOWED_KEYS"] = apiKeys.join(",")
    env["AUTHENTICATION_APIKEY_USERS"] = apiKeys.map((_, i) => `user${i}`).join(",")
  }
  Object.assign(env, options.env ?? {})
  const tls = options.tls === true ? generateTls() : undefined
  const args = ["--host", "127.0.0.1", "--read-timeout", "600s", "--write-timeout", "600s"]
  if (tls === undefined) args.push("--scheme", "http", "--port", String(rest))
  else {
    fs.writeFileSync(path.join(dir, "cert.pem"), tls.certPem)
    fs.writeFileSync(path.join(dir, "key.pem"), tls.keyPem, { mode: 0o600 })
    args.push("--scheme", "https", "--tls-host", "127.0.0.1", "--tls-port", String(rest))
    args.push("--tls-certificate", path.join(dir, "cert.pem"), "--tls-key", path.join(dir, "key.pem"))
  }
  const url = `${tls === undefined ? "http" : "https"}://127.0.0.1:${rest}`
  const started = Date.now()
  const child = spawn("/bin/sh", ["-c", SUPERVISOR, binary, ...args], { env, cwd: dir, stdio: ["pipe", "pipe", "pipe"], detached: true })
  live.add(child)
  killOnExit()
  const tail: Array<string> = []
  // Under vitest, the server's own lines also go to the console, which keeps them on the test running
  // at the time and prints them only if it fails (test/support/ReadableReporter.ts).
  const inVitest = process.env["VITEST_WORKER_ID"] !== undefined
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (line.trim() === "") continue
      tail.push(line)
      if (inVitest) console.error(`[weaviate 127.0.0.1:${rest}] ${line}`)
    }
    tail.splice(0, Math.max(0, tail.length - 30))
  }
  child.stdout!.on("data", keep)
  child.stderr!.on("data", keep)
  child.stdin!.on("error", () => undefined)
  let exited: number | null | undefined
  const exit = new Promise<void>((resolve) =>
    child.once("exit", (code) => {
      exited = code
      live.delete(child)
      child.stdin!.end()
      resolve()
    })
  )
  const stop = async () => {
    if (exited === undefined) {
      child.stdin!.end()
      const timer = setTimeout(() => killGroup(child), 10_000)
      await exit
      clearTimeout(timer)
    }
    fs.rmSync(dir, { recursive: true, force: true })
  }
  const ready = async (): Promise<boolean> => {
    const deadline = started + READY_TIMEOUT_MS
    while (Date.now() < deadline) {
      if (exited !== undefined) return false
      if (await probeReady(rest, tls?.caPem)) return true
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    return false
  }
  // Usually up in ~3 s; on a loaded machine it can take much longer, and the run should say why it waits.
  const slow = setTimeout(
    () => progress(`the real Weaviate ${weaviateVersion()} on 127.0.0.1:${rest} is still starting after ${SLOW_START_MS / 1000} s (usually ~3 s)`),
    SLOW_START_MS
  )
  const isReady = await ready()
  clearTimeout(slow)
  if (!isReady) {
    await stop()
    return { ok: false as const, reason: exited === undefined ? `not ready within ${READY_TIMEOUT_MS} ms` : `exited with ${exited}`, tail }
  }
  const server: RealWeaviate = {
    url,
    port: rest,
    grpcPort: grpc,
    caPem: tls?.caPem,
    tls,
    version: weaviateVersion(),
    adminKey: apiKeys?.[0],
    startupMs: Date.now() - started,
    stop,
    serverPid: () => (child.pid === undefined || exited !== undefined ? undefined : serverChild(child.pid))
  }
  return { ok: true as const, server }
}

/** The shell's child running the server, from /proc (Linux). */
const serverChild = (shell: number): number | undefined => {
  try {
    const children = fs.readFileSync(`/proc/${shell}/task/${shell}/children`, "utf8").trim().split(/\s+/).map(Number)
    return children.find((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim().startsWith("weaviate")
      } catch {
        return false
      }
    })
  } catch {
    return undefined
  }
}

/** Whether `/v1/.well-known/ready` answers 200 (false while nothing listens yet). */
const probeReady = (port: number, ca: string | undefined) =>
  new Promise<boolean>((resolve) => {
    const options = { host: "127.0.0.1", port, path: "/v1/.well-known/ready", timeout: 1_000 }
    const req = ca === undefined ? http.get(options) : https.get({ ...options, ca })
    req.on("response", (res) => {
      res.resume()
      resolve(res.statusCode === 200)
    })
    req.on("error", () => resolve(false))
    req.on("timeout", () => (req.destroy(), resolve(false)))
  })

/** Whether something already listens on 127.0.0.1:port (its readiness answer would fool ours). */
const portTaken = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = net.createServer()
    server.once("error", () => resolve(true))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(false)))
  })

/** Starts the real server (the binary must be built); retries with new ports when one was taken meanwhile. */
export const startRealWeaviate = async (options: RealWeaviateOptions = {}): Promise<RealWeaviate> => {
  const binary = weaviateBinary()
  if (!fs.existsSync(binary)) throw new Error(`the real Weaviate is not built (${binary}): run node scripts/weaviate.mjs build`)
  if (options.port !== undefined && (await portTaken(options.port))) throw new Error(`port ${options.port} on 127.0.0.1 is in use`)
  const { url } = await sharedEmbedder()
  let last = ""
  for (let i = 0; i < 3; i++) {
    const r = await attempt(binary, options, url)
    if (r.ok) return r.server
    last = `${r.reason}\n${r.tail.join("\n")}`
    if (options.port !== undefined) break
  }
  throw new Error(`the real Weaviate did not start: ${last}`)
}
