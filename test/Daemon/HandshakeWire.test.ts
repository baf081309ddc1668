/**
 * `HandshakeWire.decode`, the bridge's Effect-free check of the handshake file, accepts exactly what the
 * `HandshakeFile` schema accepts, with the same values.
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { HandshakeFile } from "../../src/Daemon/Handshake.ts"
import * as HandshakeWire from "../../src/Daemon/HandshakeWire.ts"

const decodeSchema = Schema.decodeUnknownEither(HandshakeFile)

const anyValue = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.constant(1), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.array(fc.integer()), fc.object())
const field = <A>(valid: fc.Arbitrary<A>) => fc.oneof({ weight: 4, arbitrary: valid }, { weight: 1, arbitrary: anyValue })

const candidate = fc.record(
  {
    version: field(fc.constant(1)),
    port: field(fc.integer({ min: 0, max: 65535 })),
    pid: field(fc.integer()),
    instanceId: field(fc.uuid()),
    protocolVersion: field(fc.constant("2026-07-28")),
    startedAt: field(fc.date().map((d) => (Number.isNaN(d.getTime()) ? "x" : d.toISOString()))),
    token: field(fc.string()),
    tokenExpiresAt: field(fc.string()),
    extra: anyValue
  },
  { requiredKeys: [] }
)

describe("HandshakeWire", () => {
  it("decode accepts exactly what the HandshakeFile schema accepts, with the same fields", () => {
    fc.assert(
      fc.property(fc.oneof({ weight: 9, arbitrary: candidate }, { weight: 1, arbitrary: anyValue }), (json) => {
        const ours = HandshakeWire.decode(json)
        const schema = decodeSchema(json)
        if (Either.isLeft(schema)) expect(ours).toBeUndefined()
        else expect(ours).toEqual({ ...schema.right })
        return true
      }),
      { numRuns: 2000 }
    )
  })

  it("decode refuses a port or pid that is not a safe integer, as Schema.Int does", () => {
    const valid = { version: 1, port: 1, pid: 2, instanceId: "i", protocolVersion: "p", startedAt: "s", token: "t", tokenExpiresAt: "e" }
    expect(HandshakeWire.decode(valid)).toEqual(valid)
    for (const bad of [1.5, 2 ** 53, Number.NaN, "1"]) {
      expect(HandshakeWire.decode({ ...valid, port: bad })).toBeUndefined()
      expect(Either.isLeft(decodeSchema({ ...valid, port: bad }))).toBe(true)
    }
  })
})
