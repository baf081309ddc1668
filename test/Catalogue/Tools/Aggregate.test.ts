/**
 * `aggregate` in process against the real Weaviate with the sample data (scale 0.1: Author 20,
 * Article 200, Product 150, Ticket 15 per tenant). Every expected figure is computed here from the
 * same generated rows (`sampleObjects`), not read back from the database.
 */
import { layer } from "@effect/vitest"
import { describe, expect } from "vitest"
import { sampleObjects } from "../../weaviate/SampleData.ts"
import { currentTarget } from "../../weaviate/Target.ts"
import { type Harness, harnessLayer, protocolError, success, token, toolError, withHarness } from "./support.ts"

const real = currentTarget().kind !== "compatible"

const rows = sampleObjects(0.1)
const of = (cls: string, tenant?: string) =>
  rows.filter((o) => o["class"] === cls && (tenant === undefined || o["tenant"] === tenant)).map((o) => o["properties"] as Record<string, any>)

const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)
const mean = (xs: ReadonlyArray<number>) => sum(xs) / xs.length
const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const frequencies = <A>(xs: ReadonlyArray<A>) => {
  const m = new Map<A, number>()
  for (const x of xs) m.set(x, (m.get(x) ?? 0) + 1)
  return m
}
/** The values that occur most often. */
const modes = <A>(xs: ReadonlyArray<A>) => {
  const f = frequencies(xs)
  const top = Math.max(...f.values())
  return [...f].filter(([, n]) => n === top).map(([v]) => v)
}
const groupBy = <A>(xs: ReadonlyArray<A>, key: (a: A) => string) => {
  const m = new Map<string, Array<A>>()
  for (const x of xs) (m.get(key(x)) ?? m.set(key(x), []).get(key(x))!).push(x)
  return m
}
const close = (actual: unknown, expected: number) => expect(actual as number).toBeCloseTo(expected, 6)
const epoch = (date: string) => Date.parse(date)

const test = withHarness((h) => {
  h.w.setFault({ kind: "none" })
  h.w.clearRequests()
})

const call = (h: Harness, args: Record<string, unknown>, principal = token("fullAccess")) =>
  h.call("aggregate", { connection_id: h.ids.silent, ...args }, { principal })

const graphqlSent = (h: Harness) => h.w.requests.filter((r) => r.path === "/v1/graphql")

