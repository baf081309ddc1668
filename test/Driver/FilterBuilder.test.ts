import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import fc from "fast-check"
import { Kind, parse, type ObjectValueNode, type OperationDefinitionNode, type FieldNode } from "graphql"
import { decodeCollection } from "../../src/Driver/CollectionSchema.ts"
import * as FilterBuilder from "../../src/Driver/FilterBuilder.ts"

const article = decodeCollection({
  class: "Article",
  invertedIndexConfig: { indexNullState: true, indexPropertyLength: true },
  properties: [
    { name: "title", dataType: ["text"] },
    { name: "wordCount", dataType: ["int"] },
    { name: "price", dataType: ["number"] },
    { name: "published", dataType: ["date"] },
    { name: "active", dataType: ["boolean"] },
    { name: "tags", dataType: ["text[]"] },
    { name: "scores", dataType: ["number[]"] },
    { name: "ref", dataType: ["uuid"] },
    { name: "meta", dataType: ["object"], nestedProperties: [{ name: "source", dataType: ["text"] }] },
    { name: "author", dataType: ["Author"] },
    { name: "hidden", dataType: ["text"], indexFilterable: false }
  ]
})!
const plain = decodeCollection({ class: "Plain", properties: [{ name: "title", dataType: ["text"] }, { name: "tags", dataType: ["text[]"] }] })!

const where = (collection = article, ...filters: Array<FilterBuilder.Filter>) => {
  const result = FilterBuilder.buildWhere(collection, filters)
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return result.right === undefined ? undefined : FilterBuilder.printWhere(result.right)
}
const refused = (collection: typeof article, filter: FilterBuilder.Filter) => {
  const result = FilterBuilder.buildWhere(collection, [filter])
  assert.isTrue(Either.isLeft(result), `expected a refusal for ${JSON.stringify(filter)}`)
  return Either.isLeft(result) ? result.left.message : ""
}

