import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { APPROVE_STATEMENT } from "../../../src/Approval/ApprovalPayload.ts"
import { type PromptResult, Prompts } from "../../../src/Mcp/Catalogue.ts"
import type { Principal } from "../../../src/Auth/Principal.ts"
import { as, type Catalogue, codeOf, requestContext, startCatalogue, token } from "../Resources/support.ts"

let cat: Catalogue
beforeAll(async () => {
  cat = await startCatalogue()
})
afterAll(async () => {
  await cat.dispose()
})

const promptContext = (options: Parameters<typeof requestContext>[0] = {}) => requestContext({ method: "prompts/get", ...options })
const getOutcome = (principal: Principal, name: string, args: Record<string, string>, context = promptContext()) =>
  cat.runtime.runPromise(Effect.flatMap(Prompts, (p) => p.get(name, args)).pipe(as(principal, context)))
const get = async (name: string, args: Record<string, string>, principal = token()): Promise<PromptResult> => {
  const outcome = await getOutcome(principal, name, args)
  if (outcome._tag !== "Complete") throw new Error(`expected complete, got ${outcome._tag}`)
  return outcome.value
}
const textOf = (result: PromptResult) =>
  result.messages.map((m) => {
    const content = m.content as { type: string; text?: string; resource?: { text: string } }
    return content.type === "text" ? content.text! : content.resource!.text
  }).join("\n")
const getCode = (name: string, args: Record<string, string>, principal = token()) =>
  codeOf(cat.runtime.runPromise(Effect.either(Effect.flatMap(Prompts, (p) => p.get(name, args)).pipe(as(principal, promptContext())))))

describe("prompts/list", () => {
  it("the six prompts of the contract, aggregate_table and the two collection prompts, each with typed arguments, connection_id required", async () => {
    const all = await cat.runtime.runPromise(Effect.map(Prompts, (p) => p.all))
    assert.deepStrictEqual(all.map((p) => p.name), [
      "explain_schema",
      "explain_table",
      "question_to_graphql",
      "review_query",
      "data_quality_audit",
      "tune_hybrid_search",
      "aggregate_table",
      "design_collection",
      "plan_column"
    ])
    for (const prompt of all) {
      assert.strictEqual(prompt.arguments![0]!.name, "connection_id")
      assert.isTrue(prompt.arguments![0]!.required)
      assert.isTrue(prompt.arguments!.every((a) => (a.description ?? "").length > 0))
    }
  })
})

describe("each prompt is rendered from the live schema", () => {
  it("explain_schema names every collection and real columns, and embeds the schema resource", async () => {
    const result = await get("explain_schema", { connection_id: cat.ids.local })
    const text = textOf(result)
    for (const name of ["Author", "Article", "Product", "Ticket", "wordCount", "sku", "priority"]) assert.include(text, name)
    assert.include(text, "cross-reference to Author")
    const embedded = result.messages[1]!.content as { type: string; resource: { uri: string; mimeType: string } }
    assert.strictEqual(embedded.type, "resource")
    assert.strictEqual(embedded.resource.uri, `weaviate://connections/${cat.ids.local}/schema`)
  })
  it("explain_table shows the columns, their operators, the row count and sample rows", async () => {
    const text = textOf(await get("explain_table", { connection_id: cat.ids.local, table: "Product" }))
    assert.include(text, "- price: number; filterable")
    assert.match(text, /- sku: text; filterable, searchable \(tokenization field\).*filter operators: equals/)
    assert.include(text, "rows: 75")
    assert.include(text, "SKU-000000")
  })
  it("question_to_graphql embeds the question, the operators and the schema (one table when given)", async () => {
    const text = textOf(await get("question_to_graphql", { connection_id: cat.ids.local, question: "Which products cost more than 100?", table: "product" }))
    assert.include(text, "> Which products cost more than 100?")
    assert.include(text, "### Product")
    assert.include(text, "GreaterThan")
    assert.notInclude(text, "### Article")
  })
  it("review_query checks a GraphQL query server-side and shows the collections it names", async () => {
    const text = textOf(await get("review_query", { connection_id: cat.ids.local, query: "{ Get { Article(limit: 5) { title wordCount } } }" }))
    assert.include(text, "A valid read-only GraphQL query")
    assert.include(text, "### Article")
    assert.include(text, "- wordCount: int")
    assert.notInclude(text, "### Product")
  })
  it("review_query classifies a REST line: a destructive one points at confirm_destructive_operation", async () => {
    const text = textOf(await get("review_query", { connection_id: cat.ids.local, query: "DELETE /v1/schema/Article" }))
    assert.include(text, "confirm_destructive_operation")
    assert.include(text, "### Article")
  })
  it("review_query reports a query the server would refuse", async () => {
    const text = textOf(await get("review_query", { connection_id: cat.ids.local, query: "mutation { x }" }))
    assert.include(text, "The server would refuse it")
  })
  it("data_quality_audit shows the columns, the index flags that decide which checks work, and the focus column", async () => {
    const text = textOf(await get("data_quality_audit", { connection_id: cat.ids.local, table: "Article", column: "body" }))
    assert.include(text, "The null-state index is on")
    assert.include(text, "focus column: body: text")
    assert.include(text, "- published: date")
    assert.include(text, "rows: 100")
  })
  it("tune_hybrid_search names the vectorizer and the keyword-searchable properties", async () => {
    const text = textOf(await get("tune_hybrid_search", { connection_id: cat.ids.local, table: "Article", query: "river bridge", property: "title" }))
    assert.include(text, "Vectorizer text2vec-transformers")
    assert.include(text, "title (tokenization word)")
    assert.include(text, "Weight the property title")
    const none = textOf(await get("tune_hybrid_search", { connection_id: cat.ids.local, table: "Product", query: "red chair" }))
    assert.include(none, "No vectorizer")
    assert.include(none, "sku (tokenization field)")
  })
  it("a connection can be named by its name as well as its id", async () => {
    assert.include(textOf(await get("explain_table", { connection_id: "local", table: "Author" })), "### Author")
  })
})

