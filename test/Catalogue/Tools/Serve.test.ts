/**
 * `serve` with an approvals mode that cannot work here stops with a usage error before listening.
 */
import { describe, expect, it } from "vitest"
import * as Cli from "../../support/Cli.ts"
import * as TestHome from "../../support/TestHome.ts"

describe("serve --approvals", () => {
  it("a dialog mode that cannot work here (terminal without a TTY) is a usage error: one line, exit 2", async () => {
    const home = TestHome.tempDirSync("weaviate-mcp-serve-")
    const r = await Cli.run(["serve", "--approvals", "terminal", "--port", "0", "--home", home])
    expect(r.code).toBe(2)
    expect(r.stderr.trim().split("\n")).toEqual(["--approvals terminal: standard input is not a terminal"])
  })
})

describe("serve says at start which approval mode it resolved to", () => {
  const headless = { DISPLAY: "", WAYLAND_DISPLAY: "" }

  it("headless (no display, no terminal): auto resolves to deny, with a warning that first access and writes will be refused", async () => {
    const home = TestHome.tempDirSync("weaviate-mcp-serve-")
    const running = await Cli.serve(["--port", "0", "--home", home], { env: headless })
    running.child.kill("SIGTERM")
    const finished = await running.exited
    const line = finished.stderr.split("\n").find((l) => l.includes("approvals:"))
    expect(line, finished.stderr).toMatch(/level=WARN/)
    expect(line).toContain("approvals: auto -> deny: no dialog available: first access and writes will be refused")
    expect(line).toContain("see --approvals")
  })

  it("--approvals exec says that --approval-command confirms", async () => {
    const home = TestHome.tempDirSync("weaviate-mcp-serve-")
    const running = await Cli.serve(["--port", "0", "--home", home, "--approvals", "exec", "--approval-command", "true"], { env: headless })
    running.child.kill("SIGTERM")
    const finished = await running.exited
    const line = finished.stderr.split("\n").find((l) => l.includes("approvals:"))
    expect(line, finished.stderr).toMatch(/level=INFO/)
    expect(line).toContain("approvals: exec: first access to a connection and writes are confirmed by --approval-command")
  })
})
