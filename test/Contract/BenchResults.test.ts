/**
 * `bench/results.json` as `spec/README.md` (Command-line details) describes it, for the scenarios built
 * so far (`tools/list`, `cancel`): an array of `{scenario, metric, unit, ours, baseline, baselineName,
 * ratio}`, with `baselineName` naming what was measured beside us. The file is committed: it records
 * the last measurement (`npm run bench` rewrites it).
 */
import { assert, describe, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

const RESULTS = NodePath.resolve(import.meta.dirname, "../../bench/results.json")
// The contract's scenarios and baselines, plus the comparison with Weaviate's own MCP server, which
// adds the scenarios vector_search and insert_rows and the baseline weaviate-mcp-server; the stdio
// bridge's benchmark the scenario bridge and the baselines node-start and daemon-http; the bulk
// benchmark the scenarios export and import and the baseline weaviate-client (gRPC); the scale benchmark
// the scenario scale and the baselines smallest-size and budget; the query history's the scenario history
// and the baselines history-off, better-sqlite3, jsonl and history-at-max.
const SCENARIOS = ["tools/list", "execute_query", "browse", "cancel", "startup", "memory", "vector_search", "insert_rows", "bridge", "export", "import", "scale", "history"]
const MEMBERS = ["baseline", "baselineName", "metric", "ours", "ratio", "scenario", "unit"]
const BASELINES = [
  "sdk-v2", "node:http", "direct-graphql", "weaviate-ts-client", "weaviate-mcp-server", "lean-node", "node-start", "daemon-http", "weaviate-client",
  "minimal-bridge", "idle-settled", "first-100k-settled", "smallest-size", "budget", "history-off", "better-sqlite3", "jsonl", "history-at-max"
]

describe("Contract: bench/results.json", () => {
  it("bench/results.json is an array of {scenario, metric, unit, ours, baseline, baselineName, ratio}; scenario and baselineName among the README's; ratio = ours / baseline", () => {
    const rows: unknown = JSON.parse(NodeFs.readFileSync(RESULTS, "utf8"))
    assert.isArray(rows)
    const list = rows as Array<Record<string, unknown>>
    assert.isAbove(list.length, 0)
    for (const row of list) {
      const label = JSON.stringify(row)
      assert.deepStrictEqual(Object.keys(row).sort(), MEMBERS, label)
      assert.include(SCENARIOS, row.scenario, label)
      assert.include(BASELINES, row.baselineName, label)
      for (const key of ["metric", "unit", "baselineName"]) assert.isString(row[key], `${key} of ${label}`)
      for (const key of ["ours", "baseline", "ratio"]) assert.isTrue(Number.isFinite(row[key]), `${key} of ${label}`)
      const expected = (row.ours as number) / (row.baseline as number)
      assert.isAtMost(Math.abs((row.ratio as number) - expected), 0.0005 + 1e-9, `ratio of ${label}`)
    }
  })

  it("bench/results.json holds every scenario of npm run bench, each against the baseline measured beside it", () => {
    const rows = JSON.parse(NodeFs.readFileSync(RESULTS, "utf8")) as Array<{ scenario: string; metric: string; baselineName: string }>
    assert.includeMembers(rows.filter((row) => row.scenario === "tools/list").map((row) => row.baselineName), ["node:http", "sdk-v2"])
    assert.includeMembers(rows.filter((row) => row.scenario === "cancel").map((row) => row.metric), ["p50", "p99"])
    const baselineOf = (scenario: string) => rows.filter((row) => row.scenario === scenario).map((row) => row.baselineName)
    assert.include(baselineOf("execute_query"), "direct-graphql")
    assert.include(baselineOf("browse"), "weaviate-ts-client")
    assert.include(baselineOf("startup"), "node:http")
    assert.include(baselineOf("memory"), "node:http")
    assert.include(baselineOf("vector_search"), "weaviate-mcp-server")
    assert.include(baselineOf("insert_rows"), "weaviate-mcp-server")
    assert.includeMembers(baselineOf("bridge"), ["node-start", "daemon-http", "minimal-bridge"])
    assert.includeMembers(baselineOf("export"), ["weaviate-ts-client", "weaviate-client"])
    assert.includeMembers(baselineOf("import"), ["weaviate-ts-client", "weaviate-client"])
  })
})
