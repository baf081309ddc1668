/** Shared set-up of the driver tests: a temporary home, the driver runtime, sample collections. */
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import { driverLayer } from "../../src/Cli/DriverCli.ts"
import type { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import type { Driver } from "../../src/Driver/Driver.ts"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"
import * as TestHome from "../support/TestHome.ts"

export const tempHome = () => TestHome.tempDirSync("weaviate-mcp-driver-")

export const makeRuntime = (home: string) => ManagedRuntime.make(driverLayer(Option.some(home)))
export type DriverRuntime = ManagedRuntime.ManagedRuntime<Driver | ConnectionStore, never>

/** The failure of an effect (fails the test when it succeeds). */
export const failureOf = async <A, E>(runtime: DriverRuntime, effect: Effect.Effect<A, E, Driver | ConnectionStore>) => {
  const result = await runtime.runPromise(Effect.either(effect))
  if (result._tag === "Right") throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`)
  return result.left
}

const postWith = async (w: WeaviateTestInstance, path: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${w.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body)
  })
  if (response.status >= 300) throw new Error(`${path}: ${response.status} ${await response.text()}`)
  return response.json() as Promise<unknown>
}

export const uuidOf = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

/** `Article` with both optional indexes on, `Plain` without, and a few rows. */
export const loadArticles = async (w: WeaviateTestInstance, headers: Record<string, string> = {}) => {
  const post = (w: WeaviateTestInstance, path: string, body: unknown) => postWith(w, path, body, headers)
  await post(w, "/v1/schema", {
    class: "Article",
    vectorizer: "none",
    invertedIndexConfig: { indexNullState: true, indexPropertyLength: true },
    properties: [
      { name: "title", dataType: ["text"] },
      { name: "wordCount", dataType: ["int"] },
      { name: "price", dataType: ["number"] },
      { name: "published", dataType: ["date"] },
      { name: "tags", dataType: ["text[]"] },
      { name: "meta", dataType: ["object"], nestedProperties: [{ name: "source", dataType: ["text"] }] }
    ]
  })
  await post(w, "/v1/schema", { class: "Plain", vectorizer: "none", properties: [{ name: "title", dataType: ["text"] }] })
  const rows = [
    { title: "Hello world", wordCount: 10, price: 100, published: "2024-01-01T00:00:00Z", tags: ["news", "tech"], meta: { source: "a" } },
    { title: "Hello there", wordCount: 20, price: 200, published: "2024-02-01T00:00:00Z", tags: ["tech"] },
    { title: "Goodbye moon", wordCount: 30, price: 300, published: "2024-03-01T00:00:00Z", tags: [] },
    { title: "Weather report", wordCount: 40, price: 400.5 }
  ]
  await post(w, "/v1/batch/objects", {
    objects: rows.map((properties, i) => ({ class: "Article", id: uuidOf(i + 1), properties, vector: [i, 1, 0.5] }))
  })
  await post(w, "/v1/objects", { class: "Plain", id: uuidOf(100), properties: { title: "plain" } })
}

/** `Big`: `count` rows numbered by `n`. */
export const loadBig = async (w: WeaviateTestInstance, count: number) => {
  const post = postWith
  await post(w, "/v1/schema", { class: "Big", vectorizer: "none", properties: [{ name: "n", dataType: ["int"] }] })
  for (let start = 0; start < count; start += 2000) {
    const objects = Array.from({ length: Math.min(2000, count - start) }, (_, i) => ({
      class: "Big",
      id: uuidOf(10_000_000 + start + i),
      properties: { n: start + i }
    }))
    await post(w, "/v1/batch/objects", { objects })
  }
}
