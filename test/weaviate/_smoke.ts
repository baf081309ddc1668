import { startRealWeaviate } from "./RealWeaviate.ts"
import { startWeaviate } from "./WeaviateServer.ts"
const r = await startRealWeaviate({})
const c = await startWeaviate({})
for (const w of [r, c]) {
const post = (p: string, b: unknown) => fetch(w.url + p, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(b) }).then(async r => await r.json() as any)
await post("/v1/schema", { class: "Vec", vectorizer: "text2vec-transformers", properties: [{ name: "body", dataType: ["text"] }] })
await post("/v1/objects", { class: "Vec", id: "00000000-0000-4000-8000-000000000258", properties: { body: "rivers and mountains" } })
await post("/v1/objects", { class: "Vec", id: "00000000-0000-4000-8000-000000000259", properties: { body: "oceans and deserts" } })
const q = await post("/v1/graphql", { query: '{Get{Vec(nearText:{concepts:["rivers"]}){body _additional{distance vector}}}}' })
console.log(JSON.stringify(q).slice(0, 1500))
}
await r.stop(); process.exit(0)
