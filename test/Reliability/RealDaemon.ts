/**
 * The reliability suite's load and fault tests: the built `weaviate-mcp serve` (test/support/Cli.ts)
 * in front of the real Weaviate server (RealWeaviate.ts), spoken to over real HTTP on 127.0.0.1 with
 * modern requests, every answer validated against the official schema.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { currentTarget } from "../weaviate/Target.ts"
import { weaviateBinary } from "../../scripts/weaviate.mjs"
import { MODERN, modern, modernHeaders, parseFrames } from "../Mcp/support/EndpointHarness.ts"
import * as Cli from "../support/Cli.ts"
import { validateMessage } from "../support/McpSchemas.ts"
import * as TestHome from "../support/TestHome.ts"

/** Why the real-server tests cannot run here, or undefined when they can. */
export const realUnavailable = (): string | undefined => {
  if (currentTarget().kind === "compatible") return "this run uses the Weaviate-compatible instance (WEAVIATE_TEST_SERVER=compatible or no Go)"
  if (!NodeFs.existsSync(weaviateBinary())) return `the real Weaviate is not built (${weaviateBinary()})`
  return undefined
}

export interface Reply {
  readonly status: number
  readonly json: any
}

/** A modern request; the answer (JSON or the frames of an event stream) is validated against the schema. */
export const rpc = async (
  endpoint: string,
  token: string,
  method: string,
  params: Record<string, unknown> = {},
  id: string | number = 1,
  init: { readonly signal?: AbortSignal } = {}
): Promise<Reply> => {
  const name = method === "tools/call" ? String(params["name"]) : undefined
  const response = await fetch(endpoint, {
    method: "POST",
    headers: { ...modernHeaders(method, name), accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
    body: JSON.stringify(modern(method, params, id)),
    ...(init.signal !== undefined ? { signal: init.signal } : {})
  })
  const text = await response.text()
  const type = response.headers.get("content-type") ?? ""
  const json = text.length === 0 ? undefined : type.startsWith("text/event-stream") ? parseFrames(text).at(-1) : JSON.parse(text)
  if (json !== undefined && response.status < 500) validateMessage(MODERN, json)
  return { status: response.status, json }
}

export const callTool = (endpoint: string, token: string, name: string, args: Record<string, unknown>, id: string | number = 1, init = {}) =>
  rpc(endpoint, token, "tools/call", { name, arguments: args }, id, init)

/** The text of a tool result (error or not). */
export const toolText = (reply: Reply): string =>
  ((reply.json?.result?.content ?? []) as Array<{ type: string; text?: string }>).map((c) => c.text ?? "").join("\n")

/** A home with `settings.json`, one connection per entry of `ports`, and tokens of the given names. */
export const makeHome = async (
  settings: Record<string, unknown>,
  ports: Readonly<Record<string, number>>,
  tokenNames: ReadonlyArray<string>
) => {
  const home = TestHome.tempDirSync("weaviate-mcp-real-")
  NodeFs.writeFileSync(NodePath.join(home, "settings.json"), JSON.stringify(settings), { mode: 0o600 })
  const cli = (...args: ReadonlyArray<string>) => Cli.run([...args, "--home", home], { timeoutMs: 30_000 })
  const connections: Record<string, string> = {}
  for (const [name, port] of Object.entries(ports)) {
    const added = await cli("connections", "add", "--name", name, "--host", "127.0.0.1", "--port", String(port), "--safe-mode", "silent", "--json")
    if (added.code !== 0) throw new Error(`connections add: ${added.stderr}`)
    connections[name] = JSON.parse(added.stdout).id
  }
  const tokens: Record<string, { id: string; token: string }> = {}
  for (const name of tokenNames) {
    const created = await cli("tokens", "create", "--name", name, "--access", "fullAccess", "--json")
    if (created.code !== 0) throw new Error(`tokens create: ${created.stderr}`)
    const parsed = JSON.parse(created.stdout)
    tokens[name] = { id: parsed.id ?? parsed.info?.id, token: parsed.token }
  }
  return { home, cli, connections, tokens }
}

/** `serve` with approvals answered yes by a command (every write the tests send is approved). */
export const serveApproved = (home: string, env: NodeJS.ProcessEnv = {}) =>
  Cli.serve(["--port", "0", "--home", home, "--approvals", "exec", "--approval-command", "cat >/dev/null", "--rate-limit", "0"], { timeoutMs: 30_000, env })

/**
 * The daemon's heap after a full collection, in kB, through its inspector (started with
 * `--inspect=127.0.0.1:0`, URL on stderr): RSS alone cannot tell a leak from a heap V8 keeps.
 */
export const heapAfterGcKb = async (stderr: string): Promise<number> => {
  const url = /Debugger listening on (ws:\/\/\S+)/.exec(stderr)?.[1]
  if (url === undefined) throw new Error(`no inspector URL in ${stderr.slice(0, 500)}`)
  const { WebSocket } = await import("undici")
  const socket = new WebSocket(url)
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener("open", () => resolve())
    socket.addEventListener("error", () => reject(new Error("inspector connection failed")))
  })
  let next = 0
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<any>((resolve, reject) => {
      const id = ++next
      const timer = setTimeout(() => reject(new Error(`inspector ${method} timed out`)), 30_000)
      const onMessage = (event: { data: unknown }) => {
        const message = JSON.parse(String(event.data))
        if (message.id !== id) return
        clearTimeout(timer)
        socket.removeEventListener("message", onMessage as never)
        resolve(message.result)
      }
      socket.addEventListener("message", onMessage as never)
      socket.send(JSON.stringify({ id, method, params }))
    })
  try {
    await send("HeapProfiler.collectGarbage")
    await send("HeapProfiler.collectGarbage")
    const result = await send("Runtime.evaluate", { expression: "process.memoryUsage().heapUsed", returnByValue: true })
    return Math.round(Number(result.result.value) / 1024)
  } finally {
    socket.close()
  }
}

/** Polls (bounded in count) until `check` gives a value. */
export const eventually = async <A>(what: string, check: () => Promise<A | undefined> | A | undefined, tries = 100, everyMs = 100): Promise<A> => {
  for (let i = 0; i < tries; i++) {
    const value = await check()
    if (value !== undefined) return value
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
  throw new Error(`never happened: ${what}`)
}

/** Resident memory of a process in kB (/proc/PID/status, Linux). */
export const rssKb = (pid: number): number => {
  const status = NodeFs.readFileSync(`/proc/${pid}/status`, "utf8")
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN)
}
