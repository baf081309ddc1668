/**
 * Connection settings of one Weaviate instance: every field of the contract (host, port, auth
 * method, API key, SSL mode, skip TLS verification) plus the product's own id, name, Safe Mode and
 * AI policy. The encoded form is what `connections.json` holds; the API key stays `Redacted`
 * everywhere in memory, so printing or logging a connection never shows it.
 *
 * @since 0.1.0
 */
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { ConsistencyLevel } from "./ConsistencyLevel.ts"
import { AiPolicy, SafeMode } from "./Policy.ts"

/**
 * SSL modes, spelled as on the command line. Contract names: `Disabled`, `Preferred`, `Required`,
 * `Required (skip verify)`, `Verify CA`, `Verify Identity`.
 *
 * @category schemas
 */
export const SslMode = Schema.Literal("disabled", "preferred", "required", "required-skip-verify", "verify-ca", "verify-identity")
export type SslMode = typeof SslMode.Type

/** The contract's display name of each SSL mode. @category constants */
export const sslModeLabel: Record<SslMode, string> = {
  disabled: "Disabled",
  preferred: "Preferred",
  required: "Required",
  "required-skip-verify": "Required (skip verify)",
  "verify-ca": "Verify CA",
  "verify-identity": "Verify Identity"
}

/**
 * Auth Method: `None` sends nothing, `API Key` sends `Authorization: Bearer`; the three OIDC methods
 * sign in at the identity provider Weaviate trusts and send its access token as the bearer.
 *
 * @category schemas
 */
export const AuthMethod = Schema.Literal("none", "apiKey", "oidcClientCredentials", "oidcPassword", "oidcToken")
export type AuthMethod = typeof AuthMethod.Type

/** The contract's display name of each auth method. @category constants */
export const authMethodLabel: Record<AuthMethod, string> = {
  none: "None",
  apiKey: "API Key",
  oidcClientCredentials: "OIDC client credentials",
  oidcPassword: "OIDC username and password",
  oidcToken: "OIDC token"
}

/** Whether a method signs in at an OpenID provider. @category predicates */
export const isOidc = (method: AuthMethod): method is "oidcClientCredentials" | "oidcPassword" | "oidcToken" =>
  method === "oidcClientCredentials" || method === "oidcPassword" || method === "oidcToken"

/**
 * The fields that hold a secret. Each is `Redacted` in memory; on disk it is in the OS keychain (the
 * file lists it in `keychain`) or in the 0600 file.
 *
 * @category constants
 */
export const SECRET_FIELDS = ["apiKey", "oidcClientSecret", "oidcPassword", "oidcAccessToken", "oidcRefreshToken"] as const
export type SecretField = (typeof SECRET_FIELDS)[number]

/** @category schemas */
export const SecretFieldSchema = Schema.Literal(...SECRET_FIELDS)

/** How each secret is named to people. @category constants */
export const secretLabel: Record<SecretField, string> = {
  apiKey: "API key",
  oidcClientSecret: "OIDC client secret",
  oidcPassword: "OIDC password",
  oidcAccessToken: "OIDC access token",
  oidcRefreshToken: "OIDC refresh token"
}

/** The flag that enters each secret again (from standard input). @category constants */
export const secretStdinFlag: Record<SecretField, string> = {
  apiKey: "--api-key-stdin",
  oidcClientSecret: "--oidc-client-secret-stdin",
  oidcPassword: "--oidc-password-stdin",
  oidcAccessToken: "--oidc-access-token-stdin",
  oidcRefreshToken: "--oidc-refresh-token-stdin"
}

/** A host name or IP address: no scheme, path, port or whitespace. @category schemas */
export const Host = Schema.String.pipe(
  Schema.pattern(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+|[0-9A-Fa-f:.]+)$/, {
    message: () => "a host name or IP address without scheme, port or path"
  })
)

/** @category schemas */
export const Port = Schema.Int.pipe(Schema.between(1, 65535, { message: () => "a port between 1 and 65535" }))

