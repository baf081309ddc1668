/**
 * Prints the plain closing line `N passed, N failed, N skipped` after vitest's own report, so any
 * reader of the log (CI included) can count the tests.
 */
import type { Reporter, TestModule } from "vitest/node"

export default class SummaryReporter implements Reporter {
  private line = ""

  onTestRunEnd(modules: ReadonlyArray<TestModule>) {
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === "passed") passed++
        else if (state === "failed") failed++
        else skipped++
      }
    }
    this.line = `${passed} passed, ${failed} failed, ${skipped} skipped`
    // The default reporter prints its summary after this hook: print ours last, when vitest exits.
    process.once("exit", () => process.stdout.write(`\n${this.line}\n`))
  }
}
