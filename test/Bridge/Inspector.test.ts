/**
 * The MCP Inspector's CLI (a real third-party client) over stdio through `weaviate-mcp bridge`,
 * against a real `weaviate-mcp serve` on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Cli from "../support/Cli.ts"
import * as Inspector from "../support/Inspector.ts"
import * as TestHome from "../support/TestHome.ts"


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

/** Runs the Inspector CLI with the bridge as its stdio server. */
const inspect = (args: ReadonlyArray<string>) => Inspector.run([...args, "--", process.execPath, Cli.BIN, "bridge", "--home", home])

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
