/**
 * OIDC sign-in of a connection, with `openid-client` (certified, so no hand-written OAuth): the three
 * auth methods `oidcClientCredentials`, `oidcPassword` and `oidcToken`.
 *
 * - The issuer and the client id come from Weaviate's `GET /v1/.well-known/openid-configuration`
 *   (`{href, clientId, scopes}`), as in the official clients; `oidcIssuer` and `oidcClientId` override
 *   them, and when both are given Weaviate is not asked.
 * - The identity provider is reached through an undici agent with the connection's TLS settings (its
 *   CA file, skip-verify), by `openid-client`'s `customFetch`.
 * - A token is renewed before it expires (on Effect's `Clock`, so tests move time with `TestClock`):
 *   when less than half its life or 30 s is left, whichever is less. Renewing uses the refresh token
 *   when there is one, else signs in again (client credentials, password); an `oidcToken` without a
 *   refresh token cannot be renewed and asks to sign in again.
 * - Every token and secret joins the process-wide redaction the moment it is known.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import type * as OidcClient from "openid-client"
import * as Redaction from "../Base/Redaction.ts"
import { authMethodLabel, type Connection } from "../Schema/Connection.ts"
import { AuthenticationFailed, ConnectionFailed } from "./DriverError.ts"

// ===== Models =====

/** An OIDC auth method. @category models */
export type OidcMethod = "oidcClientCredentials" | "oidcPassword" | "oidcToken"

/** What Weaviate says about its identity provider (`/v1/.well-known/openid-configuration`). @category models */
export interface WeaviateOidc {
  readonly href: string
  readonly clientId: string
  readonly scopes: ReadonlyArray<string>
}

/** Who the connection signs in as and until when: never the token. @category models */
export interface Identity {
  readonly method: OidcMethod
  readonly issuer: string
  readonly clientId: string
  /** The user or client the token stands for (`preferred_username`, `email`, `sub` of the token, or the client id). */
  readonly subject: string
  /** When the current access token expires (epoch ms), when known. */
  readonly expiresAt: number | undefined
  /** Whether the token can be renewed without the user (a refresh token, or a secret to sign in again with). */
  readonly renewable: boolean
}

/** The bearer tokens of one OIDC connection. @category models */
export interface Tokens {
  /** A token valid now: the current one, renewed first when it is about to expire. */
  readonly bearer: Effect.Effect<string, AuthenticationFailed | ConnectionFailed>
  /** Renews now (after Weaviate answered 401 to `rejected`); a concurrent renewal is joined, not repeated. */
  readonly renew: (rejected: string) => Effect.Effect<string, AuthenticationFailed | ConnectionFailed>
  /** `undefined` until the first sign-in. */
  readonly identity: () => Identity | undefined
}

/** How the identity provider is reached: `openid-client`'s fetch, with the connection's TLS. @category models */
export type Fetch = OidcClient.CustomFetch

let loading: Promise<typeof OidcClient> | undefined

/**
 * `openid-client` (with `jose` and `oauth4webapi`), loaded when the first OIDC connection signs in:
 * a start, and every connection with an API key, does without it.
 */
const load = (): Promise<typeof OidcClient> => loading ??= import("openid-client")

/** The longest time before expiry at which a token is renewed. @category constants */
export const RENEW_MARGIN_MS = 30_000

// ===== Constructors =====

const WELL_KNOWN = "/.well-known/openid-configuration"

