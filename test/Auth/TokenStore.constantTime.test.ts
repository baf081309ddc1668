import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { afterEach, vi } from "vitest"
import * as NodeCrypto from "node:crypto"
import * as NodePath from "node:path"
import * as SecretFile from "../../src/Base/SecretFile.ts"
import { digestsEqual, TokenStore } from "../../src/Auth/TokenStore.ts"
import { BridgeToken } from "../../src/Auth/BridgeToken.ts"
import { homeLayer, tempDir } from "./TokenStore.support.ts"

// Spy on the comparison the store must use, keeping its behaviour.
vi.mock("node:crypto", async (importOriginal) => {
  const original = await importOriginal<typeof import("node:crypto")>()
  return { ...original, timingSafeEqual: vi.fn(original.timingSafeEqual) }
})

const spy = vi.mocked(NodeCrypto.timingSafeEqual)

describe("TokenStore secrets", () => {
  afterEach(() => spy.mockClear())

  it.scoped("token digests are compared with crypto.timingSafeEqual, also for unknown ids and wrong secrets", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const store = yield* TokenStore.make({ watch: false }).pipe(Effect.provide(homeLayer(dir)))
      const { token } = yield* store.create({ name: "ci", access: "readOnly" })
      const cases = [
        { token, found: true },
        { token: token.slice(0, -1) + (token.endsWith("A") ? "B" : "A"), found: false },
        { token: `wmcp_0000000000000000_${token.slice(-43)}`, found: false },
        { token: "garbage", found: false }
      ]
      for (const { token: presented, found } of cases) {
        spy.mockClear()
        const result = yield* store.verify(presented)
        assert.strictEqual(Option.isSome(result), found)
        assert.strictEqual(spy.mock.calls.length, 1, "exactly one constant-time comparison per lookup")
        const [a, b] = spy.mock.calls[0]! as [Buffer, Buffer]
        assert.strictEqual(a.length, 32)
        assert.strictEqual(b.length, 32)
      }
    }))

  it.scoped("the bridge token is compared with crypto.timingSafeEqual", () =>
    Effect.gen(function*() {
      const bridge = yield* BridgeToken.make()
      const credential = yield* bridge.current.get
      spy.mockClear()
      assert.isTrue(Option.isSome(yield* bridge.verify(credential.token)))
      assert.isTrue(spy.mock.calls.length >= 1)
      spy.mockClear()
      assert.isTrue(Option.isNone(yield* bridge.verify("wmcp_bridge_wrong")))
      assert.isTrue(spy.mock.calls.length >= 1)
    }))

  it("digests of different lengths never match, and still cost one comparison", () => {
    const digest = NodeCrypto.randomBytes(32)
    const cases: ReadonlyArray<readonly [Buffer, boolean]> = [
      [Buffer.from(digest), true],
      [Buffer.concat([digest.subarray(0, 31), Buffer.from([digest[31]! ^ 1])]), false],
      [digest.subarray(0, 16), false],
      [Buffer.alloc(0), false],
      [Buffer.concat([digest, Buffer.from([0])]), false]
    ]
    for (const [stored, equal] of cases) {
      spy.mockClear()
      assert.strictEqual(digestsEqual(digest, stored), equal)
      assert.strictEqual(digestsEqual(stored, digest), equal)
      assert.strictEqual(spy.mock.calls.length, 2, "one constant-time comparison per call, whatever the lengths")
    }
  })

  it.scoped("a short digest in a tampered tokens.json matches no token", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const store = yield* TokenStore.make({ watch: false }).pipe(Effect.provide(homeLayer(dir)))
      const { token } = yield* store.create({ name: "ci", access: "readOnly" })
      const path = NodePath.join(dir, "tokens.json")
      type File = { version: 1; tokens: Array<{ hash: { digest: string } }> }
      const file = (yield* SecretFile.readJsonIfExists(path)) as File
      const real = Buffer.from(file.tokens[0]!.hash.digest, "base64url")
      for (const short of [real.subarray(0, 16), real.subarray(0, 1), Buffer.alloc(0)]) {
        const tampered = { ...file, tokens: [{ ...file.tokens[0]!, hash: { ...file.tokens[0]!.hash, digest: short.toString("base64url") } }] }
        yield* SecretFile.writeJsonAtomic(path, tampered)
        yield* store.reload
        spy.mockClear()
        assert.isTrue(Option.isNone(yield* store.verify(token)), `a ${short.length}-byte digest must not match`)
        assert.isTrue(Option.isNone(yield* store.verify(`${token.slice(0, -1)}${token.endsWith("A") ? "B" : "A"}`)))
        assert.strictEqual(spy.mock.calls.length, 2)
      }
      // The real digest put back: the same token is accepted again.
      yield* SecretFile.writeJsonAtomic(path, file)
      yield* store.reload
      assert.isTrue(Option.isSome(yield* store.verify(token)))
    }))
})
