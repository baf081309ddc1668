/**
 * The `aggregate_table` prompt and the completion of its arguments, against the real Weaviate with
 * the sample data: `group_by` completes to the properties Weaviate can group by, `metric` to
 * `property:metric` with the metrics of each property's data type.
 */
import Ajv2020 from "ajv/dist/2020.js"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { ToolEnv } from "../../../src/Catalogue/Tools/ConnectionGate.ts"
import { all as allTools } from "../../../src/Catalogue/Tools/ToolsLive.ts"
import { Completions, type PromptResult, Prompts } from "../../../src/Mcp/Catalogue.ts"
import { as, type Catalogue, codeOf, requestContext, startCatalogue, token } from "../Resources/support.ts"

let cat: Catalogue
beforeAll(async () => {
  cat = await startCatalogue()
})
afterAll(async () => {
  await cat.dispose()
})

const PROMPT = { type: "ref/prompt" as const, name: "aggregate_table" }
const complete = (name: string, value: string, context: Record<string, string>) =>
  cat.runtime.runPromise(
    Effect.flatMap(Completions, (c) => c.complete({ ref: PROMPT, argument: { name, value }, context })).pipe(
      as(token(), requestContext({ method: "completion/complete" }))
    )
  )
const get = async (args: Record<string, string>): Promise<PromptResult> => {
  const outcome = await cat.runtime.runPromise(Effect.flatMap(Prompts, (p) => p.get("aggregate_table", args)).pipe(as(token(), requestContext({ method: "prompts/get" }))))
  if (outcome._tag !== "Complete") throw new Error(`expected complete, got ${outcome._tag}`)
  return outcome.value
}
const refusal = async (args: Record<string, string>) => {
  const run = () => cat.runtime.runPromise(Effect.either(Effect.flatMap(Prompts, (p) => p.get("aggregate_table", args)).pipe(as(token(), requestContext({ method: "prompts/get" })))))
  const either = await run()
  return { code: await codeOf(run()), message: either._tag === "Left" ? (either.left as { message: string }).message : "" }
}

describe("completion of aggregate's arguments", () => {
  it("metric completes property:metric with the metrics of each property's type", async () => {
    const context = { connection_id: cat.ids.local, table: "Product" }
    assert.deepStrictEqual((await complete("metric", "price:m", context)).values, ["price:mean", "price:median", "price:mode", "price:minimum", "price:maximum"])
    assert.deepStrictEqual((await complete("metric", "category", context)).values, ["category:count", "category:topOccurrences"])
    // geoCoordinates has no metric: nothing to offer.
    assert.deepStrictEqual((await complete("metric", "location", context)).values, [])
    const authors = { connection_id: cat.ids.local, table: "Author" }
    assert.deepStrictEqual((await complete("metric", "active:", authors)).values, [
      "active:count",
      "active:totalTrue",
      "active:totalFalse",
      "active:percentageTrue",
      "active:percentageFalse"
    ])
    assert.deepStrictEqual((await complete("metric", "born:", authors)).values, ["born:count", "born:minimum", "born:maximum", "born:median", "born:mode"])
  })

  it("group_by completes only the properties Weaviate can group by", async () => {
    const result = await complete("group_by", "", { connection_id: cat.ids.local, table: "Product" })
    assert.deepStrictEqual(result.values, ["name", "sku", "category", "price", "stock", "colors"])
    assert.deepStrictEqual((await complete("group_by", "", { connection_id: cat.ids.local, table: "Article" })).values.includes("author"), false)
  })

  it("without a table, or on a blocked connection, nothing", async () => {
    assert.deepStrictEqual((await complete("metric", "", { connection_id: cat.ids.local })).values, [])
    assert.deepStrictEqual((await complete("metric", "", { connection_id: cat.ids.blocked, table: "Product" })).values, [])
  })
})

describe("the aggregate_table prompt", () => {
  it("lists each property's metrics and the properties to group by, and a call that the aggregate tool accepts", async () => {
    const result = await get({ connection_id: cat.ids.local, table: "Product", question: "average price per category", group_by: "category", metric: "price:mean" })
    const text = (result.messages[0]!.content as { text: string }).text
    assert.include(text, "> average price per category")
    assert.include(text, "- price (number): count, sum, mean, median, mode, minimum, maximum")
    assert.include(text, "- category (text")
    assert.notInclude(text, "- location (")
    const call = JSON.parse(text.slice(text.indexOf("{\"name\":\"aggregate\"")))
    assert.deepStrictEqual(call.arguments, {
      connection_id: cat.ids.local,
      table: "Product",
      group_by: "category",
      metrics: [{ property: "price", metric: "mean" }]
    })
    const tool = allTools({} as ToolEnv).find((t) => t.descriptor.name === "aggregate")!
    const validate = new Ajv2020.default({ strict: false }).compile(tool.descriptor.inputSchema)
    assert.isTrue(validate(call.arguments), JSON.stringify(validate.errors))
  })

  it("a metric that does not fit, or a group_by Weaviate cannot group by, is InvalidParams with the reason", async () => {
    assert.deepStrictEqual(await refusal({ connection_id: cat.ids.local, table: "Product", metric: "category:mean" }), {
      code: -32602,
      message: "mean does not fit category, which is text; its metrics are count, topOccurrences"
    })
    const group = await refusal({ connection_id: cat.ids.local, table: "Product", group_by: "location" })
    assert.strictEqual(group.code, -32602)
    assert.include(group.message, "Weaviate cannot group by location")
    assert.deepStrictEqual(await refusal({ connection_id: cat.ids.local, table: "Product", metric: "price" }), { code: -32602, message: "\"price\" is not property:metric" })
  })

  it("a multi-tenant collection: the call names a tenant to fill in", async () => {
    const text = ((await get({ connection_id: cat.ids.local, table: "Ticket" })).messages[0]!.content as { text: string }).text
    assert.include(text, "multi-tenant: pass tenant")
    assert.include(text, "\"tenant\":\"<tenant>\"")
  })
})