describe("FilterBuilder: the contract's operator table", () => {
  it("equals and not equals are Equal and NotEqual, typed from the schema", () => {
    assert.strictEqual(where(article, { column: "title", operator: "equals", value: "hello" }), `{path: ["title"], operator: Equal, valueText: "hello"}`)
    assert.strictEqual(where(article, { column: "wordCount", operator: "not equals", value: "42" }), `{path: ["wordCount"], operator: NotEqual, valueInt: 42}`)
    assert.strictEqual(where(article, { column: "active", operator: "=", value: "TRUE" }), `{path: ["active"], operator: Equal, valueBoolean: true}`)
    assert.strictEqual(where(article, { column: "uuid", operator: "=", value: "00000000-0000-0000-0000-00000000000A" }), `{path: ["id"], operator: Equal, valueText: "00000000-0000-0000-0000-00000000000a"}`)
  })
  it("int and number columns filter as numbers", () => {
    assert.strictEqual(where(article, { column: "price", operator: ">", value: "2.5" }), `{path: ["price"], operator: GreaterThan, valueNumber: 2.5}`)
    assert.strictEqual(where(article, { column: "wordCount", operator: ">=", value: 7 }), `{path: ["wordCount"], operator: GreaterThanEqual, valueInt: 7}`)
    assert.match(refused(article, { column: "wordCount", operator: "=", value: "1.5" }), /not an integer/)
    assert.match(refused(article, { column: "price", operator: "<", value: "abc" }), /not a number/)
    assert.match(refused(article, { column: "price", operator: "<", value: "Infinity" }), /not a number/)
  })
  it("greater/less operators are for numbers and dates only", () => {
    assert.strictEqual(where(article, { column: "published", operator: "less than", value: "2024-01-01T00:00:00Z" }), `{path: ["published"], operator: LessThan, valueDate: "2024-01-01T00:00:00Z"}`)
    assert.strictEqual(where(article, { column: "wordCount", operator: "<=", value: "3" }), `{path: ["wordCount"], operator: LessThanEqual, valueInt: 3}`)
    assert.match(refused(article, { column: "title", operator: "greater than", value: "a" }), /int, number and date/)
  })
  it("a date needs a complete RFC 3339 timestamp", () => {
    assert.match(refused(article, { column: "published", operator: "=", value: "2024-01-01" }), /complete RFC 3339/)
    assert.match(refused(article, { column: "published", operator: "=", value: "2024-01-01T00:00:00" }), /complete RFC 3339/)
    assert.match(refused(article, { column: "published", operator: "=", value: "2024-02-30T00:00:00Z" }), /complete RFC 3339/)
    assert.isString(where(article, { column: "published", operator: "=", value: "2024-02-29T10:00:00.5+02:00" }))
  })
  it("contains, not contains, starts with, ends with are Like with * on text and uuid only", () => {
    assert.strictEqual(where(article, { column: "title", operator: "contains", value: "ell" }), `{path: ["title"], operator: Like, valueText: "*ell*"}`)
    assert.strictEqual(where(article, { column: "title", operator: "starts with", value: "he" }), `{path: ["title"], operator: Like, valueText: "he*"}`)
    assert.strictEqual(where(article, { column: "title", operator: "ends with", value: "lo" }), `{path: ["title"], operator: Like, valueText: "*lo"}`)
    assert.strictEqual(where(article, { column: "title", operator: "not contains", value: "x" }), `{operator: Not, operands: [{path: ["title"], operator: Like, valueText: "*x*"}]}`)
    assert.match(refused(article, { column: "wordCount", operator: "contains", value: "1" }), /text columns and the uuid \(object id\) column only/)
    // the real Weaviate 1.39 matches Like on id (test/weaviate/Fidelity.test.ts)
    assert.strictEqual(where(article, { column: "uuid", operator: "starts with", value: "0000ABCD-" }), `{path: ["id"], operator: Like, valueText: "0000abcd-*"}`)
    assert.match(refused(article, { column: "uuid", operator: "contains", value: "x*" }), /not part of a uuid/)
  })
  it("in list and not in list are ContainsAny and ContainsNone over a comma-separated list", () => {
    assert.strictEqual(where(article, { column: "tags", operator: "in list", value: "a, b,c" }), `{path: ["tags"], operator: ContainsAny, valueText: ["a", "b", "c"]}`)
    assert.strictEqual(where(article, { column: "wordCount", operator: "not in list", value: "1,2" }), `{path: ["wordCount"], operator: ContainsNone, valueInt: [1, 2]}`)
    assert.match(refused(article, { column: "wordCount", operator: "in list", value: "1,,2" }), /empty element/)
  })
  it("between has two inclusive bounds", () => {
    assert.strictEqual(
      where(article, { column: "price", operator: "between", value: "100 and 300" }),
      `{operator: And, operands: [{path: ["price"], operator: GreaterThanEqual, valueNumber: 100}, {path: ["price"], operator: LessThanEqual, valueNumber: 300}]}`
    )
    assert.match(refused(article, { column: "price", operator: "between", value: "100" }), /two bounds/)
  })
  it("is NULL needs indexNullState", () => {
    assert.strictEqual(where(article, { column: "title", operator: "is NULL" }), `{path: ["title"], operator: IsNull, valueBoolean: true}`)
    assert.strictEqual(where(article, { column: "title", operator: "is not null" }), `{path: ["title"], operator: IsNull, valueBoolean: false}`)
    assert.match(refused(plain, { column: "title", operator: "is NULL" }), /indexNullState/)
  })
  it("is empty needs indexPropertyLength and uses len()", () => {
    assert.strictEqual(where(article, { column: "tags", operator: "is empty" }), `{path: ["len(tags)"], operator: Equal, valueInt: 0}`)
    assert.strictEqual(where(article, { column: "title", operator: "is not empty" }), `{path: ["len(title)"], operator: GreaterThan, valueInt: 0}`)
    assert.match(refused(plain, { column: "tags", operator: "is empty" }), /indexPropertyLength/)
    assert.match(refused(article, { column: "wordCount", operator: "is empty" }), /text and array/)
  })
  it("REGEX is refused with a reason", () => {
    assert.match(refused(article, { column: "title", operator: "REGEX", value: "^a" }), /REGEX is not supported/)
  })
  it("an array property filters on one element", () => {
    assert.strictEqual(where(article, { column: "scores", operator: "=", value: "1.5" }), `{path: ["scores"], operator: Equal, valueNumber: 1.5}`)
    assert.match(refused(article, { column: "scores", operator: "=", value: ["1", "2"] }), /one value/)
  })
  it("unknown columns, vectors, objects, references and unindexed properties are refused", () => {
    assert.match(refused(article, { column: "nope", operator: "=", value: "1" }), /no column "nope"/)
    assert.match(refused(article, { column: "vector", operator: "=", value: "1" }), /vector/)
    assert.match(refused(article, { column: "meta", operator: "=", value: "1" }), /cannot be filtered/)
    assert.match(refused(article, { column: "author", operator: "=", value: "1" }), /cross-reference/)
    assert.match(refused(article, { column: "hidden", operator: "=", value: "1" }), /indexFilterable/)
    assert.match(refused(article, { column: "title", operator: "like", value: "1" }), /unknown operator/)
  })
  it("several filters are joined with And", () => {
    assert.strictEqual(
      where(article, { column: "title", operator: "=", value: "a" }, { column: "wordCount", operator: ">", value: "1" }),
      `{operator: And, operands: [{path: ["title"], operator: Equal, valueText: "a"}, {path: ["wordCount"], operator: GreaterThan, valueInt: 1}]}`
    )
  })
  it("operatorsFor lists the operators each column accepts", () => {
    assert.deepStrictEqual(FilterBuilder.operatorsFor(article, "wordCount"), [
      "equals", "not equals", "greater than", "greater or equal", "less than", "less or equal", "in list", "not in list", "between", "is NULL", "is not NULL"
    ])
    assert.includeMembers([...FilterBuilder.operatorsFor(article, "title")], ["contains", "is empty"])
    assert.deepStrictEqual(FilterBuilder.operatorsFor(article, "vector"), [])
  })
})

