import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import {
  anonymous,
  canSeeConnection,
  CurrentPrincipal,
  hasScopes,
  isFullAccess,
  permissionOn,
  requireConnection,
  requireScopes,
  scopesForMethod,
  toApprovalPrincipal,
  toFirstAccessPrincipal,
  TokenPrincipal
} from "../../src/Auth/Principal.ts"
import { Forbidden } from "../../src/Schema/McpErrors.ts"
import { type AccessLevel, type AiPolicy, defaultScopes, type EffectivePermission } from "../../src/Schema/Policy.ts"

const token = (access: AccessLevel, connections?: ReadonlyArray<string>) =>
  new TokenPrincipal({
    id: `t-${access}`,
    name: access,
    access,
    scopes: defaultScopes[access],
    connections: Option.fromNullable(connections),
    expiresAt: Option.none(),
    source: "store"
  })

describe("Principal", () => {
  describe("scopes", () => {
    it("scopes per method follow the contract's methods table", () => {
      assert.deepStrictEqual(scopesForMethod("tools/list"), ["tools:read"])
      assert.deepStrictEqual(scopesForMethod("tools/call"), ["tools:read"])
      for (const method of ["resources/list", "resources/read", "resources/templates/list", "prompts/list", "prompts/get", "completion/complete"]) {
        assert.deepStrictEqual(scopesForMethod(method), ["resources:read"], method)
      }
      for (const method of ["server/discover", "subscriptions/listen", "initialize", "ping", "logging/setLevel"]) {
        assert.deepStrictEqual(scopesForMethod(method), [], method)
      }
    })

    it("access levels carry their default scopes", () => {
      assert.isTrue(hasScopes(token("readOnly"), ["tools:read", "resources:read"]))
      assert.isFalse(hasScopes(token("readOnly"), ["tools:write"]))
      assert.isTrue(hasScopes(token("readWrite"), ["tools:read", "tools:write"]))
      assert.isFalse(hasScopes(token("readWrite"), ["admin"]))
      assert.isTrue(hasScopes(token("fullAccess"), ["admin", "tools:write"]))
    })

    it.effect("a scope failure is 403 -33007 with insufficient_scope and data.requiredScopes", () =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(requireScopes(token("readOnly"), ["tools:read", "tools:write"]))
        assert.isTrue(Exit.isFailure(exit))
        const error = yield* Effect.flip(requireScopes(token("readOnly"), ["tools:read", "tools:write", "tools:read"]))
        assert.instanceOf(error, Forbidden)
        assert.strictEqual(error.code, -33007)
        assert.strictEqual(error.httpStatus, 403)
        assert.deepStrictEqual(error.data, { requiredScopes: ["tools:read", "tools:write"] })
        assert.deepStrictEqual(error.headers, {
          "www-authenticate": "Bearer error=\"insufficient_scope\", scope=\"tools:read tools:write\""
        })
      }))

    it.effect("a principal holding every required scope passes", () =>
      requireScopes(token("readWrite"), ["tools:read", "tools:write"]))
  })

  describe("connections", () => {
    const policies: ReadonlyArray<AiPolicy> = ["blocked", "readOnly", "readWrite"]
    const expected: Record<AccessLevel, Record<AiPolicy, EffectivePermission>> = {
      readOnly: { blocked: "none", readOnly: "read", readWrite: "read" },
      readWrite: { blocked: "none", readOnly: "read", readWrite: "write" },
      fullAccess: { blocked: "none", readOnly: "read", readWrite: "write" }
    }

    it("effective permission is the lower of token and AI policy; blocked is invisible", () => {
      for (const access of ["readOnly", "readWrite", "fullAccess"] as const) {
        for (const aiPolicy of policies) {
          const permission = permissionOn(token(access), { id: "c1", aiPolicy })
          assert.strictEqual(permission, expected[access][aiPolicy], `${access} on ${aiPolicy}`)
          assert.strictEqual(canSeeConnection(token(access), { id: "c1", aiPolicy }), aiPolicy !== "blocked")
        }
      }
    })

    it("a connection outside the allowlist is invisible whatever its policy", () => {
      const limited = token("fullAccess", ["c1"])
      for (const aiPolicy of policies) {
        assert.strictEqual(permissionOn(limited, { id: "c2", aiPolicy }), "none")
        assert.isFalse(canSeeConnection(limited, { id: "c2", aiPolicy }))
      }
      assert.strictEqual(permissionOn(limited, { id: "c1", aiPolicy: "readWrite" }), "write")
      assert.strictEqual(permissionOn(token("readWrite", []), { id: "c1", aiPolicy: "readWrite" }), "none")
    })

    it("the anonymous loopback principal is readWrite on every connection", () => {
      assert.deepStrictEqual(anonymous.scopes, defaultScopes.readWrite)
      assert.strictEqual(permissionOn(anonymous, { id: "any", aiPolicy: "readWrite" }), "write")
      assert.strictEqual(permissionOn(anonymous, { id: "any", aiPolicy: "readOnly" }), "read")
      assert.isFalse(canSeeConnection(anonymous, { id: "any", aiPolicy: "blocked" }))
    })

    it.effect("connection refusals are -33007 and say why", () =>
      Effect.gen(function*() {
        const outside = yield* Effect.flip(requireConnection(token("readWrite", ["c1"]), { id: "c2", aiPolicy: "readWrite" }, "read"))
        assert.strictEqual(outside.code, -33007)
        assert.match(outside.message, /allowlist/)
        const blocked = yield* Effect.flip(requireConnection(token("fullAccess"), { id: "c1", aiPolicy: "blocked" }, "read"))
        assert.match(blocked.message, /blocked/)
        const readOnly = yield* Effect.flip(requireConnection(token("readOnly"), { id: "c1", aiPolicy: "readWrite" }, "write"))
        assert.match(readOnly.message, /read-only/)
        yield* requireConnection(token("readOnly"), { id: "c1", aiPolicy: "readWrite" }, "read")
        yield* requireConnection(token("readWrite"), { id: "c1", aiPolicy: "readWrite" }, "write")
      }))
  })

  it("the approval flow sees access level and anonymity", () => {
    assert.deepStrictEqual(toApprovalPrincipal(token("fullAccess")), { id: "t-fullAccess", name: "fullAccess", accessLevel: "fullAccess", anonymous: false })
    assert.deepStrictEqual(toApprovalPrincipal(anonymous), { id: "anonymous", name: "anonymous", accessLevel: "readWrite", anonymous: true })
    assert.isTrue(isFullAccess(token("fullAccess")))
    assert.isFalse(isFullAccess(anonymous))
  })

  it.effect("handlers read the principal from CurrentPrincipal", () =>
    Effect.gen(function*() {
      const principal = yield* CurrentPrincipal
      assert.strictEqual(principal.id, "t-readOnly")
    }).pipe(Effect.provideService(CurrentPrincipal, token("readOnly"))))
})

describe("toFirstAccessPrincipal", () => {
  it("a stored token's explicit allowlist is its granted connections; no allowlist, the bridge token and anonymous grant nothing", () => {
    assert.deepStrictEqual(toFirstAccessPrincipal(token("readOnly", ["c1", "c2"])).granted, ["c1", "c2"])
    assert.isUndefined(toFirstAccessPrincipal(token("readOnly")).granted)
    const bridge = new TokenPrincipal({ ...token("readWrite", ["c1"]), source: "bridge" })
    assert.isUndefined(toFirstAccessPrincipal(bridge).granted)
    assert.isUndefined(toFirstAccessPrincipal(anonymous).granted)
  })
})
