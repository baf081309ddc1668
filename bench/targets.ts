/**
 * `npm run bench:targets [RESULTS]`: the targets table (`bench/targets.json`) for a results file
 * (default `bench/results.json`, the last measurement of each row), without measuring anything. Exits
 * 3 when a standing target is missed there, as a scenario that missed it does.
 */
import * as NodeFs from "node:fs"
import { MISSED_EXIT, RESULTS, type Row } from "./support/Results.ts"
import * as Targets from "./support/Targets.ts"

const file = process.argv[2] ?? RESULTS
const rows = JSON.parse(NodeFs.readFileSync(file, "utf8")) as ReadonlyArray<Row>
if (!Array.isArray(rows)) throw new Error(`${file} is not an array of results`)
if (!Targets.report(rows, { all: true })) process.exitCode = MISSED_EXIT
