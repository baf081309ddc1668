/**
 * `JsonRpc.asMessage` checks a body in place with the rules of the `Message` schema: it must accept
 * exactly what the schema's decoder (`decodeMessage`) accepts, and give the same message.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import fc from "fast-check"
import * as JsonRpc from "../../src/Schema/JsonRpc.ts"

const bySchema = JsonRpc.decodeMessage

/** Bodies near the boundary: every member right, or each wrong in its own way. */
const member = <A>(right: fc.Arbitrary<A>) => fc.option(fc.oneof(right, fc.anything()), { nil: undefined })
const envelope = fc.record({
  jsonrpc: member(fc.constantFrom("2.0", "1.0", "2")),
  id: member(fc.oneof(fc.string(), fc.integer(), fc.double(), fc.constantFrom(0, -0, 2 ** 53, 1e21, Number.MAX_SAFE_INTEGER))),
  method: member(fc.string()),
  params: member(fc.oneof(fc.dictionary(fc.string(), fc.jsonValue()), fc.array(fc.jsonValue()), fc.constant(null))),
  extra: member(fc.jsonValue())
}, { requiredKeys: [] })

const ownProto = (u: unknown) => typeof u === "object" && u !== null && Object.hasOwn(u, "__proto__")

const same = (body: unknown) => {
  const expected = bySchema(body)
  const actual = JsonRpc.asMessage(body)
  if (Either.isLeft(expected)) return assert.isUndefined(actual, `refused by the schema: ${JSON.stringify(body)}`)
  const params = (body as { readonly params?: unknown }).params
  if (ownProto(params)) {
    // The schema's decoder builds params anew by assignment, which cannot keep an own `__proto__`
    // member (`{"__proto__": ""}` decodes to `{}`); asMessage keeps params as sent (the test below).
    assert.strictEqual(actual?.params, params, JSON.stringify(body))
    return assert.deepStrictEqual({ ...actual, params: undefined }, { ...expected.right, params: undefined }, JSON.stringify(body))
  }
  assert.deepStrictEqual(actual, expected.right, JSON.stringify(body))
}

describe("JsonRpc.asMessage", () => {
  it("accepts exactly what the Message schema accepts, with the same message", () => {
    fc.assert(fc.property(envelope, same), { numRuns: 2000 })
    fc.assert(fc.property(fc.anything(), same), { numRuns: 1000 })
    // JSON as clients send it, through JSON.parse (own `__proto__` members included).
    fc.assert(fc.property(envelope, (body) => same(JSON.parse(JSON.stringify(body)))), { numRuns: 500 })
  })

  it("an own __proto__ member of params is kept as sent, where the schema's decoder drops it (fast-check's counterexample)", () => {
    const params = {}
    Object.defineProperty(params, "__proto__", { value: "", enumerable: true, configurable: true, writable: true })
    same({ jsonrpc: "2.0", method: "", params })
    same(JSON.parse(`{"jsonrpc":"2.0","method":"","params":{"__proto__":""}}`))
  })

  it("keeps an id as sent: a string, or a safe integer including 0; nothing else", () => {
    for (const id of ["", "a", 0, 7, -3, Number.MAX_SAFE_INTEGER]) {
      assert.strictEqual(JsonRpc.asMessage({ jsonrpc: "2.0", id, method: "m" })?.id, id)
    }
    for (const id of [1.5, 2 ** 53, 1e21, Number.NaN, null, true, {}, []]) {
      assert.isUndefined(JsonRpc.asMessage({ jsonrpc: "2.0", id, method: "m" }), String(id))
    }
  })

  it("keeps params as parsed, and refuses params that are not an object", () => {
    const params = JSON.parse(`{"__proto__":{"polluted":true},"a":1}`) as Record<string, unknown>
    const message = JsonRpc.asMessage({ jsonrpc: "2.0", id: 1, method: "m", params })
    assert.strictEqual(message?.params, params)
    assert.isUndefined(({} as Record<string, unknown>)["polluted"])
    for (const bad of [[], null, "x", 1]) assert.isUndefined(JsonRpc.asMessage({ jsonrpc: "2.0", method: "m", params: bad }))
  })
})
