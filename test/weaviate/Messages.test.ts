/**
 * Table-driven: every status, body and message quoted in behaviour.md (Weaviate 1.39), held to the
 * test instance's answer. Shard names are random per class, so they are matched as 12 characters.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startWeaviate, type WeaviateTestInstance } from "./WeaviateServer.ts"

let w: WeaviateTestInstance
let keyed: WeaviateTestInstance
let empty: WeaviateTestInstance

const ID = "00000000-0000-4000-8000-000000000001"
const ID2 = "00000000-0000-4000-8000-000000000002"
const MISSING = "00000000-0000-4000-8000-0000000000ff"

interface Reply {
  readonly status: number
  readonly contentType: string | null
  readonly allow: string | null
  readonly text: string
}

const call = async (
  inst: WeaviateTestInstance,
  method: string,
  path: string,
  body?: string | object,
  headers: Record<string, string> = {}
): Promise<Reply> => {
  const init: RequestInit = { method, headers: { ...headers } }
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body)
    ;(init.headers as Record<string, string>)["content-type"] = "application/json"
  }
  const r = await fetch(inst.url + path, init)
  return { status: r.status, contentType: r.headers.get("content-type"), allow: r.headers.get("allow"), text: await r.text() }
}

const gql = async (inst: WeaviateTestInstance, query: string) => {
  const r = await call(inst, "POST", "/v1/graphql", { query })
  return { status: r.status, json: JSON.parse(r.text) as { data?: unknown; errors?: Array<{ message: string; path: unknown; locations: unknown }> } }
}
const gqlMessage = async (query: string): Promise<string> => {
  const r = await gql(w, query)
  expect(r.status).toBe(200)
  return r.json.errors?.[0]?.message ?? "<no error>"
}
const errorBody = (message: string) => JSON.stringify({ error: [{ message }] })
const SHARD = "[A-Za-z0-9]{12}"
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
/** The message with `article_XXXXXXXXXXXX` standing for any shard name. */
const withShard = (message: string) => new RegExp("^" + escape(message).replace("article_XXXXXXXXXXXX", `article_${SHARD}`) + "$")

beforeAll(async () => {
  ;[w, keyed, empty] = await Promise.all([startWeaviate(), startWeaviate({ apiKeys: ["secret"] }), startWeaviate()])
  const schema = async (cls: object) => expect((await call(w, "POST", "/v1/schema", cls)).status).toBe(200)
  await schema({ class: "Author", properties: [{ name: "name", dataType: ["text"] }] })
  await schema({
    class: "Article",
    properties: [
      { name: "title", dataType: ["text"] },
      { name: "n", dataType: ["int"] },
      { name: "tags", dataType: ["text[]"] },
      { name: "published", dataType: ["date"] },
      { name: "meta", dataType: ["object"], nestedProperties: [{ name: "source", dataType: ["text"] }] },
      { name: "u", dataType: ["uuid"] },
      { name: "author", dataType: ["Author"] }
    ]
  })
  await schema({ class: "Ticket", multiTenancyConfig: { enabled: true }, properties: [{ name: "subject", dataType: ["text"] }] })
  expect((await call(w, "POST", "/v1/objects", { class: "Article", id: ID, properties: { title: "Hello World", n: 1 } })).status).toBe(200)
})

afterAll(async () => {
  await Promise.all([w.close(), keyed.close(), empty.close()])
})

