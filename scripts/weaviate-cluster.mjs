// A real Weaviate cluster of N nodes (the server scripts/weaviate.mjs builds), in a network namespace
// of its own where only loopback exists. Outside such a namespace Weaviate's Raft dials the machine's
// own non-loopback address for a peer it cannot resolve; inside one there is nothing else to dial.
//
//   npm run weaviate:cluster -- [--nodes 3]     starts the cluster and waits; Ctrl-C stops it
//
// How it works: the outer process re-executes this file under `unshare --net --fork --kill-child`
// (root only). Inside, the runner brings `lo` up, refuses to go on if any other interface exists, and
// starts the nodes on fixed loopback ports (the namespace is empty, so they are free). Everything that
// talks to the nodes must run inside the namespace too: `nsenter --target <runner pid> --net -- CMD`
// from a shell, or the runner's `run`/`spawn`/`http` commands (test/weaviate/Cluster.ts), which read
// one JSON command per line on stdin and answer one JSON line each on stdout.
//
// Each node runs under a small shell holding a pipe from the runner: when the runner ends (in any way,
// SIGKILL included) the pipe closes and the shell ends its node. The runner ends when its stdin closes.
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { weaviateBinary, weaviateVersion } from "./weaviate.mjs"

/** Ports of node i (1-based): REST 8080+, gRPC 50051+, gossip/data 7100+, Raft/Raft RPC 8300+. */
export const nodePorts = (i) => ({
  rest: 8079 + i,
  grpc: 50050 + i,
  gossip: 7100 + (i - 1) * 2,
  data: 7101 + (i - 1) * 2,
  raft: 8300 + (i - 1) * 2,
  raftRpc: 8301 + (i - 1) * 2
})

/**
 * Why a network namespace cannot be made here, or undefined when it can (root, `unshare` and `ip`
 * present, and a trial `unshare --net` works).
 */
export const namespaceUnavailable = () => {
  if (process.platform !== "linux") return `network namespaces are Linux only (this is ${process.platform})`
  if (typeof process.getuid === "function" && process.getuid() !== 0) return "making a network namespace needs root (unshare --net)"
  for (const tool of ["unshare", "ip"]) {
    if (spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0) {
      return `${tool} is not installed (${tool === "ip" ? "apt-get install iproute2" : "apt-get install util-linux"})`
    }
  }
  const trial = spawnSync("unshare", ["--net", "--", "ip", "link", "set", "lo", "up"], { encoding: "utf8" })
  if (trial.status !== 0) return `unshare --net failed: ${(trial.stderr || trial.error?.message || "").trim()}`
  return undefined
}

/** The environment of node i of n (the list, tried against 1.39). */
export const nodeEnv = (i, n, dataDir) => {
  const p = nodePorts(i)
  const raftJoin = Array.from({ length: n }, (_, k) => `node${k + 1}:${nodePorts(k + 1).raft}`).join(",")
  const env = {
    PATH: process.env["PATH"] ?? "",
    HOME: process.env["HOME"] ?? os.homedir(),
    PERSISTENCE_DATA_PATH: dataDir,
    DISABLE_TELEMETRY: "true",
    GO_PROFILING_DISABLE: "true",
    LOG_LEVEL: "warning",
    AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED: "true",
    DEFAULT_VECTORIZER_MODULE: "none",
    CLUSTER_HOSTNAME: `node${i}`,
    CLUSTER_IN_LOCALHOST: "true",
    CLUSTER_BIND_ADDR: "127.0.0.1",
    CLUSTER_ADVERTISE_ADDR: "127.0.0.1",
    CLUSTER_GOSSIP_BIND_PORT: String(p.gossip),
    CLUSTER_DATA_BIND_PORT: String(p.data),
    GRPC_PORT: String(p.grpc),
    RAFT_PORT: String(p.raft),
    RAFT_INTERNAL_RPC_PORT: String(p.raftRpc),
    RAFT_JOIN: raftJoin,
    RAFT_BOOTSTRAP_EXPECT: String(n)
  }
  if (i > 1) env["CLUSTER_JOIN"] = `127.0.0.1:${nodePorts(1).gossip}`
  return env
}