describe("prompts/get errors", () => {
  it("an unknown prompt is -32602", async () => {
    assert.strictEqual(await getCode("explain_everything", { connection_id: cat.ids.local }), -32602)
  })
  it("a missing required argument is -32602 (also when empty)", async () => {
    assert.strictEqual(await getCode("explain_table", { connection_id: cat.ids.local }), -32602)
    assert.strictEqual(await getCode("question_to_graphql", { connection_id: cat.ids.local, question: " " }), -32602)
    assert.strictEqual(await getCode("explain_schema", {}), -32602)
  })
  it("an unknown connection, table or column is -32602", async () => {
    assert.strictEqual(await getCode("explain_schema", { connection_id: "nope" }), -32602)
    assert.strictEqual(await getCode("explain_table", { connection_id: cat.ids.local, table: "Nope" }), -32602)
    assert.strictEqual(await getCode("data_quality_audit", { connection_id: cat.ids.local, table: "Article", column: "nope" }), -32602)
  })
  it("a blocked connection is -33007", async () => {
    assert.strictEqual(await getCode("explain_schema", { connection_id: cat.ids.blocked }), -33007)
  })
  it("a connection outside the allowlist is -33007", async () => {
    assert.strictEqual(await getCode("explain_schema", { connection_id: cat.ids.local }, token({ connections: [cat.ids.readonly] })), -33007)
  })
  it("a connection that is down is -32603 with the driver's message", async () => {
    assert.strictEqual(await getCode("explain_schema", { connection_id: cat.ids.down }), -32603)
  })
})

describe("prompts/get: first access", () => {
  it("the first get on a connection answers input_required to an elicitation client; the accepted repeat renders", async () => {
    const principal = token()
    const args = { connection_id: cat.ids.local, table: "Author" }
    const first = await getOutcome(principal, "explain_table", args, promptContext({ elicitation: true }))
    assert.strictEqual(first._tag, "InputRequired")
    if (first._tag !== "InputRequired") return
    assert.property(first.inputRequests, APPROVE_STATEMENT)
    const repeat = await getOutcome(principal, "explain_table", args, promptContext({
      elicitation: true,
      requestState: first.requestState,
      inputResponses: { [APPROVE_STATEMENT]: { action: "accept", content: { approved: true } } }
    }))
    assert.strictEqual(repeat._tag, "Complete")
  })
  it("a state issued for other arguments is refused (-32602)", async () => {
    const principal = token()
    const first = await getOutcome(principal, "explain_table", { connection_id: cat.ids.local, table: "Author" }, promptContext({ elicitation: true }))
    if (first._tag !== "InputRequired") throw new Error("expected input_required")
    const code = await codeOf(cat.runtime.runPromise(Effect.either(
      Effect.flatMap(Prompts, (p) => p.get("explain_table", { connection_id: cat.ids.local, table: "Article" })).pipe(as(
        principal,
        promptContext({
          elicitation: true,
          requestState: first.requestState,
          inputResponses: { [APPROVE_STATEMENT]: { action: "accept", content: { approved: true } } }
        })
      ))
    )))
    assert.strictEqual(code, -32602)
  })
})
