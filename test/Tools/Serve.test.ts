/**
 * `serve` with an approvals mode that cannot work here stops with a usage error before listening.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import * as Cli from "../support/Cli.ts"

describe("serve --approvals", () => {
  it("a dialog mode that cannot work here (terminal without a TTY) is a usage error: one line, exit 2", async () => {
    const home = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-serve-"))
    const r = await Cli.run(["serve", "--approvals", "terminal", "--port", "0", "--home", home])
    expect(r.code).toBe(2)
    expect(r.stderr.trim().split("\n")).toEqual(["--approvals terminal: standard input is not a terminal"])
  })
})
