/**
 * A real Weaviate cluster for tests (scripts/weaviate-cluster.mjs): N nodes in a network namespace of
 * their own where only loopback exists. A vitest worker cannot enter a namespace, so everything that
 * talks to the nodes runs inside it through the runner: `http` (a request to a loopback port there),
 * `run` (a command to completion: the built CLI, a driver script), `spawn`/`end` (a daemon). The
 * runner, and with it every node, ends when the test file's worker ends or calls `stop`.
 *
 * `clusterUnavailable()` says why no cluster can be made here (not root, no `ip`/`unshare`, the server
 * not built); tests skip with that reason. CI runs as root and must run them.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { namespaceUnavailable, runnerArgs } from "../../scripts/weaviate-cluster.mjs"
import { weaviateBinary } from "../../scripts/weaviate.mjs"
import { BIN } from "../support/Cli.ts"

export interface ClusterNode {
  readonly name: string
  readonly rest: number
  readonly grpc: number
  readonly pid: number | undefined
  readonly up: boolean
}

export interface HttpAnswer {
  readonly status?: number
  readonly text?: string
  readonly error?: string
}

export interface Finished {
  readonly code: number | null
  readonly signal: string | null
  readonly stdout: string
  readonly stderr: string
  readonly ms: number
}

export interface Cluster {
  readonly version: string
  readonly nodes: ReadonlyArray<ClusterNode>
  /** milliseconds from spawning the runner until every node answered ready */
  readonly startupMs: number
  /** resident memory of each running node, bytes */
  readonly memory: () => Promise<Record<string, number | undefined>>
  readonly http: (port: number, method: string, path: string, body?: unknown, timeoutMs?: number) => Promise<HttpAnswer>
  /** JSON of a 2xx answer, else throws with the answer */
  readonly json: (port: number, method: string, path: string, body?: unknown) => Promise<unknown>
  /** the built CLI (bin/weaviate-mcp.js) inside the namespace */
  readonly cli: (args: ReadonlyArray<string>, options?: { readonly env?: Record<string, string>; readonly input?: string; readonly timeoutMs?: number }) => Promise<Finished>
  readonly run: (argv: ReadonlyArray<string>, options?: { readonly env?: Record<string, string>; readonly input?: string; readonly timeoutMs?: number }) => Promise<Finished>
  /** starts a long-lived process, answering when its stdout matched `waitFor` */
  readonly spawn: (argv: ReadonlyArray<string>, waitFor: string, env?: Record<string, string>) => Promise<{ pid: number; match?: Array<string>; error?: string; stderr?: string }>
  readonly end: (pid: number) => Promise<{ stdout?: string; stderr?: string }>
  /** SIGKILL of one node's server process */
  readonly kill: (node: string) => Promise<ClusterNode>
  /** starts a killed node again on its data; answers when it is ready */
  readonly restart: (node: string) => Promise<ClusterNode & { startupMs: number }>
  readonly stop: () => Promise<void>
}

/** Why a cluster cannot be made here, or undefined when it can. */
export const clusterUnavailable = (): string | undefined => {
  const binary = weaviateBinary()
  if (!fs.existsSync(binary)) return `the real Weaviate is not built (${binary}); npm run weaviate:build builds it`
  return namespaceUnavailable()
}