describe("go-swagger layer errors ({code,message})", () => {
  const rows: ReadonlyArray<readonly [string, string, string, string | undefined, number, string]> = [
    ["unknown path is 404", "GET", "/v1/foo", undefined, 404, `{"code":404,"message":"path /v1/foo was not found"}`],
    ["wrong method is 405", "PUT", "/v1/schema", undefined, 405, `{"code":405,"message":"method PUT is not allowed, but [GET,POST] are"}`],
    ["bad uuid in path is 422 code 601", "GET", "/v1/objects/Article/abc", undefined, 422, `{"code":601,"message":"id in path must be of type uuid: \\"abc\\""}`],
    ["bad int query is 422 code 601", "GET", "/v1/objects?limit=abc", undefined, 422, `{"code":601,"message":"limit in query must be of type int64: \\"abc\\""}`],
    [
      "invalid JSON body is 400",
      "POST",
      "/v1/objects",
      "x",
      400,
      `{"code":400,"message":"parsing body body from \\"\\" failed, because invalid character 'x' looking for beginning of value"}`
    ],
    ["empty body on POST /v1/objects is 422 code 602", "POST", "/v1/objects", "", 422, `{"code":602,"message":"body in body is required"}`]
  ]
  it.each(rows)("%s", async (_rule, method, path, body, status, expected) => {
    const r = await call(w, method, path, body)
    expect(r.status).toBe(status)
    expect(r.text).toBe(expected)
    expect(r.contentType).toBe("application/json")
  })

  it("405 carries an Allow header", async () => {
    expect((await call(w, "PUT", "/v1/schema")).allow).toBe("GET,POST")
  })
})

describe("401 authentication", () => {
  const ANON = `{"code":401,"message": "anonymous access not enabled. Please authenticate through one of the available methods: [API-keys]" }`
  it("no credentials while anonymous access is disabled: the middleware's body as text/plain", async () => {
    const r = await call(keyed, "GET", "/v1/meta")
    expect([r.status, r.text, r.contentType]).toEqual([401, ANON, "text/plain; charset=utf-8"])
  })
  it("an empty Bearer token counts as no credentials", async () => {
    const r = await call(keyed, "GET", "/v1/schema", undefined, { authorization: "Bearer " })
    expect([r.status, r.text]).toEqual([401, ANON])
  })
  it("a non-Bearer Authorization header counts as no credentials", async () => {
    const r = await call(keyed, "GET", "/v1/objects", undefined, { authorization: "Basic dTpw" })
    expect([r.status, r.text]).toEqual([401, ANON])
    expect((await call(w, "GET", "/v1/meta", undefined, { authorization: "Basic dTpw" })).status).toBe(200)
  })
  it("a wrong key is rejected as invalid", async () => {
    const r = await call(keyed, "GET", "/v1/meta", undefined, { authorization: "Bearer nope" })
    expect([r.status, r.text, r.contentType]).toEqual([401, `{"code":401,"message":"unauthorized: invalid api key"}`, "application/json"])
  })
  it("a key sent to an anonymous-only instance is rejected", async () => {
    const r = await call(w, "GET", "/v1/meta", undefined, { authorization: "Bearer anything" })
    expect(r.status).toBe(401)
    expect(r.text).toBe(
      `{"code":401,"message":"no authentication scheme is configured (API Key or OIDC), but an 'Authorization' header was provided. Please configure an auth scheme or remove the header for anonymous access"}`
    )
  })
  it("live and ready need no authentication", async () => {
    expect((await call(keyed, "GET", "/v1/.well-known/live")).status).toBe(200)
    expect((await call(keyed, "GET", "/v1/.well-known/ready")).status).toBe(200)
  })
  it("the right key passes, also as ?access_token=", async () => {
    expect((await call(keyed, "GET", "/v1/meta", undefined, { authorization: "Bearer secret" })).status).toBe(200)
    expect((await call(keyed, "GET", "/v1/meta?access_token=secret")).status).toBe(200)
  })
})

