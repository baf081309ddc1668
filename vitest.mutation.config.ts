// The vitest configuration of mutation runs (scripts/mutation.mjs): only the test files related to
// the module under mutation (passed in WEAVIATE_MCP_MUTATION_TESTS), no CLI bundle build (none of
// those tests runs the binary) and no summary reporter (Stryker brings its own), one worker.
import { defineConfig } from "vitest/config"

const tests = (process.env.WEAVIATE_MCP_MUTATION_TESTS ?? "").split(",").filter((file) => file.length > 0)
if (tests.length === 0) throw new Error("vitest.mutation.config.ts is run by `npm run test:mutation`, which names the tests")

export default defineConfig({
  test: {
    include: tests,
    pool: "forks",
    testTimeout: 30_000,
    hookTimeout: 30_000,
    maxWorkers: 1,
    minWorkers: 1
  }
})
