import { startTestWeaviate } from "./TestWeaviate.ts"
import { loadSampleData } from "./SampleData.ts"
process.env["WEAVIATE_MCP_TEST_TARGET"] = JSON.stringify({ kind: "real", version: "1.39.0", label: "x" })
const w = await startTestWeaviate()
await loadSampleData(w, { scale: 0.05 })
for (let i = 0; i < 3; i++) console.log((await (await fetch(w.url + "/v1/schema")).json() as any).classes.map((c: any) => c.class))
const t0 = Date.now()
await Promise.all(Array.from({ length: 8 }, (_, k) => (async () => { for (let j = 0; j < 5; j++) await fetch(w.url + "/v1/schema", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ class: `Bulk${k}x${j}`, vectorizer: "none" }) }) })()))
console.log("40 classes concurrently", Date.now() - t0)
const t1 = Date.now()
for (let j = 0; j < 10; j++) await fetch(w.url + "/v1/schema", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ class: `Seq${j}`, vectorizer: "none" }) })
console.log("10 classes sequential", Date.now() - t1)
const t2 = Date.now(); await w.close(); console.log("reset+close", Date.now() - t2)
process.exit(0)