describe("REST statuses and handler errors ({error:[{message}]})", () => {
  const rows: ReadonlyArray<readonly [string, string, string, object | string | undefined, number, string]> = [
    ["GET /v1/objects of an unknown class is a bodiless 404", "GET", "/v1/objects?class=Nope", undefined, 404, ""],
    ["GET of an object in an unknown class is a bodiless 404", "GET", `/v1/objects/Nope/${ID}`, undefined, 404, ""],
    ["HEAD of an object in an unknown class is 404", "HEAD", `/v1/objects/Nope/${ID}`, undefined, 404, ""],
    ["PATCH of an object in an unknown class is a bodiless 404", "PATCH", `/v1/objects/Nope/${ID}`, { properties: {} }, 404, ""],
    ["GET of a missing object is a bodiless 404", "GET", `/v1/objects/Article/${MISSING}`, undefined, 404, ""],
    ["PATCH of a missing object is a bodiless 404", "PATCH", `/v1/objects/Article/${MISSING}`, { properties: { n: 2 } }, 404, ""],
    ["DELETE of a missing object is 204", "DELETE", `/v1/objects/Article/${MISSING}`, undefined, 204, ""],
    [
      "DELETE in an unknown class is a 500",
      "DELETE",
      `/v1/objects/Nope/${ID}`,
      undefined,
      500,
      errorBody("could not delete object from vector repo: delete from non-existing index for Nope")
    ],
    ["GET /v1/schema of an unknown class is a bodiless 404", "GET", "/v1/schema/Nope", undefined, 404, ""],
    ["a duplicate id is 422", "POST", "/v1/objects", { class: "Article", id: ID, properties: {} }, 422, errorBody(`id '${ID}' already exists`)],
    [
      "a number for a text property is 422",
      "POST",
      "/v1/objects",
      { class: "Article", properties: { title: 5 } },
      422,
      errorBody("invalid object: invalid text property 'title' on class 'Article': not a string, but json.Number")
    ],
    [
      "a string for an int property is 422",
      "POST",
      "/v1/objects",
      { class: "Article", properties: { n: "abc" } },
      422,
      errorBody("invalid object: invalid integer property 'n' on class 'Article': requires an integer, the given value is 'abc'")
    ],
    [
      "an incomplete date is 422",
      "POST",
      "/v1/objects",
      { class: "Article", properties: { published: "2024-01-01" } },
      422,
      errorBody("invalid object: invalid date property 'published' on class 'Article': requires a string with a RFC3339 formatted date, but the given value is '2024-01-01'")
    ],
    ["an empty class with auto-schema is 422", "POST", "/v1/objects", { class: "", properties: {} }, 422, errorBody("invalid object: the given class is empty")],
    [
      "PATCH validation errors are objects.Error texts",
      "PATCH",
      `/v1/objects/Article/${ID}`,
      { properties: { title: 5 } },
      422,
      errorBody("msg:bad request code:400 err:invalid text property 'title' on class 'Article': not a string, but json.Number")
    ],
    [
      "deprecated PATCH /v1/objects/{id} takes the class from the body and needs one",
      "PATCH",
      `/v1/objects/${ID}?class=Article`,
      { properties: { n: 3 } },
      422,
      errorBody("msg:bad request code:400 err:empty class")
    ],
    [
      "after without class is refused",
      "GET",
      `/v1/objects?after=${ID}`,
      undefined,
      500,
      errorBody("list objects: after parameter not allowed, cursor must be specific to one class, set class query param")
    ],
    ["an unknown include is 400", "GET", "/v1/objects?class=Article&include=foo", undefined, 400, errorBody("unrecognized property 'foo' in ?include list")],
    [
      "an unknown sort property is 422",
      "GET",
      "/v1/objects?class=Article&sort=x",
      undefined,
      422,
      errorBody(
        "msg:sorting code:400 err:sort parameter at position 0: no such prop with name 'x' found in class 'Article' in the schema. Check your schema files for which properties in this class are available"
      )
    ],
    [
      "the cursor needs a limit",
      "GET",
      `/v1/objects?class=Article&after=${ID}`,
      undefined,
      422,
      errorBody("msg:cursor api: invalid 'after' parameter code:400 err:limit parameter must be set")
    ],
    [
      "the cursor forbids offset",
      "GET",
      `/v1/objects?class=Article&after=${ID}&limit=5&offset=1`,
      undefined,
      422,
      errorBody("msg:cursor api: invalid 'after' parameter code:400 err:offset,sort cannot be set with after and limit parameters")
    ],
    [
      "offset plus limit above QUERY_MAXIMUM_RESULTS is 422 with class (default limit 10 printed)",
      "GET",
      "/v1/objects?class=Article&offset=9995",
      undefined,
      422,
      errorBody(
        "msg:offset or limit code:400 err:query maximum results exceeded: the total limit calculated from the provided offset '9995' and limit '10' exceeds the configured value for QUERY_MAXIMUM_RESULTS '10000'. If you've supplied a negative offset or limit, this may be an underflow error"
      )
    ],
    [
      "the maximum-results check comes before the class check",
      "GET",
      "/v1/objects?class=Nope&offset=9995",
      undefined,
      422,
      errorBody(
        "msg:offset or limit code:400 err:query maximum results exceeded: the total limit calculated from the provided offset '9995' and limit '10' exceeds the configured value for QUERY_MAXIMUM_RESULTS '10000'. If you've supplied a negative offset or limit, this may be an underflow error"
      )
    ],
    [
      "offset plus limit above QUERY_MAXIMUM_RESULTS is 500 without class",
      "GET",
      "/v1/objects?offset=9995",
      undefined,
      500,
      errorBody(
        "list objects: query maximum results exceeded: the total limit calculated from the provided offset '9995' and limit '10' exceeds the configured value for QUERY_MAXIMUM_RESULTS '10000'. If you've supplied a negative offset or limit, this may be an underflow error"
      )
    ],
    ["offset plus limit equal to QUERY_MAXIMUM_RESULTS is allowed", "GET", "/v1/objects?class=Article&offset=9990&limit=10", undefined, 200, `{"deprecations":[],"objects":[]}`],
    ["an empty page has no totalResults", "GET", "/v1/objects?class=Article&offset=5", undefined, 200, `{"deprecations":[],"objects":[]}`],
    ["GraphQL with an empty query is 422", "POST", "/v1/graphql", { query: "" }, 422, errorBody("query cannot be empty")]
  ]
  it.each(rows)("%s", async (_rule, method, path, body, status, expected) => {
    const r = await call(w, method, path, body)
    expect(r.status).toBe(status)
    expect(r.text).toBe(expected)
  })

  it("PATCH answers 204 with no body and merges", async () => {
    const r = await call(w, "PATCH", `/v1/objects/Article/${ID}`, { properties: { n: 7 } })
    expect([r.status, r.text]).toEqual([204, ""])
    const got = JSON.parse((await call(w, "GET", `/v1/objects/Article/${ID}`)).text)
    expect(got.properties).toEqual({ title: "Hello World", n: 7 })
  })

  it("totalResults is the size of the page, not of the collection", async () => {
    await call(w, "POST", "/v1/objects", { class: "Article", id: ID2, properties: { title: "Second" } })
    const r = JSON.parse((await call(w, "GET", "/v1/objects?class=Article&limit=1")).text)
    expect(r.totalResults).toBe(1)
    expect(r.objects).toHaveLength(1)
  })

  it("deprecated DELETE /v1/objects/{id} deletes the UUID in every class and 404s when it is nowhere", async () => {
    const shared = "00000000-0000-4000-8000-0000000000aa"
    await call(w, "POST", "/v1/objects", { class: "Article", id: shared, properties: { title: "a" } })
    await call(w, "POST", "/v1/objects", { class: "Author", id: shared, properties: { name: "b" } })
    expect((await call(w, "DELETE", `/v1/objects/${shared}?class=Article`)).status).toBe(204)
    expect((await call(w, "GET", `/v1/objects/Author/${shared}`)).status).toBe(404)
    expect((await call(w, "GET", `/v1/objects/Article/${shared}`)).status).toBe(404)
    const again = await call(w, "DELETE", `/v1/objects/${shared}`)
    expect([again.status, again.text]).toEqual([404, ""])
  })

  it("an empty database answers GraphQL with 422", async () => {
    const r = await call(empty, "POST", "/v1/graphql", { query: "{ Get { A { x } } }" })
    expect(r.status).toBe(422)
    expect(r.text).toBe(errorBody("no graphql provider present, this is most likely because no schema is present. Import a schema first!"))
  })
})

