/**
 * `Driver/Aggregate.plan`: the GraphQL it builds, parsed back with graphql-js. No name or text a
 * caller passes can change the query's shape (property tests): a name is a property of the schema or
 * refused, and any text is exactly one string literal.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import fc from "fast-check"
import { type ArgumentNode, type FieldNode, Kind, type ObjectValueNode, type OperationDefinitionNode, parse } from "graphql"
import * as Aggregate from "../../src/Driver/Aggregate.ts"
import { decodeCollection } from "../../src/Driver/CollectionSchema.ts"

const product = decodeCollection({
  class: "Product",
  properties: [
    { name: "name", dataType: ["text"] },
    { name: "category", dataType: ["text"] },
    { name: "price", dataType: ["number"] },
    { name: "stock", dataType: ["int"] },
    { name: "colors", dataType: ["text[]"] },
    { name: "inStock", dataType: ["boolean"] },
    { name: "added", dataType: ["date"] },
    { name: "ref", dataType: ["uuid"] },
    { name: "location", dataType: ["geoCoordinates"] },
    { name: "maker", dataType: ["Company"] }
  ]
})!

const planned = (request: Aggregate.Request) => Effect.runSync(Effect.either(Aggregate.plan(product, request)))
const query = (request: Aggregate.Request) => {
  const result = planned(request)
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return result.right.query
}
const refusal = (request: Aggregate.Request) => {
  const result = planned(request)
  assert.isTrue(Either.isLeft(result), `expected a refusal for ${JSON.stringify(request)}`)
  return Either.isLeft(result) ? result.left.message : ""
}

/** The fields under `Aggregate` of a query, which must be one operation. */
const aggregateFields = (text: string): ReadonlyArray<FieldNode> => {
  const document = parse(text)
  assert.strictEqual(document.definitions.length, 1)
  const operation = document.definitions[0] as OperationDefinitionNode
  assert.strictEqual(operation.selectionSet.selections.length, 1)
  const aggregate = operation.selectionSet.selections[0] as FieldNode
  assert.strictEqual(aggregate.name.value, "Aggregate")
  return aggregate.selectionSet!.selections as ReadonlyArray<FieldNode>
}
const argument = (field: FieldNode, name: string): ArgumentNode | undefined => field.arguments?.find((a) => a.name.value === name)
const hasLoneSurrogate = (s: string) => /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s)

describe("Aggregate.plan: the query", () => {
  it("ungrouped: one Aggregate of the collection with meta count and each property's metrics together", () => {
    assert.strictEqual(
      query({ metrics: [{ property: "price", metric: "mean" }, { property: "colors", metric: "topOccurrences", limit: 3 }, { property: "price", metric: "maximum" }] }),
      "{ Aggregate { Product { meta { count } price { mean maximum } colors { topOccurrences(limit: 3) { value occurs } } } } }"
    )
  })
  it("grouped: the whole set's count under all:, the groups under groups: with one more group than the limit", () => {
    assert.strictEqual(
      query({ groupBy: "category", limit: 10, metrics: [{ property: "stock", metric: "sum" }], tenant: "acme" }),
      "{ Aggregate { all: Product(tenant: \"acme\") { meta { count } } groups: Product(groupBy: [\"category\"], limit: 11, tenant: \"acme\") " +
        "{ groupedBy { value } meta { count } stock { sum } } } }"
    )
  })
  it("a metric asked twice is one column", () => {
    const result = planned({ metrics: [{ property: "price", metric: "sum" }, { property: "price", metric: "sum" }] })
    assert.deepStrictEqual(Either.getOrThrow(result).columns, ["price:sum"])
  })
  it("searches: nearText or hybrid with objectLimit", () => {
    assert.strictEqual(query({ search: { _tag: "nearText", text: "chair" }, objectLimit: 5 }), "{ Aggregate { Product(nearText: {concepts: [\"chair\"]}, objectLimit: 5) { meta { count } } } }")
    assert.strictEqual(
      query({ search: { _tag: "hybrid", text: "chair", alpha: 0.25 }, objectLimit: 5 }),
      "{ Aggregate { Product(hybrid: {query: \"chair\", alpha: 0.25}, objectLimit: 5) { meta { count } } } }"
    )
  })
})