const SUPERVISOR = [
  "exec 3<&0",
  '"$0" "$@" </dev/null 3<&- & pid=$!',
  "echo $pid >&2",
  "( cat <&3 >/dev/null; kill -TERM $pid 2>/dev/null ) &",
  "exec 3<&-",
  "wait $pid"
].join("\n")

const READY_TIMEOUT_MS = 120_000

/** GET a path on 127.0.0.1:port; resolves to { status, text } or { error }. */
export const request = (port, method, pathname, body, timeoutMs = 10_000) =>
  new Promise((resolve) => {
    const data = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body)
    const req = http.request({
      host: "127.0.0.1",
      port,
      method,
      path: pathname,
      timeout: timeoutMs,
      headers: data === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(data) }
    })
    req.on("response", (res) => {
      let text = ""
      res.setEncoding("utf8")
      res.on("data", (d) => (text += d))
      res.on("end", () => resolve({ status: res.statusCode, text }))
      res.on("error", (e) => resolve({ error: e.message }))
    })
    req.on("error", (e) => resolve({ error: e.message }))
    req.on("timeout", () => {
      req.destroy()
      resolve({ error: `no answer within ${timeoutMs} ms` })
    })
    req.end(data)
  })

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** The cluster inside the current (fresh) network namespace. */
const makeCluster = (binary, n, root) => {
  const nodes = new Map()
  const startNode = (i) => {
    const name = `node${i}`
    const dataDir = path.join(root, name)
    fs.mkdirSync(dataDir, { recursive: true })
    const p = nodePorts(i)
    const args = ["--host", "127.0.0.1", "--port", String(p.rest), "--scheme", "http", "--read-timeout", "600s", "--write-timeout", "600s"]
    const child = spawn("/bin/sh", ["-c", SUPERVISOR, binary, ...args], {
      env: nodeEnv(i, n, dataDir),
      cwd: dataDir,
      stdio: ["pipe", "pipe", "pipe"]
    })
    const node = { name, index: i, ports: p, child, pid: undefined, exited: undefined, tail: [], started: Date.now() }
    child.stdin.on("error", () => undefined)
    const keep = (chunk) => {
      for (const line of chunk.toString("utf8").split("\n")) {
        if (node.pid === undefined && /^\d+$/.test(line.trim())) {
          node.pid = Number(line.trim())
          continue
        }
        if (line.trim() !== "") node.tail.push(line)
      }
      node.tail.splice(0, Math.max(0, node.tail.length - 40))
    }
    child.stdout.on("data", keep)
    child.stderr.on("data", keep)
    node.exit = new Promise((resolve) =>
      child.once("exit", (code, signal) => {
        node.exited = code ?? signal
        resolve()
      })
    )
    nodes.set(name, node)
    return node
  }
  const ready = async (node) => {
    const deadline = Date.now() + READY_TIMEOUT_MS
    while (Date.now() < deadline) {
      if (node.exited !== undefined) throw new Error(`${node.name} exited (${node.exited}):\n${node.tail.join("\n")}`)
      const r = await request(node.ports.rest, "GET", "/v1/.well-known/ready", undefined, 1_000)
      if (r.status === 200) return Date.now() - node.started
      await pause(100)
    }
    throw new Error(`${node.name} was not ready within ${READY_TIMEOUT_MS} ms:\n${node.tail.join("\n")}`)
  }
  const describe = (node) => ({ name: node.name, rest: node.ports.rest, grpc: node.ports.grpc, pid: node.pid, up: node.exited === undefined })
  const rss = (pid) => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))
      return m ? Number(m[1]) * 1024 : undefined
    } catch {
      return undefined
    }
  }
  return {
    nodes,
    start: async () => {
      const started = Date.now()
      const list = Array.from({ length: n }, (_, k) => startNode(k + 1))
      await Promise.all(list.map(ready))
      return { startupMs: Date.now() - started, nodes: list.map(describe) }
    },
    kill: async (name) => {
      const node = nodes.get(name)
      if (node === undefined) throw new Error(`no node ${name}`)
      if (node.pid !== undefined && node.exited === undefined) process.kill(node.pid, "SIGKILL")
      await node.exit
      return describe(node)
    },
    restart: async (name) => {
      const old = nodes.get(name)
      if (old === undefined) throw new Error(`no node ${name}`)
      if (old.exited === undefined) throw new Error(`${name} is still running`)
      const node = startNode(old.index)
      const startupMs = await ready(node)
      return { ...describe(node), startupMs }
    },
    memory: () => Object.fromEntries([...nodes.values()].map((node) => [node.name, node.exited === undefined ? rss(node.pid) : undefined])),
    describe: () => [...nodes.values()].map(describe),
    stop: async () => {
      for (const node of nodes.values()) node.child.stdin.end()
      const timer = setTimeout(() => {
        for (const node of nodes.values()) if (node.pid !== undefined && node.exited === undefined) process.kill(node.pid, "SIGKILL")
      }, 10_000)
      await Promise.all([...nodes.values()].map((node) => node.exit))
      clearTimeout(timer)
    }
  }
}