layer(harnessLayer(), { excludeTestServices: true, timeout: "3 minutes" })("aggregate", (it) => {
  describe("metrics by type, checked against the rows counted here", () => {
    it.effect("numeric metrics over the whole set: count, sum, mean, median, mode, minimum, maximum (number and int)", () =>
      test(async (h) => {
        const products = of("Product")
        const prices = products.map((p) => p.price as number)
        const stocks = products.map((p) => p.stock as number)
        const metrics = ["count", "sum", "mean", "median", "mode", "minimum", "maximum"].flatMap((metric) => [
          { property: "price", metric },
          { property: "stock", metric }
        ])
        const { structured, text } = success(h, "aggregate", await call(h, { table: "Product", metrics }))
        expect(structured.count).toBe(products.length)
        expect(structured.rows).toHaveLength(1)
        const row = structured.rows[0]
        expect(row.count).toBe(products.length)
        expect(row["price:count"]).toBe(prices.length)
        close(row["price:sum"], sum(prices))
        close(row["price:mean"], mean(prices))
        close(row["price:median"], median(prices))
        expect(modes(prices)).toContain(row["price:mode"])
        expect(row["price:minimum"]).toBe(Math.min(...prices))
        expect(row["price:maximum"]).toBe(Math.max(...prices))
        expect(row["stock:sum"]).toBe(sum(stocks))
        close(row["stock:mean"], mean(stocks))
        close(row["stock:median"], median(stocks))
        expect(modes(stocks)).toContain(row["stock:mode"])
        expect(row["stock:minimum"]).toBe(Math.min(...stocks))
        expect(row["stock:maximum"]).toBe(Math.max(...stocks))
        expect(structured.columns).toEqual(["count", ...metrics.map((m) => `${m.property}:${m.metric}`)])
        expect(text).toContain(`Product: ${products.length} rows in all`)
      }))

    it.effect("text metrics: count of values present, and topOccurrences with its limit (text and text[])", () =>
      test(async (h) => {
        const articles = of("Article")
        const { structured } = success(
          h,
          "aggregate",
          await call(h, {
            table: "Article",
            metrics: [{ property: "body", metric: "count" }, { property: "tags", metric: "topOccurrences", limit: 3 }]
          })
        )
        const row = structured.rows[0]
        expect(row["body:count"]).toBe(articles.filter((a) => a.body !== undefined).length)
        const tags = frequencies(articles.flatMap((a) => a.tags as Array<string>))
        const top = row["tags:topOccurrences"] as Array<{ value: string; occurs: number }>
        expect(top).toHaveLength(3)
        for (const o of top) expect(o.occurs).toBe(tags.get(o.value))
        // The three listed are the most frequent: none left out occurs more often.
        const leastListed = Math.min(...top.map((o) => o.occurs))
        for (const [value, n] of tags) if (!top.some((o) => o.value === value)) expect(n).toBeLessThanOrEqual(leastListed)
      }))

    it.effect("boolean metrics: count, totalTrue, totalFalse, percentageTrue, percentageFalse", () =>
      test(async (h) => {
        const authors = of("Author")
        const active = authors.filter((a) => a.active === true).length
        const metrics = ["count", "totalTrue", "totalFalse", "percentageTrue", "percentageFalse"].map((metric) => ({ property: "active", metric }))
        const row = success(h, "aggregate", await call(h, { table: "Author", metrics })).structured.rows[0]
        expect(row["active:count"]).toBe(authors.length)
        expect(row["active:totalTrue"]).toBe(active)
        expect(row["active:totalFalse"]).toBe(authors.length - active)
        close(row["active:percentageTrue"], active / authors.length)
        close(row["active:percentageFalse"], (authors.length - active) / authors.length)
      }))

    it.effect("date metrics: count, minimum, maximum, median, mode", () =>
      test(async (h) => {
        const born = of("Author").map((a) => a.born as string)
        const metrics = ["count", "minimum", "maximum", "median", "mode"].map((metric) => ({ property: "born", metric }))
        const row = success(h, "aggregate", await call(h, { table: "Author", metrics })).structured.rows[0]
        const times = born.map(epoch)
        expect(row["born:count"]).toBe(born.length)
        expect(epoch(row["born:minimum"])).toBe(Math.min(...times))
        expect(epoch(row["born:maximum"])).toBe(Math.max(...times))
        expect(epoch(row["born:median"])).toBe(median(times))
        expect(modes(times)).toContain(epoch(row["born:mode"]))
      }))
  })

  describe("grouped", () => {
    it.effect("one row per group with its count and metrics, largest first, and the whole set's count", () =>
      test(async (h) => {
        const products = of("Product")
        const { structured, text } = success(
          h,
          "aggregate",
          await call(h, {
            table: "Product",
            group_by: "category",
            metrics: [{ property: "price", metric: "mean" }, { property: "stock", metric: "sum" }, { property: "price", metric: "maximum" }]
          })
        )
        const expected = groupBy(products, (p) => p.category as string)
        expect(structured.groupBy).toBe("category")
        expect(structured.count).toBe(products.length)
        expect(structured.columns).toEqual(["category", "count", "price:mean", "stock:sum", "price:maximum"])
        expect(structured.rows.map((r: any) => r.category).sort()).toEqual([...expected.keys()].sort())
        expect(structured.moreGroups).toBe(false)
        const counts = structured.rows.map((r: any) => r.count)
        expect(counts).toEqual([...counts].sort((a, b) => b - a))
        for (const row of structured.rows) {
          const group = expected.get(row.category)!
          expect(row.count).toBe(group.length)
          close(row["price:mean"], mean(group.map((p) => p.price)))
          expect(row["stock:sum"]).toBe(sum(group.map((p) => p.stock)))
          expect(row["price:maximum"]).toBe(Math.max(...group.map((p) => p.price)))
        }
        expect(text.split("\n")[0]).toBe("| category | count | price:mean | stock:sum | price:maximum |")
        expect(text).toContain(`Product: ${products.length} rows in all; ${expected.size} groups by category`)
      }))

    it.effect("grouped by a boolean, with boolean and date metrics per group", () =>
      test(async (h) => {
        const articles = of("Article")
        const { structured } = success(
          h,
          "aggregate",
          await call(h, {
            table: "Article",
            group_by: "featured",
            metrics: [{ property: "wordCount", metric: "sum" }, { property: "published", metric: "minimum" }]
          })
        )
        const expected = groupBy(articles, (a) => String(a.featured))
        expect(structured.rows).toHaveLength(expected.size)
        for (const row of structured.rows) {
          const group = expected.get(row.featured)!
          expect(row.count).toBe(group.length)
          expect(row["wordCount:sum"]).toBe(sum(group.map((a) => a.wordCount)))
          expect(epoch(row["published:minimum"])).toBe(Math.min(...group.map((a) => epoch(a.published))))
        }
      }))

    it.effect("a grid longer than the text cap is cut with how to narrow it; structuredContent keeps every group", () =>
      test(async (h) => {
        const articles = of("Article")
        const { structured, text } = success(
          h,
          "aggregate",
          await call(h, {
            table: "Article",
            group_by: "title",
            limit: 1000,
            metrics: [
              ...["body", "tags"].map((property) => ({ property, metric: "topOccurrences", limit: 10 })),
              ...["count", "minimum", "maximum", "median", "mode"].map((metric) => ({ property: "published", metric })),
              ...["sum", "mean", "median", "minimum", "maximum"].flatMap((metric) => [{ property: "wordCount", metric }, { property: "scores", metric }])
            ]
          })
        )
        expect(structured.rows).toHaveLength(new Set(articles.map((a) => a.title)).size)
        expect(text.length).toBeLessThanOrEqual(32_000)
        expect(text.split("\n").at(-1)).toMatch(
          /^\[cut: this text is capped at 32,000 characters and held [\d,]+; structuredContent has all of it\. To see the rest, narrow or page: a smaller limit, fewer metrics, or filters\]$/
        )
      }))

    it.effect("limit keeps the largest groups and says there are more", () =>
      test(async (h) => {
        const products = of("Product")
        const sizes = [...groupBy(products, (p) => p.category).values()].map((g) => g.length).sort((a, b) => b - a)
        const { structured, text } = success(h, "aggregate", await call(h, { table: "Product", group_by: "category", limit: 2 }))
        expect(structured.rows.map((r: any) => r.count)).toEqual(sizes.slice(0, 2))
        expect(structured.moreGroups).toBe(true)
        expect(structured.count).toBe(products.length)
        expect(text).toContain("[more groups: only the 2 largest are shown")
      }))
  })

  describe("filters, tenants and searches", () => {
    it.effect("filters narrow the set, grouped and ungrouped (browse_table's typed filters)", () =>
      test(async (h) => {
        const cheap = of("Product").filter((p) => p.price < 500 && p.category !== "Office")
        const filters = [{ column: "price", operator: "<", value: 500 }, { column: "category", operator: "!=", value: "Office" }]
        const whole = success(h, "aggregate", await call(h, { table: "Product", filters, metrics: [{ property: "price", metric: "sum" }] })).structured
        expect(whole.count).toBe(cheap.length)
        close(whole.rows[0]["price:sum"], sum(cheap.map((p) => p.price)))
        const grouped = success(h, "aggregate", await call(h, { table: "Product", filters, group_by: "category", metrics: [{ property: "stock", metric: "sum" }] })).structured
        const expected = groupBy(cheap, (p) => p.category)
        expect(grouped.count).toBe(cheap.length)
        expect(Object.fromEntries(grouped.rows.map((r: any) => [r.category, [r.count, r["stock:sum"]]]))).toEqual(
          Object.fromEntries([...expected].map(([k, g]) => [k, [g.length, sum(g.map((p) => p.stock))]]))
        )
      }))

    it.effect("a filter the database cannot run is refused before anything is sent", () =>
      test(async (h) => {
        toolError(await call(h, { table: "Product", filters: [{ column: "price", operator: "contains", value: "x" }] }), "invalid_argument")
        expect(graphqlSent(h)).toHaveLength(0)
      }))

    it.effect("a tenant's rows only; a multi-tenant collection without tenant is refused naming its tenants", () =>
      test(async (h) => {
        for (const tenant of ["acme", "globex"]) {
          const tickets = of("Ticket", tenant)
          const { structured } = success(
            h,
            "aggregate",
            await call(h, { table: "Ticket", tenant, group_by: "status", metrics: [{ property: "priority", metric: "mean" }, { property: "priority", metric: "sum" }] })
          )
          expect(structured.count).toBe(tickets.length)
          for (const row of structured.rows) {
            const group = tickets.filter((t) => t.status === row.status)
            expect(row.count).toBe(group.length)
            close(row["priority:mean"], mean(group.map((t) => t.priority)))
            expect(row["priority:sum"]).toBe(sum(group.map((t) => t.priority)))
          }
          expect(sum(structured.rows.map((r: any) => r.count))).toBe(tickets.length)
        }
        expect(toolError(await call(h, { table: "Ticket" }), "invalid_argument")).toBe(
          "invalid_argument: Ticket is multi-tenant; pass tenant (tenants: acme, globex)"
        )
      }))

    it.effect.skipIf(!real)("a tenant-scoped token aggregates its own tenant; another is -33007, as for browse_table", () =>
      test(async (h) => {
        const scoped = token("fullAccess", { id: "tok-acme-aggregate", tenants: { [h.ids.silent!]: { Ticket: ["acme"] } } })
        const own = success(h, "aggregate", await call(h, { table: "Ticket", tenant: "acme" }, scoped)).structured
        expect(own.count).toBe(of("Ticket", "acme").length)
        h.w.clearRequests()
        protocolError(await call(h, { table: "Ticket", tenant: "globex" }, scoped), -33007)
        expect(graphqlSent(h)).toHaveLength(0)
      }))

    it.effect("a connection outside the token's allowlist is -33007, a blocked connection too; read-only connections aggregate", () =>
      test(async (h) => {
        const allowlisted = token("readOnly", { id: "tok-allow-aggregate", connections: { _tag: "Some", value: [h.ids.local!] } as never })
        protocolError(await call(h, { table: "Product" }, allowlisted), -33007)
        protocolError(await h.call("aggregate", { connection_id: h.ids.blocked, table: "Product" }), -33007)
        expect(graphqlSent(h)).toHaveLength(0)
        // A read: a connection whose AI policy is readOnly, or in Safe Mode readOnly, aggregates as any other.
        for (const id of [h.ids.aiRead, h.ids.guarded]) {
          expect(success(h, "aggregate", await h.call("aggregate", { connection_id: id, table: "Product" }, { principal: token("readOnly") })).structured.count)
            .toBe(of("Product").length)
        }
      }))

    it.effect("near_text on a collection without a text vectorizer comes back as the database's refusal", () =>
      test(async (h) => {
        const text = toolError(await call(h, { table: "Product", near_text: "chair", object_limit: 5 }), "query_failed")
        expect(text).toContain("nearText")
      }))

    it.effect("near_text with object_limit aggregates the search's best matches: the same rows vector_search returns", () =>
      test(async (h) => {
        const found = success(
          h,
          "vector_search",
          await h.call("vector_search", { connection_id: h.ids.silent, table: "Article", mode: "near_text", query: "river bridge", limit: 10 })
        ).structured.rows
        const { structured } = success(
          h,
          "aggregate",
          await call(h, { table: "Article", near_text: "river bridge", object_limit: 10, metrics: [{ property: "wordCount", metric: "sum" }] })
        )
        expect(structured.count).toBe(10)
        expect(structured.rows[0]["wordCount:sum"]).toBe(sum(found.map((r: any) => r.wordCount)))
        expect(structured.query).toContain('nearText: {concepts: ["river bridge"]}, objectLimit: 10')
      }))

    it.effect("hybrid with object_limit aggregates the best matches of each side: at most twice object_limit", () =>
      test(async (h) => {
        // Weaviate takes object_limit matches from the keyword side and from the vector side, then their union.
        const { structured } = success(h, "aggregate", await call(h, { table: "Article", hybrid: "river", alpha: 0.5, object_limit: 7, group_by: "featured" }))
        expect(structured.count).toBeGreaterThanOrEqual(7)
        expect(structured.count).toBeLessThanOrEqual(14)
        expect(sum(structured.rows.map((r: any) => r.count))).toBe(structured.count)
      }))

    it.effect("a search without object_limit, object_limit without a search, both searches, alpha without hybrid: refused", () =>
      test(async (h) => {
        expect(toolError(await call(h, { table: "Article", near_text: "river" }), "invalid_argument")).toContain("needs object_limit")
        expect(toolError(await call(h, { table: "Article", object_limit: 5 }), "invalid_argument")).toContain("object_limit applies with near_text or hybrid only")
        expect(toolError(await call(h, { table: "Article", near_text: "a", hybrid: "b", object_limit: 5 }), "invalid_argument")).toContain("not both")
        expect(toolError(await call(h, { table: "Article", near_text: "a", alpha: 0.5, object_limit: 5 }), "invalid_argument")).toContain("alpha applies to hybrid only")
        expect(graphqlSent(h)).toHaveLength(0)
      }))
  })

  describe("refusals", () => {
    it.effect("a metric that does not fit the property's type is refused with the metrics that do", () =>
      test(async (h) => {
        expect(toolError(await call(h, { table: "Product", metrics: [{ property: "price", metric: "topOccurrences" }] }), "invalid_argument")).toBe(
          "invalid_argument: Statement refused: topOccurrences does not fit price, which is number; its metrics are count, sum, mean, median, mode, minimum, maximum"
        )
        expect(toolError(await call(h, { table: "Product", metrics: [{ property: "category", metric: "mean" }] }), "invalid_argument")).toContain(
          "mean does not fit category, which is text; its metrics are count, topOccurrences"
        )
        expect(toolError(await call(h, { table: "Author", metrics: [{ property: "active", metric: "sum" }] }), "invalid_argument")).toContain(
          "its metrics are count, totalTrue, totalFalse, percentageTrue, percentageFalse"
        )
        expect(toolError(await call(h, { table: "Author", metrics: [{ property: "born", metric: "sum" }] }), "invalid_argument")).toContain(
          "sum does not fit born, which is date; its metrics are count, minimum, maximum, median, mode"
        )
        expect(toolError(await call(h, { table: "Product", metrics: [{ property: "location", metric: "count" }] }), "invalid_argument")).toContain(
          "location is geoCoordinates: Weaviate aggregates no metric of that type"
        )
        expect(toolError(await call(h, { table: "Product", metrics: [{ property: "price", metric: "mean", limit: 3 }] }), "invalid_argument")).toContain(
          "limit applies to topOccurrences only"
        )
        expect(graphqlSent(h)).toHaveLength(0)
      }))

    it.effect("an unknown property, a group_by Weaviate cannot group by, limit without group_by: refused", () =>
      test(async (h) => {
        expect(toolError(await call(h, { table: "Product", group_by: "colour" }), "invalid_argument")).toContain("Product has no property colour (group_by")
        expect(toolError(await call(h, { table: "Product", group_by: "location" }), "invalid_argument")).toContain("Weaviate cannot group by that type")
        expect(toolError(await call(h, { table: "Product", metrics: [{ property: "nope", metric: "count" }] }), "invalid_argument")).toContain("Product has no property nope")
        expect(toolError(await call(h, { table: "Product", limit: 3 }), "invalid_argument")).toContain("it applies with group_by only")
        expect(toolError(await call(h, { table: "Product", metrics: [{ property: "price", metric: "average" }] }), "invalid_argument")).toContain("metrics.0.metric")
        expect(graphqlSent(h)).toHaveLength(0)
      }))

    it.effect("a hostile collection or property name cannot inject: it is refused before anything reaches GraphQL", () =>
      test(async (h) => {
        const hostileTable = "Product(where: {path: [\"price\"], operator: GreaterThan, valueNumber: 0}) { meta { count } } Author"
        expect(toolError(await call(h, { table: hostileTable }), "not_found")).toContain("Collection not found")
        const hostileProperty = "price { sum } } Author { meta { count } } x: Product { price"
        expect(toolError(await call(h, { table: "Product", metrics: [{ property: hostileProperty, metric: "sum" }] }), "invalid_argument")).toContain(
          "is not a property name"
        )
        expect(toolError(await call(h, { table: "Product", group_by: "category\"]) { meta { count } } Author(groupBy: [\"name" }), "invalid_argument"))
          .toContain("is not a property name (group_by)")
        expect(graphqlSent(h)).toHaveLength(0)
      }))

    it.effect("hostile text in a search or a filter is one escaped string: the query keeps its shape", () =>
      test(async (h) => {
        const hostile = "x\"]}, objectLimit: 10000) { meta { count } } Author { meta { count } } y: Article(nearText: {concepts: [\"z"
        const { structured } = success(h, "aggregate", await call(h, { table: "Article", near_text: hostile, object_limit: 3 }))
        expect(structured.count).toBe(3)
        expect(structured.query).toBe(`{ Aggregate { Article(nearText: {concepts: [${JSON.stringify(hostile)}]}, objectLimit: 3) { meta { count } } } }`)
        const filtered = success(h, "aggregate", await call(h, { table: "Product", filters: [{ column: "category", operator: "=", value: hostile }] })).structured
        expect(filtered.count).toBe(0)
      }))
  })
})