/** An environment variable name. @category schemas */
export const EnvVarName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]*$/, { message: () => "an environment variable name" })
)

/**
 * What the user enters for a connection (the id is assigned when it is saved).
 *
 * @category schemas
 */
export const ConnectionFields = {
  name: Schema.NonEmptyTrimmedString,
  host: Host,
  port: Schema.optionalWith(Port, { default: () => 8080 }),
  authMethod: Schema.optionalWith(AuthMethod, { default: () => "none" as const }),
  /** The key itself; stored in the 0600 file, redacted in memory. */
  apiKey: Schema.optional(Schema.Redacted(Schema.String)),
  /** Alternatively the name of an environment variable that holds the key (read at connect time). */
  apiKeyEnv: Schema.optional(EnvVarName),
  /** OIDC: the issuer, when not the one Weaviate names at `/v1/.well-known/openid-configuration`. */
  oidcIssuer: Schema.optional(Schema.String.pipe(Schema.pattern(/^https?:\/\/[^\s]+$/, { message: () => "an http:// or https:// URL" }))),
  /** OIDC: the client id, when not the one Weaviate names. */
  oidcClientId: Schema.optional(Schema.NonEmptyTrimmedString),
  /** OIDC client credentials (or a confidential client's password grant): the client secret. */
  oidcClientSecret: Schema.optional(Schema.Redacted(Schema.String)),
  /** OIDC: scopes asked for beside those Weaviate names. */
  oidcScopes: Schema.optional(Schema.Array(Schema.NonEmptyTrimmedString)),
  /** OIDC password: the user who signs in. */
  oidcUsername: Schema.optional(Schema.NonEmptyTrimmedString),
  oidcPassword: Schema.optional(Schema.Redacted(Schema.String)),
  /** OIDC token: an access token obtained elsewhere, and the refresh token that renews it (optional). */
  oidcAccessToken: Schema.optional(Schema.Redacted(Schema.String)),
  oidcRefreshToken: Schema.optional(Schema.Redacted(Schema.String)),
  /** The secrets kept in the OS keychain rather than in this file (their values are absent from it). */
  keychain: Schema.optional(Schema.Array(SecretFieldSchema)),
  sslMode: Schema.optionalWith(SslMode, { default: () => "disabled" as const }),
  /** PEM file of the CA that signed the server certificate (`Verify CA`, `Verify Identity`). */
  caFile: Schema.optional(Schema.String),
  /** Advanced: trust any certificate, including under `Verify CA` and `Verify Identity`. */
  skipTlsVerify: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  safeMode: Schema.optionalWith(SafeMode, { default: () => "confirm" as const }),
  aiPolicy: Schema.optionalWith(AiPolicy, { default: () => "readWrite" as const }),
  /** The consistency level of reads and writes that name none; without it Weaviate's default applies. */
  consistencyLevel: Schema.optional(ConsistencyLevel),
  /**
   * Seconds a data request may wait for Weaviate (`DEFAULT_REQUEST_TIMEOUT_SECONDS` when absent): a
   * request held by a node that died and that Weaviate has not yet noticed is bounded by it.
   */
  requestTimeoutSeconds: Schema.optional(Schema.Int.pipe(Schema.between(1, 3600, { message: () => "seconds from 1 to 3600" })))
}

/**
 * The default of `requestTimeoutSeconds`. Weaviate 1.39 notices a dead node within about 20 s (its
 * memberlist failure detection) and a request waiting on that node then fails with Weaviate's own
 * message; 30 s lets that message through, and still ends a call the issue saw hang for 60 s.
 *
 * @category constants
 */
export const DEFAULT_REQUEST_TIMEOUT_SECONDS = 30

/** @category schemas */
export const ConnectionInput = Schema.Struct(ConnectionFields)
export type ConnectionInput = typeof ConnectionInput.Type

/**
 * A saved connection.
 *
 * @category schemas
 */
