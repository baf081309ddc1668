/**
 * A test run a person can read (issue 29). The logs of the daemons and servers under test are
 * captured per test (vitest keeps every console line of a test on its task, and the config's
 * `silent: true` keeps them off the terminal); this reporter prints them only for a test that failed,
 * at the end of the run, one block per failure, in this order:
 *  1. the rule that broke (the test's full name, with its file),
 *  2. the assertion (the error's message, its diff, and the stack frames in this repository),
 *  3. the captured logs of that test,
 *  4. the command that re-runs just that test.
 * With `{ compact: true }` (CI) it also prints one line per test file as it finishes, in place of
 * vitest's default reporter; interactively the default reporter draws the progress and this one adds
 * the failure blocks after its summary. SummaryReporter's closing line stays last.
 */
import * as NodePath from "node:path"
import type { SerializedError, UserConsoleLog } from "vitest"
import type { Reporter, TestCase, TestModule, TestSpecification, TestSuite, Vitest } from "vitest/node"

export interface Options {
  /** one line per test file instead of vitest's default reporter */
  readonly compact?: boolean
  /** the most lines of captured logs printed for one failure (the last ones are kept) */
  readonly maxLogLines?: number
}

/** What one failure block says, in its order. */
export interface Failure {
  readonly title: string
  readonly errors: ReadonlyArray<SerializedError>
  readonly logs: ReadonlyArray<UserConsoleLog>
  readonly rerun: string
}