/** The identity provider of a connection: the issuer and client id (from Weaviate unless both are set), and its metadata. */
const discoverProvider = (
  Oidc: typeof OidcClient,
  connection: Connection,
  weaviateOidc: Effect.Effect<WeaviateOidc, AuthenticationFailed | ConnectionFailed>,
  fetch: Fetch,
  clientSecret: string | undefined
) =>
  Effect.gen(function*() {
    const fromWeaviate = connection.oidcIssuer !== undefined && connection.oidcClientId !== undefined ? undefined : yield* weaviateOidc
    const issuer = connection.oidcIssuer ?? stripWellKnown(fromWeaviate!.href)
    const clientId = connection.oidcClientId ?? fromWeaviate!.clientId
    if (clientId === "") {
      return yield* new AuthenticationFailed({ reason: `Weaviate names no OIDC client id; give one with --oidc-client-id` })
    }
    const scopes = [...(fromWeaviate?.scopes ?? []), ...(connection.oidcScopes ?? [])]
    let url: URL
    try {
      url = new URL(issuer)
    } catch {
      return yield* new AuthenticationFailed({ reason: `the OIDC issuer ${JSON.stringify(issuer)} is not a URL` })
    }
    const auth = clientSecret !== undefined ? Oidc.ClientSecretPost(clientSecret) : Oidc.None()
    const config = yield* Effect.tryPromise({
      try: (signal) =>
        Oidc.discovery(url, clientId, undefined, auth, {
          [Oidc.customFetch]: (input: string, init: Parameters<Fetch>[1]) => fetch(input, { ...init, signal: init.signal ?? signal }),
          // An issuer on http is the company's choice (Weaviate accepts it); without this openid-client refuses it.
          ...(url.protocol === "http:" ? { execute: [Oidc.allowInsecureRequests] } : {}),
          timeout: 10
        }),
      catch: (cause) => providerFailure(Oidc, issuer, "did not give its discovery document", cause)
    })
    config[Oidc.customFetch] = fetch
    // A provider that does not answer fails a sign-in in 10 s (openid-client waits 30 s by default).
    config.timeout = 10
    return { config, issuer, clientId, scopes } as const
  })

/** Whether a token is within its renewal margin of expiring. */
const dueForRenewal = (token: { readonly expiresAt: number | undefined; readonly renewMs: number }, now: number) =>
  token.expiresAt !== undefined && now >= token.expiresAt - token.renewMs

/** The connection's secrets, revealed for the provider, and registered with the log redaction. */
const givenSecrets = (connection: Connection) => {
  const given = {
    clientSecret: reveal(connection.oidcClientSecret),
    password: reveal(connection.oidcPassword),
    accessToken: reveal(connection.oidcAccessToken),
    refreshToken: reveal(connection.oidcRefreshToken)
  }
  for (const secret of Object.values(given)) if (secret !== undefined) Redaction.global.register(secret)
  return given
}

const scopeOf = (scopes: ReadonlyArray<string>, extra: ReadonlyArray<string> = []) => {
  const all = [...new Set([...scopes, ...extra])]
  return all.length === 0 ? {} : { scope: all.join(" ") }
}

/** Who the connection signs in as, once it has signed in: never the token. */
const identityOf = (
  method: OidcMethod,
  connection: Connection,
  configuration: { readonly issuer: string; readonly clientId: string } | undefined,
  current: { readonly token: string; readonly expiresAt: number | undefined; readonly refreshToken: string | undefined; readonly subject: string } | undefined
): Identity | undefined =>
  current === undefined || configuration === undefined && method !== "oidcToken"
    ? undefined
    : {
      method,
      // A token given by hand is used without asking the provider: its own claims name them.
      issuer: configuration?.issuer ?? connection.oidcIssuer ?? claimOf(current.token, "iss") ?? "Weaviate's issuer",
      clientId: configuration?.clientId ?? connection.oidcClientId ?? claimOf(current.token, "client_id") ?? claimOf(current.token, "azp") ?? "Weaviate's client id",
      subject: current.subject,
      expiresAt: current.expiresAt,
      renewable: current.refreshToken !== undefined || method !== "oidcToken"
    }

/**
 * The sign-in of one connection. `weaviateOidc` asks Weaviate for its issuer (only when the settings
 * do not give both issuer and client id).
 *
 * @category constructors
 */
