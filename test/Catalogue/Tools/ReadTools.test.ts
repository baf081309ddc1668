/**
 * The read tools end to end in process against the Weaviate test instance with sample data
 * (scale 0.1: Author 20, Article 200, Product 150, Ticket 15 per tenant).
 */
import { layer } from "@effect/vitest"
import { describe, expect } from "vitest"
import { sampleId } from "../../weaviate/SampleData.ts"
import { harnessLayer, makeHarness, protocolError, success, token, toolError, withHarness } from "./support.ts"

const test = withHarness((h) => {
  h.w.setFault({ kind: "none" })
  h.lookups.length = 0
})

layer(harnessLayer(), { excludeTestServices: true, timeout: "3 minutes" })('read tools', (it) => {
  describe("list_connections", () => {
    it.effect("lists the connections the principal may see, never blocked ones, with the permission on each", () =>
      test(async (h) => {
        const { structured, text } = success(h, "list_connections", await h.call("list_connections", {}, { principal: token("readWrite") }))
        const names = structured.connections.map((c: { name: string }) => c.name).sort()
        expect(names).toEqual(["aiRead", "guarded", "local", "silent"])
        expect(structured.connections.find((c: { name: string }) => c.name === "aiRead").permission).toBe("read")
        expect(structured.connections.find((c: { name: string }) => c.name === "local").permission).toBe("write")
        expect(text).not.toContain("blocked")
      }))

    it.effect("honours the token's connection allowlist", () =>
      test(async (h) => {
        const principal = token("readOnly", { id: "tok-allow", connections: { _tag: "Some", value: [h.ids.silent!] } as never })
        const { structured } = success(h, "list_connections", await h.call("list_connections", {}, { principal }))
        expect(structured.connections.map((c: { id: string }) => c.id)).toEqual([h.ids.silent])
      }))
  })

  describe("connection access on every tool", () => {
    it.effect("a blocked connection is refused with -33007", () =>
      test(async (h) => {
        protocolError(await h.call("list_tables", { connection_id: h.ids.blocked }), -33007)
      }))
    it.effect("a connection outside the allowlist is refused with -33007", () =>
      test(async (h) => {
        const principal = token("readOnly", { id: "tok-allow2", connections: { _tag: "Some", value: [h.ids.silent!] } as never })
        protocolError(await h.call("list_tables", { connection_id: h.ids.local }, { principal }), -33007)
      }))
    it.effect("an unknown connection is the tool error not_found", () =>
      test(async (h) => {
        toolError(await h.call("list_tables", { connection_id: "nope" }), "not_found")
      }))
  })

  describe("get_connection_status", () => {
    it.effect("reports version, modules and latency from /v1/meta", () =>
      test(async (h) => {
        h.w.setFault({ kind: "delay", ms: 80 }, { pathPrefix: "/v1/meta" })
        try {
          const started = performance.now()
          const { structured } = success(h, "get_connection_status", await h.call("get_connection_status", { connection_id: h.ids.local }))
          const elapsed = performance.now() - started
          expect(structured.connected).toBe(true)
          expect(typeof structured.version).toBe("string")
          expect(structured.modules).toContain("text2vec-transformers")
          expect(structured.latencyMs).toBeGreaterThanOrEqual(80)
          expect(structured.latencyMs).toBeLessThanOrEqual(elapsed + 0.1)
        } finally {
          h.w.setFault({ kind: "none" })
        }
      }))
    it.effect("a single-node server shows one node, healthy", () =>
      test(async (h) => {
        const { structured, text } = success(
          h,
          "get_connection_status",
          await h.call("get_connection_status", { connection_id: h.ids.local, include_shards: true })
        )
        expect(structured.cluster.health).toBe("healthy")
        expect(structured.cluster.nodes).toHaveLength(1)
        expect(structured.cluster.nodes[0].status).toBe("HEALTHY")
        expect(structured.cluster.nodes[0].version).toBe(structured.version)
        // Weaviate refreshes these counts in the background: a number, not yet the sample's size
        expect(structured.cluster.nodes[0].objectCount).toBeTypeOf("number")
        expect(structured.cluster.problems).toEqual([])
        expect(text).toContain("cluster healthy: 1 node")
      }))
    // A harness of its own: its database is closed on purpose.
    it("an unreachable database is not_connected", async () => {
      const dead = await makeHarness({ sample: false })
      await dead.w.close()
      toolError(await dead.call("get_connection_status", { connection_id: dead.ids.local }), "not_connected")
      await dead.close().catch(() => undefined)
    })
  })

  describe("list_tables", () => {
    it.effect("lists collections; include_counts adds counts (null for multi-tenant ones)", () =>
      test(async (h) => {
        const { structured } = success(h, "list_tables", await h.call("list_tables", { connection_id: h.ids.local, include_counts: true }))
        const byName = Object.fromEntries(structured.tables.map((t: { name: string }) => [t.name, t]))
        expect(Object.keys(byName).sort()).toEqual(["Article", "Author", "Product", "Ticket"])
        expect(byName.Article.count).toBe(200)
        expect(byName.Article.vectorizer).toBe("text2vec-transformers")
        expect(byName.Ticket.count).toBeNull()
        expect(byName.Ticket.multiTenancy).toBe(true)
      }))
  })

  describe("describe_table", () => {
    it.effect("shows replication, sharding and each shard's node and readiness (one node: one shard, ready, on it)", () =>
      test(async (h) => {
        const { structured, text } = success(h, "describe_table", await h.call("describe_table", { connection_id: h.ids.local, table: "Article" }))
        expect(structured.replication).toEqual({ factor: 1, asyncEnabled: false, deletionStrategy: expect.any(String) })
        expect(structured.sharding).toEqual({ desiredCount: 1, actualCount: 1 })
        expect(structured.shards).toHaveLength(1)
        expect(structured.shards[0]).toMatchObject({ status: "READY", ready: true, replicas: 1 })
        expect(structured.shards[0].nodes).toHaveLength(1)
        expect(text).toContain("replication: factor 1, async replication off")
        const tables = success(h, "list_tables", await h.call("list_tables", { connection_id: h.ids.local })).structured.tables
        expect(tables.every((t: { unreadyShards?: unknown }) => t.unreadyShards === undefined)).toBe(true)
      }))
    it.effect("gives columns with types and operators, index flags, vectorizer, cross-references", () =>
      test(async (h) => {
        const { structured, text } = success(h, "describe_table", await h.call("describe_table", { connection_id: h.ids.local, table: "Article" }))
        expect(structured.vectorizer).toBe("text2vec-transformers")
        expect(structured.indexes).toEqual({ nullState: true, propertyLength: true, timestamps: true })
        const columns = Object.fromEntries(structured.columns.map((c: { name: string }) => [c.name, c]))
        expect(columns.uuid.primaryKey).toBe(true)
        expect(columns.wordCount.dataType).toBe("int")
        expect(columns.wordCount.operators).toContain("between")
        expect(columns.title.operators).toContain("contains")
        expect(columns.title.operators).not.toContain("REGEX")
        expect(columns.body.operators).toContain("is NULL")
        expect(columns.meta.nestedProperties).toEqual(["meta.source", "meta.views"])
        expect(structured.crossReferences).toEqual([{ property: "author", targets: ["Author"] }])
        expect(text).toContain("vectorizer: text2vec-transformers")
      }))
    it.effect("lists the tenants of a multi-tenant collection", () =>
      test(async (h) => {
        const { structured } = success(h, "describe_table", await h.call("describe_table", { connection_id: h.ids.local, table: "Ticket" }))
        expect(structured.multiTenancy).toBe(true)
        expect([...structured.tenants].sort()).toEqual(["acme", "globex"])
      }))
    it.effect("an unknown collection is not_found", () =>
      test(async (h) => {
        toolError(await h.call("describe_table", { connection_id: h.ids.local, table: "Nope" }), "not_found")
      }))
  })

  describe("search_schema", () => {
    it.effect("matches collections and properties by substring or wildcard", () =>
      test(async (h) => {
        const { structured } = success(h, "search_schema", await h.call("search_schema", { connection_id: h.ids.local, pattern: "price" }))
        expect(structured.matches).toEqual([{ collection: "Product", property: "price", dataType: "number" }])
        const wild = success(h, "search_schema", await h.call("search_schema", { connection_id: h.ids.local, pattern: "A*" }))
        expect(wild.structured.matches.map((m: { collection: string; property?: string }) => m.property ?? m.collection)).toEqual(
          expect.arrayContaining(["Article", "Author", "author", "active"])
        )
      }))
  })

  describe("browse_table", () => {
    it.effect("pages with filters and sort, gives nextOffset, leaves vectors out", () =>
      test(async (h) => {
        const { structured, text } = success(
          h,
          "browse_table",
          await h.call("browse_table", {
            connection_id: h.ids.local,
            table: "Product",
            filters: [{ column: "price", operator: "greater than", value: 100 }],
            sort: [{ column: "price", direction: "desc" }],
            limit: 5
          })
        )
        expect(structured.rows).toHaveLength(5)
        expect(structured.nextOffset).toBe(5)
        expect(structured.columns).not.toContain("vector")
        const prices = structured.rows.map((r: { price: number }) => r.price)
        expect(prices).toEqual([...prices].sort((a, b) => b - a))
        expect(prices.every((p: number) => p > 100)).toBe(true)
        expect(text).toContain("| uuid | name |")
        expect(text).toContain("offset 5")
      }))
    it.effect("stops at row 10,000: the limit is cut so offset + limit never passes it", () =>
      test(async (h) => {
        const { structured, text } = success(
          h,
          "browse_table",
          await h.call("browse_table", { connection_id: h.ids.local, table: "Product", offset: 9_990, limit: 50 })
        )
        expect(structured.limit).toBe(10)
        expect(structured.nextOffset).toBeUndefined()
        expect(text).toContain("no more rows")
        toolError(await h.call("browse_table", { connection_id: h.ids.local, table: "Product", offset: 10_000 }), "invalid_argument")
      }))
    it.effect("reads a tenant of a multi-tenant collection", () =>
      test(async (h) => {
        const { structured } = success(
          h,
          "browse_table",
          await h.call("browse_table", { connection_id: h.ids.local, table: "Ticket", tenant: "acme", limit: 100 })
        )
        expect(structured.rows).toHaveLength(15)
      }))
    it.effect("a filter the database cannot run is refused before sending: REGEX is unsupported, a bad value invalid_argument", () =>
      test(async (h) => {
        h.w.clearRequests()
        toolError(
          await h.call("browse_table", { connection_id: h.ids.local, table: "Article", filters: [{ column: "title", operator: "REGEX", value: "a.*" }] }),
          "unsupported"
        )
        toolError(
          await h.call("browse_table", { connection_id: h.ids.local, table: "Article", filters: [{ column: "wordCount", operator: "=", value: "many" }] }),
          "invalid_argument"
        )
        expect(h.w.requests.filter((r) => r.path === "/v1/graphql" || r.path === "/v1/objects")).toEqual([])
      }))
  })

  describe("count_rows", () => {
    it.effect("counts all rows and filtered rows", () =>
      test(async (h) => {
        const all = success(h, "count_rows", await h.call("count_rows", { connection_id: h.ids.local, table: "Article" }))
        expect(all.structured.count).toBe(200)
        const nulls = success(
          h,
          "count_rows",
          await h.call("count_rows", { connection_id: h.ids.local, table: "Article", filters: [{ column: "body", operator: "is NULL" }] })
        )
        expect(nulls.structured.count).toBe(20)
        expect(all.text).toBe("Article: 200 rows")
      }))

    it.effect("one row is \"1 row\"", () =>
      test(async (h) => {
        const one = success(
          h,
          "count_rows",
          await h.call("count_rows", { connection_id: h.ids.local, table: "Article", filters: [{ column: "uuid", operator: "=", value: sampleId(2, 0) }] })
        )
        expect(one.structured.count).toBe(1)
        expect(one.text).toBe("Article: 1 row matching the filters")
      }))
  })

  describe("get_row", () => {
    it.effect("reads one row; include_vector adds the vector; a missing uuid is not_found", () =>
      test(async (h) => {
        const id = sampleId(3, 0)
        const plain = success(h, "get_row", await h.call("get_row", { connection_id: h.ids.local, table: "Product", uuid: id }))
        expect(plain.structured.row.uuid).toBe(id)
        expect(plain.structured.row.vector).toBeUndefined()
        const withVector = success(h, "get_row", await h.call("get_row", { connection_id: h.ids.local, table: "Product", uuid: id, include_vector: true }))
        expect(withVector.structured.row.vector).toHaveLength(8)
        toolError(
          await h.call("get_row", { connection_id: h.ids.local, table: "Product", uuid: "00000000-0000-4000-8000-00000000dead" }),
          "not_found"
        )
        toolError(await h.call("get_row", { connection_id: h.ids.local, table: "Product", uuid: "not-a-uuid" }), "invalid_argument")
      }))
  })

  describe("vector_search", () => {
    it.effect("near_text on a vectorized collection returns rows with distances", () =>
      test(async (h) => {
        const { structured } = success(
          h,
          "vector_search",
          await h.call("vector_search", { connection_id: h.ids.local, table: "Article", mode: "near_text", query: "vector database", limit: 3 })
        )
        expect(structured.rows).toHaveLength(3)
        expect(structured.columns).toContain("distance")
        expect(structured.query).toContain("nearText")
      }))
    it.effect("near_text on a collection without a vectorizer comes back as the database's refusal", () =>
      test(async (h) => {
        const text = toolError(
          await h.call("vector_search", { connection_id: h.ids.local, table: "Product", mode: "near_text", query: "chair" }),
          "query_failed"
        )
        expect(text).toContain("Unknown argument \"nearText\"")
      }))
    it.effect("near_vector, hybrid and bm25 work with filters", () =>
      test(async (h) => {
        const near = success(
          h,
          "vector_search",
          await h.call("vector_search", { connection_id: h.ids.local, table: "Product", mode: "near_vector", vector: [0, 0, 0, 0, 0, 0, 0, 1], limit: 4 })
        )
        expect(near.structured.rows).toHaveLength(4)
        const hybrid = success(
          h,
          "vector_search",
          await h.call("vector_search", {
            connection_id: h.ids.local,
            table: "Article",
            mode: "hybrid",
            query: "river",
            alpha: 0.5,
            filters: [{ column: "wordCount", operator: ">", value: 100 }],
            limit: 5
          })
        )
        expect(hybrid.structured.columns).toContain("score")
        const bm25 = success(
          h,
          "vector_search",
          await h.call("vector_search", { connection_id: h.ids.local, table: "Product", mode: "bm25", query: "chair", properties: ["name"], limit: 5 })
        )
        expect(bm25.structured.rows.every((r: { name: string }) => r.name.toLowerCase().includes("chair"))).toBe(true)
      }))
    it.effect("a mode without its input is invalid_argument", () =>
      test(async (h) => {
        toolError(await h.call("vector_search", { connection_id: h.ids.local, table: "Product", mode: "near_vector", query: "x" }), "invalid_argument")
        toolError(await h.call("vector_search", { connection_id: h.ids.local, table: "Product", mode: "bm25" }), "invalid_argument")
      }))
  })

  describe("invalid arguments are the tool error invalid_argument, not a protocol error", () => {
    it.effect("a missing, mistyped or unknown argument", () =>
      test(async (h) => {
        const text = toolError(await h.call("describe_table", { connection_id: h.ids.local }), "invalid_argument")
        expect(text).toContain("table")
        toolError(await h.call("list_tables", { connection_id: h.ids.local, include_counts: "yes" }), "invalid_argument")
        toolError(await h.call("list_tables", { connection_id: h.ids.local, extra: 1 }), "invalid_argument")
      }))
  })

  describe("one lookup per call", () => {
    it.effect("every tool resolves its connection once: one store lookup per call, by the id the client named", () =>
      test(async (h) => {
        const id = h.ids.local!
        const principal = token("fullAccess", { id: "tok-lookups" })
        // First access granted once, outside the counted calls.
        success(h, "list_tables", await h.call("list_tables", { connection_id: id }, { principal }))
        const calls: Array<[string, Record<string, unknown>]> = [
          ["get_connection_status", {}],
          ["list_tables", {}],
          ["describe_table", { table: "Article" }],
          ["search_schema", { pattern: "title" }],
          ["browse_table", { table: "Article", limit: 2 }],
          ["count_rows", { table: "Article" }],
          ["execute_query", { query: "{ Get { Article(limit: 1) { title } } }" }],
          ["execute_query", { query: "GET /v1/schema" }]
        ]
        for (const [tool, args] of calls) {
          h.lookups.length = 0
          success(h, tool, await h.call(tool, { connection_id: id, ...args }, { principal }))
          expect(h.lookups, tool).toEqual([id])
        }
      }))
  })
})
