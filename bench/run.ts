/**
 * `npm run bench`: every scenario, one after the other (each in its own process, as `npm run
 * bench:NAME` runs it alone), then one table of every standing target (`bench/targets.json`) with the
 * figure this run measured and whether it held. Exits non-zero when a standing target is missed, when
 * a scenario fails, or when a target's row was not measured by a scenario that ran. `npm run bench --
 * peers bridge` runs only those scenarios (and judges only their targets).
 */
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import { MISSED_EXIT, type Row } from "./support/Results.ts"
import * as Targets from "./support/Targets.ts"

/** Each scenario: its name (`npm run bench:NAME`), the scripts it runs, the scenarios its rows carry. */
export const SCENARIOS: ReadonlyArray<{
  readonly name: string
  readonly scripts: ReadonlyArray<string>
  readonly scenarios: ReadonlyArray<Row["scenario"]>
  /** Node flags the scenario's scripts need (as its `npm run bench:NAME` gives them). */
  readonly nodeArgs?: ReadonlyArray<string>
}> = [
  { name: "tools-list", scripts: ["tools-list.ts"], scenarios: ["tools/list"] },
  { name: "startup-memory", scripts: ["startup-memory.ts"], scenarios: ["startup", "memory"] },
  { name: "cancel", scripts: ["cancel.ts"], scenarios: ["cancel"] },
  { name: "browse", scripts: ["browse.ts"], scenarios: ["browse"] },
  { name: "peers", scripts: ["peers.ts"], scenarios: ["execute_query", "vector_search", "insert_rows"] },
  { name: "bridge", scripts: ["bridge.ts"], scenarios: ["bridge"] },
  { name: "bulk", scripts: ["bulk.ts", "bulk-memory.ts"], scenarios: ["export", "import"] },
  { name: "scale", scripts: ["scale.ts"], scenarios: ["scale"], nodeArgs: ["--expose-gc"] },
  { name: "history", scripts: ["history.ts"], scenarios: ["history"] }
]

/** A scenario's longest run before it is stopped (every loop of a benchmark is bounded; this bounds the whole). */
const SCENARIO_LIMIT_MS = 8 * 60_000

const runScript = (script: string, nodeArgs: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  new Promise<number>((resolve) => {
    const argv = [...nodeArgs, "--import", "tsx", NodePath.join(import.meta.dirname, script)]
    const child = NodeChildProcess.spawn(process.execPath, argv, { stdio: "inherit", env })
    const timer = setTimeout(() => {
      console.error(`bench: ${script} ran past ${SCENARIO_LIMIT_MS / 60_000} minutes; stopping it`)
      child.kill("SIGTERM")
    }, SCENARIO_LIMIT_MS)
    child.on("exit", (code, signal) => {
      clearTimeout(timer)
      resolve(code ?? (signal !== null ? 1 : 0))
    })
    child.on("error", () => {
      clearTimeout(timer)
      resolve(1)
    })
  })

const main = async () => {
  const wanted = process.argv.slice(2)
  const unknown = wanted.filter((w) => !SCENARIOS.some((s) => s.name === w))
  if (unknown.length > 0) {
    console.error(`bench: no scenario ${unknown.join(", ")}; the scenarios are ${SCENARIOS.map((s) => s.name).join(", ")}`)
    process.exitCode = 2
    return
  }
  const chosen = wanted.length === 0 ? SCENARIOS : SCENARIOS.filter((s) => wanted.includes(s.name))
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-bench-"))
  const rowsFile = NodePath.join(dir, "rows.jsonl")
  NodeFs.writeFileSync(rowsFile, "")
  const started = performance.now()
  const failed: Array<string> = []
  const times: Array<string> = []
  try {
    for (const scenario of chosen) {
      const t0 = performance.now()
      for (const script of scenario.scripts) {
        console.log(`\n===== bench:${scenario.name} (${script}) =====`)
        const code = await runScript(script, scenario.nodeArgs ?? [], { ...process.env, BENCH_RUN_ROWS: rowsFile })
        if (code !== 0 && code !== MISSED_EXIT) failed.push(`${scenario.name} (${script}, exit ${code})`)
      }
      times.push(`${scenario.name} ${((performance.now() - t0) / 1000).toFixed(0)} s`)
    }
    const rows = NodeFs.readFileSync(rowsFile, "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Row)
    const ran = new Set(chosen.flatMap((s) => s.scenarios))
    const targets = Targets.load().filter((t) => ran.has(t.scenario))
    console.log(`\n===== npm run bench: ${((performance.now() - started) / 60_000).toFixed(1)} min (${times.join(", ")}) =====`)
    const held = Targets.report(rows, { targets, all: true })
    const unmeasured = Targets.judge(targets, rows).filter((j) => j.verdict === "not run")
    if (unmeasured.length > 0) console.log(`NOT MEASURED (a scenario that ran wrote no such row): ${unmeasured.map((j) => j.target.name).join("; ")}`)
    if (failed.length > 0) console.log(`FAILED: ${failed.join("; ")}`)
    if (!held || failed.length > 0 || unmeasured.length > 0) process.exitCode = 1
  } finally {
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