/** Starts a cluster of `nodes` nodes in a fresh network namespace (root only). */
export const startCluster = async (nodes = 3): Promise<Cluster> => {
  const root = fs.mkdtempSync(path.join(process.env["WEAVIATE_MCP_TEST_RUN_DIR"] ?? os.tmpdir(), "weaviate-mcp-cluster-"))
  const started = Date.now()
  const child: ChildProcessWithoutNullStreams = spawn("unshare", runnerArgs(nodes, root), { stdio: "pipe" })
  let stderr = ""
  child.stderr.on("data", (d) => (stderr += d))
  child.stdin.on("error", () => undefined)
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  let nextId = 1
  let onEvent: ((m: Record<string, unknown>) => void) | undefined
  let pending = ""
  child.stdout.setEncoding("utf8")
  child.stdout.on("data", (chunk: string) => {
    pending += chunk
    const lines = pending.split("\n")
    pending = lines.pop() ?? ""
    for (const line of lines) {
      if (line.trim() === "") continue
      const m = JSON.parse(line) as Record<string, unknown>
      if (typeof m["id"] === "number") {
        const w = waiting.get(m["id"])
        waiting.delete(m["id"])
        if (m["ok"] === true) w?.resolve(m["result"])
        else w?.reject(new Error(String(m["error"])))
      } else onEvent?.(m)
    }
  })
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      for (const w of waiting.values()) w.reject(new Error(`the cluster runner ended\n${stderr}`))
      waiting.clear()
      resolve()
    })
  )
  const ready = await new Promise<Record<string, unknown>>((resolve, reject) => {
    onEvent = (m) => (m["event"] === "ready" ? resolve(m) : reject(new Error(`the cluster did not start: ${String(m["error"])}`)))
    void exited.then(() => reject(new Error(`the cluster runner ended before the cluster was ready\n${stderr}`)))
  })
  const call = <A>(command: Record<string, unknown>): Promise<A> =>
    new Promise<A>((resolve, reject) => {
      const id = nextId++
      waiting.set(id, { resolve: resolve as (v: unknown) => void, reject })
      child.stdin.write(`${JSON.stringify({ ...command, id })}\n`)
    })
  const http = (port: number, method: string, p: string, body?: unknown, timeoutMs?: number) =>
    call<HttpAnswer>({ op: "http", port, method, path: p, body, timeoutMs })
  const run = (argv: ReadonlyArray<string>, options: { readonly env?: Record<string, string>; readonly input?: string; readonly timeoutMs?: number } = {}) =>
    call<Finished>({ op: "run", argv, ...options })
  return {
    version: String(ready["version"]),
    nodes: ready["nodes"] as ReadonlyArray<ClusterNode>,
    startupMs: Date.now() - started,
    memory: () => call({ op: "memory" }),
    http,
    json: async (port, method, p, body) => {
      const r = await http(port, method, p, body)
      if (r.status === undefined || r.status < 200 || r.status >= 300) throw new Error(`${method} ${p} on ${port}: ${JSON.stringify(r)}`)
      return r.text === "" ? undefined : JSON.parse(r.text!)
    },
    cli: (args, options) => run([process.execPath, BIN, ...args], options),
    run,
    spawn: (argv, waitFor, env) => call({ op: "spawn", argv, waitFor, env }),
    end: (pid) => call({ op: "end", pid }),
    kill: (node) => call({ op: "kill", node }),
    restart: (node) => call({ op: "restart", node }),
    stop: async () => {
      child.stdin.end()
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
      await exited
      clearTimeout(timer)
      fs.rmSync(root, { recursive: true, force: true })
    }
  }
}

/**
 * Polls `/v1/nodes` on `port` until `check` holds for its nodes (bounded: fails after `timeoutMs`
 * with the last answer). No sleeps stand in for the cluster's state.
 */
export const waitForNodes = async (
  cluster: Cluster,
  port: number,
  check: (nodes: ReadonlyArray<{ name: string; status: string }>) => boolean,
  timeoutMs = 120_000
) => {
  const deadline = Date.now() + timeoutMs
  let last: HttpAnswer | undefined
  while (Date.now() < deadline) {
    last = await cluster.http(port, "GET", "/v1/nodes", undefined, 5_000)
    if (last.status === 200) {
      const nodes = (JSON.parse(last.text!) as { nodes: Array<{ name: string; status: string }> }).nodes
      if (check(nodes)) return nodes
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`/v1/nodes did not reach the expected state within ${timeoutMs} ms: ${JSON.stringify(last)}`)
}
