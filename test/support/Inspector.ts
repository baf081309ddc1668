/**
 * The MCP Inspector CLI (`@modelcontextprotocol/inspector`, a dev dependency) run as a child process
 * in its `--cli` mode, the way a user runs it: over Streamable HTTP or with a stdio server command.
 * Its catalogue file and home go to a temporary directory, so nothing of the user's is read or written.
 */
import * as NodeChild from "node:child_process"
import * as NodePath from "node:path"
import * as TestHome from "./TestHome.ts"

export const INSPECTOR = NodePath.resolve(
  import.meta.dirname,
  "../../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
)

export interface Finished {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs `mcp-inspector --cli ARGS` to completion, bounded by `timeoutMs`. */
export const run = (args: ReadonlyArray<string>, timeoutMs = 30_000) =>
  new Promise<Finished>((resolve, reject) => {
    const scratch = TestHome.tempDirSync("weaviate-mcp-inspector-")
    const child = NodeChild.spawn(process.execPath, [INSPECTOR, "--cli", ...args], {
      env: { ...process.env, HOME: scratch, MCP_CATALOG_PATH: NodePath.join(scratch, "mcp.json") },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`the Inspector did not finish: ${args.join(" ")}\n${stderr}`))
    }, timeoutMs)
    child.once("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
