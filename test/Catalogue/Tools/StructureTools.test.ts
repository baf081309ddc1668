/**
 * The structure tools against the real Weaviate with `text2vec-bigram`: `create_table`, `add_column`,
 * `update_table`, `drop_table`, each through its approvals (the client's form, the user's dialog,
 * Safe Mode), each refusal Weaviate would make given up front with its reason and nothing sent, the
 * approval text readable (one property a line), and our own writes seen by the next call at once.
 */
import { layer } from "@effect/vitest"
import { describe, expect } from "vitest"
import { dialogText } from "../../../src/Approval/DialogText.ts"
import {
  approved,
  type Harness,
  harnessLayer,
  inputRequired,
  protocolError,
  success,
  toolError,
  withHarness,
  writesTo
} from "./support.ts"
import { fresh } from "./StructureSupport.ts"

const MODULES = ["text2vec-bigram"]

const ticketProperties = [
  { name: "title", dataType: "text", description: "What went wrong", tokenization: "word" },
  { name: "status", dataType: "text", tokenization: "field", indexSearchable: false },
  { name: "price", dataType: "number", indexRangeFilters: true },
  { name: "address", dataType: "object", nestedProperties: [{ name: "city", dataType: "text" }, { name: "zip", dataType: "int" }] }
]

const createArgs = (h: Harness, table: string, extra: Record<string, unknown> = {}) => ({
  connection_id: h.ids.local,
  table,
  description: "Support tickets",
  properties: ticketProperties,
  vectorizer: "text2vec-bigram",
  ...extra
})

/** Creates a collection with the dialog's yes; returns the principal. */
const created = async (h: Harness, table: string, extra: Record<string, unknown> = {}) => {
  const principal = await fresh(h, "fullAccess")
  success(h, "create_table", await h.call("create_table", createArgs(h, table, extra), { principal }))
  return principal
}

const insert = async (h: Harness, table: string, rows: ReadonlyArray<Record<string, unknown>>, tenant?: string) => {
  const principal = await fresh(h, "fullAccess")
  const { structured } = success(
    h,
    "insert_rows",
    await h.call("insert_rows", { connection_id: h.ids.local, table, rows: rows.map((properties) => ({ properties })), ...(tenant !== undefined ? { tenant } : {}) }, { principal })
  )
  expect(structured.applied).toBe(rows.length)
}

const test = withHarness((h) => {
  h.dialog.answer = true
  h.dialog.asked.length = 0
  h.w.clearRequests()
})

