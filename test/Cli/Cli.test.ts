/**
 * The command line as users and scripts see it: exit codes, one-line errors, --version, --help
 * (spec/README.md, "Command-line details that scripts rely on").
 */
import { describe, expect, it } from "vitest"
import { VERSION } from "../../src/Base/Version.ts"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"

const oneLine = (text: string) => text.trim().split("\n").filter((l) => l.trim().length > 0)

describe("weaviate-mcp command line", () => {
  it("--version prints the package version and exits 0", async () => {
    const r = await Cli.run(["--version"])
    expect(r.code).toBe(0)
    expect(r.stdout.trim()).toBe(VERSION)
  })

  it("--help lists serve and exits 0", async () => {
    const r = await Cli.run(["--help"])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("serve")
  })

  it.each([
    [["serve", "--port", "abc"], "integer"],
    [["serve", "--bogus"], "--bogus"],
    [["serve", "--auth", "maybe"], "tokens, off"],
    [["serve", "--approvals", "sometimes"], "dialog"],
    [["no-such-command"], "unknown command: no-such-command"]
  ])("a bad command line %j gives one line on stderr, no stack trace, exit code 2", async (args, mentions) => {
    const r = await Cli.run(args)
    expect(r.code).toBe(2)
    const lines = oneLine(r.stderr)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(mentions)
    expect(r.stderr).not.toMatch(/\n\s+at |Error:|FiberFailure/)
  })

  it("serve --approvals exec without --approval-command is a usage error (exit 2)", async () => {
    const r = await Cli.run(["serve", "--approvals", "exec", "--port", "0", "--home", TestHome.tempDirSync()])
    expect(r.code).toBe(2)
    expect(oneLine(r.stderr)).toEqual(["--approvals exec needs --approval-command CMD"])
  })
})