describe("GraphQL errors (HTTP 200 with errors)", () => {
  const MAX =
    "query maximum results exceeded: the total limit calculated from the provided offset '9995' and limit '10' exceeds the configured value for QUERY_MAXIMUM_RESULTS '10000'. If you've supplied a negative offset or limit, this may be an underflow error"
  const rows: ReadonlyArray<readonly [string, string, string | RegExp]> = [
    ["unknown class in Get", `{ Get { Nope { x } } }`, `Cannot query field "Nope" on type "GetObjectsObj".`],
    ["unknown class in Aggregate", `{ Aggregate { Nope { meta { count } } } }`, `Cannot query field "Nope" on type "AggregateObjectsObj".`],
    [
      "nearText without a text2vec vectorizer is a validation error",
      `{ Get { Article(nearText: {concepts: ["x"]}) { title } } }`,
      `Unknown argument "nearText" on field "Article" of type "GetObjectsObj". Did you mean "nearVector" or "nearObject"?`
    ],
    [
      "invalid operator enum",
      `{ Get { Article(where: {path: ["title"], operator: Foo, valueText: "x"}) { title } } }`,
      `Argument "where" has invalid value {path: ["title"], operator: Foo, valueText: "x"}.\nIn field "operator": Expected type "GetObjectsArticleWhereOperatorEnum", found Foo.`
    ],
    ["offset plus limit above QUERY_MAXIMUM_RESULTS", `{ Get { Article(offset: 9995) { title } } }`, `explorer: list class: search: invalid pagination params: ${MAX}`],
    ["limit 0", `{ Get { Article(limit: 0) { title } } }`, "explorer: list class: search: invalid pagination params: invalid default limit: 0"],
    [
      "no value field",
      `{ Get { Article(where: {path: ["title"], operator: Equal}) { title } } }`,
      "could not extract filters: invalid where filter: got operator 'Equal', but no value<Type> field set"
    ],
    [
      "more than one value field",
      `{ Get { Article(where: {path: ["title"], operator: Equal, valueText: "a", valueInt: 1}) { title } } }`,
      `could not extract filters: invalid where filter: found more than one values the clause '{"operator":"Equal","path":["title"],"valueInt":1,"valueText":"a"}'`
    ],
    [
      "empty path",
      `{ Get { Article(where: {path: [], operator: Equal, valueText: "a"}) { title } } }`,
      "could not extract filters: invalid where filter: field 'path': must have at least one element"
    ],
    [
      "And with a path",
      `{ Get { Article(where: {path: ["title"], operator: And, operands: [{path: ["title"], operator: Equal, valueText: "a"}]}) { title } } }`,
      "could not extract filters: invalid where filter: operator 'And' not compatible with field 'path', remove 'path' or switch to compare operator (eg. Equal, NotEqual, etc.)"
    ],
    [
      "And without operands",
      `{ Get { Article(where: {operator: And}) { title } } }`,
      "could not extract filters: invalid where filter: operator 'And', but no operands set - add at least one operand"
    ],
    [
      "nested operand errors",
      `{ Get { Article(where: {operator: Or, operands: [{path: ["title"], operator: Equal, valueText: "a"}, {path: ["title"], operator: Equal}]}) { title } } }`,
      "could not extract filters: invalid where filter: operand 1: invalid where filter: got operator 'Equal', but no value<Type> field set"
    ],
    [
      "unknown property",
      `{ Get { Article(where: {path: ["foo"], operator: Equal, valueText: "a"}) { title } } }`,
      "invalid 'where' filter: no such prop with name 'foo' found in class 'Article' in the schema. Check your schema files for which properties in this class are available"
    ],
    [
      "value type mismatch",
      `{ Get { Article(where: {path: ["title"], operator: Equal, valueInt: 1}) { title } } }`,
      `invalid 'where' filter: data type filter cannot use "valueInt" on type "text", use "valueText" instead`
    ],
    [
      "IsNull needs a boolean",
      `{ Get { Article(where: {path: ["title"], operator: IsNull, valueText: "a"}) { title } } }`,
      "invalid 'where' filter: operator IsNull requires a booleanValue, got valueText instead"
    ],
    [
      "len() needs valueInt",
      `{ Get { Article(where: {path: ["len(title)"], operator: Equal, valueText: "a"}) { title } } }`,
      `invalid 'where' filter: Filtering for property length requires IntValue, got "valueText" instead`
    ],
    [
      "len() supports only comparisons",
      `{ Get { Article(where: {path: ["len(title)"], operator: Like, valueInt: 1}) { title } } }`,
      "invalid 'where' filter: Filtering for property length supports operators (not) equal and greater/less than (equal), got Like instead"
    ],
    [
      "len() must be positive",
      `{ Get { Article(where: {path: ["len(title)"], operator: Equal, valueInt: -1}) { title } } }`,
      "invalid 'where' filter: Can only filter for positive property length got -1 instead"
    ],
    [
      "compound validation names the child",
      `{ Get { Article(where: {operator: And, operands: [{path: ["title"], operator: Equal, valueText: "a"}, {path: ["foo"], operator: Equal, valueText: "a"}]}) { title } } }`,
      "invalid 'where' filter: child operand at position 1: no such prop with name 'foo' found in class 'Article' in the schema. Check your schema files for which properties in this class are available"
    ],
    [
      "filtering by id needs valueText",
      `{ Get { Article(where: {path: ["_id"], operator: Equal, valueInt: 1}) { title } } }`,
      `invalid 'where' filter: using ["_id"] to filter by uuid: must use "valueText" to specify the id`
    ],
    [
      "nested object filtering is a disabled preview",
      `{ Get { Article(where: {path: ["meta"], operator: Equal, valueText: "a"}) { title } } }`,
      "invalid 'where' filter: filtering on nested properties is a preview feature, disabled by default; set WEAVIATE_PREVIEW_NESTED_FILTERING=true to enable"
    ],
    [
      "IsNull without indexNullState",
      `{ Get { Article(where: {path: ["title"], operator: IsNull, valueBoolean: true}) { title } } }`,
      withShard(
        "explorer: list class: search: object search at index article: local shard object search article_XXXXXXXXXXXX: resolve doc ids for prop/value pair: Nullstate must be indexed to be filterable! Add `indexNullState: true` to the invertedIndexConfig"
      )
    ],
    [
      "len() without indexPropertyLength",
      `{ Get { Article(where: {path: ["len(title)"], operator: GreaterThan, valueInt: 3}) { title } } }`,
      withShard(
        "explorer: list class: search: object search at index article: local shard object search article_XXXXXXXXXXXX: resolve doc ids for prop/value pair: Property length must be indexed to be filterable! add `IndexPropertyLength: true` to the invertedIndexConfig in Article.  Geo-coordinates, phone numbers and data blobs are not supported by property length."
      )
    ],
    [
      "a date without time is refused at execution",
      `{ Get { Article(where: {path: ["published"], operator: LessThan, valueDate: "2024-01-01"}) { title } } }`,
      withShard(
        `explorer: list class: search: object search at index article: local shard object search article_XXXXXXXXXXXX: trying parse time as RFC3339 string: parsing time "2024-01-01" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "T"`
      )
    ],
    [
      "a date without timezone is refused at execution",
      `{ Get { Article(where: {path: ["published"], operator: LessThan, valueDate: "2024-01-01T00:00:00"}) { title } } }`,
      withShard(
        `explorer: list class: search: object search at index article: local shard object search article_XXXXXXXXXXXX: trying parse time as RFC3339 string: parsing time "2024-01-01T00:00:00" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00"`
      )
    ],
    [
      "Contains with a scalar",
      `{ Get { Article(where: {path: ["tags"], operator: ContainsAny, valueText: "a"}) { title } } }`,
      withShard("explorer: list class: search: object search at index article: local shard object search article_XXXXXXXXXXXX: value type should be []string but is string")
    ],
    [
      "only stopwords",
      `{ Get { Article(where: {path: ["title"], operator: Equal, valueText: "the"}) { title } } }`,
      withShard(
        "explorer: list class: search: object search at index article: local shard object search article_XXXXXXXXXXXX: invalid search term, only stopwords provided. Stopwords can be configured in class.invertedIndexConfig.stopwords"
      )
    ],
    [
      "a multi-tenant class needs a tenant",
      `{ Get { Ticket { subject } } }`,
      "explorer: list class: search: object search at index ticket: class Ticket has multi-tenancy enabled, but request was without tenant"
    ],
    ["sort with an empty path", `{ Get { Article(sort: [{path: []}]) { title } } }`, "invalid 'sort' parameter: sort parameter at position 0: path parameter cannot be empty"],
    [
      "sort by an unknown property",
      `{ Get { Article(sort: [{path: ["x"]}]) { title } } }`,
      "invalid 'sort' parameter: sort parameter at position 0: no such prop with name 'x' found in class 'Article' in the schema. Check your schema files for which properties in this class are available"
    ],
    [
      "sort by a reference path",
      `{ Get { Article(sort: [{path: ["author", "name"]}]) { title } } }`,
      "invalid 'sort' parameter: sort parameter at position 0: sorting by reference not supported, path must have exactly one argument"
    ],
    [
      "sort by a reference property",
      `{ Get { Article(sort: [{path: ["author"]}]) { title } } }`,
      `invalid 'sort' parameter: sort parameter at position 0: sorting by reference not supported, property "author" is a ref prop to the class "Author"`
    ],
    ["bm25 with sort", `{ Get { Article(bm25: {query: "a"}, sort: [{path: ["title"]}]) { title } } }`, "bm25 search is not compatible with sort"],
    ["hybrid with sort", `{ Get { Article(hybrid: {query: "a"}, sort: [{path: ["title"]}]) { title } } }`, "hybrid search is not compatible with sort"],
    ["hybrid alpha out of range", `{ Get { Article(hybrid: {query: "a", alpha: 2}) { title } } }`, "alpha should be between 0.0 and 1.0"],
    [
      "hybrid alpha above 0 without a vectorizer",
      `{ Get { Article(hybrid: {query: "hello", alpha: 0.5}) { title } } }`,
      "VectorFromInput was called without vectorizer on class Article for input hello"
    ]
  ]
  it.each(rows)("%s", async (_rule, query, expected) => {
    const message = await gqlMessage(query)
    if (typeof expected === "string") expect(message).toBe(expected)
    else expect(message).toMatch(expected)
  })

  it("validation errors have no data and a null path", async () => {
    const r = await gql(w, `{ Get { Article(nearText: {concepts: ["x"]}) { title } } }`)
    expect(r.json).toEqual({
      errors: [
        {
          locations: [{ column: 17, line: 1 }],
          message: `Unknown argument "nearText" on field "Article" of type "GetObjectsObj". Did you mean "nearVector" or "nearObject"?`,
          path: null
        }
      ]
    })
  })

  it("resolver errors null the class and carry its path", async () => {
    const r = await gql(w, `{ Get { Article(offset: 9995) { title } } }`)
    expect(r.json.data).toEqual({ Get: { Article: null } })
    expect(r.json.errors?.[0]?.path).toEqual(["Get", "Article"])
  })

  it("a failing class leaves the other classes' data in place", async () => {
    const r = await gql(w, `{ Get { Article(limit: 0) { title } Author { name } } }`)
    expect(r.json.data).toEqual({ Get: { Article: null, Author: [] } })
    expect(r.json.errors).toHaveLength(1)
  })

  it("syntax errors use graphql-go's text", async () => {
    const message = await gqlMessage("{ Get { Article(")
    // graphql-go pads the caret with (line-number width + column) spaces
    expect(message).toBe(`Syntax Error GraphQL request (1:17) Expected Name, found EOF\n\n1: { Get { Article(\n${" ".repeat(19)}^\n`)
  })
})
