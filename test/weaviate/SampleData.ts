/**
 * The sample data set: four collections and about four thousand objects, loaded over the REST API
 * (schema + batch), so it works against any instance, with or without TLS and API keys.
 *  - Author  (200)   plain properties, no vectorizer
 *  - Article (2000)  vectorizer text2vec-transformers, nullState/propertyLength/timestamps indexed, arrays,
 *                    an object property and a cross-reference to Author
 *  - Product (1500)  vectorizer none with explicit 8-dimensional vectors, field tokenization, geo
 *  - Ticket  (2 x 150) multi-tenant (tenants "acme" and "globex")
 * Everything is generated from a fixed seed, so ids and values are the same on every run.
 */
import * as http from "node:http"
import * as https from "node:https"
import type { WeaviateTestInstance } from "./WeaviateServer.ts"

export interface SampleDataOptions {
  /** Bearer key to send (when the instance requires one) */
  readonly apiKey?: string
  /** scale factor for the row counts (default 1) */
  readonly scale?: number
}

export const SAMPLE_COUNTS = { Author: 200, Article: 2000, Product: 1500, Ticket: { acme: 150, globex: 150 } } as const

const mulberry32 = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = seed
  t = Math.imul(t ^ (t >>> 15), t | 1)
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** A deterministic UUID v4-shaped id for (namespace, n). */
export const sampleId = (namespace: number, n: number): string => {
  const hex = (namespace.toString(16).padStart(8, "0") + n.toString(16).padStart(24, "0")).slice(0, 32)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

const WORDS = (
  "vector search database hybrid query filter schema object tenant index token graph latency cosine " +
  "distance embedding cluster replica shard backup module batch cursor paging sort aggregate count " +
  "weaviate river mountain ocean forest desert city village harbour bridge castle garden library"
).split(" ")
const FIRST = ["Ada", "Alan", "Grace", "Edsger", "Barbara", "Donald", "Margaret", "Ken", "Radia", "Linus", "Frances", "John"]
const LAST = ["Lovelace", "Turing", "Hopper", "Dijkstra", "Liskov", "Knuth", "Hamilton", "Thompson", "Perlman", "Torvalds", "Allen", "Backus"]

const request = async (
  w: Pick<WeaviateTestInstance, "url" | "caPem">,
  apiKey: string | undefined,
  method: string,
  path: string,
  body: unknown
): Promise<{ status: number; text: string }> => {
  const url = new URL(path, w.url)
  const payload = JSON.stringify(body)
  const headers: Record<string, string | number> = { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }
  if (apiKey !== undefined) headers["authorization"] = `Bearer ${apiKey}`
  return new Promise((resolve, reject) => {
    const options = { method, headers, ...(w.caPem !== undefined ? { ca: w.caPem } : {}) }
    const req = (url.protocol === "https:" ? https : http).request(url, options, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(payload)
  })
}

export const SAMPLE_SCHEMA: ReadonlyArray<Record<string, unknown>> = [
  {
    class: "Author",
    description: "People who write articles",
    properties: [
      { name: "name", dataType: ["text"] },
      { name: "bio", dataType: ["text"] },
      { name: "born", dataType: ["date"] },
      { name: "active", dataType: ["boolean"] },
      { name: "rating", dataType: ["number"] }
    ]
  },
  {
    class: "Article",
    description: "Articles, vectorized by text2vec-transformers",
    vectorizer: "text2vec-transformers",
    invertedIndexConfig: { indexNullState: true, indexPropertyLength: true, indexTimestamps: true },
    properties: [
      { name: "title", dataType: ["text"] },
      { name: "body", dataType: ["text"] },
      { name: "wordCount", dataType: ["int"] },
      { name: "tags", dataType: ["text[]"] },
      { name: "scores", dataType: ["number[]"] },
      { name: "published", dataType: ["date"] },
      { name: "featured", dataType: ["boolean"] },
      { name: "meta", dataType: ["object"], nestedProperties: [{ name: "source", dataType: ["text"] }, { name: "views", dataType: ["int"] }] },
      { name: "author", dataType: ["Author"] }
    ]
  },
  {
    class: "Product",
    description: "Products with explicit vectors",
    vectorizer: "none",
    properties: [
      { name: "name", dataType: ["text"] },
      { name: "sku", dataType: ["text"], tokenization: "field" },
      { name: "category", dataType: ["text"], tokenization: "field" },
      { name: "price", dataType: ["number"] },
      { name: "stock", dataType: ["int"] },
      { name: "colors", dataType: ["text[]"] },
      { name: "location", dataType: ["geoCoordinates"] }
    ]
  },
  {
    class: "Ticket",
    description: "Support tickets, one tenant per customer",
    multiTenancyConfig: { enabled: true },
    properties: [
      { name: "subject", dataType: ["text"] },
      { name: "status", dataType: ["text"], tokenization: "field" },
      { name: "priority", dataType: ["int"] }
    ]
  }
]

/** Builds the sample objects (deterministic). */
export const sampleObjects = (scale = 1): Array<Record<string, unknown>> => {
  const rnd = mulberry32(42)
  const pick = <T>(xs: ReadonlyArray<T>): T => xs[Math.floor(rnd() * xs.length)]!
  const words = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(" ")
  const date = (fromYear: number, span: number) =>
    new Date(Date.UTC(fromYear + Math.floor(rnd() * span), Math.floor(rnd() * 12), 1 + Math.floor(rnd() * 28), Math.floor(rnd() * 24))).toISOString().replace(".000Z", "Z")
  const n = (x: number) => Math.max(1, Math.round(x * scale))
  const out: Array<Record<string, unknown>> = []
  const authors = n(SAMPLE_COUNTS.Author)
  for (let i = 0; i < authors; i++) {
    out.push({
      class: "Author",
      id: sampleId(1, i),
      properties: {
        name: `${pick(FIRST)} ${pick(LAST)}`,
        bio: words(12),
        born: date(1940, 60),
        active: rnd() < 0.7,
        rating: Math.round(rnd() * 50) / 10
      }
    })
  }
  for (let i = 0; i < n(SAMPLE_COUNTS.Article); i++) {
    const props: Record<string, unknown> = {
      title: `${words(3)} ${i}`,
      wordCount: 100 + Math.floor(rnd() * 4900),
      tags: Array.from({ length: Math.floor(rnd() * 4) }, () => pick(WORDS)),
      scores: [Math.round(rnd() * 100) / 100, Math.round(rnd() * 100) / 100],
      published: date(2015, 10),
      featured: rnd() < 0.1,
      meta: { source: pick(["web", "print", "newsletter"]), views: Math.floor(rnd() * 100000) },
      author: [{ beacon: `weaviate://localhost/Author/${sampleId(1, Math.floor(rnd() * authors))}` }]
    }
    if (i % 10 !== 0) props["body"] = words(40) // every tenth article has no body (IsNull)
    out.push({ class: "Article", id: sampleId(2, i), properties: props })
  }
  for (let i = 0; i < n(SAMPLE_COUNTS.Product); i++) {
    out.push({
      class: "Product",
      id: sampleId(3, i),
      properties: {
        name: `${pick(["Red", "Blue", "Green", "Black", "White"])} ${pick(["chair", "table", "lamp", "shelf", "desk", "sofa"])} ${i}`,
        sku: `SKU-${String(i).padStart(6, "0")}`,
        category: pick(["Furniture", "Lighting", "Office", "Outdoor"]),
        price: Math.round(rnd() * 100000) / 100,
        stock: Math.floor(rnd() * 500),
        colors: Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => pick(["red", "blue", "green", "black", "white"])),
        location: { latitude: Math.round((rnd() * 180 - 90) * 1e4) / 1e4, longitude: Math.round((rnd() * 360 - 180) * 1e4) / 1e4 }
      },
      vector: Array.from({ length: 8 }, () => Math.round((rnd() * 2 - 1) * 1000) / 1000)
    })
  }
  for (const [t, tenant] of [[0, "acme"], [1, "globex"]] as const) {
    for (let i = 0; i < n(SAMPLE_COUNTS.Ticket[tenant]); i++) {
      out.push({
        class: "Ticket",
        id: sampleId(4 + t, i),
        tenant,
        properties: { subject: words(5), status: pick(["open", "pending", "closed"]), priority: 1 + Math.floor(rnd() * 5) }
      })
    }
  }
  return out
}

/** Creates the sample schema (classes that already exist are kept) and loads the objects. */
export const loadSampleData = async (
  w: Pick<WeaviateTestInstance, "url" | "caPem">,
  options: SampleDataOptions = {}
): Promise<{ readonly objects: number }> => {
  for (const cls of SAMPLE_SCHEMA) {
    const r = await request(w, options.apiKey, "POST", "/v1/schema", cls)
    if (r.status !== 200 && !r.text.includes("already exists")) throw new Error(`creating ${String(cls["class"])}: ${r.status} ${r.text}`)
  }
  const t = await request(w, options.apiKey, "POST", "/v1/schema/Ticket/tenants", [{ name: "acme" }, { name: "globex" }])
  if (t.status !== 200) throw new Error(`creating tenants: ${t.status} ${t.text}`)
  const objects = sampleObjects(options.scale)
  // One class per batch, in schema order: Weaviate checks that a reference's target exists, and the
  // objects of one batch are written concurrently, so the authors must be in before the articles.
  const batches: Array<Array<Record<string, unknown>>> = []
  for (const o of objects) {
    const last = batches.at(-1)
    if (last !== undefined && last.length < 500 && last[0]!["class"] === o["class"]) last.push(o)
    else batches.push([o])
  }
  for (const batch of batches) {
    const r = await request(w, options.apiKey, "POST", "/v1/batch/objects", { objects: batch })
    if (r.status !== 200 || r.text.includes('"FAILED"')) throw new Error(`batch import: ${r.status} ${failures(r.text)}`)
  }
  return { objects: objects.length }
}

/** The errors of a batch answer's failed objects (or the start of the answer when it is not a batch answer). */
const failures = (text: string): string => {
  try {
    const items = JSON.parse(text) as Array<{ id?: string; result?: { status?: string; errors?: unknown } }>
    return JSON.stringify(items.filter((i) => i.result?.status === "FAILED").slice(0, 3).map((i) => ({ id: i.id, errors: i.result?.errors })))
  } catch {
    return text.slice(0, 500)
  }
}