describe("FilterBuilder: the --filter text form", () => {
  const parsed = (text: string) => Either.getOrThrow(FilterBuilder.parseFilterText(text))
  it("parses words and symbols", () => {
    assert.deepStrictEqual(parsed("price between 100 and 300"), { column: "price", operator: "between", value: "100 and 300" })
    assert.deepStrictEqual(parsed("n>=3"), { column: "n", operator: "greater or equal", value: "3" })
    assert.deepStrictEqual(parsed("n != 3"), { column: "n", operator: "not equals", value: "3" })
    assert.deepStrictEqual(parsed("note is not NULL"), { column: "note", operator: "is not NULL" })
    assert.deepStrictEqual(parsed("tags not in list a, b"), { column: "tags", operator: "not in list", value: "a, b" })
    assert.deepStrictEqual(parsed(`title equals "two words"`), { column: "title", operator: "equals", value: "two words" })
    assert.deepStrictEqual(parsed("title contains"), { column: "title", operator: "contains", value: "" })
    assert.isTrue(Either.isLeft(FilterBuilder.parseFilterText("title resembles x")))
  })
  it("parses sorts", () => {
    assert.deepStrictEqual(Either.getOrThrow(FilterBuilder.parseSortText("price:desc")), { column: "price", direction: "desc" })
    assert.deepStrictEqual(Either.getOrThrow(FilterBuilder.parseSortText("price")), { column: "price", direction: "asc" })
    assert.isTrue(Either.isLeft(FilterBuilder.parseSortText("price:up")))
  })
  it("refuses sorting by uuid, vector or unknown columns", () => {
    assert.isTrue(Either.isLeft(FilterBuilder.buildSort(article, [{ column: "vector", direction: "asc" }])))
    assert.isTrue(Either.isLeft(FilterBuilder.buildSort(article, [{ column: "author", direction: "asc" }])))
    assert.strictEqual(Either.getOrThrow(FilterBuilder.buildSort(article, [{ column: "price", direction: "desc" }])), `[{path: ["price"], order: desc}]`)
  })
})

/** The `where` argument of `{ Get { Article(where: …) { title } } }`, parsed by graphql-js. */
const parsedWhere = (literal: string): ObjectValueNode => {
  const document = parse(`{ Get { Article(where: ${literal}) { title } } }`)
  assert.strictEqual(document.definitions.length, 1)
  const operation = document.definitions[0] as OperationDefinitionNode
  const get = operation.selectionSet.selections[0] as FieldNode
  assert.strictEqual(operation.selectionSet.selections.length, 1)
  assert.strictEqual(get.selectionSet!.selections.length, 1)
  const articleField = get.selectionSet!.selections[0] as FieldNode
  assert.strictEqual(articleField.arguments!.length, 1)
  assert.strictEqual(articleField.selectionSet!.selections.length, 1)
  const value = articleField.arguments![0]!.value
  assert.strictEqual(value.kind, Kind.OBJECT)
  return value as ObjectValueNode
}
const stringField = (node: ObjectValueNode, name: string) => {
  const field = node.fields.find((f) => f.name.value === name)!
  return field.value.kind === Kind.STRING ? field.value.value : undefined
}
const hasLoneSurrogate = (s: string) => /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s)

describe("FilterBuilder: values cannot inject GraphQL (property tests)", () => {
  it("any text value reaches the query as exactly one string literal", () => {
    fc.assert(fc.property(fc.string({ unit: "binary", maxLength: 60 }), (value) => {
      const result = FilterBuilder.buildWhere(article, [{ column: "title", operator: "equals", value }])
      if (hasLoneSurrogate(value) || value.length === 0) return Either.isLeft(result)
      const literal = FilterBuilder.printWhere(Either.getOrThrow(result)!)
      const node = parsedWhere(literal)
      assert.strictEqual(node.fields.length, 3)
      assert.strictEqual(stringField(node, "valueText"), value)
      return true
    }), { numRuns: 500 })
  })
  it("Like patterns keep the value intact around the wildcards", () => {
    fc.assert(fc.property(fc.string({ unit: "grapheme", minLength: 1, maxLength: 40 }), (value) => {
      const literal = FilterBuilder.printWhere(Either.getOrThrow(FilterBuilder.buildWhere(article, [{ column: "title", operator: "contains", value }]))!)
      assert.strictEqual(stringField(parsedWhere(literal), "valueText"), `*${value}*`)
    }), { numRuns: 300 })
  })
  it("list elements stay separate string literals", () => {
    fc.assert(fc.property(fc.array(fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }).filter((s) => !s.includes(",") && s.trim() === s && s.length > 0), { minLength: 1, maxLength: 5 }), (items) => {
      const literal = FilterBuilder.printWhere(Either.getOrThrow(FilterBuilder.buildWhere(article, [{ column: "tags", operator: "in list", value: items.join(",") }]))!)
      const field = parsedWhere(literal).fields.find((f) => f.name.value === "valueText")!
      assert.strictEqual(field.value.kind, Kind.LIST)
      const values = field.value.kind === Kind.LIST ? field.value.values.map((v) => (v.kind === Kind.STRING ? v.value : null)) : []
      assert.deepStrictEqual(values, items)
    }), { numRuns: 300 })
  })
  it("numbers are printed as GraphQL numbers or refused", () => {
    fc.assert(fc.property(fc.string({ maxLength: 20 }), (value) => {
      const result = FilterBuilder.buildWhere(article, [{ column: "price", operator: "=", value }])
      if (Either.isLeft(result)) return true
      const field = parsedWhere(FilterBuilder.printWhere(result.right!)).fields.find((f) => f.name.value === "valueNumber")!
      return field.value.kind === Kind.INT || field.value.kind === Kind.FLOAT
    }), { numRuns: 500 })
  })
})

