/**
 * Revoking a token makes first access forget that token's answers (issue 8 with issue 6: a revoked
 * token leaves nothing behind in the daemon's memory).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { FirstAccess } from "../../src/Approval/FirstAccess.ts"
import * as ApprovalsLayer from "../../src/Approval/ApprovalsLayer.ts"
import { TokenStore } from "../../src/Auth/TokenStore.ts"
import * as TestHome from "../support/TestHome.ts"

describe("first access and revocation", () => {
  it.scopedLive("a revoked token's first-access answers are forgotten", () =>
    Effect.gen(function*() {
      const forgotten = yield* Deferred.make<string>()
      const spy = Layer.succeed(FirstAccess, FirstAccess.of({
        check: () => Effect.die("not used"),
        forgetPrincipal: (id) => Deferred.succeed(forgotten, id),
        size: Effect.die("not used")
      }))
      const store = TokenStore.layer({ watch: false }).pipe(Layer.provide(TestHome.layer))
      const context = yield* Layer.build(ApprovalsLayer.forgetOnRevocation.pipe(Layer.provideMerge(Layer.merge(spy, store))))
      const tokens = context.unsafeMap.get(TokenStore.key) as TokenStore["Type"]
      const { info } = yield* tokens.create({ name: "t", access: "readWrite" })
      yield* tokens.revoke(info.id)
      assert.strictEqual(yield* Deferred.await(forgotten).pipe(Effect.timeout("5 seconds")), info.id)
    }))
})
