import { defineConfig } from "vitest/config"

// On CI (CI=true) one line per test file instead of the default reporter's progress: a passing run
// stays short enough to read (docs/testing.md, "Reading a test run").
const ci = process.env["CI"] !== undefined && process.env["CI"] !== "" && process.env["CI"] !== "0" && process.env["CI"] !== "false"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    // What the daemons and servers under test log (through the console) is kept on the test that
    // logged it and printed only if that test fails, by the readable reporter. `--silent=false` shows it all live.
    silent: true,
    reporters: [
      ...(ci ? [] : ["default" as const]),
      ["./test/support/ReadableReporter.ts", { compact: ci }],
      "./test/support/SummaryReporter.ts"
    ],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Real HTTP servers on loopback: keep parallelism modest on 2-core CI machines.
    maxWorkers: 2,
    minWorkers: 1
  }
})
