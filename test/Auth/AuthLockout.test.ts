/**
 * Authentication-failure lockouts per client address, over HTTP: after `--auth-lockout N` failed
 * authentications in a minute the address gets 429 -33010 with Retry-After; counted separately from
 * the per-principal request rate; lifted when the minute has passed (spec/README.md, Rate limits).
 * The daemon runs on the TestClock.
 */
import { assert, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import * as H from "../Mcp/support/EndpointHarness.ts"

const wrongToken = "wmcp_0000000000000000_" + "x".repeat(43)

layer(H.layer({ authLockout: 3, rateLimit: 0 }))("authentication lockout per address", (it) => {
  it.effect("the 4th failure within a minute is 429 -33010 with Retry-After; a valid token still works; a minute later it lifts", () =>
    Effect.gen(function*() {
      const fail = H.postModern("tools/list", {}, { token: wrongToken })
      for (let i = 0; i < 3; i++) {
        const r = yield* fail
        assert.strictEqual(r.status, 401)
        assert.strictEqual(r.json.error.code, -33009)
      }
      const locked = yield* fail
      assert.strictEqual(locked.status, 429)
      assert.strictEqual(locked.json.error.code, -33010)
      H.validateMessage("2026-07-28", { ...locked.json, id: 1 })
      const retryAfter = Number(locked.headers.get("retry-after"))
      assert.isTrue(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`)

      const noToken = yield* H.postModern("tools/list", {}, { token: "" })
      assert.strictEqual(noToken.status, 401, "a request without a token is no guess: it still gets its challenge")
      assert.strictEqual(noToken.json.error.code, -33009)
      const guess = yield* H.postModern("tools/list", {}, { token: "wmcp_another_guess" })
      assert.strictEqual(guess.status, 429, "while locked out, an unknown token is refused")

      const valid = yield* H.postModern("tools/list")
      assert.strictEqual(valid.status, 200, "a valid token still works: all local clients share 127.0.0.1")

      yield* TestClock.adjust(`${retryAfter} seconds`)
      const again = yield* fail
      assert.strictEqual(again.status, 401, "the lockout lifts when its window has passed")
    }))
})

layer(H.layer({ authLockout: 0, rateLimit: 2 }))("rate limit and lockout are counted separately", (it) => {
  it.effect("failed authentications never spend a principal's request budget, and --auth-lockout 0 never locks out", () =>
    Effect.gen(function*() {
      for (let i = 0; i < 30; i++) {
        const r = yield* H.postModern("tools/list", {}, { token: wrongToken })
        assert.strictEqual(r.status, 401)
      }
      const valid = yield* H.postModern("tools/list")
      assert.strictEqual(valid.status, 200)
    }))
})