describe("FilterBuilder: value guards", () => {
  const dateRefused = (value: string) => refused(article, { column: "published", operator: "=", value })
  it("a UUID is the whole value: text before or after a UUID is refused", () => {
    const id = "0f8fad5b-d9cb-469f-a165-70867728950e"
    assert.match(refused(article, { column: "uuid", operator: "=", value: `x${id}` }), /is not a UUID/)
    assert.match(refused(article, { column: "uuid", operator: "=", value: `${id}0` }), /is not a UUID/)
    assert.match(refused(article, { column: "uuid", operator: "=", value: `${id}\n` + id }), /is not a UUID/)
    assert.match(refused(article, { column: "uuid", operator: "in list", value: `${id}, ${id.slice(1)}` }), /is not a UUID/)
    assert.strictEqual(where(article, { column: "uuid", operator: "=", value: ` ${id.toUpperCase()} ` }), `{path: ["id"], operator: Equal, valueText: "${id}"}`)
  })
  it("isRfc3339 checks every calendar field's range", () => {
    const valid = [
      "2024-01-01T00:00:00Z", "2024-12-31T23:59:59Z", "2024-02-29T00:00:00Z", "2023-02-28T00:00:00z", "2016-12-31T23:59:60Z",
      "2024-04-30t12:00:00.123456+23:59", "2024-01-31T00:00:00-00:00", "0001-01-01T00:00:00Z"
    ]
    for (const text of valid) assert.isTrue(FilterBuilder.isRfc3339(text), text)
    const invalid = [
      "2024-00-10T00:00:00Z", // month 0
      "2024-13-10T00:00:00Z", // month 13
      "2024-01-00T00:00:00Z", // day 0
      "2024-01-32T00:00:00Z", // day 32
      "2024-04-31T00:00:00Z", // day 31 of a 30-day month
      "2023-02-29T00:00:00Z", // not a leap year
      "2024-01-01T24:00:00Z", // hour 24
      "2024-01-01T00:60:00Z", // minute 60
      "2024-01-01T00:00:61Z", // second 61
      "2024-01-01T00:00:00+24:00", // offset hour 24
      "2024-01-01T00:00:00+00:60", // offset minute 60
      "2024-01-01 00:00:00Z", // no T
      "2024-01-01T00:00:00", // no offset
      "x2024-01-01T00:00:00Z", "2024-01-01T00:00:00Zx", "2024-01-01T00:00:00.Z", "2024-1-01T00:00:00Z", "24-01-01T00:00:00Z"
    ]
    for (const text of invalid) {
      assert.isFalse(FilterBuilder.isRfc3339(text), text)
      assert.match(dateRefused(text), /complete RFC 3339/)
    }
  })
  it("a lone surrogate is refused as invalid Unicode, in every operator and list element", () => {
    for (const lone of ["\uD800", "a\uDBFFb", "\uDC00", "x\uDFFF"]) {
      assert.match(refused(article, { column: "title", operator: "=", value: lone }), /not valid Unicode/)
      assert.match(refused(article, { column: "title", operator: "contains", value: lone }), /not valid Unicode/)
      assert.match(refused(article, { column: "tags", operator: "in list", value: ["ok", lone] }), /not valid Unicode/)
    }
    // A surrogate pair is one character, not a lone surrogate.
    assert.strictEqual(where(article, { column: "title", operator: "=", value: "\uD83D\uDE00" }), `{path: ["title"], operator: Equal, valueText: "\uD83D\uDE00"}`)
  })
  it("an int outside the safe integer range is refused, not rounded", () => {
    assert.match(refused(article, { column: "wordCount", operator: "=", value: "9007199254740992" }), /out of the integer range/)
    assert.match(refused(article, { column: "wordCount", operator: "=", value: "-9007199254740992" }), /out of the integer range/)
    assert.match(refused(article, { column: "wordCount", operator: "=", value: 2 ** 53 }), /out of the integer range/)
    assert.match(refused(article, { column: "wordCount", operator: "=", value: "1e3" }), /not an integer/)
    assert.match(refused(article, { column: "wordCount", operator: "=", value: " 12x" }), /not an integer/)
    assert.strictEqual(where(article, { column: "wordCount", operator: "=", value: "9007199254740991" }), `{path: ["wordCount"], operator: Equal, valueInt: 9007199254740991}`)
    assert.strictEqual(where(article, { column: "wordCount", operator: "=", value: "-12" }), `{path: ["wordCount"], operator: Equal, valueInt: -12}`)
  })
  it("a number is a whole decimal literal: trailing text, NaN and infinities are refused", () => {
    for (const value of ["1.5x", "x1.5", "NaN", "-Infinity", "1e400", "0x10", ""]) {
      assert.isTrue(Either.isLeft(FilterBuilder.buildWhere(article, [{ column: "price", operator: "=", value }])), value)
    }
    for (const [value, printed] of [["-.5", "-0.5"], ["+3", "3"], ["1E2", "100"], ["2.", "2"], ["-0", "0"]] as const) {
      assert.strictEqual(where(article, { column: "price", operator: "=", value }), `{path: ["price"], operator: Equal, valueNumber: ${printed}}`)
    }
  })
  it("a boolean is true or false only", () => {
    assert.match(refused(article, { column: "active", operator: "=", value: "yes" }), /not true or false/)
    assert.strictEqual(where(article, { column: "active", operator: "=", value: " False " }), `{path: ["active"], operator: Equal, valueBoolean: false}`)
    assert.strictEqual(where(article, { column: "active", operator: "=", value: false }), `{path: ["active"], operator: Equal, valueBoolean: false}`)
  })
  it("a null, missing or empty filter value is refused where a value is needed", () => {
    for (const operator of ["equals", "contains", "greater than"]) {
      const column = operator === "greater than" ? "price" : "title"
      assert.match(refused(article, { column, operator, value: null }), /needs a value/)
      assert.match(refused(article, { column, operator }), /needs a value/)
      assert.match(refused(article, { column, operator, value: "" }), /needs a value/)
    }
    assert.match(refused(article, { column: "tags", operator: "in list", value: null }), /comma-separated list/)
    assert.match(refused(article, { column: "tags", operator: "in list", value: [] }), /empty element/)
    assert.match(refused(article, { column: "tags", operator: "in list", value: ["a", ""] }), /empty element/)
    assert.match(refused(article, { column: "price", operator: "between", value: null }), /two bounds/)
    assert.match(refused(article, { column: "price", operator: "between", value: ["1"] }), /two bounds/)
    assert.match(refused(article, { column: "price", operator: "between", value: " and 3" }), /two bounds/)
    assert.match(refused(article, { column: "price", operator: "between", value: "1 and 2 and 3" }), /two bounds/)
    assert.match(refused(article, { column: "price", operator: "between", value: 5 }), /two bounds/)
    // The operators without a value ignore a null one.
    assert.strictEqual(where(article, { column: "title", operator: "is NULL", value: null }), `{path: ["title"], operator: IsNull, valueBoolean: true}`)
  })
  it("JSON values (MCP tools) are typed like text ones", () => {
    assert.strictEqual(where(article, { column: "tags", operator: "in list", value: ["a", "b"] }), `{path: ["tags"], operator: ContainsAny, valueText: ["a", "b"]}`)
    assert.strictEqual(where(article, { column: "wordCount", operator: "in list", value: 3 }), `{path: ["wordCount"], operator: ContainsAny, valueInt: [3]}`)
    assert.strictEqual(where(article, { column: "price", operator: "between", value: [1, "2.5"] }), `{operator: And, operands: [{path: ["price"], operator: GreaterThanEqual, valueNumber: 1}, {path: ["price"], operator: LessThanEqual, valueNumber: 2.5}]}`)
    assert.strictEqual(where(article, { column: "title", operator: "=", value: ["only"] }), `{path: ["title"], operator: Equal, valueText: "only"}`)
  })
})

