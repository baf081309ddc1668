/**
 * Prints the Weaviate under test and its version, then the plain closing line
 * `N passed, N failed, N skipped` after vitest's own report, so any
 * reader of the log (CI included) can count the tests. A test file that failed to load (or failed
 * outside its tests, in a hook) and every unhandled error count as failures: a run with any failure
 * never prints `0 failed`.
 */
import type { Reporter, TestModule } from "vitest/node"
import { currentTarget } from "../weaviate/Target.ts"

/** The line naming the Weaviate the run tested against (chosen by test/globalSetup.ts). */
export const weaviateUnderTest = (): string => currentTarget().label

/** The closing line for a finished run: tests by state, plus failed modules and unhandled errors. */
export const summarise = (
  modules: ReadonlyArray<TestModule>,
  unhandledErrors: number
): string => {
  let passed = 0
  let failed = unhandledErrors
  let skipped = 0
  for (const module of modules) {
    let moduleFailedTests = 0
    for (const test of module.children.allTests()) {
      const state = test.result().state
      if (state === "passed") passed++
      else if (state === "failed") (failed++, moduleFailedTests++)
      else skipped++
    }
    // A module that failed with no failed test of its own failed to load, or in a hook.
    if (module.state() === "failed" && moduleFailedTests === 0) failed++
  }
  return `${passed} passed, ${failed} failed, ${skipped} skipped`
}

export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>) {
    const line = summarise(modules, unhandledErrors.length)
    const target = weaviateUnderTest()
    // The default reporter prints its summary after this hook: print ours last, when vitest exits.
    process.once("exit", () => process.stdout.write(`\nWeaviate under test: ${target}\n${line}\n`))
  }
}