/** Runs a command inside the namespace to completion, bounded by timeoutMs. */
const runCommand = ({ argv, env, input, timeoutMs, cwd }) =>
  new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { env: { ...process.env, ...env }, cwd, stdio: "pipe" })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.stdin.on("error", () => undefined)
    const started = Date.now()
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs ?? 60_000)
    child.once("error", (e) => {
      clearTimeout(timer)
      resolve({ code: null, signal: null, stdout, stderr: `${stderr}${e.message}`, ms: Date.now() - started })
    })
    child.once("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started })
    })
    child.stdin.end(input ?? "")
  })

/** Inside the namespace: lo up, nothing else there, then the cluster and its command loop. */
const inside = async (n, root) => {
  const up = spawnSync("ip", ["link", "set", "lo", "up"], { encoding: "utf8" })
  if (up.status !== 0) throw new Error(`ip link set lo up failed: ${up.stderr}`)
  // `ip` asks the kernel about this namespace (/sys/class/net would show the host's, as mounted)
  const listed = spawnSync("ip", ["-o", "link", "show"], { encoding: "utf8" })
  const interfaces = listed.stdout.split("\n").filter((l) => l.trim() !== "").map((l) => l.split(":")[1]?.trim().split("@")[0])
  if (listed.status !== 0 || interfaces.length !== 1 || interfaces[0] !== "lo") {
    throw new Error(`refusing to start: this namespace has interfaces besides lo (${interfaces.join(", ")})`)
  }
  const binary = weaviateBinary()
  if (!fs.existsSync(binary)) throw new Error(`the real Weaviate is not built (${binary}): run npm run weaviate:build`)
  const cluster = makeCluster(binary, n, root)
  const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`)
  let closing = false
  const shutdown = async (code) => {
    if (closing) return
    closing = true
    await cluster.stop()
    fs.rmSync(root, { recursive: true, force: true })
    process.exit(code)
  }
  process.on("SIGINT", () => void shutdown(0))
  process.on("SIGTERM", () => void shutdown(0))
  process.stdin.on("end", () => void shutdown(0))
  let started
  try {
    started = await cluster.start()
  } catch (e) {
    send({ event: "failed", error: e instanceof Error ? e.message : String(e) })
    await shutdown(1)
    return
  }
  send({ event: "ready", version: weaviateVersion(), runnerPid: process.pid, ...started, memory: cluster.memory() })
  const spawned = new Map()
  let pending = ""
  const handle = async (command) => {
    switch (command.op) {
      case "kill":
        return cluster.kill(command.node)
      case "restart":
        return cluster.restart(command.node)
      case "nodes":
        return cluster.describe()
      case "memory":
        return cluster.memory()
      case "http":
        return request(command.port, command.method ?? "GET", command.path, command.body, command.timeoutMs)
      case "run":
        return runCommand(command)
      case "spawn": {
        // A long-lived process (a daemon): answers once `waitFor` matched its stdout.
        const child = spawn(command.argv[0], command.argv.slice(1), { env: { ...process.env, ...command.env }, stdio: "pipe" })
        const entry = { child, stdout: "", stderr: "" }
        spawned.set(child.pid, entry)
        child.stderr.on("data", (d) => (entry.stderr += d))
        return await new Promise((resolve) => {
          const timer = setTimeout(() => resolve({ pid: child.pid, error: "no match in time", stderr: entry.stderr }), command.timeoutMs ?? 30_000)
          child.stdout.on("data", (d) => {
            entry.stdout += d
            const m = new RegExp(command.waitFor).exec(entry.stdout)
            if (m) {
              clearTimeout(timer)
              resolve({ pid: child.pid, match: [...m] })
            }
          })
          child.once("exit", (code) => {
            clearTimeout(timer)
            resolve({ pid: child.pid, exited: code, stderr: entry.stderr })
          })
        })
      }
      case "end": {
        const entry = spawned.get(command.pid)
        if (entry === undefined) return { gone: true }
        entry.child.kill("SIGTERM")
        spawned.delete(command.pid)
        return { stdout: entry.stdout, stderr: entry.stderr }
      }
      default:
        throw new Error(`unknown op ${command.op}`)
    }
  }
  process.on("exit", () => {
    for (const { child } of spawned.values()) child.kill("SIGKILL")
  })
  process.stdin.setEncoding("utf8")
  process.stdin.on("data", (chunk) => {
    pending += chunk
    const lines = pending.split("\n")
    pending = lines.pop() ?? ""
    for (const line of lines) {
      if (line.trim() === "") continue
      const command = JSON.parse(line)
      handle(command).then(
        (result) => send({ id: command.id, ok: true, result }),
        (e) => send({ id: command.id, ok: false, error: e instanceof Error ? e.message : String(e) })
      )
    }
  })
}

/** The runner's argument list (inside the namespace) for n nodes with data under root. */
export const runnerArgs = (n, root) => ["--net", "--fork", "--kill-child", "--", process.execPath, fileURLToPath(import.meta.url), "--inside", String(n), root]

const usage = "usage: npm run weaviate:cluster -- [--nodes N]   (N from 1 to 9, default 3; needs root for its network namespace)"

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  if (args[0] === "--inside") {
    await inside(Number(args[1]), args[2]).catch((e) => {
      process.stdout.write(`${JSON.stringify({ event: "failed", error: e instanceof Error ? e.message : String(e) })}\n`)
      process.exit(1)
    })
  } else {
    let n = 3
    for (let i = 0; i < args.length; i++) {
      if (args[i] === "--nodes") n = Number(args[++i])
      else if (args[i] === "--help" || args[i] === "-h") {
        console.log(usage)
        process.exit(0)
      } else {
        console.error(`unknown argument ${args[i]}\n${usage}`)
        process.exit(2)
      }
    }
    if (!Number.isInteger(n) || n < 1 || n > 9) {
      console.error(`--nodes must be an integer from 1 to 9\n${usage}`)
      process.exit(2)
    }
    const why = namespaceUnavailable()
    if (why !== undefined) {
      console.error(`cannot start the cluster: ${why}`)
      process.exit(1)
    }
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "weaviate-mcp-cluster-"))
    const child = spawn("unshare", runnerArgs(n, root), { stdio: ["pipe", "pipe", "inherit"] })
    let out = ""
    child.stdout.on("data", (d) => {
      out += d
      const lines = out.split("\n")
      out = lines.pop() ?? ""
      for (const line of lines) {
        const m = JSON.parse(line)
        if (m.event === "failed") console.error(`the cluster did not start: ${m.error}`)
        if (m.event !== "ready") continue
        const mb = Object.values(m.memory).reduce((a, b) => a + (b ?? 0), 0) / 2 ** 20
        console.log(`Weaviate ${m.version}: ${m.nodes.length} node(s) ready in ${m.startupMs} ms (${Math.round(mb)} MB resident), in a network namespace of their own`)
        for (const node of m.nodes) console.log(`  ${node.name}: REST http://127.0.0.1:${node.rest}  gRPC 127.0.0.1:${node.grpc}`)
        console.log(`  only processes inside the namespace reach them: nsenter --target ${m.runnerPid} --net -- <command>`)
        console.log(`  e.g. nsenter --target ${m.runnerPid} --net -- curl -s http://127.0.0.1:8080/v1/nodes`)
        console.log("  press Ctrl-C to stop (the data is thrown away)")
      }
    })
    const stop = () => child.stdin.end()
    process.on("SIGINT", stop)
    process.on("SIGTERM", stop)
    child.on("exit", (code) => process.exit(code ?? 1))
  }
}