describe("FilterBuilder: the REST where of delete_where", () => {
  const rest = (...filters: Array<FilterBuilder.Filter>) => FilterBuilder.toRestWhere(Either.getOrThrow(FilterBuilder.buildWhere(article, filters))!)
  it("a comparison is path, operator and its value field", () => {
    assert.deepStrictEqual(rest({ column: "wordCount", operator: ">", value: "3" }), { path: ["wordCount"], operator: "GreaterThan", valueInt: 3 })
    assert.deepStrictEqual(rest({ column: "uuid", operator: "=", value: "0F8FAD5B-D9CB-469F-A165-70867728950E" }), { path: ["id"], operator: "Equal", valueText: "0f8fad5b-d9cb-469f-a165-70867728950e" })
  })
  it("lists use the value*Array fields", () => {
    assert.deepStrictEqual(rest({ column: "tags", operator: "in list", value: "a,b" }), { path: ["tags"], operator: "ContainsAny", valueTextArray: ["a", "b"] })
    assert.deepStrictEqual(rest({ column: "wordCount", operator: "not in list", value: "1, 2" }), { path: ["wordCount"], operator: "ContainsNone", valueIntArray: [1, 2] })
  })
  it("compound clauses nest their operands: And, Not, between", () => {
    assert.deepStrictEqual(rest({ column: "title", operator: "not contains", value: "x" }, { column: "price", operator: "between", value: "1 and 2" }), {
      operator: "And",
      operands: [
        { operator: "Not", operands: [{ path: ["title"], operator: "Like", valueText: "*x*" }] },
        {
          operator: "And",
          operands: [
            { path: ["price"], operator: "GreaterThanEqual", valueNumber: 1 },
            { path: ["price"], operator: "LessThanEqual", valueNumber: 2 }
          ]
        }
      ]
    })
  })
  it("null and length filters keep their special paths and fields", () => {
    assert.deepStrictEqual(rest({ column: "title", operator: "is not NULL" }), { path: ["title"], operator: "IsNull", valueBoolean: false })
    assert.deepStrictEqual(rest({ column: "tags", operator: "is not empty" }), { path: ["len(tags)"], operator: "GreaterThan", valueInt: 0 })
  })
  it("no filter is no where at all: delete_where never gets an empty clause", () => {
    assert.isUndefined(Either.getOrThrow(FilterBuilder.buildWhere(article, [])))
  })
})