export class Connection extends Schema.Class<Connection>("weaviate-mcp/Connection")({
  id: Schema.NonEmptyTrimmedString,
  ...ConnectionFields
}) {
  /** `http` when SSL Mode is `Disabled`, `https` otherwise. */
  get scheme(): "http" | "https" {
    return this.sslMode === "disabled" ? "http" : "https"
  }

  /** `{scheme}://{host}:{port}` (IPv6 literals bracketed). */
  get baseUrl(): string {
    const host = this.host.includes(":") && !this.host.startsWith("[") ? `[${this.host}]` : this.host
    return `${this.scheme}://${host}:${this.port}`
  }
}

/** The document stored in `connections.json`. @category schemas */
export const ConnectionsFile = Schema.Struct({
  version: Schema.Literal(1),
  connections: Schema.Array(Connection)
})
export type ConnectionsFile = typeof ConnectionsFile.Type

/**
 * A connection as shown to people and AI clients: every field except the key, with only whether a
 * key is configured.
 *
 * @category models
 */
export interface PublicConnection {
  readonly id: string
  readonly name: string
  readonly host: string
  readonly port: number
  readonly authMethod: AuthMethod
  readonly apiKeyConfigured: boolean
  readonly apiKeyEnv?: string
  readonly oidcIssuer?: string
  readonly oidcClientId?: string
  readonly oidcScopes?: ReadonlyArray<string>
  readonly oidcUsername?: string
  /** The secrets this connection has (never their values), and where each is kept. */
  readonly secrets: Partial<Record<SecretField, "keychain" | "file">>
  readonly sslMode: SslMode
  readonly caFile?: string
  readonly skipTlsVerify: boolean
  readonly safeMode: SafeMode
  readonly aiPolicy: AiPolicy
  readonly consistencyLevel?: ConsistencyLevel
  readonly requestTimeoutSeconds?: number
  readonly url: string
}

/** @category combinators */
export const toPublic = (c: Connection): PublicConnection => ({
  id: c.id,
  name: c.name,
  host: c.host,
  port: c.port,
  authMethod: c.authMethod,
  apiKeyConfigured: (c.apiKey !== undefined && Redacted.value(c.apiKey).length > 0) || (c.keychain?.includes("apiKey") ?? false),
  ...(c.apiKeyEnv !== undefined ? { apiKeyEnv: c.apiKeyEnv } : {}),
  ...(c.oidcIssuer !== undefined ? { oidcIssuer: c.oidcIssuer } : {}),
  ...(c.oidcClientId !== undefined ? { oidcClientId: c.oidcClientId } : {}),
  ...(c.oidcScopes !== undefined ? { oidcScopes: c.oidcScopes } : {}),
  ...(c.oidcUsername !== undefined ? { oidcUsername: c.oidcUsername } : {}),
  secrets: secretPlaces(c),
  sslMode: c.sslMode,
  ...(c.caFile !== undefined ? { caFile: c.caFile } : {}),
  skipTlsVerify: c.skipTlsVerify,
  safeMode: c.safeMode,
  aiPolicy: c.aiPolicy,
  ...(c.consistencyLevel !== undefined ? { consistencyLevel: c.consistencyLevel } : {}),
  ...(c.requestTimeoutSeconds !== undefined ? { requestTimeoutSeconds: c.requestTimeoutSeconds } : {}),
  url: c.baseUrl
})

/**
 * Where each secret of a connection is kept: `keychain` when the file lists it there, `file` when its
 * value is in the file. A secret in neither is absent.
 *
 * @category combinators
 */
export const secretPlaces = (c: Connection): Partial<Record<SecretField, "keychain" | "file">> => {
  const places: Partial<Record<SecretField, "keychain" | "file">> = {}
  for (const field of SECRET_FIELDS) {
    if (c.keychain?.includes(field) === true) places[field] = "keychain"
    else if (c[field] !== undefined) places[field] = "file"
  }
  return places
}
