/**
 * Many small collections in a Weaviate test instance, so that `resources/list` (one entry per
 * table, plus `weaviate://connections` and each connection's `meta` and `schema`) holds more than
 * one page of 50 items.
 */
import * as http from "node:http"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"

/** The name of the n-th collection (`Bulk000`, `Bulk001`, …). */
export const manyCollectionName = (n: number, prefix = "Bulk"): string => `${prefix}${String(n).padStart(3, "0")}`

const post = (w: Pick<WeaviateTestInstance, "url">, path: string, body: unknown) =>
  new Promise<{ status: number; text: string }>((resolve, reject) => {
    const payload = JSON.stringify(body)
    const request = http.request(new URL(path, w.url), {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }
    }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (c: Buffer) => chunks.push(c))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
      response.on("error", reject)
    })
    request.on("error", reject)
    request.end(payload)
  })

/**
 * Creates `count` collections named `{prefix}000…`, each with a `label` text and a `rank` int
 * property and one object. Plain HTTP, no key (the default test instance). Returns their names.
 */
export const loadManyCollections = async (
  w: Pick<WeaviateTestInstance, "url">,
  count: number,
  options: { readonly prefix?: string } = {}
): Promise<ReadonlyArray<string>> => {
  const names = Array.from({ length: count }, (_, n) => manyCollectionName(n, options.prefix))
  for (const name of names) {
    const created = await post(w, "/v1/schema", {
      class: name,
      vectorizer: "none",
      properties: [{ name: "label", dataType: ["text"] }, { name: "rank", dataType: ["int"] }]
    })
    if (created.status !== 200) throw new Error(`creating ${name}: ${created.status} ${created.text}`)
  }
  const objects = names.map((name, n) => ({ class: name, properties: { label: `${name} row`, rank: n } }))
  const batch = await post(w, "/v1/batch/objects", { objects })
  if (batch.status !== 200) throw new Error(`batch: ${batch.status} ${batch.text.slice(0, 300)}`)
  return names
}