describe("Aggregate.plan: named vectors", () => {
  const multi = decodeCollection({
    class: "Multi",
    properties: [{ name: "title", dataType: ["text"] }],
    vectorConfig: { title_vec: { vectorizer: { none: {} } }, body_vec: { vectorizer: { none: {} } } }
  })!
  const plannedOn = (request: Aggregate.Request) => Effect.runSync(Effect.either(Aggregate.plan(multi, request)))
  const refusalOn = (request: Aggregate.Request) => {
    const result = plannedOn(request)
    return Either.isLeft(result) ? result.left.message : ""
  }
  it("target_vectors go into the search: the named vectors it searches", () => {
    const result = plannedOn({ search: { _tag: "hybrid", text: "chair", alpha: 0 }, targetVectors: ["title_vec"], objectLimit: 5 })
    assert.strictEqual(
      Either.getOrThrow(result).query,
      "{ Aggregate { Multi(hybrid: {query: \"chair\", alpha: 0, targetVectors: [\"title_vec\"]}, objectLimit: 5) { meta { count } } } }"
    )
    const near = plannedOn({ search: { _tag: "nearText", text: "chair" }, targetVectors: ["title_vec", "body_vec"], objectLimit: 5 })
    assert.include(Either.getOrThrow(near).query, "nearText: {concepts: [\"chair\"], targetVectors: [\"title_vec\", \"body_vec\"]}")
  })
  it("a collection with several named vectors needs target_vectors; unknown names and target_vectors without a search are refused", () => {
    assert.include(refusalOn({ search: { _tag: "hybrid", text: "x" }, objectLimit: 5 }), "Multi has several named vectors (body_vec, title_vec); pass target_vectors")
    assert.include(refusalOn({ search: { _tag: "hybrid", text: "x" }, targetVectors: ["nope"], objectLimit: 5 }), "Multi has no named vector nope (it has body_vec, title_vec)")
    assert.include(refusalOn({ targetVectors: ["title_vec"] }), "target_vectors apply with near_text or hybrid only")
    assert.include(refusal({ search: { _tag: "nearText", text: "x" }, targetVectors: ["v"], objectLimit: 5 }), "Product has no named vectors; leave target_vectors out")
  })
})

describe("Aggregate.plan: metrics by type", () => {
  it("each type offers Weaviate's metrics and nothing else", () => {
    const fits = (property: string) => Aggregate.METRICS.filter((metric) => Either.isRight(planned({ metrics: [{ property, metric }] })))
    assert.deepStrictEqual(fits("price"), ["count", "sum", "mean", "median", "mode", "minimum", "maximum"])
    assert.deepStrictEqual(fits("stock"), ["count", "sum", "mean", "median", "mode", "minimum", "maximum"])
    assert.deepStrictEqual(fits("category"), ["count", "topOccurrences"])
    assert.deepStrictEqual(fits("colors"), ["count", "topOccurrences"])
    assert.deepStrictEqual(fits("inStock"), ["count", "totalTrue", "totalFalse", "percentageTrue", "percentageFalse"])
    assert.deepStrictEqual(fits("added"), ["count", "median", "mode", "minimum", "maximum"])
    for (const none of ["ref", "location", "maker"]) assert.deepStrictEqual(fits(none), [])
  })
  it("the refusal names the property's type and the metrics that fit", () => {
    assert.strictEqual(
      refusal({ metrics: [{ property: "inStock", metric: "mean" }] }),
      "Statement refused: mean does not fit inStock, which is boolean; its metrics are count, totalTrue, totalFalse, percentageTrue, percentageFalse"
    )
    assert.strictEqual(refusal({ metrics: [{ property: "maker", metric: "count" }] }), "Statement refused: maker is Company: Weaviate aggregates no metric of that type")
  })
  it("group_by: text, int, number, boolean, date and uuid; not references, geo or objects", () => {
    for (const ok of ["category", "stock", "price", "inStock", "added", "ref", "colors"]) assert.isTrue(Either.isRight(planned({ groupBy: ok })), ok)
    for (const no of ["location", "maker"]) assert.include(refusal({ groupBy: no }), "Weaviate cannot group by that type")
  })
  it("limits are whole numbers in range; a search needs object_limit and object_limit a search", () => {
    assert.include(refusal({ groupBy: "category", limit: 0 }), "limit is a whole number from 1 to 1000")
    assert.include(refusal({ groupBy: "category", limit: 1.5 }), "limit is a whole number")
    assert.include(refusal({ search: { _tag: "nearText", text: "x" }, objectLimit: 10_001 }), "object_limit is a whole number from 1 to 10000")
    assert.include(refusal({ search: { _tag: "nearText", text: "x" } }), "needs object_limit")
    assert.include(refusal({ objectLimit: 3 }), "object_limit applies with near_text or hybrid only")
    assert.include(refusal({ metrics: [{ property: "category", metric: "topOccurrences", limit: 0 }] }), "from 1 to 1000")
    assert.include(refusal({ search: { _tag: "hybrid", text: "x", alpha: 2 }, objectLimit: 3 }), "alpha is a number from 0 to 1")
  })
})