export const make = (
  connection: Connection,
  weaviateOidc: Effect.Effect<WeaviateOidc, AuthenticationFailed | ConnectionFailed>,
  fetch: Fetch,
  /**
   * `oidcToken`: the provider gave a new refresh token (it rotates them) and the one saved is now
   * spent; the new pair is to be saved, or the next start would have to sign in again.
   */
  onRotated: (tokens: { readonly accessToken: string; readonly refreshToken: string }) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<Tokens> =>
  Effect.gen(function*() {
    const Oidc = yield* Effect.promise(load)
    const method = connection.authMethod as OidcMethod
    const lock = yield* Effect.makeSemaphore(1)
    let configuration: { readonly config: OidcClient.Configuration; readonly issuer: string; readonly clientId: string; readonly scopes: ReadonlyArray<string> } | undefined
    let current: { readonly token: string; readonly expiresAt: number | undefined; readonly refreshToken: string | undefined; readonly subject: string; readonly renewMs: number } | undefined
    const given = givenSecrets(connection)

    /** The provider's metadata, read once per session. */
    const configure = Effect.suspend(() =>
      configuration !== undefined
        ? Effect.succeed(configuration)
        : Effect.tap(discoverProvider(Oidc, connection, weaviateOidc, fetch, given.clientSecret), (found) => (configuration = found)))

    /** One grant at the token endpoint, its answer turned into the current token. */
    const grant = (what: string, request: (c: NonNullable<typeof configuration>) => Promise<OidcClient.TokenEndpointResponse>, refreshToken?: string) =>
      Effect.gen(function*() {
        const c = yield* configure
        const answer = yield* Effect.tryPromise({ try: () => request(c), catch: (cause) => providerFailure(Oidc, c.issuer, what, cause, connection) })
        const now = yield* Clock.currentTimeMillis
        Redaction.global.register(answer.access_token)
        if (answer.refresh_token !== undefined) Redaction.global.register(answer.refresh_token)
        const lifetimeMs = typeof answer.expires_in === "number" ? answer.expires_in * 1000 : undefined
        const next = {
          token: answer.access_token,
          expiresAt: lifetimeMs === undefined ? expiryOf(answer.access_token) : now + lifetimeMs,
          refreshToken: answer.refresh_token ?? refreshToken,
          subject: subjectOf(answer.access_token) ?? (method === "oidcPassword" ? connection.oidcUsername! : `client ${c.clientId}`),
          renewMs: lifetimeMs === undefined ? RENEW_MARGIN_MS : Math.min(RENEW_MARGIN_MS, lifetimeMs / 2)
        }
        current = next
        return next
      })

    const signIn = (): Effect.Effect<NonNullable<typeof current>, AuthenticationFailed | ConnectionFailed> => {
      switch (method) {
        case "oidcClientCredentials":
          if (given.clientSecret === undefined) {
            return Effect.fail(new AuthenticationFailed({ reason: "Auth Method is OIDC client credentials but no client secret is configured" }))
          }
          return grant("refused the client credentials", (c) => Oidc.clientCredentialsGrant(c.config, scopeOf(c.scopes)))
        case "oidcPassword":
          if (connection.oidcUsername === undefined || given.password === undefined) {
            return Effect.fail(new AuthenticationFailed({ reason: "Auth Method is OIDC username and password but the username or the password is not configured" }))
          }
          return grant("refused the username and password", (c) =>
            // offline_access asks for a refresh token, as the official clients do.
            Oidc.genericGrantRequest(c.config, "password", { username: connection.oidcUsername!, password: given.password!, ...scopeOf(c.scopes, ["offline_access"]) }))
        case "oidcToken": {
          const token = given.accessToken
          if (token === undefined) {
            return Effect.fail(new AuthenticationFailed({ reason: "Auth Method is OIDC token but no access token is configured" }))
          }
          return Effect.map(Clock.currentTimeMillis, (now) => {
            const expiresAt = expiryOf(token)
            const next = {
              token,
              expiresAt,
              refreshToken: given.refreshToken,
              subject: subjectOf(token) ?? "the token's user",
              renewMs: expiresAt === undefined ? RENEW_MARGIN_MS : Math.min(RENEW_MARGIN_MS, Math.max(0, expiresAt - now) / 2)
            }
            current = next
            return next
          })
        }
      }
    }

    /** A new token: the refresh token when there is one; else (or when it is refused) a new sign-in. */
    const renewNow = Effect.suspend(() => {
      const refreshToken = current?.refreshToken
      if (refreshToken !== undefined) {
        const refreshed = Effect.tap(grant("refused the refresh token", (c) => Oidc.refreshTokenGrant(c.config, refreshToken), refreshToken), (next) =>
          method === "oidcToken" && next.refreshToken !== undefined && next.refreshToken !== refreshToken
            ? onRotated({ accessToken: next.token, refreshToken: next.refreshToken })
            : Effect.void)
        // A refused refresh token is final for a token given by hand; the other two sign in again.
        return method === "oidcToken" ? refreshed : Effect.catchTag(refreshed, "AuthenticationFailed", () => signIn())
      }
      if (method === "oidcToken") {
        return Effect.fail(new AuthenticationFailed({ reason: `the OIDC access token has expired or is no longer accepted, and no refresh token was given to renew it; ${signInAgain(connection)}` }))
      }
      return signIn()
    })

    const bearer: Tokens["bearer"] = Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const token = current
      // The common case: a token that is not due, read without the lock.
      if (token !== undefined && !dueForRenewal(token, now)) return Effect.succeed(token.token)
      return lock.withPermits(1)(Effect.gen(function*() {
        const again = current ?? (yield* signIn())
        if (!dueForRenewal(again, yield* Clock.currentTimeMillis)) return again.token
        // An access token given by hand that is not yet expired is still used when it cannot be renewed.
        if (method === "oidcToken" && again.refreshToken === undefined && again.expiresAt! > (yield* Clock.currentTimeMillis)) return again.token
        return (yield* renewNow).token
      }))
    })

    const renew: Tokens["renew"] = (rejected) =>
      lock.withPermits(1)(Effect.suspend(() =>
        // Another call renewed it while this one waited: that token is used, not another renewal.
        current !== undefined && current.token !== rejected ? Effect.succeed(current.token) : Effect.map(renewNow, (t) => t.token)
      ))

    const identity = () => identityOf(method, connection, configuration, current)

    return { bearer, renew, identity }
  })

