/**
 * Runs the real `weaviate-mcp` binary (bin/weaviate-mcp.js) as a child process.
 */
import * as NodeChild from "node:child_process"
import * as NodePath from "node:path"

export const BIN = NodePath.resolve(import.meta.dirname, "../../bin/weaviate-mcp.js")

export interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

const cleanEnv = (env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => {
  const base: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith("WEAVIATE_MCP_")) base[key] = value
  return { ...base, ...env }
}

/** Runs to completion (bounded by `timeoutMs`). */
export const run = (
  args: ReadonlyArray<string>,
  options: { readonly env?: NodeJS.ProcessEnv; readonly input?: string; readonly timeoutMs?: number; /** another copy of the package's bin */ readonly bin?: string } = {}
) =>
  new Promise<Finished>((resolve, reject) => {
    const child = NodeChild.spawn(process.execPath, [options.bin ?? BIN, ...args], { env: cleanEnv(options.env), stdio: "pipe" })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`timed out: weaviate-mcp ${args.join(" ")}\n${stderr}`))
    }, options.timeoutMs ?? 20_000)
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
    child.stdin.end(options.input ?? "")
  })

/** A running `weaviate-mcp serve`, ready when it printed its endpoint URL. */
export interface Running {
  readonly child: NodeChild.ChildProcessWithoutNullStreams
  readonly endpoint: string
  readonly port: number
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<Finished>
}

export const serve = (
  args: ReadonlyArray<string>,
  options: {
    readonly env?: NodeJS.ProcessEnv
    readonly timeoutMs?: number
    /** flags for node itself (V8's are refused in NODE_OPTIONS) */
    readonly nodeArgs?: ReadonlyArray<string>
    /** another copy of the package's bin */
    readonly bin?: string
  } = {}
) =>
  new Promise<Running>((resolve, reject) => {
    const child = NodeChild.spawn(process.execPath, [...(options.nodeArgs ?? []), options.bin ?? BIN, "serve", ...args], { env: cleanEnv(options.env), stdio: "pipe" })
    let stdout = ""
    let stderr = ""
    const exited = new Promise<Finished>((done) => child.once("exit", (code, signal) => done({ code, signal, stdout, stderr })))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`serve did not start in time\n${stderr}`))
    }, options.timeoutMs ?? 20_000)
    // The daemon's log lines also go to the console: vitest keeps them on the test running at the time
    // and the readable reporter prints them only if that test fails.
    child.stderr.on("data", (d) => {
      stderr += d
      const prefix = `[weaviate-mcp serve, pid ${child.pid}] `
      console.error(String(d).replace(/\n$/, "").split("\n").map((line) => prefix + line).join("\n"))
    })
    child.stdout.on("data", (d) => {
      stdout += d
      const match = /listening on (http:\/\/127\.0\.0\.1:(\d+)\/mcp)/.exec(stdout)
      if (match) {
        clearTimeout(timer)
        resolve({ child, endpoint: match[1]!, port: Number(match[2]), stdout: () => stdout, stderr: () => stderr, exited })
      }
    })
    void exited.then((f) => {
      clearTimeout(timer)
      reject(new Error(`serve exited early (${f.code})\n${f.stderr}`))
    })
  })
