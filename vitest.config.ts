import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    reporters: ["default", "./test/support/SummaryReporter.ts"],
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Real HTTP servers on loopback: keep parallelism modest on 2-core CI machines.
    maxWorkers: 2,
    minWorkers: 1
  }
})