// ===== Formatting =====

/**
 * Who an OIDC connection signs in as and until when, for people: never the token.
 *
 * @category formatting
 */
export const signInLine = (who: Identity) =>
  `signed in as ${who.subject} (${authMethodLabel[who.method]} at ${who.issuer}, client ${who.clientId}); ` +
  (who.expiresAt === undefined ? "the token names no expiry" : `token expires ${new Date(who.expiresAt).toISOString()}`) +
  (who.renewable ? ", renewed automatically" : ", cannot be renewed: sign in again before then")

/** The same as JSON. @category formatting */
export const signInJson = (who: Identity) => ({
  method: who.method,
  subject: who.subject,
  issuer: who.issuer,
  clientId: who.clientId,
  expiresAt: who.expiresAt === undefined ? null : new Date(who.expiresAt).toISOString(),
  renewable: who.renewable
})

// ===== Helpers =====

const reveal = (secret: Redacted.Redacted<string> | undefined) =>
  secret === undefined || Redacted.value(secret).length === 0 ? undefined : Redacted.value(secret)

const stripWellKnown = (href: string) => href.endsWith(WELL_KNOWN) ? href.slice(0, -WELL_KNOWN.length) : href

/** The claims of a JWT, read without verifying it: only to show who it is for and when it expires. */
const claimsOf = (token: string): Record<string, unknown> | undefined => {
  const parts = token.split(".")
  if (parts.length !== 3) return undefined
  try {
    const claims = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as unknown
    return typeof claims === "object" && claims !== null ? claims as Record<string, unknown> : undefined
  } catch {
    return undefined
  }
}

