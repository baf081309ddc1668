/**
 * The `Authorization` header as RFC 6750 §2.1 reads it, and the exact challenges: pure functions of
 * the Authenticator, each test named after the rule it guards.
 */
import { describe, expect, it } from "vitest"
import * as Option from "effect/Option"
import * as Authenticator from "../../src/Auth/Authenticator.ts"

const token = "wmcp_0123456789abcdef_" + "A".repeat(43)

describe("Authorization: Bearer, exactly per RFC 6750", () => {
  it("`Bearer <b64token>` gives the token; the scheme is case-insensitive; spaces around the value are ignored", () => {
    expect(Authenticator.bearerToken(`Bearer ${token}`)).toEqual(Option.some(token))
    expect(Authenticator.bearerToken(`bEaReR ${token}`)).toEqual(Option.some(token))
    expect(Authenticator.bearerToken(`  Bearer ${token}  `)).toEqual(Option.some(token))
    expect(Authenticator.bearerToken(`Bearer   ${token}`)).toEqual(Option.some(token))
    expect(Authenticator.bearerToken("Bearer abc+/_-.~==")).toEqual(Option.some("abc+/_-.~=="))
  })

  it("no header, another scheme, or no token is no bearer token", () => {
    for (const value of [undefined, "", "Bearer", "Bearer ", `Basic ${token}`, `Token ${token}`, `Bearertoken ${token}`, token]) {
      expect(Authenticator.bearerToken(value)).toEqual(Option.none())
    }
  })

  it("anything around the token means no bearer token was sent", () => {
    for (const value of [`Bearer ${token} extra`, `Basic x Bearer ${token}`, `xBearer ${token}`, `Bearer ${token},x`, `Bearer =${token}`, `Bearer ${token}=x`, `Bearer\t${token}`]) {
      expect(Authenticator.bearerToken(value)).toEqual(Option.none())
    }
  })
})

describe("the challenges", () => {
  it("a missing token: 401 with the realm and a message that says how to authenticate", () => {
    const error = Authenticator.missingToken()
    expect(error.message).toBe("Authentication required: send Authorization: Bearer <token>")
    expect(error.headers).toEqual({ "www-authenticate": `Bearer realm="${Authenticator.REALM}"` })
  })

  it("an unknown or revoked token: invalid_token", () => {
    const error = Authenticator.invalidToken()
    expect(error.message).toBe("Invalid or revoked token")
    expect(error.headers).toEqual({ "www-authenticate": 'Bearer realm="weaviate-mcp", error="invalid_token"' })
  })

  it("an expired token: invalid_token with the description", () => {
    const error = Authenticator.expiredToken()
    expect(error.message).toBe("Token expired")
    expect(error.headers).toEqual({ "www-authenticate": 'Bearer realm="weaviate-mcp", error="invalid_token", error_description="token expired"' })
  })
})
