// `npm run test:mutation [module...]`: mutation-tests the guard modules with StrykerJS, each against
// its own related test files, one worker (it takes minutes per module on 2 cores). A development
// tool, not part of `npm test` or CI. Reports (HTML, JSON) and Stryker's sandbox live outside the
// repository, under ~/.cache/weaviate-mcp/mutation/<module>/ (or $WEAVIATE_MCP_MUTATION_DIR).
//
// Usage: npm run test:mutation                 every module, one after another
//        npm run test:mutation RequestState    one module (names below, case-insensitive)
//        npm run test:mutation -- --list       the modules and their tests
//        npm run test:mutation -- --incremental X
//                                              reuse the last run's results of unchanged mutants and
//                                              tests: faster, but Stryker 9 also reuses the survivors
//                                              of static mutants (module-level constants) after the
//                                              tests changed, so the scores reported are from full runs
import { Stryker } from "@stryker-mutator/core"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

/**
 * The lines of `file` from the first line matching `from` through the first line after it matching
 * `to`, as a Stryker `mutate` range: a part of a module, found by its text so edits above it do not
 * shift it.
 */
const linesOf = (file, from, to) => {
  const lines = NodeFs.readFileSync(NodePath.join(root, file), "utf8").split("\n")
  const start = lines.findIndex((line) => from.test(line))
  const end = start < 0 ? -1 : lines.findIndex((line, i) => i > start && to.test(line))
  if (start < 0 || end < 0) throw new Error(`mutation: ${file} no longer has the lines ${from} .. ${to}`)
  return `${file}:${start + 1}-${end + 1}`
}

/** One configuration per guard module: what to mutate and the tests that are meant to catch it. */
const modules = {
  RequestState: {
    mutate: () => ["src/Approval/RequestState.ts"],
    tests: ["test/Approval/RequestState.test.ts"]
  },
  HeaderValidation: {
    mutate: () => ["src/Mcp/HeaderValidation.ts"],
    // The hostile-caller bounds (header count, search limits) are tested in the Stall suite.
    tests: ["test/Mcp/HeaderValidation.unit.test.ts", "test/Mcp/HeaderValidation.test.ts", "test/Reliability/Stall.test.ts"]
  },
  RestConsole: {
    mutate: () => ["src/Driver/RestConsole.ts"],
    // The canonical parsing and the destructive-route classification are tested in the bypass suite.
    tests: ["test/Driver/RestConsole.test.ts", "test/Driver/GraphqlEditorAndConsole.test.ts", "test/Reliability/RestConsoleBypass.test.ts"]
  },
  Authenticator: {
    mutate: () => ["src/Auth/Authenticator.ts"],
    // The lockout rules and RFC 6750 parsing over HTTP are tested in these two as well.
    tests: ["test/Auth/Authenticator.parse.test.ts", "test/Auth/Authenticator.test.ts", "test/Auth/AuthLockout.test.ts", "test/Reliability/SmallerHoles.test.ts"]
  },
  // The verify path only: token parsing, the digest and its constant-time comparison, `verify`.
  TokenStore: {
    mutate: () => [
      linesOf("src/Auth/TokenStore.ts", /^const TOKEN_PATTERN/, /^const DUMMY_DIGEST/),
      linesOf("src/Auth/TokenStore.ts", /const verify = /, /^\s+\}\)$/)
    ],
    tests: ["test/Auth/TokenStore.test.ts", "test/Auth/TokenStore.constantTime.test.ts"]
  },
  FilterBuilder: {
    mutate: () => ["src/Driver/FilterBuilder.ts"],
    tests: ["test/Driver/FilterBuilder.test.ts"]
  }
}

const incremental = process.argv.includes("--incremental")
const args = process.argv.slice(2).filter((arg) => arg !== "--incremental")
if (args.includes("--list")) {
  for (const [name, config] of Object.entries(modules)) {
    console.log(`${name}: mutates ${config.mutate().join(", ")}; tests ${config.tests.join(", ")}`)
  }
  process.exit(0)
}
const wanted = args.length === 0 ? Object.keys(modules) : args.map((arg) => {
  const name = Object.keys(modules).find((key) => key.toLowerCase() === NodePath.basename(arg, ".ts").toLowerCase())
  if (name === undefined) {
    console.error(`mutation: unknown module "${arg}"; one of ${Object.keys(modules).join(", ")}`)
    process.exit(2)
  }
  return name
})

const outDir = process.env.WEAVIATE_MCP_MUTATION_DIR ?? NodePath.join(NodeOs.homedir(), ".cache", "weaviate-mcp", "mutation")
const scores = []
for (const name of wanted) {
  const config = modules[name]
  const dir = NodePath.join(outDir, name)
  NodeFs.mkdirSync(dir, { recursive: true })
  // Read by vitest.mutation.config.ts, in Stryker's sandbox and in each test runner it starts.
  process.env.WEAVIATE_MCP_MUTATION_TESTS = config.tests.join(",")
  console.log(`\n== ${name}: ${config.mutate().join(", ")} against ${config.tests.join(", ")}\n`)
  const results = await new Stryker({
    mutate: config.mutate(),
    testRunner: "vitest",
    plugins: ["@stryker-mutator/vitest-runner"],
    vitest: { configFile: "vitest.mutation.config.ts", related: false },
    coverageAnalysis: "perTest",
    concurrency: 1,
    reporters: ["clear-text", "progress", "html", "json"],
    htmlReporter: { fileName: NodePath.join(dir, "index.html") },
    jsonReporter: { fileName: NodePath.join(dir, "mutation.json") },
    tempDirName: NodePath.join(dir, "sandbox"),
    cleanTempDir: "always",
    // Only what the tests need is copied into the sandbox.
    ignorePatterns: ["/bench", "/dist", "/docs", "/coverage", "/.tmp"],
    timeoutMS: 10_000,
    incremental,
    incrementalFile: NodePath.join(dir, "incremental.json"),
    thresholds: { high: 90, low: 80, break: null }
  }).runMutationTest()
  const count = (status) => results.filter((mutant) => mutant.status === status).length
  const killed = count("Killed") + count("Timeout")
  const survived = count("Survived")
  const noCoverage = count("NoCoverage")
  const valid = killed + survived + noCoverage
  scores.push({ name, mutants: results.length, score: valid === 0 ? 0 : (100 * killed) / valid, survived, noCoverage })
  console.log(`reports: ${dir}`)
}

console.log("\n| module | mutants | score | survived | no coverage |\n|---|---|---|---|---|")
for (const s of scores) console.log(`| ${s.name} | ${s.mutants} | ${s.score.toFixed(1)}% | ${s.survived} | ${s.noCoverage} |`)