/** Quotes for a POSIX shell. */
const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`

/** `-t` is a regular expression: the test's own name, matched literally. */
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** The command that re-runs just one file, or one test of it. */
export const rerunCommand = (file: string, testName?: string) =>
  `npx vitest run ${file}${testName === undefined ? "" : ` -t ${shellQuote(escapeRegExp(testName))}`}`

const stripAnsi = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "")

const indent = (text: string, prefix: string) =>
  text.replace(/\n+$/, "").split("\n").map((line) => `${prefix}${line}`).join("\n")

/** The error's message and diff, then the frames of its stack that are this repository's code. */
const formatError = (error: SerializedError, root: string): string => {
  const lines: Array<string> = []
  const name = typeof error.name === "string" && error.name !== "" ? error.name : "Error"
  lines.push(`${name}: ${error.message ?? String(error)}`)
  const diff = (error as { readonly diff?: unknown }).diff
  // vitest colours the diff in the worker; a log file or a CI page gets it plain.
  if (typeof diff === "string" && diff.trim() !== "") lines.push(indent(process.stdout.isTTY ? diff : stripAnsi(diff), "  "))
  const frames = (error.stack ?? "")
    .split("\n")
    .filter((line) => /^\s*at /.test(line) && line.includes(root) && !line.includes("node_modules"))
    .slice(0, 5)
    .map((line) => `  ${line.trim().split(`${root}${NodePath.sep}`).join("")}`)
  lines.push(...frames)
  return lines.join("\n")
}

/** The captured lines, the last `max` of them, each under its stream's name. */
const formatLogs = (logs: ReadonlyArray<UserConsoleLog>, max: number): string => {
  const lines: Array<string> = []
  for (const log of logs) {
    for (const line of log.content.replace(/\n+$/, "").split("\n")) lines.push(`  ${log.type === "stderr" ? "stderr" : "stdout"} | ${line}`)
  }
  if (lines.length === 0) return "captured logs: none"
  const dropped = Math.max(0, lines.length - max)
  const shown = lines.slice(dropped)
  return [
    `captured logs (${lines.length} line${lines.length === 1 ? "" : "s"}${dropped > 0 ? `, the last ${max} shown` : ""}):`,
    ...shown
  ].join("\n")
}

/** One failure block (exported for its test). */
export const formatFailure = (failure: Failure, root: string, maxLogLines = 400): string => {
  const bar = "─".repeat(Math.max(10, 100 - failure.title.length - 8))
  const errors = failure.errors.length === 0 ? ["(no error was reported)"] : failure.errors.map((e) => formatError(e, root))
  return [
    `─── FAIL ${failure.title} ${bar}`,
    ...errors,
    formatLogs(failure.logs, maxLogLines),
    `re-run: ${failure.rerun}`,
    ""
  ].join("\n")
}

/** The console lines vitest kept on the entity's task (its `task` is internal to vitest's types). */
const logsOf = (entity: TestCase | TestSuite | TestModule): ReadonlyArray<UserConsoleLog> =>
  (entity as unknown as { readonly task: { readonly logs?: ReadonlyArray<UserConsoleLog> } }).task.logs ?? []

/** The failures of a finished module: its failed tests, then failed suites and the module itself (hooks, imports). */
export const failuresOf = (module: TestModule, root: string): ReadonlyArray<Failure> => {
  const file = NodePath.relative(root, module.moduleId)
  const failures: Array<Failure> = []
  for (const test of module.children.allTests()) {
    const result = test.result()
    if (result.state !== "failed") continue
    failures.push({ title: `${file} > ${test.fullName}`, errors: result.errors, logs: logsOf(test), rerun: rerunCommand(file, test.name) })
  }
  for (const suite of module.children.allSuites()) {
    const errors = suite.errors()
    if (errors.length === 0) continue
    failures.push({ title: `${file} > ${suite.fullName}`, errors, logs: logsOf(suite), rerun: rerunCommand(file, suite.name) })
  }
  const errors = module.errors()
  if (errors.length > 0) failures.push({ title: file, errors, logs: logsOf(module), rerun: rerunCommand(file) })
  return failures
}

const seconds = (ms: number) => (ms < 1_000 ? `${Math.round(ms)} ms` : `${(ms / 1_000).toFixed(1)} s`)

/** The line of a finished file in compact mode. */
export const moduleLine = (module: TestModule, root: string): string => {
  let passed = 0
  let failed = 0
  let skipped = 0
  for (const test of module.children.allTests()) {
    const state = test.result().state
    if (state === "passed") passed++
    else if (state === "failed") failed++
    else skipped++
  }
  const file = NodePath.relative(root, module.moduleId)
  const state = module.state()
  const mark = state === "failed" ? "✗" : passed === 0 && skipped > 0 ? "↓" : "✓"
  const counts = [`${passed + failed + skipped} test${passed + failed + skipped === 1 ? "" : "s"}`]
  if (failed > 0) counts.push(`${failed} failed`)
  if (skipped > 0) counts.push(`${skipped} skipped`)
  // A whole file skipped says why, when it said so at import (the dialog and browser tests do).
  const why = mark === "↓" ? logsOf(module).map((l) => l.content.trim()).find((l) => l !== "") : undefined
  const duration = module.diagnostic().duration
  return `${mark} ${file} (${counts.join(", ")}) ${seconds(duration)}${why === undefined ? "" : `: ${why}`}`
}

export default class ReadableReporter implements Reporter {
  private root = process.cwd()
  private modules: ReadonlyArray<TestModule> = []
  private readonly compact: boolean
  private readonly maxLogLines: number

  constructor(options: Options = {}) {
    this.compact = options.compact === true
    this.maxLogLines = options.maxLogLines ?? 400
  }

  onInit(vitest: Vitest) {
    this.root = vitest.config.root
  }

  onTestRunStart(specifications: ReadonlyArray<TestSpecification>) {
    if (!this.compact) return
    process.stdout.write(
      `Running ${specifications.length} test file${specifications.length === 1 ? "" : "s"}: one line each as it finishes; ` +
        "the logs of a failing test are printed with it at the end.\n"
    )
  }

  onTestModuleEnd(module: TestModule) {
    if (this.compact) process.stdout.write(`${moduleLine(module, this.root)}\n`)
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>) {
    this.modules = modules
  }

  // After the default reporter's own summary (it prints in this hook, and comes first in the list).
  onFinished(_files: unknown, errors: ReadonlyArray<unknown> = []) {
    const blocks = this.modules.flatMap((m) => failuresOf(m, this.root)).map((f) => formatFailure(f, this.root, this.maxLogLines))
    if (this.compact) {
      for (const error of errors) {
        const e = error as SerializedError
        blocks.push(formatFailure({ title: "an error outside any test", errors: [e], logs: [], rerun: "npx vitest run" }, this.root))
      }
    }
    if (blocks.length > 0) process.stdout.write(`\n${blocks.join("\n")}`)
  }
}