const claimOf = (token: string, name: string): string | undefined => {
  const value = claimsOf(token)?.[name]
  return typeof value === "string" && value !== "" ? value : undefined
}

const subjectOf = (token: string): string | undefined => {
  const claims = claimsOf(token)
  for (const name of ["preferred_username", "email", "sub"]) {
    const value = claims?.[name]
    if (typeof value === "string" && value !== "") return value
  }
  return undefined
}

const expiryOf = (token: string): number | undefined => {
  const exp = claimsOf(token)?.exp
  return typeof exp === "number" ? exp * 1000 : undefined
}

/** What to do when the tokens given by hand can no longer be used. */
export const signInAgain = (connection: Pick<Connection, "name">) =>
  `sign in again and save the new tokens: weaviate-mcp connections update ${connection.name} --oidc-access-token-stdin (and --oidc-refresh-token-stdin)`

const causeMessage = (cause: unknown): string => cause instanceof Error ? cause.message : String(cause)

/** The innermost error with a system or TLS code (`ECONNREFUSED`, `DEPTH_ZERO_SELF_SIGNED_CERT`). */
const findCode = (cause: unknown, depth = 0): { code: string; message: string } | undefined => {
  if (depth > 8 || typeof cause !== "object" || cause === null) return undefined
  const record = cause as { code?: unknown; message?: unknown; cause?: unknown }
  const inner = findCode(record.cause, depth + 1)
  if (inner !== undefined) return inner
  return typeof record.code === "string" && /^[A-Z_]+$/.test(record.code) && !record.code.startsWith("OAUTH_")
    ? { code: record.code, message: typeof record.message === "string" ? record.message : record.code }
    : undefined
}

/**
 * A failure at the identity provider, naming it and its answer: the provider's own refusal
 * (`invalid_grant: …`) is `AuthenticationFailed`; not reaching it is `ConnectionFailed`.
 */
const providerFailure = (
  Oidc: typeof OidcClient,
  issuer: string,
  what: string,
  cause: unknown,
  connection?: Pick<Connection, "name" | "authMethod">
): AuthenticationFailed | ConnectionFailed => {
  const scrub = Redaction.global.redact
  if (cause instanceof Oidc.ResponseBodyError) {
    const answer = `${cause.error}${cause.error_description !== undefined ? `: ${cause.error_description}` : ""}`
    const again = connection?.authMethod === "oidcToken" && cause.error === "invalid_grant" ? `; ${signInAgain(connection)}` : ""
    return new AuthenticationFailed({ reason: scrub(`the identity provider ${issuer} ${what} (HTTP ${cause.status}, ${answer})${again}`) })
  }
  const system = findCode(cause)
  if (system !== undefined) {
    const detail = system.code === "ECONNREFUSED" ? "connection refused" : system.message.replace(/\s*\n\s*/g, " ")
    const tls = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(system.code)
      ? "; give its CA with --ca (Verify CA) or turn on Skip TLS Verification"
      : ""
    return new ConnectionFailed({ reason: scrub(`the identity provider ${issuer} cannot be reached (${detail})${tls}`), code: system.code })
  }
  if (cause instanceof Oidc.ClientError || cause instanceof Oidc.AuthorizationResponseError || cause instanceof Oidc.WWWAuthenticateChallengeError) {
    const inner = (cause as { cause?: unknown }).cause
    const status = typeof inner === "object" && inner !== null && "status" in inner ? ` (HTTP ${String((inner as { status: unknown }).status)})` : ""
    return new AuthenticationFailed({ reason: scrub(`the identity provider ${issuer} ${what}: ${causeMessage(cause)}${status}`) })
  }
  return new ConnectionFailed({ reason: scrub(`the identity provider ${issuer}: ${causeMessage(cause)}`) })
}
