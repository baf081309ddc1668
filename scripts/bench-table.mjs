// Rewrites the "Latest results" table of docs/benchmarks.md from bench/results.json (after a full
// `npm run bench`): `node scripts/bench-table.mjs`. One row per result, in the file's order.
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

const root = NodePath.join(import.meta.dirname, "..")
const rows = JSON.parse(NodeFs.readFileSync(NodePath.join(root, "bench", "results.json"), "utf8"))
const page = NodePath.join(root, "docs", "benchmarks.md")
const text = NodeFs.readFileSync(page, "utf8")

const number = (n) => (Math.abs(n) >= 1000 ? Math.round(n).toLocaleString("en-US") : String(Number(n.toPrecision(3))))
const HEAD = "| scenario | metric | ours | baseline | ratio |\n|---|---|---|---|---|\n"
const table = HEAD + rows.map((r) =>
  `| \`${r.scenario}\` | ${r.metric} | ${number(r.ours)} ${r.unit} | ${r.baselineName} ${number(r.baseline)} ${r.unit} | ${number(r.ratio)}× |`
).join("\n") + "\n"

const start = text.indexOf(HEAD)
if (start < 0) throw new Error("docs/benchmarks.md has no results table")
let end = start + HEAD.length
while (end < text.length && text.startsWith("| ", end)) end = text.indexOf("\n", end) + 1
NodeFs.writeFileSync(page, text.slice(0, start) + table + text.slice(end))
console.log(`docs/benchmarks.md: ${rows.length} rows`)