describe("FilterBuilder: operators, refusals and sorts name what was refused", () => {
  const refusal = (filter: FilterBuilder.Filter) => {
    const result = FilterBuilder.buildWhere(article, [filter])
    if (Either.isRight(result)) throw new Error(`expected a refusal for ${JSON.stringify(filter)}`)
    return result.left
  }
  it("an operator is its name in any letter case and spacing, or a symbol", () => {
    assert.strictEqual(FilterBuilder.normalizeOperator("  Is   NOT\tnull "), "is not NULL")
    assert.strictEqual(FilterBuilder.normalizeOperator("GREATER OR EQUAL"), "greater or equal")
    assert.strictEqual(FilterBuilder.normalizeOperator(" != "), "not equals")
    assert.strictEqual(FilterBuilder.normalizeOperator("<="), "less or equal")
    assert.isUndefined(FilterBuilder.normalizeOperator("=="))
    assert.isUndefined(FilterBuilder.normalizeOperator("isnull"))
  })
  it("a refusal names the filter as written: column, operator and value", () => {
    assert.strictEqual(refusal({ column: "wordCount", operator: "=", value: "x" }).filter, "wordCount = x")
    assert.strictEqual(refusal({ column: "wordCount", operator: "=", value: ["1", "2"] }).filter, `wordCount = ["1","2"]`)
    assert.strictEqual(refusal({ column: "price", operator: "between", value: 5 }).filter, "price between 5")
    assert.strictEqual(refusal({ column: "wordCount", operator: "=", value: null }).filter, "wordCount =")
    assert.strictEqual(refusal({ column: "nope", operator: "is NULL" }).filter, "nope is NULL")
    assert.strictEqual(refusal({ column: "wordCount", operator: "=", value: "x" }).message, `Filter refused (wordCount = x): "x" is not an integer (the column is int)`)
  })
  it("refusals say why: operator, column type and the collection setting that is missing", () => {
    assert.strictEqual(refusal({ column: "title", operator: "==", value: "a" }).reason, `unknown operator "=="; use one of ${FilterBuilder.operators.join(", ")} or = != > >= < <=`)
    assert.strictEqual(refusal({ column: "title", operator: "between", value: "a and b" }).reason, "between applies to int, number and date columns; this column is text")
    assert.strictEqual(refusal({ column: "title", operator: ">=", value: "a" }).reason, "greater or equal applies to int, number and date columns; this column is text")
    assert.strictEqual(refusal({ column: "ref", operator: "ends with", value: "a" }).reason, "ends with applies to text columns and the uuid (object id) column only; this column is uuid")
    assert.strictEqual(refusal({ column: "uuid", operator: "is NULL" }).reason, "the uuid column is never NULL")
    assert.strictEqual(refusal({ column: "uuid", operator: "is empty" }).reason, "is empty applies to text and array columns; this column is uuid (object id)")
    assert.strictEqual(refusal({ column: "meta", operator: "=", value: "a" }).reason, "a object column cannot be filtered")
    assert.strictEqual(refusal({ column: "author", operator: "=", value: "a" }).reason, "a Author column cannot be filtered (cross-reference)")
    assert.strictEqual(refusal({ column: "hidden", operator: "=", value: "a" }).reason, "the property hidden is not filterable (indexFilterable is false)")
    assert.strictEqual(refusal({ column: "nope", operator: "=", value: "a" }).reason, `the collection Article has no column "nope"`)
    assert.strictEqual(refusal({ column: "vector", operator: "is NULL" }).reason, "the vector column cannot be filtered; use vector search")
    const plainNull = FilterBuilder.buildWhere(plain, [{ column: "title", operator: "is not NULL" }])
    assert.strictEqual(Either.isLeft(plainNull) ? plainNull.left.reason : "", "is not NULL needs indexNullState, which is not enabled on the collection Plain")
    const plainEmpty = FilterBuilder.buildWhere(plain, [{ column: "tags", operator: "is not empty" }])
    assert.strictEqual(Either.isLeft(plainEmpty) ? plainEmpty.left.reason : "", "is not empty needs indexPropertyLength, which is not enabled on the collection Plain")
    // An unindexed property still answers the null and length operators.
    assert.isString(where(article, { column: "hidden", operator: "is NULL" }))
  })
  it("operatorsFor lists, per column type, exactly the operators that build", () => {
    const ordered = ["equals", "not equals", "greater than", "greater or equal", "less than", "less or equal"] as const
    assert.deepStrictEqual(FilterBuilder.operatorsFor(article, "published"), [...ordered, "in list", "not in list", "between", "is NULL", "is not NULL"])
    assert.deepStrictEqual(FilterBuilder.operatorsFor(article, "price"), [...ordered, "in list", "not in list", "between", "is NULL", "is not NULL"])
    assert.deepStrictEqual(FilterBuilder.operatorsFor(article, "active"), ["equals", "not equals", "in list", "not in list", "is NULL", "is not NULL"])
    assert.deepStrictEqual(FilterBuilder.operatorsFor(article, "uuid"), ["equals", "not equals", "contains", "not contains", "starts with", "ends with", "in list", "not in list"])
    assert.deepStrictEqual(FilterBuilder.operatorsFor(article, "tags"), [
      "equals", "not equals", "contains", "not contains", "starts with", "ends with", "in list", "not in list", "is NULL", "is not NULL", "is empty", "is not empty"
    ])
    assert.deepStrictEqual(FilterBuilder.operatorsFor(plain, "title"), ["equals", "not equals", "contains", "not contains", "starts with", "ends with", "in list", "not in list"])
  })
  it("sorts: direction asc or desc, sortable types only, in order", () => {
    const sortRefusal = (sorts: Array<FilterBuilder.Sort>) => {
      const result = FilterBuilder.buildSort(article, sorts)
      return Either.isLeft(result) ? `${result.left.filter}: ${result.left.reason}` : "accepted"
    }
    assert.strictEqual(sortRefusal([{ column: "price", direction: "up" as "asc" }]), "sort price:up: the direction is asc or desc")
    assert.strictEqual(sortRefusal([{ column: "uuid", direction: "asc" }]), "sort uuid:asc: the uuid column cannot be sorted (unsorted pages come in uuid order)")
    assert.strictEqual(sortRefusal([{ column: "nope", direction: "asc" }]), `sort nope:asc: the collection Article has no column "nope"`)
    assert.strictEqual(sortRefusal([{ column: "ref", direction: "asc" }]), "sort ref:asc: a uuid column cannot be sorted")
    assert.strictEqual(
      Either.getOrThrow(FilterBuilder.buildSort(article, [{ column: "published", direction: "asc" }, { column: "active", direction: "desc" }])),
      `[{path: ["published"], order: asc}, {path: ["active"], order: desc}]`
    )
    assert.isUndefined(Either.getOrThrow(FilterBuilder.buildSort(article, [])))
    assert.deepStrictEqual(Either.getOrThrow(FilterBuilder.parseSortText("  title : DESC ")), { column: "title", direction: "desc" })
    assert.isTrue(Either.isLeft(FilterBuilder.parseSortText("a b")))
    assert.isTrue(Either.isLeft(FilterBuilder.parseSortText("")))
  })
  it("the --filter text: the first word is the column, the longest operator wins, a word operator ends at a space", () => {
    const parsed = (text: string) => Either.getOrThrow(FilterBuilder.parseFilterText(text))
    assert.deepStrictEqual(parsed("  n<=3 "), { column: "n", operator: "less or equal", value: "3" })
    assert.deepStrictEqual(parsed("n < 3"), { column: "n", operator: "less than", value: "3" })
    assert.deepStrictEqual(parsed("title IS NULL"), { column: "title", operator: "is NULL" })
    assert.deepStrictEqual(parsed("title is not empty"), { column: "title", operator: "is not empty" })
    assert.deepStrictEqual(parsed(`title = "`), { column: "title", operator: "equals", value: `"` })
    assert.deepStrictEqual(parsed(`title = ""`), { column: "title", operator: "equals", value: "" })
    assert.deepStrictEqual(parsed(`title = "a" b`), { column: "title", operator: "equals", value: `"a" b` })
    const refusedText = (text: string) => {
      const result = FilterBuilder.parseFilterText(text)
      return Either.isLeft(result) ? result.left.reason : "parsed"
    }
    assert.strictEqual(refusedText("title"), "expected COLUMN OPERATOR VALUE")
    assert.strictEqual(refusedText(""), "expected COLUMN OPERATOR VALUE")
    assert.match(refusedText("title containsx y"), /^unknown operator; use one of equals, /)
    assert.match(refusedText("title is NULLx"), /^unknown operator/)
  })
})

