/**
 * `serve` with an approvals mode that cannot work here stops with a usage error before listening.
 */
import { describe, expect, it } from "vitest"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"

describe("serve --approvals", () => {
  it("a dialog mode that cannot work here (terminal without a TTY) is a usage error: one line, exit 2", async () => {
    const home = TestHome.tempDirSync("weaviate-mcp-serve-")
    const r = await Cli.run(["serve", "--approvals", "terminal", "--port", "0", "--home", home])
    expect(r.code).toBe(2)
    expect(r.stderr.trim().split("\n")).toEqual(["--approvals terminal: standard input is not a terminal"])
  })
})
