/**
 * Authentication as Weaviate does it (usecases/auth/authentication): the anonymous-access middleware
 * (hand-written 401 body, sniffed as text/plain), then API-key validation of any Bearer token, or the
 * "no authentication scheme is configured" 401 when only anonymous access is configured.
 */
import type { HttpReply } from "./Http.ts"
import { swaggerError } from "./Http.ts"

export interface AuthSettings {
  /** API-key authentication enabled (AUTHENTICATION_APIKEY_ENABLED). */
  readonly apiKeyEnabled: boolean
  /** AUTHENTICATION_APIKEY_ALLOWED_KEYS */
  readonly apiKeys: ReadonlyArray<string>
  /** AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED */
  readonly anonymousAccess: boolean
}

const EXEMPT = new Set(["/v1", "/v1/.well-known/openid-configuration"])

/** The Bearer token of a request (`Authorization: Bearer <t>` or `?access_token=`), if any. */
export const bearerToken = (authorization: string | undefined, query: URLSearchParams): string | undefined => {
  if (authorization !== undefined && authorization.startsWith("Bearer ")) {
    const token = authorization.slice("Bearer ".length)
    return token === "" ? undefined : token
  }
  const q = query.get("access_token")
  return q === null || q === "" ? undefined : q
}

export const anonymousDeniedBody = (settings: AuthSettings): string =>
  `{"code":401,"message": "anonymous access not enabled. Please authenticate through one of the available methods: [${settings.apiKeyEnabled ? "API-keys" : ""}]" }`

/** A 401 reply, or undefined when the request may proceed. */
export const authenticate = (settings: AuthSettings, path: string, token: string | undefined): HttpReply | undefined => {
  if (token === undefined) {
    if (settings.anonymousAccess || EXEMPT.has(path)) return undefined
    return { status: 401, headers: { "content-type": "text/plain; charset=utf-8" }, body: anonymousDeniedBody(settings) }
  }
  if (!settings.apiKeyEnabled) {
    return swaggerError(
      401,
      "no authentication scheme is configured (API Key or OIDC), but an 'Authorization' header was provided. Please configure an auth scheme or remove the header for anonymous access"
    )
  }
  return settings.apiKeys.includes(token) ? undefined : swaggerError(401, "unauthorized: invalid api key")
}