describe("FilterBuilder: the rest of the guards", () => {
  const multi = decodeCollection({
    class: "Review",
    properties: [{ name: "about", dataType: ["Article", "Plain"] }, { name: "ratings", dataType: ["int[]"] }],
    invertedIndexConfig: { indexPropertyLength: true }
  })!
  it("a multi-target reference is named with all its targets and is neither filtered nor sorted", () => {
    const filtered = FilterBuilder.buildWhere(multi, [{ column: "about", operator: "=", value: "x" }])
    assert.strictEqual(Either.isLeft(filtered) ? filtered.left.reason : "", "a Article,Plain column cannot be filtered (cross-reference)")
    const sorted = FilterBuilder.buildSort(multi, [{ column: "about", direction: "asc" }])
    assert.strictEqual(Either.isLeft(sorted) ? sorted.left.reason : "", "a Article,Plain column cannot be sorted")
  })
  it("is empty applies to arrays of any type, not only text", () => {
    assert.strictEqual(where(multi, { column: "ratings", operator: "is empty" }), `{path: ["len(ratings)"], operator: Equal, valueInt: 0}`)
    assert.strictEqual(where(article, { column: "scores", operator: "is not empty" }), `{path: ["len(scores)"], operator: GreaterThan, valueInt: 0}`)
    assert.includeMembers([...FilterBuilder.operatorsFor(multi, "ratings")], ["is empty", "is not empty", "between"])
  })
  it("the null and length operators need no value, and work on unindexed properties", () => {
    assert.strictEqual(where(article, { column: "hidden", operator: "is empty" }), `{path: ["len(hidden)"], operator: Equal, valueInt: 0}`)
    assert.strictEqual(where(article, { column: "hidden", operator: "is not empty" }), `{path: ["len(hidden)"], operator: GreaterThan, valueInt: 0}`)
    assert.strictEqual(where(article, { column: "hidden", operator: "is not NULL" }), `{path: ["hidden"], operator: IsNull, valueBoolean: false}`)
    for (const text of ["tags is empty", "tags is not empty", "tags is NULL", "tags is not NULL"]) {
      assert.deepStrictEqual(Either.getOrThrow(FilterBuilder.parseFilterText(text)), { column: "tags", operator: text.slice(5) as FilterBuilder.Operator })
    }
  })
  it("a list operator without a value is refused", () => {
    assert.match(refused(article, { column: "tags", operator: "in list" }), /needs a comma-separated list of values/)
    assert.match(refused(article, { column: "tags", operator: "not in list", value: null }), /needs a comma-separated list of values/)
  })
  it("decimal numbers: leading dot, exponents with a sign and several digits", () => {
    for (const [value, printed] of [[".55", "0.55"], ["1e+5", "100000"], ["1e-5", "0.00001"], ["2E10", "20000000000"], ["1.5e-10", "1.5e-10"], ["1e21", "1e+21"]] as const) {
      const literal = where(article, { column: "price", operator: "=", value })
      assert.strictEqual(literal, `{path: ["price"], operator: Equal, valueNumber: ${printed}}`)
      const field = parsedWhere(literal!).fields.find((f) => f.name.value === "valueNumber")!
      assert.include([Kind.INT, Kind.FLOAT], field.value.kind)
    }
    for (const value of ["1e", "1e+", "e5", ".", "+.e1", "1..2"]) {
      assert.match(refused(article, { column: "price", operator: "=", value }), /not a number/, value)
    }
  })
  it("sorting: text and int columns sort; uuid and vector are refused with the reason", () => {
    assert.strictEqual(
      Either.getOrThrow(FilterBuilder.buildSort(article, [{ column: "title", direction: "asc" }, { column: "wordCount", direction: "desc" }])),
      `[{path: ["title"], order: asc}, {path: ["wordCount"], order: desc}]`
    )
    const vector = FilterBuilder.buildSort(article, [{ column: "vector", direction: "desc" }])
    assert.strictEqual(Either.isLeft(vector) ? vector.left.reason : "", "the vector column cannot be sorted (unsorted pages come in uuid order)")
    const bad = FilterBuilder.parseSortText("price:up")
    assert.strictEqual(Either.isLeft(bad) ? bad.left.message : "", "Filter refused (sort price:up): expected COLUMN:asc or COLUMN:desc")
  })
  it("the --filter text: a column of several letters before a symbol, extra spaces, quotes on both ends only", () => {
    const parsed = (text: string) => Either.getOrThrow(FilterBuilder.parseFilterText(text))
    assert.deepStrictEqual(parsed("price>=3"), { column: "price", operator: "greater or equal", value: "3" })
    assert.deepStrictEqual(parsed("title   is NULL"), { column: "title", operator: "is NULL" })
    assert.deepStrictEqual(parsed("title  contains   x"), { column: "title", operator: "contains", value: "x" })
    assert.deepStrictEqual(parsed(`title = ab"`), { column: "title", operator: "equals", value: `ab"` })
    assert.deepStrictEqual(parsed(`title = "ab`), { column: "title", operator: "equals", value: `"ab` })
  })
})