describe("Aggregate.plan: nothing a caller passes can inject (property tests)", () => {
  it("any property or group_by name is a property of the schema, or refused", () => {
    const names = new Set(product.properties.map((p) => p.name))
    fc.assert(fc.property(fc.string({ unit: "binary", maxLength: 40 }), (name) => {
      const grouped = planned({ groupBy: name })
      const measured = planned({ metrics: [{ property: name, metric: "count" }] })
      if (!names.has(name)) return Either.isLeft(grouped) && Either.isLeft(measured)
      return true
    }), { numRuns: 500 })
  })
  it("any search text or tenant is exactly one string literal; the query keeps its shape", () => {
    fc.assert(fc.property(fc.string({ unit: "binary", maxLength: 60 }), fc.string({ unit: "binary", maxLength: 30 }), (text, tenant) => {
      const result = planned({ groupBy: "category", search: { _tag: "nearText", text }, objectLimit: 7, tenant })
      if (hasLoneSurrogate(text) || hasLoneSurrogate(tenant)) return Either.isLeft(result)
      const fields = aggregateFields(Either.getOrThrow(result).query)
      assert.deepStrictEqual(fields.map((f) => `${f.alias?.value}:${f.name.value}`), ["all:Product", "groups:Product"])
      for (const field of fields) {
        assert.deepStrictEqual(field.arguments!.map((a) => a.name.value).filter((n) => n !== "groupBy" && n !== "limit"), ["nearText", "objectLimit", "tenant"])
        const near = argument(field, "nearText")!.value as ObjectValueNode
        assert.strictEqual(near.fields.length, 1)
        const concepts = near.fields[0]!.value
        assert.strictEqual(concepts.kind, Kind.LIST)
        const values = concepts.kind === Kind.LIST ? concepts.values : []
        assert.strictEqual(values.length, 1)
        assert.strictEqual(values[0]!.kind === Kind.STRING ? values[0]!.value : undefined, text)
        const t = argument(field, "tenant")!.value
        assert.strictEqual(t.kind === Kind.STRING ? t.value : undefined, tenant)
      }
      return true
    }), { numRuns: 500 })
  })
  it("hybrid text likewise", () => {
    fc.assert(fc.property(fc.string({ unit: "grapheme", maxLength: 60 }), (text) => {
      const fields = aggregateFields(query({ search: { _tag: "hybrid", text }, objectLimit: 3 }))
      assert.strictEqual(fields.length, 1)
      const hybrid = argument(fields[0]!, "hybrid")!.value as ObjectValueNode
      const q = hybrid.fields.find((f) => f.name.value === "query")!.value
      assert.strictEqual(q.kind === Kind.STRING ? q.value : undefined, text)
      assert.deepStrictEqual(fields[0]!.selectionSet!.selections.map((s) => (s as FieldNode).name.value), ["meta"])
    }), { numRuns: 300 })
  })
})

describe("completion helpers", () => {
  it("metricNames lists property:metric by type; metricTextProblem explains a misfit", () => {
    assert.deepStrictEqual(Aggregate.metricNames(product).filter((m) => m.startsWith("inStock:")), [
      "inStock:count",
      "inStock:totalTrue",
      "inStock:totalFalse",
      "inStock:percentageTrue",
      "inStock:percentageFalse"
    ])
    assert.isFalse(Aggregate.metricNames(product).some((m) => m.startsWith("location:") || m.startsWith("maker:") || m.startsWith("ref:")))
    assert.isUndefined(Aggregate.metricTextProblem(product, "price:mean"))
    assert.strictEqual(Aggregate.metricTextProblem(product, "price:topOccurrences"), "topOccurrences does not fit price, which is number; its metrics are count, sum, mean, median, mode, minimum, maximum")
    assert.strictEqual(Aggregate.metricTextProblem(product, "price:avg"), "\"avg\" is not a metric (metrics: count, sum, mean, median, mode, minimum, maximum, topOccurrences, totalTrue, totalFalse, percentageTrue, percentageFalse)")
  })
})
