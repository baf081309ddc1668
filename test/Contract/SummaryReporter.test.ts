/**
 * The closing line of `npm test` never says `0 failed` when a test file failed to load: vitest runs
 * a tiny project (one passing test, one file whose import is missing) through the real reporter.
 */
import { assert, describe, it } from "@effect/vitest"
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { tempDirSync } from "../support/TestHome.ts"

const root = fileURLToPath(new URL("../..", import.meta.url))
const reporter = NodePath.join(root, "test/support/SummaryReporter.ts")
const vitest = NodePath.join(root, "node_modules/vitest/vitest.mjs")

/** Runs vitest on `files` in a fresh directory with only the summary reporter; bounded in time. */
const runVitest = (files: Record<string, string>) => {
  const dir = tempDirSync("weaviate-mcp-reporter-")
  for (const [name, text] of Object.entries(files)) NodeFs.writeFileSync(NodePath.join(dir, name), text)
  // A config with no imports: the project directory has no node_modules of its own.
  NodeFs.writeFileSync(
    NodePath.join(dir, "vitest.config.mjs"),
    `export default { test: { globals: true, include: ["*.test.mjs"], reporters: [${JSON.stringify(reporter)}] } }\n`
  )
  const run = NodeChild.spawnSync(process.execPath, [vitest, "run", "--root", dir, "--config", NodePath.join(dir, "vitest.config.mjs")], {
    cwd: dir,
    encoding: "utf8",
    timeout: 60_000,
    env: { ...process.env, CI: "1", NO_COLOR: "1" }
  })
  const closing = run.stdout.trim().split("\n").at(-1) ?? ""
  return { status: run.status, closing, output: run.stdout + run.stderr }
}

describe("summary reporter", () => {
  it("a test file that fails to load counts as a failure: never `0 failed`", { timeout: 90_000 }, () => {
    const { closing, output, status } = runVitest({
      "ok.test.mjs": `test("passes", () => { expect(1).toBe(1) })\n`,
      "broken.test.mjs": `import "./missing-module.mjs"\ntest("never runs", () => {})\n`
    })
    assert.strictEqual(closing, "1 passed, 1 failed, 0 skipped", output)
    assert.notStrictEqual(status, 0)
  })

  it("an unhandled error counts as a failure", { timeout: 90_000 }, () => {
    const { closing, output } = runVitest({
      "ok.test.mjs": `test("passes, then throws outside the test", () => { setTimeout(() => { throw new Error("late") }, 0) })\ntest("waits", () => new Promise((r) => setTimeout(r, 20)))\n`
    })
    assert.match(closing, /^2 passed, [1-9]\d* failed, 0 skipped$/, output)
  })

  it("a clean run says 0 failed", { timeout: 90_000 }, () => {
    const { closing, output, status } = runVitest({ "ok.test.mjs": `test("passes", () => { expect(1).toBe(1) })\n` })
    assert.strictEqual(closing, "1 passed, 0 failed, 0 skipped", output)
    assert.strictEqual(status, 0)
  })
})
