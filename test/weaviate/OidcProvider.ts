/**
 * A real OpenID provider (`oidc-provider`, the certified Node implementation) on 127.0.0.1, for the
 * OIDC tests against the real Weaviate. Weaviate's `go-oidc` reads the issuer's discovery document
 * at start and its JWKS when it checks a token; it accepts an http issuer (it only compares the
 * issuer string), so plain http on loopback serves, and https with a generated CA tests the TLS modes.
 *
 * Its access tokens are JWTs (resource indicators, one resource server whose audience is the client
 * id Weaviate checks), signed RS256 as Weaviate expects. Clients:
 * - `weaviate`: public, the client id Weaviate names; password grant (registered here, as
 *   `oidc-provider` leaves it out of OAuth 2.1) and refresh tokens.
 * - `service`: confidential, client credentials with `SERVICE_SECRET`.
 *
 * `accessTokenTtl` (seconds) may be changed while it runs; `grants` counts the successful grants by
 * type; `revoke` revokes a token as the revocation endpoint would; `stop` closes it.
 */
import * as crypto from "node:crypto"
import * as http from "node:http"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import Provider, { errors } from "oidc-provider"
import type { GeneratedTls } from "./Tls.ts"

export const WEAVIATE_CLIENT_ID = "weaviate"
export const SERVICE_CLIENT_ID = "service"
export const SERVICE_SECRET = "service-secret-3f9c1a7e5b2d"
export const USERS: Readonly<Record<string, string>> = { alice: "alice-password-8d2e41" }
const RESOURCE = "urn:weaviate"

export interface OidcProvider {
  readonly issuer: string
  readonly port: number
  /** Seconds an access token lives (default 600). */
  accessTokenTtl: number
  /** Whether a refresh gives a new refresh token and spends the old one (default false). */
  rotateRefreshTokens: boolean
  /** Successful grants by grant type. */
  readonly grants: Record<string, number>
  /** Revokes a refresh token (or an access token). */
  readonly revoke: (token: string) => Promise<void>
  /** Signs in with the password grant, as a person would elsewhere: for the `oidcToken` method. */
  readonly passwordGrant: (username: string, password: string) => Promise<{ access_token: string; refresh_token: string; expires_in: number }>
  readonly stop: () => Promise<void>
  /** The environment that points Weaviate at this provider. */
  readonly weaviateEnv: Readonly<Record<string, string>>
}

export const startOidcProvider = async (options: { readonly tls?: GeneratedTls; readonly port?: number } = {}): Promise<OidcProvider> => {
  const server = options.tls === undefined
    ? http.createServer()
    : https.createServer({ cert: options.tls.certPem, key: options.tls.keyPem })
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  const issuer = `${options.tls === undefined ? "http" : "https"}://127.0.0.1:${port}`
  const { privateKey } = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 })
  const jwk = { ...privateKey.export({ format: "jwk" }), kid: "test-key", alg: "RS256", use: "sig" }
  const state = { accessTokenTtl: 600, rotateRefreshTokens: false }
  const grants: Record<string, number> = {}
  const resourceInfo = () => ({
    scope: "openid offline_access weaviate",
    audience: WEAVIATE_CLIENT_ID,
    accessTokenFormat: "jwt" as const,
    accessTokenTTL: state.accessTokenTtl,
    jwt: { sign: { alg: "RS256" as const } }
  })
  const provider = new Provider(issuer, {
    clients: [
      { client_id: WEAVIATE_CLIENT_ID, token_endpoint_auth_method: "none", grant_types: ["password", "refresh_token"], response_types: [], redirect_uris: [] },
      { client_id: SERVICE_CLIENT_ID, client_secret: SERVICE_SECRET, grant_types: ["client_credentials"], response_types: [], redirect_uris: [] }
    ],
    jwks: { keys: [jwk as never] },
    findAccount: (_ctx, id) => (USERS[id] === undefined ? undefined : { accountId: id, claims: () => ({ sub: id }) }),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => resourceInfo()
      }
    },
    // Kept as it is unless a test asks for rotation (many providers rotate; the official clients keep the one they were given).
    rotateRefreshToken: () => state.rotateRefreshTokens,
    scopes: ["openid", "offline_access", "weaviate"]
  })
  provider.proxy = false
  provider.registerGrantType("password", async (ctx) => {
    const { username, password } = ctx.oidc.params as { username?: string; password?: string }
    if (username === undefined || USERS[username] === undefined || USERS[username] !== password) {
      throw new errors.InvalidGrant("invalid username or password")
    }
    const client = ctx.oidc.client!
    const grant = new provider.Grant({ accountId: username, clientId: client.clientId })
    grant.addOIDCScope("openid offline_access")
    grant.addResourceScope(RESOURCE, "openid offline_access weaviate")
    const grantId = await grant.save()
    const at = new provider.AccessToken({ accountId: username, client, grantId, gty: "password", scope: "openid offline_access weaviate" })
    at.resourceServer = new provider.ResourceServer(RESOURCE, resourceInfo())
    const accessToken = await at.save()
    const rt = new provider.RefreshToken({ accountId: username, client, grantId, gty: "password", scope: "openid offline_access weaviate", resource: RESOURCE })
    const refreshToken = await rt.save()
    ctx.body = { access_token: accessToken, token_type: "Bearer", expires_in: at.expiration, refresh_token: refreshToken, scope: at.scope }
  }, ["username", "password", "scope"])
  provider.on("grant.success", (ctx) => {
    const type = String((ctx.oidc.params as { grant_type?: string }).grant_type)
    grants[type] = (grants[type] ?? 0) + 1
  })
  server.on("request", provider.callback())

  const post = async (path: string, form: Record<string, string>) => {
    const response = await fetch(new URL(path, issuer), { method: "POST", body: new URLSearchParams(form) })
    const text = await response.text()
    if (!response.ok) throw new Error(`${path} answered ${response.status}: ${text}`)
    return text === "" ? {} : JSON.parse(text)
  }
  let stopped = false
  return {
    issuer,
    port,
    get accessTokenTtl() {
      return state.accessTokenTtl
    },
    set accessTokenTtl(seconds: number) {
      state.accessTokenTtl = seconds
    },
    get rotateRefreshTokens() {
      return state.rotateRefreshTokens
    },
    set rotateRefreshTokens(on: boolean) {
      state.rotateRefreshTokens = on
    },
    grants,
    revoke: async (token) => void (await post("/token/revocation", { token, client_id: WEAVIATE_CLIENT_ID })),
    passwordGrant: (username, password) => post("/token", { grant_type: "password", client_id: WEAVIATE_CLIENT_ID, username, password }),
    stop: () =>
      stopped ? Promise.resolve() : new Promise<void>((resolve) => {
        stopped = true
        server.closeAllConnections()
        server.close(() => resolve())
      }),
    weaviateEnv: {
      AUTHENTICATION_OIDC_ENABLED: "true",
      AUTHENTICATION_OIDC_ISSUER: issuer,
      AUTHENTICATION_OIDC_CLIENT_ID: WEAVIATE_CLIENT_ID,
      AUTHENTICATION_OIDC_USERNAME_CLAIM: "sub",
      AUTHENTICATION_OIDC_SCOPES: "openid",
      ...(options.tls !== undefined ? { AUTHENTICATION_OIDC_CERTIFICATE: options.tls.caPem } : {})
    }
  }
}