layer(harnessLayer({ weaviate: { modules: MODULES }, sample: false }), { excludeTestServices: true, timeout: "3 minutes" })("structure tools", (it) => {
  it.effect("the tests run against the real Weaviate, which has the text2vec-bigram module", () =>
    test(async (h) => {
      expect(h.w.kind).not.toBe("compatible")
      const principal = await fresh(h, "readOnly")
      const { structured } = success(h, "get_connection_status", await h.call("get_connection_status", { connection_id: h.ids.local }, { principal }))
      expect(JSON.stringify(structured)).toContain("text2vec-bigram")
    }))

  describe("create_table", () => {
    it.effect("a client with elicitation gets a form that shows the collection readably, one property a line; accepted, it is created once", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess")
        const args = createArgs(h, "Ticket")
        const asked = inputRequired(await h.call("create_table", args, { principal, elicitation: true }))
        const description: string = (asked.inputRequests.approve_statement as any).params.requestedSchema.properties.approved.description
        const lines = description.split("\n")
        expect(lines.slice(0, 4)).toEqual([
          "Create the collection Ticket",
          "  description: Support tickets",
          "  vectorizer: text2vec-bigram",
          "  multi-tenancy: off"
        ])
        expect(lines).toContain("Properties (4):")
        expect(lines).toContain("  title: text (tokenization word) — What went wrong")
        expect(lines).toContain("  status: text (tokenization field, not searchable)")
        expect(lines).toContain("  price: number (range filters)")
        expect(lines).toContain("  address: object")
        expect(lines).toContain("      city: text")
        expect(lines).toContain("Sent as:")
        expect(lines).toContain("POST /v1/schema")
        expect(writesTo(h.w)).toEqual([])
        const { structured, text } = success(
          h,
          "create_table",
          await h.call("create_table", args, { principal, elicitation: true, requestState: asked.requestState, inputResponses: approved })
        )
        expect(structured).toEqual({ table: "Ticket", created: true, properties: 4, approvedBy: "form" })
        expect(text).toBe("Created the collection Ticket with 4 properties.")
        expect(writesTo(h.w).map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/schema"])
        const described = success(h, "describe_table", await h.call("describe_table", { connection_id: h.ids.local, table: "Ticket" }, { principal }))
        expect(JSON.stringify(described.structured)).toContain("text2vec-bigram")
      }))

    it.effect("the user's dialog shows the collection one property a line, not a JSON blob, and the list of tables sees it at once", () =>
      test(async (h) => {
        const principal = await fresh(h, "readWrite")
        // The listing is cached now: the new collection must show all the same.
        success(h, "list_tables", await h.call("list_tables", { connection_id: h.ids.local }, { principal }))
        success(h, "create_table", await h.call("create_table", createArgs(h, "Dialogued"), { principal }))
        expect(h.dialog.asked).toHaveLength(1)
        const text = dialogText(h.dialog.asked[0]!)
        const lines = text.split("\n")
        expect(lines).toContain("Create the collection Dialogued")
        expect(lines).toContain("  title: text (tokenization word) — What went wrong")
        expect(lines).toContain("  price: number (range filters)")
        expect(lines.indexOf("  title: text (tokenization word) — What went wrong")).toBeLessThan(lines.indexOf("POST /v1/schema"))
        const tables = success(h, "list_tables", await h.call("list_tables", { connection_id: h.ids.local }, { principal }))
        expect(tables.text).toContain("Dialogued")
      }))

    it.effect("vectorizer none, named vectors, multi-tenancy with autoTenantCreation and autoTenantActivation, replication factor and creation-only index settings reach Weaviate", () =>
      test(async (h) => {
        await created(h, "Shaped", {
          vectorizer: undefined,
          named_vectors: [{ name: "title_vector", vectorizer: "text2vec-bigram", source_properties: ["title"] }, { name: "own", vectorizer: "none" }],
          multi_tenancy: { enabled: true, autoTenantCreation: true, autoTenantActivation: true },
          replication_factor: 1,
          inverted_index: { indexTimestamps: true, indexNullState: true, indexPropertyLength: true, bm25: { b: 0.7, k1: 1.1 } }
        })
        const raw = await (await fetch(`${h.w.url}/v1/schema/Shaped`)).json() as any
        expect(Object.keys(raw.vectorConfig).sort()).toEqual(["own", "title_vector"])
        expect(raw.vectorConfig.title_vector.vectorizer["text2vec-bigram"].properties).toEqual(["title"])
        expect(raw.multiTenancyConfig).toMatchObject({ enabled: true, autoTenantCreation: true, autoTenantActivation: true })
        expect(raw.replicationConfig.factor).toBe(1)
        expect(raw.invertedIndexConfig).toMatchObject({ indexTimestamps: true, indexNullState: true, indexPropertyLength: true, bm25: { b: 0.7, k1: 1.1 } })
        await created(h, "Plain", { vectorizer: "none" })
        const plain = await (await fetch(`${h.w.url}/v1/schema/Plain`)).json() as any
        expect(plain.vectorizer).toBe("none")
      }))

    const refusals: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
      ["an invalid collection name", { table: "ticket-log" }, "\"ticket-log\" is not a valid collection name"],
      ["a lower-case collection name", { table: "ticket" }, "\"ticket\" is not a valid collection name"],
      ["a reserved property name", { properties: [{ name: "id", dataType: "text" }] }, "property \"id\": a name Weaviate reserves"],
      ["a reserved property suffix", { properties: [{ name: "title_searchable", dataType: "text" }] }, "reserves for its own indexes"],
      ["an invalid property name", { properties: [{ name: "due-date", dataType: "date" }] }, "property \"due-date\": not a valid property name"],
      ["a duplicate property (ignoring case)", { properties: [{ name: "title", dataType: "text" }, { name: "Title", dataType: "text" }] }, "property \"Title\": the name is already used"],
      ["an unknown data type", { properties: [{ name: "title", dataType: "varchar" }] }, "unknown data type \"varchar\""],
      ["a deprecated data type", { properties: [{ name: "title", dataType: "string" }] }, "the data type string is deprecated; use text"],
      ["a reference to a missing collection", { properties: [{ name: "owner", dataType: "Person" }] }, "references the collection Person, which does not exist"],
      ["tokenization on a number", { properties: [{ name: "price", dataType: "number", tokenization: "word" }] }, "tokenization applies to text and text[] only"],
      ["an object without nested properties", { properties: [{ name: "address", dataType: "object" }] }, "object needs at least one nested property"],
      ["a vectorizer module the server lacks", { vectorizer: "text2vec-ollama" }, "this server has no module text2vec-ollama (its vectorizers: "],
      ["a module that is not a vectorizer", { vectorizer: "generative-openai" }, "vectorizer: generative-openai is a module of this server but not a vectorizer"],
      ["a named vector with a module the server lacks", { vectorizer: undefined, named_vectors: [{ name: "v", vectorizer: "text2vec-ollama" }] }, "named vector \"v\": this server has no module text2vec-ollama"],
      ["a named vector over a property the collection lacks", { vectorizer: undefined, named_vectors: [{ name: "v", vectorizer: "text2vec-bigram", source_properties: ["body"] }] }, "source property \"body\" is not a property of the collection"],
      ["autoTenantCreation without multi-tenancy", { multi_tenancy: { enabled: false, autoTenantCreation: true } }, "autoTenantCreation and autoTenantActivation need multi-tenancy enabled"]
    ]
    for (const [what, extra, reason] of refusals) {
      it.effect(`${what} is refused before anyone is asked, with the reason; nothing is sent`, () =>
        test(async (h) => {
          const principal = await fresh(h, "fullAccess")
          const text = toolError(await h.call("create_table", createArgs(h, "Refused", extra), { principal }), "invalid_argument")
          expect(text).toContain(reason)
          expect(h.dialog.asked).toEqual([])
          expect(writesTo(h.w)).toEqual([])
        }))
    }

    it.effect("a collection that exists (ignoring case) is refused, naming it", () =>
      test(async (h) => {
        await created(h, "Existing")
        const principal = await fresh(h, "fullAccess")
        const text = toolError(await h.call("create_table", createArgs(h, "EXISTING"), { principal }), "invalid_argument")
        expect(text).toContain("a collection named Existing already exists (names are compared ignoring case)")
        expect(writesTo(h.w)).toEqual([])
      }))

    it.effect("Safe Mode readOnly refuses it with denied, without asking", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess", "guarded")
        toolError(await h.call("create_table", { ...createArgs(h, "Guarded"), connection_id: h.ids.guarded }, { principal }), "denied")
        expect(h.dialog.asked).toEqual([])
        expect(writesTo(h.w)).toEqual([])
      }))

    it.effect("a readOnly token cannot call it (-33007); the user's refusal is denied", () =>
      test(async (h) => {
        const reader = await fresh(h, "readOnly")
        protocolError(await h.call("create_table", createArgs(h, "NotMine"), { principal: reader }), -33007)
        const writer = await fresh(h, "readWrite")
        h.dialog.answer = false
        toolError(await h.call("create_table", createArgs(h, "NotMine"), { principal: writer }), "denied")
        expect(writesTo(h.w)).toEqual([])
      }))
  })

  describe("drop_table", () => {
    it.effect("the approval states the rows that will be lost; the user is asked on their machine even after the form; the collection is gone at once", () =>
      test(async (h) => {
        await created(h, "Doomed")
        await insert(h, "Doomed", [{ title: "a" }, { title: "b" }, { title: "c" }])
        const principal = await fresh(h, "fullAccess")
        success(h, "describe_table", await h.call("describe_table", { connection_id: h.ids.local, table: "Doomed" }, { principal }))
        const args = { connection_id: h.ids.local, table: "Doomed", confirm: "Doomed" }
        const asked = inputRequired(await h.call("drop_table", args, { principal, elicitation: true }))
        const description: string = (asked.inputRequests.approve_statement as any).params.requestedSchema.properties.approved.description
        expect(description.split("\n").slice(0, 3)).toEqual([
          "Drop the collection Doomed with all its rows",
          "Doomed holds 3 rows: all will be lost.",
          "This cannot be undone."
        ])
        h.w.clearRequests()
        const { structured, text } = success(
          h,
          "drop_table",
          await h.call("drop_table", args, { principal, elicitation: true, requestState: asked.requestState, inputResponses: approved })
        )
        expect(h.dialog.asked).toHaveLength(1)
        expect(h.dialog.asked[0]!.title).toBe("weaviate-mcp: approve a destructive operation")
        expect(h.dialog.asked[0]!.statement).toContain("Doomed holds 3 rows: all will be lost.")
        expect(structured).toEqual({ table: "Doomed", dropped: true, rowsLost: 3, approvedBy: "exec" })
        expect(text).toBe("Dropped the collection Doomed and its 3 rows.")
        expect(writesTo(h.w).map((r) => `${r.method} ${r.path}`)).toEqual(["DELETE /v1/schema/Doomed"])
        toolError(await h.call("describe_table", { connection_id: h.ids.local, table: "Doomed" }, { principal }), "not_found")
      }))

    it.effect("needs a fullAccess token (-33007) and confirm repeating the name exactly; the user's refusal drops nothing", () =>
      test(async (h) => {
        await created(h, "Kept")
        const writer = await fresh(h, "readWrite")
        protocolError(await h.call("drop_table", { connection_id: h.ids.local, table: "Kept", confirm: "Kept" }, { principal: writer }), -33007)
        const principal = await fresh(h, "fullAccess")
        expect(toolError(await h.call("drop_table", { connection_id: h.ids.local, table: "Kept", confirm: "kept" }, { principal }), "invalid_argument"))
          .toContain("confirm must repeat the table name exactly")
        h.dialog.answer = false
        toolError(await h.call("drop_table", { connection_id: h.ids.local, table: "Kept", confirm: "Kept" }, { principal }), "denied")
        expect(writesTo(h.w)).toEqual([])
        success(h, "describe_table", await h.call("describe_table", { connection_id: h.ids.local, table: "Kept" }, { principal }))
      }))

    it.effect("confirm_destructive_operation's drop_table states the rows that will be lost too", () =>
      test(async (h) => {
        await created(h, "AlsoDoomed")
        await insert(h, "AlsoDoomed", [{ title: "a" }, { title: "b" }])
        const principal = await fresh(h, "fullAccess")
        success(h, "confirm_destructive_operation", await h.call("confirm_destructive_operation", {
          connection_id: h.ids.local,
          operation: "drop_table",
          table: "AlsoDoomed",
          confirm: "AlsoDoomed"
        }, { principal }))
        expect(h.dialog.asked[0]!.statement.split("\n")).toEqual(["AlsoDoomed holds 2 rows: all will be lost.", "", "DELETE /v1/schema/AlsoDoomed"])
      }))

    it.effect("Safe Mode readOnly refuses it with denied", () =>
      test(async (h) => {
        await created(h, "GuardedDrop")
        const principal = await fresh(h, "fullAccess", "guarded")
        toolError(await h.call("drop_table", { connection_id: h.ids.guarded, table: "GuardedDrop", confirm: "GuardedDrop" }, { principal }), "denied")
        expect(writesTo(h.w)).toEqual([])
      }))
  })

  describe("add_column", () => {
    it.effect("the approval shows the property on its line and says Weaviate cannot rename or drop it nor re-index old rows; describe_table sees it at once", () =>
      test(async (h) => {
        await created(h, "Grown")
        const principal = await fresh(h, "readWrite")
        success(h, "describe_table", await h.call("describe_table", { connection_id: h.ids.local, table: "Grown" }, { principal }))
        const args = { connection_id: h.ids.local, table: "Grown", property: { name: "priority", dataType: "int", description: "1 is urgent", indexRangeFilters: true } }
        const { structured, text } = success(h, "add_column", await h.call("add_column", args, { principal }))
        expect(structured).toEqual({ table: "Grown", added: "priority", approvedBy: "exec" })
        expect(text).toContain("Weaviate cannot rename or drop a property once added. Rows already stored are not re-indexed for it.")
        const lines = dialogText(h.dialog.asked[0]!).split("\n")
        expect(lines).toContain("Add a property to Grown")
        expect(lines).toContain("  priority: int (range filters) — 1 is urgent")
        expect(lines).toContain("Weaviate cannot rename or drop a property once added.")
        expect(lines).toContain("Rows already stored are not re-indexed for it.")
        expect(writesTo(h.w).map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/schema/Grown/properties"])
        const described = success(h, "describe_table", await h.call("describe_table", { connection_id: h.ids.local, table: "Grown" }, { principal }))
        expect(described.text).toContain("priority")
      }))

    it.effect("a property name already used (ignoring case), a reserved name and an unknown data type are refused with the reason; nothing is sent", () =>
      test(async (h) => {
        await created(h, "Fixed")
        const principal = await fresh(h, "fullAccess")
        const add = async (property: Record<string, unknown>) =>
          toolError(await h.call("add_column", { connection_id: h.ids.local, table: "Fixed", property }, { principal }), "invalid_argument")
        expect(await add({ name: "Title", dataType: "text" })).toContain("property \"Title\": the name is already used in Fixed (names are compared ignoring case)")
        expect(await add({ name: "_additional", dataType: "text" })).toContain("a name Weaviate reserves")
        expect(await add({ name: "when", dataType: "datetime" })).toContain("unknown data type \"datetime\"")
        expect(h.dialog.asked).toEqual([])
        expect(writesTo(h.w)).toEqual([])
      }))

    it.effect("round trip: create, add a property, insert rows that use it (vectorized by text2vec-bigram), find them by filter and by hybrid search, drop", () =>
      test(async (h) => {
        await created(h, "Round")
        const principal = await fresh(h, "fullAccess")
        success(h, "add_column", await h.call("add_column", { connection_id: h.ids.local, table: "Round", property: { name: "priority", dataType: "int" } }, { principal }))
        await insert(h, "Round", [{ title: "printer on fire", priority: 1 }, { title: "coffee machine empty", priority: 3 }])
        const found = success(h, "browse_table", await h.call("browse_table", {
          connection_id: h.ids.local,
          table: "Round",
          filters: [{ column: "priority", operator: "equals", value: 1 }]
        }, { principal }))
        expect(found.structured.rows.map((r: any) => r.title)).toEqual(["printer on fire"])
        const searched = success(h, "vector_search", await h.call("vector_search", {
          connection_id: h.ids.local,
          table: "Round",
          mode: "hybrid",
          query: "printer on fire",
          alpha: 0.5,
          limit: 1
        }, { principal }))
        expect(searched.structured.rows[0].title).toBe("printer on fire")
        const row = success(h, "get_row", await h.call("get_row", { connection_id: h.ids.local, table: "Round", uuid: found.structured.rows[0].uuid, include_vector: true }, { principal }))
        expect(JSON.stringify(row.structured)).toMatch(/"vector":\[-?\d/)
        const dropped = success(h, "drop_table", await h.call("drop_table", { connection_id: h.ids.local, table: "Round", confirm: "Round" }, { principal }))
        expect(dropped.structured.rowsLost).toBe(2)
        toolError(await h.call("count_rows", { connection_id: h.ids.local, table: "Round" }, { principal }), "not_found")
      }))
  })

  describe("update_table", () => {
    it.effect("the description and mutable settings change, each shown old → new on its own line; Weaviate has them after", () =>
      test(async (h) => {
        await created(h, "Tuned")
        const principal = await fresh(h, "fullAccess")
        const args = {
          connection_id: h.ids.local,
          table: "Tuned",
          description: "Tickets, tuned",
          settings: { "vectorIndexConfig.ef": 128, "invertedIndexConfig.bm25.b": 0.5, "invertedIndexConfig.stopwords.additions": ["please"], "replicationConfig.deletionStrategy": "DeleteOnConflict" }
        }
        const { structured } = success(h, "update_table", await h.call("update_table", args, { principal }))
        expect(structured.changed).toEqual(["description", "vectorIndexConfig.ef", "invertedIndexConfig.bm25.b", "invertedIndexConfig.stopwords.additions", "replicationConfig.deletionStrategy"])
        const lines = dialogText(h.dialog.asked[0]!).split("\n")
        expect(lines).toContain("Change the settings of Tuned")
        expect(lines).toContain("  description: \"Support tickets\" → \"Tickets, tuned\"")
        expect(lines).toContain("  vectorIndexConfig.ef: -1 → 128")
        expect(lines).toContain("  invertedIndexConfig.bm25.b: 0.75 → 0.5")
        expect(writesTo(h.w).map((r) => `${r.method} ${r.path}`)).toEqual(["PUT /v1/schema/Tuned"])
        const raw = await (await fetch(`${h.w.url}/v1/schema/Tuned`)).json() as any
        expect(raw.description).toBe("Tickets, tuned")
        expect(raw.vectorIndexConfig.ef).toBe(128)
        expect(raw.invertedIndexConfig.bm25.b).toBe(0.5)
        expect(raw.invertedIndexConfig.stopwords.additions).toEqual(["please"])
        expect(raw.replicationConfig.deletionStrategy).toBe("DeleteOnConflict")
      }))

    it.effect("immutable settings are refused, each named with its reason; unknown settings and wrong values too; nothing is sent", () =>
      test(async (h) => {
        await created(h, "Frozen")
        const principal = await fresh(h, "fullAccess")
        const update = async (settings: Record<string, unknown>) =>
          toolError(await h.call("update_table", { connection_id: h.ids.local, table: "Frozen", settings }, { principal }), "invalid_argument")
        const immutable = await update({ vectorizer: "none", "vectorIndexConfig.distance": "dot", "invertedIndexConfig.indexTimestamps": true, "multiTenancyConfig.enabled": true })
        expect(immutable).toContain("immutable settings cannot be changed: ")
        expect(immutable).toContain("vectorizer: the vectorizer and its module settings are fixed at creation")
        expect(immutable).toContain("vectorIndexConfig.distance: this vector index setting is fixed at creation")
        expect(immutable).toContain("invertedIndexConfig.indexTimestamps: this inverted index setting is fixed at creation")
        expect(immutable).toContain("multiTenancyConfig.enabled: multi-tenancy cannot be turned on or off after creation")
        expect(await update({ "properties.title.dataType": "int" })).toContain("add_column adds one; Weaviate cannot rename or drop a property")
        expect(await update({ "vectorIndexConfig.colour": 1 })).toContain("vectorIndexConfig.colour: not a setting update_table can change")
        expect(await update({ "vectorIndexConfig.ef": "fast" })).toContain("vectorIndexConfig.ef: \"fast\" is not valid; it takes a whole number")
        expect(await update({ "multiTenancyConfig.autoTenantCreation": true })).toContain("Frozen is not multi-tenant")
        expect(await update({})).toContain("nothing to change")
        expect(h.dialog.asked).toEqual([])
        expect(writesTo(h.w)).toEqual([])
      }))
  })
})
