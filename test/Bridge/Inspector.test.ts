/**
 * The MCP Inspector's CLI (a real third-party client) over stdio through `weaviate-mcp bridge`,
 * against a real `weaviate-mcp serve` on 127.0.0.1.
 */
import * as NodeChild from "node:child_process"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"

const INSPECTOR = NodePath.resolve(import.meta.dirname, "../../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js")

let home: string
let daemon: Cli.Running

beforeAll(async () => {
  home = TestHome.tempDirSync("weaviate-mcp-inspector-")
  daemon = await Cli.serve(["--home", home, "--port", "0"])
}, 30_000)

afterAll(async () => {
  daemon?.child.kill("SIGTERM")
  await daemon?.exited
})

/** Runs the Inspector CLI with the bridge as its stdio server; its catalogue goes to a temp directory. */
const inspect = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const scratch = TestHome.tempDirSync("weaviate-mcp-inspector-home-")
    const child = NodeChild.spawn(
      process.execPath,
      [INSPECTOR, "--cli", ...args, "--", process.execPath, Cli.BIN, "bridge", "--home", home],
      { env: { ...process.env, HOME: scratch, MCP_CATALOG_PATH: NodePath.join(scratch, "mcp.json") }, stdio: "pipe" }
    )
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`inspector timed out\n${stderr}`))
    }, 30_000)
    child.once("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    child.stdin.end()
  })

describe("the MCP Inspector CLI over stdio through the bridge", () => {
  it("lists the tools", async () => {
    const r = await inspect(["--method", "tools/list"])
    expect(r.code).toBe(0)
    const names = (JSON.parse(r.stdout).tools as Array<{ name: string }>).map((t) => t.name)
    expect(names).toEqual(expect.arrayContaining(["list_connections", "execute_query"]))
  })

  it("calls a read tool", async () => {
    const r = await inspect(["--method", "tools/call", "--tool-name", "list_connections"])
    expect(r.code).toBe(0)
    const result = JSON.parse(r.stdout)
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toEqual({ connections: [] })
  })

  it("lists the prompts", async () => {
    const r = await inspect(["--method", "prompts/list"])
    expect(r.code).toBe(0)
    expect(Array.isArray(JSON.parse(r.stdout).prompts)).toBe(true)
  })
})
