/**
 * `bench/results.json`: an array of `{scenario, metric, unit, ours, baseline, baselineName, ratio}`
 * (spec/README.md). Each benchmark replaces its own rows and keeps everyone else's. Beyond the contract's
 * scenarios and baselines, the comparison with Weaviate's own MCP server adds the scenarios
 * `vector_search` and `insert_rows` and the baseline `weaviate-mcp-server`; the stdio bridge's benchmark
 * adds the scenario `bridge` and the baselines `node-start` (bare `node -e ''`), `minimal-bridge` and `daemon-http`; the bulk
 * benchmark the scenarios `export` and `import` and the baseline `weaviate-client` (the gRPC client);
 * the memory benchmark measures the daemon against itself too: `idle-settled` (its own settled idle
 * RSS, for what a load leaves behind) and `first-100k-settled` (after the first of three loads, for growth);
 * the scale benchmark the scenario `scale` and the baselines `smallest-size` (each row's figure at the smallest
 * size measured, its `ours` at the largest) and `budget` (the stated bound: 1 request a call, 100 bytes a
 * tenant); the query history's the scenario `history` and the baselines `history-off` (`serve --history off`),
 * `better-sqlite3` (the same FTS5 query run directly), `jsonl` (the entries as JSON lines) and
 * `history-at-max` (the file's size at `maxEntries`).
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Targets from "./Targets.ts"

/** The exit code of a scenario that ran but missed a standing target (a failure to run is 1). */
export const MISSED_EXIT = 3

export const RESULTS = NodePath.join(import.meta.dirname, "..", "results.json")

export interface Row {
  readonly scenario: "tools/list" | "execute_query" | "browse" | "cancel" | "startup" | "memory" | "vector_search" | "insert_rows" | "bridge" | "export" | "import" | "scale" | "history"
  readonly metric: string
  readonly unit: string
  readonly ours: number
  readonly baseline: number
  readonly baselineName: "sdk-v2" | "node:http" | "direct-graphql" | "weaviate-ts-client" | "weaviate-mcp-server" | "lean-node" | "node-start" | "daemon-http" | "weaviate-client" | "minimal-bridge" | "idle-settled" | "first-100k-settled" | "smallest-size" | "budget"
    | "history-off" | "better-sqlite3" | "jsonl" | "history-at-max"
  readonly ratio: number
}

/**
 * Replaces the rows with the same scenario, metric and baseline; keeps every other row. Then judges
 * the rows against their standing targets (`Targets.report`): a missed one sets a non-zero exit code.
 * Under `npm run bench` (`bench/run.ts`, which names a file in `BENCH_RUN_ROWS`) the rows are also
 * appended there, for the run's closing table.
 */
export const merge = (rows: ReadonlyArray<Row>) => {
  const existing: unknown = NodeFs.existsSync(RESULTS) ? JSON.parse(NodeFs.readFileSync(RESULTS, "utf8")) : []
  if (!Array.isArray(existing)) throw new Error(`${RESULTS} is not an array of results; not overwriting it`)
  const replaced = (row: Partial<Row>) =>
    rows.some((r) => r.scenario === row.scenario && r.metric === row.metric && r.baselineName === row.baselineName)
  NodeFs.writeFileSync(RESULTS, `${JSON.stringify([...existing.filter((row) => !replaced(row)), ...rows], null, 2)}\n`)
  const runRows = process.env.BENCH_RUN_ROWS
  if (runRows !== undefined && runRows !== "") NodeFs.appendFileSync(runRows, rows.map((r) => `${JSON.stringify(r)}\n`).join(""))
  if (!Targets.report(rows) && (process.exitCode === undefined || process.exitCode === 0)) process.exitCode = MISSED_EXIT
}

/** The p-th percentile (nearest rank) of samples. */
export const percentile = (samples: ReadonlyArray<number>, p: number) => {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}
