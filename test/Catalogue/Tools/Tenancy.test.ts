/**
 * Multi-tenancy and named vectors, against the real Weaviate server: every tool with and without a
 * tenant, the refusal texts, list_tenants paging, describe_table, target_vectors checked by
 * distances, and tenant-scoped tokens (allowed tenant, forbidden tenant, a collection without tenants).
 */
import { layer } from "@effect/vitest"
import { describe, expect } from "vitest"
import { currentTarget } from "../../weaviate/Target.ts"
import { type Harness, harnessLayer, protocolError, success, token, toolError, withHarness } from "./support.ts"

const real = currentTarget().kind !== "compatible"

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

const post = async (h: Harness, path: string, body: unknown, method = "POST") => {
  const response = await fetch(`${h.w.url}${path}`, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
}

/** 150 tenants: past the 20 names a refusal shows and the 100 a list_tenants page holds. */
const MANY = Array.from({ length: 150 }, (_, i) => `t${String(i).padStart(3, "0")}`)

/** Multi-tenant collections with active and inactive tenants, and a collection with two named vectors. */
const setup = async (h: Harness) => {
  if (!real) return
  await post(h, "/v1/schema", {
    class: "Doc",
    vectorizer: "none",
    multiTenancyConfig: { enabled: true },
    properties: [{ name: "title", dataType: ["text"] }]
  })
  await post(h, "/v1/schema/Doc/tenants", [{ name: "acme" }, { name: "globex" }, { name: "cold1", activityStatus: "INACTIVE" }])
  for (const [tenant, n, title] of [["acme", 1, "acme one"], ["acme", 2, "acme two"], ["globex", 3, "globex one"]] as const) {
    await post(h, "/v1/objects", { class: "Doc", id: uuid(n), tenant, properties: { title }, vector: [n, 1, 0] })
  }
  await post(h, "/v1/schema", { class: "Many", vectorizer: "none", multiTenancyConfig: { enabled: true }, properties: [{ name: "title", dataType: ["text"] }] })
  await post(h, "/v1/schema/Many/tenants", MANY.map((name) => ({ name })))
  await post(h, "/v1/schema", {
    class: "Multi",
    properties: [{ name: "title", dataType: ["text"] }],
    vectorConfig: {
      title_vec: { vectorizer: { none: {} }, vectorIndexType: "hnsw", vectorIndexConfig: { distance: "cosine" } },
      body_vec: { vectorizer: { none: {} }, vectorIndexType: "flat", vectorIndexConfig: { distance: "l2-squared" } }
    }
  })
  await post(h, "/v1/objects", { class: "Multi", id: uuid(11), properties: { title: "one" }, vectors: { title_vec: [1, 0, 0], body_vec: [0, 1, 0] } })
  await post(h, "/v1/objects", { class: "Multi", id: uuid(12), properties: { title: "two" }, vectors: { title_vec: [0, 1, 0], body_vec: [1, 0, 0] } })
}

const principal = token("fullAccess", { id: "tok-tenancy" })
const test = withHarness((h) => {
  h.dialog.answer = true
})

/** Data requests (objects, GraphQL, batch) that reached the database since `clearRequests`. */
const dataRequests = (h: Harness) => h.w.requests.filter((r) => r.path.startsWith("/v1/objects") || r.path === "/v1/graphql" || r.path.startsWith("/v1/batch"))

const call = (h: Harness, tool: string, args: Record<string, unknown>, options: { readonly principal?: ReturnType<typeof token> } = {}) =>
  h.call(tool, { connection_id: h.ids.silent, ...args }, { principal: options.principal ?? principal })

layer(harnessLayer({}, setup), { excludeTestServices: true, timeout: "3 minutes" })('tenancy', (it) => {
  describe.skipIf(!real)(`tenants on every tool (real Weaviate${real ? "" : "; skipped: needs the real server (tenant activity states, named vectors)"})`, () => {
    it.effect("a multi-tenant collection used without tenant is refused before any data request, naming its tenants", () =>
      test(async (h) => {
        const uses: Array<[string, Record<string, unknown>]> = [
          ["browse_table", { table: "Doc" }],
          ["count_rows", { table: "Doc" }],
          ["get_row", { table: "Doc", uuid: uuid(1) }],
          ["vector_search", { table: "Doc", mode: "bm25", query: "acme" }],
          ["insert_rows", { table: "Doc", rows: [{ properties: { title: "x" } }] }],
          ["update_rows", { table: "Doc", rows: [{ uuid: uuid(1), values: { title: "x" } }] }],
          ["delete_rows", { table: "Doc", uuids: [uuid(1)] }],
          ["confirm_destructive_operation", { table: "Doc", confirm: "Doc", operation: "delete_all_rows" }]
        ]
        for (const [tool, args] of uses) {
          h.w.clearRequests()
          const text = toolError(await call(h, tool, args), "invalid_argument")
          expect(text, tool).toBe("invalid_argument: Doc is multi-tenant; pass tenant (tenants: acme, cold1, globex)")
          expect(dataRequests(h), tool).toEqual([])
        }
      }))

    it.effect("the refusal lists at most 20 tenants, then …", () =>
      test(async (h) => {
        const text = toolError(await call(h, "browse_table", { table: "Many" }), "invalid_argument")
        expect(text).toBe(`invalid_argument: Many is multi-tenant; pass tenant (tenants: ${MANY.slice(0, 20).join(", ")} …)`)
      }))

    it.effect("an inactive tenant is refused with its state; an unknown one is not_found; a tenant on a collection without tenants is refused", () =>
      test(async (h) => {
        expect(toolError(await call(h, "browse_table", { table: "Doc", tenant: "cold1" }), "invalid_argument")).toBe(
          "invalid_argument: tenant \"cold1\" of Doc is COLD, not active: activate it with set_tenant_status (status ACTIVE) or weaviate-mcp tenants activate before reading or writing its rows"
        )
        expect(toolError(await call(h, "count_rows", { table: "Doc", tenant: "nope" }), "not_found")).toContain("Doc has no tenant \"nope\"")
        expect(toolError(await call(h, "browse_table", { table: "Article", tenant: "acme" }), "invalid_argument")).toBe(
          "invalid_argument: Article is not multi-tenant; leave tenant out"
        )
      }))

    it.effect("the read tools read only the tenant named", () =>
      test(async (h) => {
        const page = success(h, "browse_table", await call(h, "browse_table", { table: "Doc", tenant: "acme" }))
        expect(page.structured.rows.map((r: { title: string }) => r.title).sort()).toEqual(["acme one", "acme two"])
        expect(success(h, "count_rows", await call(h, "count_rows", { table: "Doc", tenant: "globex" })).structured.count).toBe(1)
        expect(success(h, "get_row", await call(h, "get_row", { table: "Doc", uuid: uuid(1), tenant: "acme" })).structured.row.title).toBe("acme one")
        toolError(await call(h, "get_row", { table: "Doc", uuid: uuid(1), tenant: "globex" }), "not_found")
        const found = success(h, "vector_search", await call(h, "vector_search", { table: "Doc", mode: "bm25", query: "one", tenant: "globex" }))
        expect(found.structured.rows.map((r: { title: string }) => r.title)).toEqual(["globex one"])
      }))

    it.effect("the write tools write only the tenant named, once", () =>
      test(async (h) => {
        const inserted = success(h, "insert_rows", await call(h, "insert_rows", { table: "Doc", tenant: "globex", rows: [{ id: uuid(4), properties: { title: "globex two" } }] }))
        expect(inserted.structured.applied).toBe(1)
        expect(success(h, "count_rows", await call(h, "count_rows", { table: "Doc", tenant: "globex" })).structured.count).toBe(2)
        expect(success(h, "count_rows", await call(h, "count_rows", { table: "Doc", tenant: "acme" })).structured.count).toBe(2)
        success(h, "update_rows", await call(h, "update_rows", { table: "Doc", tenant: "globex", rows: [{ uuid: uuid(4), values: { title: "globex 2" } }] }))
        expect(success(h, "get_row", await call(h, "get_row", { table: "Doc", uuid: uuid(4), tenant: "globex" })).structured.row.title).toBe("globex 2")
        success(h, "delete_rows", await call(h, "delete_rows", { table: "Doc", tenant: "globex", uuids: [uuid(4)] }))
        toolError(await call(h, "get_row", { table: "Doc", uuid: uuid(4), tenant: "globex" }), "not_found")
        const deleted = success(h, "confirm_destructive_operation", await call(h, "confirm_destructive_operation", {
          table: "Doc", confirm: "Doc", operation: "delete_where", tenant: "globex", filters: [{ column: "title", operator: "equals", value: "nothing like this" }]
        }))
        expect(deleted.structured.deleted).toBe(0)
        expect(success(h, "count_rows", await call(h, "count_rows", { table: "Doc", tenant: "acme" })).structured.count).toBe(2)
      }))

    it.effect("list_tenants pages 100 tenants at a time in name order, with their status", () =>
      test(async (h) => {
        const first = success(h, "list_tenants", await call(h, "list_tenants", { table: "Many" }))
        expect(first.structured.total).toBe(150)
        expect(first.structured.tenants.map((t: { name: string }) => t.name)).toEqual(MANY.slice(0, 100))
        const second = success(h, "list_tenants", await call(h, "list_tenants", { table: "Many", cursor: first.structured.nextCursor }))
        expect(second.structured.tenants.map((t: { name: string }) => t.name)).toEqual(MANY.slice(100))
        expect(second.structured.nextCursor).toBeUndefined()
        const doc = success(h, "list_tenants", await call(h, "list_tenants", { table: "Doc" }))
        expect(doc.structured.tenants).toEqual([
          { name: "acme", activityStatus: "HOT", active: true },
          { name: "cold1", activityStatus: "COLD", active: false },
          { name: "globex", activityStatus: "HOT", active: true }
        ])
        toolError(await call(h, "list_tenants", { table: "Many", cursor: "not-a-cursor" }), "invalid_argument")
        expect(toolError(await call(h, "list_tenants", { table: "Article" }), "invalid_argument")).toBe("invalid_argument: Article is not multi-tenant: it has no tenants")
      }))

    it.effect("describe_table reports the multi-tenancy settings and tenant count, and every named vector", () =>
      test(async (h) => {
        const doc = success(h, "describe_table", await call(h, "describe_table", { table: "Doc" }))
        expect(doc.structured.multiTenancy).toBe(true)
        expect(doc.structured.tenancy).toEqual({ autoTenantCreation: false, autoTenantActivation: false, tenantCount: 3 })
        const multi = success(h, "describe_table", await call(h, "describe_table", { table: "Multi" }))
        expect(multi.structured.vectors).toEqual([
          { name: "body_vec", vectorizer: "none", indexType: "flat", distance: "l2-squared" },
          { name: "title_vec", vectorizer: "none", indexType: "hnsw", distance: "cosine" }
        ])
        const vectorColumns = multi.structured.columns.filter((c: { kind: string }) => c.kind === "vector")
        expect(vectorColumns.map((c: { name: string; readOnly: boolean }) => [c.name, c.readOnly])).toEqual([["vector:body_vec", true], ["vector:title_vec", true]])
        expect(multi.structured.columns.slice(-2)).toEqual(vectorColumns)
      }))
  })

  describe.skipIf(!real)("named vectors (real Weaviate)", () => {
    const search = (h: Harness, args: Record<string, unknown>) =>
      call(h, "vector_search", { table: "Multi", mode: "near_vector", vector: [1, 0, 0], ...args })
    const ranked = (result: { structured: Record<string, any> }) =>
      result.structured.rows.map((r: Record<string, unknown>) => [r.title, r["_additional.distance"] ?? r.distance])

    it.effect("target_vectors chooses the vector the query vector is compared with, as the distances show", () =>
      test(async (h) => {
        expect(ranked(success(h, "vector_search", await search(h, { target_vectors: ["title_vec"] })))).toEqual([["one", 0], ["two", 1]])
        expect(ranked(success(h, "vector_search", await search(h, { target_vectors: ["body_vec"] })))).toEqual([["two", 0], ["one", 2]])
      }))

    it.effect("several target vectors combine by the combination method and weights Weaviate supports", () =>
      test(async (h) => {
        const weighted = success(h, "vector_search", await search(h, {
          target_vectors: ["title_vec", "body_vec"], combination: "manualWeights", weights: { title_vec: 0.8, body_vec: 0.2 }
        }))
        expect(ranked(weighted)).toEqual([["one", 0.4], ["two", 0.8]])
        const minimum = success(h, "vector_search", await search(h, { target_vectors: ["title_vec", "body_vec"], combination: "minimum" }))
        expect(ranked(minimum).map(([, d]: [string, number]) => d)).toEqual([0, 0])
      }))

    it.effect("aggregate over a hybrid search on a collection with several named vectors: target_vectors names the one searched", () =>
      test(async (h) => {
        const aggregate = (args: Record<string, unknown>) => call(h, "aggregate", { table: "Multi", hybrid: "one", alpha: 0, object_limit: 5, ...args })
        expect(toolError(await aggregate({}), "invalid_argument")).toContain("Multi has several named vectors (body_vec, title_vec); pass target_vectors")
        const { structured } = success(h, "aggregate", await aggregate({ target_vectors: ["title_vec"] }))
        expect(structured.query).toContain("targetVectors: [\"title_vec\"]")
        // Keyword side only (alpha 0): the one row whose title has the word.
        expect(structured.count).toBe(1)
      }))

    it.effect("a collection with several named vectors needs target_vectors; unknown names and misplaced options are refused", () =>
      test(async (h) => {
        expect(toolError(await search(h, {}), "invalid_argument")).toBe(
          "invalid_argument: Multi has several named vectors (body_vec, title_vec); pass target_vectors"
        )
        expect(toolError(await search(h, { target_vectors: ["nope"] }), "invalid_argument")).toContain("no named vector nope")
        expect(toolError(await search(h, { target_vectors: ["title_vec"], combination: "sum" }), "invalid_argument")).toContain("two or more")
        expect(toolError(await search(h, { target_vectors: ["title_vec", "body_vec"], combination: "manualWeights" }), "invalid_argument"))
          .toContain("a weight for every target vector")
      }))

    it.effect("get_row with include_vector returns every named vector as vector:<name>; without it none", () =>
      test(async (h) => {
        const row = success(h, "get_row", await call(h, "get_row", { table: "Multi", uuid: uuid(11), include_vector: true })).structured.row
        expect(row["vector:title_vec"]).toEqual([1, 0, 0])
        expect(row["vector:body_vec"]).toEqual([0, 1, 0])
        const plain = success(h, "get_row", await call(h, "get_row", { table: "Multi", uuid: uuid(11) })).structured.row
        expect(Object.keys(plain).filter((k) => k.startsWith("vector"))).toEqual([])
      }))
  })

  describe.skipIf(!real)("tenant-scoped tokens (real Weaviate)", () => {
    const scoped = (h: Harness) => token("fullAccess", { id: "tok-acme", tenants: { [h.ids.silent!]: { Doc: ["acme"] } } })

    it.effect("the allowed tenant works like any other", () =>
      test(async (h) => {
        const page = success(h, "browse_table", await call(h, "browse_table", { table: "Doc", tenant: "acme" }, { principal: scoped(h) }))
        expect(page.structured.rows).toHaveLength(2)
      }))

    it.effect("another tenant is -33007 and invisible in list_tenants and in the refusal", () =>
      test(async (h) => {
        protocolError(await call(h, "browse_table", { table: "Doc", tenant: "globex" }, { principal: scoped(h) }), -33007)
        protocolError(await call(h, "insert_rows", { table: "Doc", tenant: "globex", rows: [{ properties: { title: "x" } }] }, { principal: scoped(h) }), -33007)
        const listed = success(h, "list_tenants", await call(h, "list_tenants", { table: "Doc" }, { principal: scoped(h) }))
        expect(listed.structured.tenants.map((t: { name: string }) => t.name)).toEqual(["acme"])
        expect(toolError(await call(h, "count_rows", { table: "Doc" }, { principal: scoped(h) }), "invalid_argument")).toBe(
          "invalid_argument: Doc is multi-tenant; pass tenant (tenants: acme)"
        )
        // A multi-tenant collection not listed for the token: none of its tenants.
        protocolError(await call(h, "browse_table", { table: "Many", tenant: "t000" }, { principal: scoped(h) }), -33007)
      }))

    it.effect("execute_query must name an allowed tenant; the REST console and dropping a multi-tenant collection are refused", () =>
      test(async (h) => {
        const p = scoped(h)
        protocolError(await call(h, "execute_query", { query: "{ Get { Doc(tenant: \"globex\") { title } } }" }, { principal: p }), -33007)
        protocolError(await call(h, "execute_query", { query: "{ Get { Doc { title } } }" }, { principal: p }), -33007)
        success(h, "execute_query", await call(h, "execute_query", { query: "{ Get { Doc(tenant: \"acme\") { title } } }" }, { principal: p }))
        success(h, "execute_query", await call(h, "execute_query", { query: "{ Get { Doc { title } } }", tenant: "acme" }, { principal: p }))
        protocolError(await call(h, "execute_query", { query: "GET /v1/schema" }, { principal: p }), -33007)
        protocolError(await call(h, "confirm_destructive_operation", { table: "Doc", confirm: "Doc", operation: "drop_table" }, { principal: p }), -33007)
      }))

    it.effect("a query that hides its tenant is refused: the tenant named twice, or collections behind fragments nested too deep to follow", () =>
      test(async (h) => {
        const p = scoped(h)
        protocolError(await call(h, "execute_query", { query: "{ Get { Doc(tenant: \"acme\", tenant: \"globex\") { title } } }" }, { principal: p }), -33007)
        // 20 nested inline fragments around Get: past what the check follows, so the query is refused.
        const nested = `{ ${"... on Query { ".repeat(20)}Get { Doc(tenant: "globex") { title } }${" }".repeat(20)} }`
        protocolError(await call(h, "execute_query", { query: nested }, { principal: p }), -33007)
        // For a token that is not tenant-scoped the query goes to the server, which decides (here: it refuses it).
        toolError(await call(h, "execute_query", { query: nested, tenant: "acme" }), "query_failed")
      }))

    it.effect("collections without tenants are unaffected", () =>
      test(async (h) => {
        const p = scoped(h)
        expect(success(h, "count_rows", await call(h, "count_rows", { table: "Article" }, { principal: p })).structured.count).toBeGreaterThan(0)
        success(h, "execute_query", await call(h, "execute_query", { query: "{ Get { Article(limit: 1) { title } } }" }, { principal: p }))
      }))
  })
})
