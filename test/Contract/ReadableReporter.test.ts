/**
 * A test run a person can read (issue 29, docs/testing.md "Reading a test run"): vitest runs a tiny
 * project through the suite's own reporters, with the suite's `silent` setting, and the output obeys
 * the rules:
 *  - what a passing test logs is never printed;
 *  - a failing test's block says, in this order, its name, the assertion, its captured logs, and the
 *    command that re-runs just it (and that command does re-run just it);
 *  - on CI a passing run prints one line per file, and the closing `N passed, N failed` line is last.
 */
import { assert, describe, it } from "@effect/vitest"
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import config from "../../vitest.config.ts"
import { tempDirSync } from "../support/TestHome.ts"

const root = fileURLToPath(new URL("../..", import.meta.url))
const readable = NodePath.join(root, "test/support/ReadableReporter.ts")
const summary = NodePath.join(root, "test/support/SummaryReporter.ts")
const vitest = NodePath.join(root, "node_modules/vitest/vitest.mjs")

/** A project of `files` with the suite's silent setting and its CI reporters. */
const project = (files: Record<string, string>) => {
  const dir = tempDirSync("weaviate-mcp-readable-")
  for (const [name, text] of Object.entries(files)) NodeFs.writeFileSync(NodePath.join(dir, name), text)
  NodeFs.writeFileSync(
    NodePath.join(dir, "vitest.config.mjs"),
    `export default { test: { globals: true, include: ["*.test.mjs"], silent: ${JSON.stringify(config.test?.silent)}, ` +
      `reporters: [[${JSON.stringify(readable)}, { compact: true }], ${JSON.stringify(summary)}] } }\n`
  )
  return dir
}

/** Runs vitest in `dir` with extra arguments, as CI does; bounded in time. */
const runVitest = (dir: string, args: ReadonlyArray<string> = []) => {
  const run = NodeChild.spawnSync(process.execPath, [vitest, "run", "--root", dir, "--config", NodePath.join(dir, "vitest.config.mjs"), ...args], {
    cwd: dir,
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, CI: "true", NO_COLOR: "1" }
  })
  return { status: run.status, stdout: run.stdout, output: run.stdout + run.stderr }
}

const passing = `test("passes and logs", () => { console.log("PASSING-LOG daemon line"); console.error("PASSING-ERR"); expect(1).toBe(1) })\n`
const failing = [
  `describe("the rules", () => {`,
  `  test("a rule (with parentheses) breaks", () => { console.log("FAILING-LOG level=INFO message=\\"mcp request\\""); expect({ answer: 41 }).toEqual({ answer: 42 }) })`,
  `  test("a neighbour passes", () => { console.log("NEIGHBOUR-LOG") })`,
  `})`,
  ``
].join("\n")

describe("reading a test run", () => {
  it("the suite keeps console output off the terminal and uses the readable reporter, compact on CI", () => {
    assert.strictEqual(config.test?.silent, true)
    const names = JSON.stringify(config.test?.reporters)
    assert.include(names, "ReadableReporter.ts")
    assert.match(names, /SummaryReporter\.ts"\]?$/, "the summary reporter comes last")
  })

  it("a failing test prints its name, the assertion, its captured logs, then the re-run command; passing tests print no logs", { timeout: 120_000 }, () => {
    const dir = project({ "ok.test.mjs": passing, "bad.test.mjs": failing })
    const { output, status, stdout } = runVitest(dir)
    assert.notStrictEqual(status, 0)
    for (const quiet of ["PASSING-LOG", "PASSING-ERR", "NEIGHBOUR-LOG"]) assert.notInclude(output, quiet, output)
    const at = (text: string) => {
      const index = output.indexOf(text)
      assert.isAtLeast(index, 0, `${text} is printed:\n${output}`)
      return index
    }
    const name = at("FAIL bad.test.mjs > the rules > a rule (with parentheses) breaks")
    const assertion = at("AssertionError: expected { answer: 41 } to deeply equal { answer: 42 }")
    const logs = at(`stdout | FAILING-LOG level=INFO message="mcp request"`)
    const rerun = at("re-run: npx vitest run bad.test.mjs -t 'a rule \\(with parentheses\\) breaks'")
    assert.isTrue(name < assertion && assertion < logs && logs < rerun, output)
    assert.strictEqual(stdout.trim().split("\n").at(-1), "2 passed, 1 failed, 0 skipped", output)

    // The printed command re-runs that test alone.
    const again = runVitest(dir, ["bad.test.mjs", "-t", "a rule \\(with parentheses\\) breaks"])
    assert.strictEqual(again.stdout.trim().split("\n").at(-1), "0 passed, 1 failed, 1 skipped", again.output)
  })

  it("a passing run on CI prints one line per file and the closing line last", { timeout: 120_000 }, () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < 5; i++) files[`ok${i}.test.mjs`] = passing
    const { output, status, stdout } = runVitest(project(files))
    assert.strictEqual(status, 0, output)
    const lines = stdout.trim().split("\n").filter((line) => line.trim() !== "")
    assert.strictEqual(lines.filter((line) => /^✓ ok\d\.test\.mjs \(1 test\)/.test(line)).length, 5, output)
    // A heading, five files, the Weaviate under test and the closing line.
    assert.isAtMost(lines.length, 8, output)
    assert.strictEqual(lines.at(-1), "5 passed, 0 failed, 0 skipped", output)
    assert.notInclude(output, "PASSING-LOG")
  })
})
