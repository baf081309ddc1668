/**
 * `weaviate-mcp connections add|update|list|show|test|remove`: the saved connections of
 * `connections.json`. The API key is never printed; `--api-key-env VAR` stores the name of an
 * environment variable instead of the key.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Prompt from "@effect/cli/Prompt"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs/promises"
import { ConnectionStore, type ConnectionPatch } from "../Driver/ConnectionStore.ts"
import * as Cluster from "../Driver/Cluster.ts"
import { Driver } from "../Driver/Driver.ts"
import { signInJson, signInLine } from "../Driver/OidcSignIn.ts"
import {
  authMethodLabel,
  type Connection,
  DEFAULT_REQUEST_TIMEOUT_SECONDS,
  Host,
  isOidc,
  SECRET_FIELDS,
  type SecretField,
  secretLabel,
  Connection as ConnectionSchema,
  secretPlaces,
  secretStdinFlag,
  sslModeLabel,
  toPublic
} from "../Schema/Connection.ts"
import * as CommonOptions from "./CommonOptions.ts"
import { UsageError } from "./CliErrors.ts"
import { driverLayer, formatTable, readStdin } from "./DriverCli.ts"

// ===== Options =====

const connectionArg = Args.text({ name: "CONN" }).pipe(Args.withDescription("Connection id or name"))

const settingOptions = {
  url: Options.text("url").pipe(
    Options.withDescription("Shorthand for --host, --port and the scheme: http://localhost:8080 or https://HOST:443 (https: SSL Mode Required)"),
    Options.optional
  ),
  host: Options.text("host").pipe(Options.withDescription("Node host name (localhost for a local container)"), Options.optional),
  port: Options.integer("port").pipe(Options.withDescription("Port (default 8080; hosted clusters use 443)"), Options.optional),
  authMethod: Options.choice("auth-method", ["none", "api-key", "oidc-client-credentials", "oidc-password", "oidc-token"]).pipe(
    Options.withAlias("auth"),
    Options.withDescription("How the connection signs in: none, api-key, or OIDC at the identity provider Weaviate trusts"),
    Options.optional
  ),
  apiKey: Options.redacted("api-key").pipe(Options.withDescription("API key (sent as Authorization: Bearer); --api-key-stdin keeps it out of shell history"), Options.optional),
  apiKeyStdin: Options.boolean("api-key-stdin").pipe(Options.withDescription("Read the API key from standard input")),
  oidcIssuer: Options.text("oidc-issuer").pipe(Options.withDescription("OIDC issuer URL (default: the one Weaviate names at /v1/.well-known/openid-configuration)"), Options.optional),
  oidcClientId: Options.text("oidc-client-id").pipe(Options.withDescription("OIDC client id (default: the one Weaviate names)"), Options.optional),
  oidcClientSecret: Options.redacted("oidc-client-secret").pipe(Options.withDescription("OIDC client secret (client credentials)"), Options.optional),
  oidcClientSecretStdin: Options.boolean("oidc-client-secret-stdin").pipe(Options.withDescription("Read the OIDC client secret from standard input")),
  oidcScope: Options.text("oidc-scope").pipe(Options.withDescription("An OIDC scope to ask for beside Weaviate's (repeatable)"), CommonOptions.repeatable),
  oidcUsername: Options.text("oidc-username").pipe(Options.withDescription("OIDC user (oidc-password)"), Options.optional),
  oidcPassword: Options.redacted("oidc-password").pipe(Options.withDescription("OIDC password (oidc-password)"), Options.optional),
  oidcPasswordStdin: Options.boolean("oidc-password-stdin").pipe(Options.withDescription("Read the OIDC password from standard input")),
  oidcAccessToken: Options.redacted("oidc-access-token").pipe(Options.withDescription("OIDC access token obtained elsewhere (oidc-token)"), Options.optional),
  oidcAccessTokenStdin: Options.boolean("oidc-access-token-stdin").pipe(Options.withDescription("Read the OIDC access token from standard input")),
  oidcRefreshToken: Options.redacted("oidc-refresh-token").pipe(Options.withDescription("OIDC refresh token that renews the access token (oidc-token)"), Options.optional),
  oidcRefreshTokenStdin: Options.boolean("oidc-refresh-token-stdin").pipe(Options.withDescription("Read the OIDC refresh token from standard input (with --oidc-access-token-stdin: the second line)")),
  apiKeyEnv: Options.text("api-key-env").pipe(
    Options.withDescription("Name of an environment variable holding the API key"),
    Options.optional
  ),
  sslMode: Options.choice("ssl-mode", ["disabled", "preferred", "required", "required-skip-verify", "verify-ca", "verify-identity"])
    .pipe(Options.optional),
  ca: Options.file("ca", { exists: "yes" }).pipe(Options.withDescription("CA certificate (PEM) for Verify CA / Verify Identity"), Options.optional),
  skipTlsVerify: Options.boolean("skip-tls-verify").pipe(Options.withDescription("Trust any certificate")),
  safeMode: Options.choice("safe-mode", ["silent", "confirm", "readOnly"]).pipe(Options.optional),
  aiPolicy: Options.choice("ai-policy", ["blocked", "readOnly", "readWrite"]).pipe(Options.optional),
  consistencyLevel: Options.choice("consistency-level", ["ONE", "QUORUM", "ALL"]).pipe(
    Options.withDescription("Default consistency level of reads and writes on a replicated collection (default: Weaviate's own, QUORUM)"),
    Options.optional
  ),
  requestTimeout: Options.integer("request-timeout").pipe(
    Options.withDescription(`Seconds a request may wait for the database (default ${DEFAULT_REQUEST_TIMEOUT_SECONDS})`),
    Options.optional
  )
}

type SettingFlags = {
  readonly [K in keyof typeof settingOptions]: (typeof settingOptions)[K] extends Options.Options<infer A> ? A : never
}

const undef = <A>(option: Option.Option<A>): A | undefined => Option.getOrUndefined(option)

const usage = (message: string) => Effect.fail(new UsageError({ message }))

/** `--host`: a name or address only; a URL or `host:port` is named for what it is, with the fix. */
const checkHost = (host: string): Effect.Effect<string, UsageError> => {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(host)) {
    return usage(`--host takes a host name, not a URL ('${host}'); use --url ${host}, or --host with --port and --ssl-mode`)
  }
  const hostPort = /^([^:[\]]+):(\d*)$/.exec(host)
  if (hostPort !== null) {
    return usage(`--host takes a host name without a port ('${host}'); use --host ${hostPort[1]} --port ${hostPort[2] || "PORT"}`)
  }
  return Schema.is(Host)(host) ? Effect.succeed(host) : usage(`--host must be a host name or IP address, got '${host}'`)
}

const checkPort = (port: number, flag = "--port"): Effect.Effect<number, UsageError> =>
  Number.isInteger(port) && port >= 1 && port <= 65535
    ? Effect.succeed(port)
    : usage(`${flag} must be a port number between 1 and 65535, got ${port}`)

/**
 * `--url`: `http://host[:port]` or `https://host[:port]`, nothing else (no path, query or
 * credentials). The port defaults as in any URL (80, 443); `https` means SSL Mode Required unless
 * `--ssl-mode` says otherwise, `http` means Disabled.
 *
 * @category parsing
 */
export const parseUrl = (text: string): Effect.Effect<{ host: string; port: number; sslMode: "disabled" | "required" }, UsageError> => {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return usage(`--url must be a URL such as https://HOST:443 or http://localhost:8080, got '${text}'`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return usage(`--url must start with http:// or https://, got '${text}'`)
  if (url.username !== "" || url.password !== "") return usage("--url must not carry credentials; use --api-key or --api-key-env")
  if ((url.pathname !== "/" && url.pathname !== "") || url.search !== "" || url.hash !== "") {
    return usage(`--url takes only a scheme, host and port (no path or query), got '${text}'`)
  }
  const https = url.protocol === "https:"
  const host = url.hostname
  return Effect.map(checkPort(url.port === "" ? (https ? 443 : 80) : Number(url.port), "--url's port"), (port) => ({
    host,
    port,
    sslMode: https ? "required" as const : "disabled" as const
  }))
}

/** The flags as stored fields (`undefined` = not given). */
const toPatch = (flags: SettingFlags, name: Option.Option<string>): Effect.Effect<ConnectionPatch, UsageError> =>
  Effect.gen(function*() {
    if (Option.isSome(flags.url) && (Option.isSome(flags.host) || Option.isSome(flags.port))) {
      return yield* usage("Give --url or --host/--port, not both")
    }
    const fromUrl = Option.isSome(flags.url) ? yield* parseUrl(flags.url.value) : undefined
    if (fromUrl !== undefined && Option.isSome(flags.sslMode) && (flags.sslMode.value === "disabled") !== (fromUrl.sslMode === "disabled")) {
      return yield* usage(`--ssl-mode ${flags.sslMode.value} does not fit the scheme of --url ${Option.getOrThrow(flags.url)}`)
    }
    const host = fromUrl?.host ?? (Option.isSome(flags.host) ? yield* checkHost(flags.host.value) : undefined)
    const port = fromUrl?.port ?? (Option.isSome(flags.port) ? yield* checkPort(flags.port.value) : undefined)
    return yield* patchOf(flags, name, host, port, fromUrl?.sslMode)
  })

const AUTH_METHODS = {
  none: "none",
  "api-key": "apiKey",
  "oidc-client-credentials": "oidcClientCredentials",
  "oidc-password": "oidcPassword",
  "oidc-token": "oidcToken"
} as const

/** Secret flags and their `-stdin` twins, by stored field. */
const SECRET_FLAGS = [
  ["apiKey", "apiKey", "apiKeyStdin", "--api-key"],
  ["oidcClientSecret", "oidcClientSecret", "oidcClientSecretStdin", "--oidc-client-secret"],
  ["oidcPassword", "oidcPassword", "oidcPasswordStdin", "--oidc-password"],
  ["oidcAccessToken", "oidcAccessToken", "oidcAccessTokenStdin", "--oidc-access-token"],
  ["oidcRefreshToken", "oidcRefreshToken", "oidcRefreshTokenStdin", "--oidc-refresh-token"]
] as const

/**
 * The secrets given by flags: on the command line, or read from standard input (`--…-stdin`; one
 * secret per line, in the order of the flags above), so none needs to be in the shell's history.
 */
const secretsOf = (flags: SettingFlags): Effect.Effect<Partial<Record<SecretField, string>>, UsageError> =>
  Effect.gen(function*() {
    const out: Partial<Record<SecretField, string>> = {}
    const fromStdin: Array<SecretField> = []
    for (const [field, value, stdin, flag] of SECRET_FLAGS) {
      const given = flags[value]
      if (Option.isSome(given) && flags[stdin]) return yield* usage(`Give ${flag} or ${flag}-stdin, not both`)
      if (Option.isSome(given)) out[field] = String(Redacted.value(given.value))
      if (flags[stdin]) fromStdin.push(field)
    }
    if (fromStdin.length > 0) {
      const lines = (yield* readStdin).split(/\r?\n/)
      for (const [i, field] of fromStdin.entries()) {
        const line = lines[i]?.trim() ?? ""
        if (line === "") return yield* usage(`standard input has no ${secretLabel[field]} (line ${i + 1})`)
        out[field] = line
      }
    }
    return out
  })

const patchOf = (
  flags: SettingFlags,
  name: Option.Option<string>,
  host: string | undefined,
  port: number | undefined,
  sslFromUrl: "disabled" | "required" | undefined
): Effect.Effect<ConnectionPatch, UsageError> =>
  Effect.gen(function*() {
    if (Option.isSome(flags.apiKey) && Option.isSome(flags.apiKeyEnv)) return yield* usage("Give --api-key or --api-key-env, not both")
    const secrets = yield* secretsOf(flags)
    const keyGiven = secrets.apiKey !== undefined || Option.isSome(flags.apiKeyEnv)
    const chosen = Option.map(flags.authMethod, (m) => AUTH_METHODS[m])
    if (keyGiven && Option.isSome(chosen) && chosen.value !== "apiKey") {
      return yield* usage("--api-key, --api-key-stdin and --api-key-env need --auth api-key")
    }
    const authMethod = Option.getOrUndefined(chosen) ?? (keyGiven ? ("apiKey" as const) : undefined)
    return {
      name: undef(name),
      host,
      port,
      authMethod,
      apiKey: secrets.apiKey,
      apiKeyEnv: undef(flags.apiKeyEnv),
      oidcIssuer: undef(flags.oidcIssuer),
      oidcClientId: undef(flags.oidcClientId),
      oidcClientSecret: secrets.oidcClientSecret,
      oidcScopes: flags.oidcScope.length === 0 ? undefined : flags.oidcScope,
      oidcUsername: undef(flags.oidcUsername),
      oidcPassword: secrets.oidcPassword,
      oidcAccessToken: secrets.oidcAccessToken,
      oidcRefreshToken: secrets.oidcRefreshToken,
      sslMode: undef(flags.sslMode) ?? sslFromUrl,
      caFile: undef(flags.ca),
      skipTlsVerify: flags.skipTlsVerify ? true : undefined,
      safeMode: undef(flags.safeMode),
      aiPolicy: undef(flags.aiPolicy),
      consistencyLevel: undef(flags.consistencyLevel),
      requestTimeoutSeconds: undef(flags.requestTimeout)
    }
  })

/** The secret each auth method cannot do without (the API key only when no variable names it). */
const neededSecret = (patch: ConnectionPatch): SecretField | undefined => {
  switch (patch.authMethod) {
    case "apiKey":
      return patch.apiKeyEnv === undefined ? "apiKey" : undefined
    case "oidcClientCredentials":
      return "oidcClientSecret"
    case "oidcPassword":
      return "oidcPassword"
    case "oidcToken":
      return "oidcAccessToken"
    default:
      return undefined
  }
}

/**
 * On a terminal, the secret the chosen auth method needs and the flags did not give is asked for,
 * without echo: it is then in no shell history. Elsewhere (a script) nothing is asked and the
 * store says what is missing.
 */
const promptForSecret = (patch: ConnectionPatch) =>
  Effect.gen(function*() {
    const field = neededSecret(patch)
    if (field === undefined || patch[field] !== undefined || process.stdin.isTTY !== true) return patch
    const value = yield* Prompt.hidden({ message: `${secretLabel[field]} (not shown)`, validate: (v) => v.trim() === "" ? Effect.fail("empty") : Effect.succeed(v) })
    return { ...patch, [field]: Redacted.value(value).trim() }
  })

/** Settings the store refuses are the user's to fix: a usage error (exit 2). */
const asUsageError = (error: { readonly message: string }) => Effect.fail(new UsageError({ message: error.message }))

const describeConnection = (c: Connection) => {
  const p = toPublic(c)
  const key = c.authMethod !== "apiKey" ? "-" : c.apiKeyEnv !== undefined ? `from $${c.apiKeyEnv}` : p.apiKeyConfigured ? "saved (hidden)" : "missing"
  const oidc = isOidc(c.authMethod)
    ? [
      ["oidc issuer", c.oidcIssuer ?? "Weaviate's"],
      ["oidc client id", c.oidcClientId ?? "Weaviate's"],
      ...(c.oidcScopes !== undefined ? [["oidc scopes", c.oidcScopes.join(" ")]] : []),
      ...(c.oidcUsername !== undefined ? [["oidc username", c.oidcUsername]] : [])
    ]
    : []
  return [
    ["id", p.id],
    ["name", p.name],
    ["url", p.url],
    ["host", p.host],
    ["port", String(p.port)],
    ["auth method", authMethodLabel[p.authMethod]],
    ["api key", key],
    ...oidc,
    ["secrets", secretsLine(c)],
    ["ssl mode", sslModeLabel[p.sslMode]],
    ["ca file", p.caFile ?? "-"],
    ["skip tls verify", String(p.skipTlsVerify)],
    ["safe mode", p.safeMode],
    ["ai policy", p.aiPolicy],
    ["consistency", p.consistencyLevel ?? "Weaviate's default"],
    ["request timeout", `${p.requestTimeoutSeconds ?? DEFAULT_REQUEST_TIMEOUT_SECONDS} s`]
  ].map(([k, v]) => `${k!.padEnd(16)}${v}`).join("\n")
}

/**
 * Where the secrets just saved went, said after the save: the keychain, or the file and why no
 * keychain took them.
 */
const whereSecretsWent = (saved: Connection, fields: ReadonlyArray<SecretField> = SECRET_FIELDS) =>
  Effect.gen(function*() {
    const places = secretPlaces(saved)
    const inKeychain = fields.filter((f) => places[f] === "keychain").map((f) => secretLabel[f])
    const inFile = fields.filter((f) => places[f] === "file").map((f) => secretLabel[f])
    if (inKeychain.length === 0 && inFile.length === 0) return { text: "", fallback: undefined }
    const availability = inFile.length > 0 ? yield* (yield* ConnectionStore).secretStore : { available: true as const }
    const fallback = availability.available ? undefined : availability.reason
    const parts = [
      ...(inKeychain.length > 0 ? [`${inKeychain.join(", ")} in the OS keychain`] : []),
      ...(inFile.length > 0 ? [`${inFile.join(", ")} in connections.json (mode 0600)${fallback !== undefined ? `: no OS keychain answers here (${fallback})` : ""}`] : [])
    ]
    return { text: `; ${parts.join("; ")}`, fallback }
  })

/** Which secrets a connection has and where each is kept (never their values). */
export const secretsLine = (c: Connection) => {
  const places = secretPlaces(c)
  const kept = SECRET_FIELDS.filter((f) => places[f] !== undefined)
    .map((f) => `${secretLabel[f]} in ${places[f] === "keychain" ? "the OS keychain" : "connections.json (0600)"}`)
  return kept.length === 0 ? "none" : kept.join(", ")
}

const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

// ===== Commands =====

/** `connections add`. @category commands */
export const addCommand = Command.make(
  "add",
  { home: CommonOptions.home, json: CommonOptions.json, name: Options.text("name"), ...settingOptions },
  (flags) =>
    Effect.gen(function*() {
      if (Option.isNone(flags.host) && Option.isNone(flags.url)) return yield* new UsageError({ message: "Missing --host (or --url)" })
      const patch = yield* Effect.flatMap(toPatch(flags, Option.some(flags.name)), promptForSecret)
      const input = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined))
      const store = yield* ConnectionStore
      const saved = yield* store.add(input as Parameters<typeof store.add>[0]).pipe(Effect.catchTag("ConnectionInvalid", asUsageError))
      const where = yield* whereSecretsWent(saved)
      yield* flags.json
        ? printJson({ ...toPublic(saved), ...(where.fallback !== undefined ? { keychainUnavailable: where.fallback } : {}) })
        : Console.log(`Saved connection ${saved.name} (id ${saved.id}, ${saved.baseUrl})${where.text}`)
    }).pipe(Effect.provide(driverLayer(flags.home)))
).pipe(Command.withDescription("Save a new connection (its secrets in the OS keychain when one answers, else in connections.json, mode 0600)"))

/** `connections update CONN`. @category commands */
export const updateCommand = Command.make(
  "update",
  {
    home: CommonOptions.home,
    json: CommonOptions.json,
    connection: connectionArg,
    name: Options.text("name").pipe(Options.optional),
    ...settingOptions
  },
  (flags) =>
    Effect.gen(function*() {
      const patch = yield* toPatch(flags, flags.name)
      const store = yield* ConnectionStore
      const saved = yield* store.update(flags.connection, patch).pipe(Effect.catchTag("ConnectionInvalid", asUsageError))
      const given = SECRET_FIELDS.some((f) => patch[f] !== undefined)
      const where = given ? yield* whereSecretsWent(saved, SECRET_FIELDS.filter((f) => patch[f] !== undefined)) : { text: "", fallback: undefined }
      yield* flags.json ? printJson(toPublic(saved)) : Console.log(`Updated connection ${saved.name} (id ${saved.id})${where.text}`)
    }).pipe(Effect.provide(driverLayer(flags.home)))
).pipe(Command.withDescription("Change fields of a saved connection (e.g. a new API key)"))

/** `connections list`. @category commands */
export const listCommand = Command.make(
  "list",
  { home: CommonOptions.home, json: CommonOptions.json },
  (flags) =>
    Effect.gen(function*() {
      const connections = yield* (yield* ConnectionStore).list
      if (flags.json) return yield* printJson(connections.map(toPublic))
      if (connections.length === 0) {
        return yield* Console.log("No connections. Add one with: weaviate-mcp connections add --name N --host H")
      }
      yield* Console.log(formatTable(
        ["id", "name", "url", "auth", "ssl", "safe mode", "ai policy"],
        connections.map((c) => ({
          id: c.id,
          name: c.name,
          url: c.baseUrl,
          auth: authMethodLabel[c.authMethod],
          ssl: sslModeLabel[c.sslMode] + (c.skipTlsVerify ? " +skip verify" : ""),
          "safe mode": c.safeMode,
          "ai policy": c.aiPolicy
        }))
      ))
    }).pipe(Effect.provide(driverLayer(flags.home)))
).pipe(Command.withDescription("List saved connections"))

/** `connections show CONN`. @category commands */
export const showCommand = Command.make(
  "show",
  { home: CommonOptions.home, json: CommonOptions.json, connection: connectionArg },
  (flags) =>
    Effect.gen(function*() {
      const connection = yield* (yield* ConnectionStore).get(flags.connection)
      yield* flags.json ? printJson(toPublic(connection)) : Console.log(describeConnection(connection))
    }).pipe(Effect.provide(driverLayer(flags.home)))
).pipe(Command.withDescription("Show a saved connection (never the key)"))

/** `connections test CONN`: the health check on `/v1/meta`; exit 1 when it fails. @category commands */
export const testCommand = Command.make(
  "test",
  { home: CommonOptions.home, json: CommonOptions.json, connection: connectionArg },
  (flags) =>
    Effect.gen(function*() {
      const driver = yield* Driver
      const connection = yield* (yield* ConnectionStore).get(flags.connection)
      const health = yield* driver.health(connection.id)
      const cluster = yield* driver.cluster(connection.id)
      const signedIn = (yield* driver.http(connection.id)).identity()
      yield* flags.json
        ? printJson({ id: connection.id, ok: true, ...health, cluster, ...(signedIn !== undefined ? { signIn: signInJson(signedIn) } : {}) })
        : Console.log(
          `OK: ${connection.name} (${connection.baseUrl}) Weaviate ${health.version}, modules: ${
            health.modules.length === 0 ? "none" : health.modules.join(", ")
          }, ${health.latencyMs} ms\n` +
            (signedIn !== undefined ? `${signInLine(signedIn)}\n` : "") +
            `cluster ${Cluster.summary(cluster)}\n` +
            cluster.nodes.map((n) => `  ${n.name}: ${n.status}${n.version !== undefined ? ` (Weaviate ${n.version})` : ""}`).join("\n")
        )
    }).pipe(Effect.provide(driverLayer(flags.home)))
).pipe(Command.withDescription("Check a connection (GET /v1/meta, authenticated) and its cluster (GET /v1/nodes): every node and the health, healthy, degraded or unavailable"))

/** `connections remove CONN`. @category commands */
export const removeCommand = Command.make(
  "remove",
  { home: CommonOptions.home, json: CommonOptions.json, connection: connectionArg },
  (flags) =>
    Effect.gen(function*() {
      const removed = yield* (yield* ConnectionStore).remove(flags.connection)
      yield* flags.json ? printJson(toPublic(removed)) : Console.log(`Removed connection ${removed.name} (id ${removed.id})`)
    }).pipe(Effect.provide(driverLayer(flags.home)))
).pipe(Command.withDescription("Remove a saved connection"))

/** `connections migrate-secrets`: every secret still in the file into the OS keychain. @category commands */
export const migrateSecretsCommand = Command.make(
  "migrate-secrets",
  { home: CommonOptions.home, json: CommonOptions.json },
  (flags) =>
    Effect.gen(function*() {
      const result = yield* (yield* ConnectionStore).migrateSecrets
      if (flags.json) {
        return yield* printJson({
          moved: result.moved,
          keychain: result.availability.available ? "available" : "unavailable",
          ...(result.availability.available ? {} : { reason: result.availability.reason })
        })
      }
      if (!result.availability.available) {
        return yield* new UsageError({ message: `No OS keychain answers here (${result.availability.reason}); the secrets stay in connections.json (mode 0600)` })
      }
      yield* Console.log(
        result.moved.length === 0
          ? "No secret is kept in connections.json: nothing to move"
          : `Moved to the OS keychain: ${result.moved.map((m) => `the ${secretLabel[m.field]} of ${m.connection}`).join(", ")}`
      )
    }).pipe(Effect.provide(driverLayer(flags.home)))
).pipe(Command.withDescription("Move the secrets still kept in connections.json into the OS keychain (connections.json then holds references)"))

/** The file `connections export` writes. @category models */
export const EXPORT_VERSION = 1

/** `connections export`: the connections without any secret, for another machine. @category commands */
export const exportCommand = Command.make(
  "export",
  { home: CommonOptions.home, out: Options.file("out").pipe(Options.withDescription("Write to this file instead of standard output"), Options.optional) },
  (flags) =>
    Effect.gen(function*() {
      const connections = yield* (yield* ConnectionStore).list
      const toEnter: Array<string> = []
      const exported = connections.map((c) => {
        const { id: _id, keychain: _keychain, ...settings } = Schema.encodeSync(ConnectionSchema)(c)
        for (const field of SECRET_FIELDS) delete (settings as Record<string, unknown>)[field]
        const secrets = SECRET_FIELDS.filter((f) => secretPlaces(c)[f] !== undefined)
        for (const f of secrets) toEnter.push(`the ${secretLabel[f]} of ${c.name} (${secretStdinFlag[f]})`)
        return { ...settings, ...(secrets.length > 0 ? { secretsToEnter: secrets } : {}) }
      })
      const text = `${JSON.stringify({ version: EXPORT_VERSION, connections: exported }, null, 2)}\n`
      const out = Option.getOrUndefined(flags.out)
      if (out !== undefined) yield* Effect.promise(() => NodeFs.writeFile(out, text, { mode: 0o600 }))
      else yield* Console.log(text.trimEnd())
      // On standard error, so that standard output stays the file.
      yield* Console.error(
        toEnter.length === 0
          ? `Exported ${exported.length} connection(s); none has a secret`
          : `Exported ${exported.length} connection(s) without their secrets. After connections import, enter again: ${toEnter.join(", ")}`
      )
    }).pipe(Effect.provide(driverLayer(flags.home)))
).pipe(Command.withDescription("Write the saved connections as JSON without any secret (API keys, OIDC secrets and tokens are never exported), and say which must be entered again"))

/** `connections import FILE`: connections from `connections export`, secrets to be entered again. @category commands */
export const importCommand = Command.make(
  "import",
  { home: CommonOptions.home, json: CommonOptions.json, file: Args.file({ name: "FILE", exists: "yes" }) },
  (flags) =>
    Effect.gen(function*() {
      const text = yield* Effect.promise(() => NodeFs.readFile(flags.file, "utf8"))
      let parsed: { version?: unknown; connections?: unknown }
      try {
        parsed = JSON.parse(text) as typeof parsed
      } catch {
        return yield* usage(`${flags.file} is not JSON written by connections export`)
      }
      if (parsed.version !== EXPORT_VERSION || !Array.isArray(parsed.connections)) {
        return yield* usage(`${flags.file} is not a file written by connections export (version ${EXPORT_VERSION})`)
      }
      const inputs = (parsed.connections as Array<Record<string, unknown>>).map((c) => {
        const { secretsToEnter: _s, id: _i, keychain: _k, ...rest } = c
        for (const field of SECRET_FIELDS) delete rest[field]
        return rest
      })
      const added = yield* (yield* ConnectionStore).importAll(inputs as never).pipe(Effect.catchTag("ConnectionInvalid", asUsageError))
      const toEnter = (parsed.connections as Array<{ name?: unknown; secretsToEnter?: unknown }>).flatMap((c) =>
        Array.isArray(c.secretsToEnter)
          ? c.secretsToEnter.filter((f): f is SecretField => (SECRET_FIELDS as ReadonlyArray<unknown>).includes(f)).map((f) => ({ name: String(c.name), field: f }))
          : []
      )
      if (flags.json) return yield* printJson({ imported: added.map(toPublic), secretsToEnter: toEnter })
      yield* Console.log(`Imported ${added.length} connection(s): ${added.map((c) => c.name).join(", ")}`)
      for (const { field, name } of toEnter) {
        yield* Console.log(`  enter the ${secretLabel[field]} of ${name}: weaviate-mcp connections update ${name} ${secretStdinFlag[field]}`)
      }
    }).pipe(Effect.provide(driverLayer(flags.home)))
).pipe(Command.withDescription("Add the connections of a file written by connections export; their secrets are entered again with connections update"))

/** `connections`. @category commands */
export const connectionsCommand = Command.make("connections").pipe(
  Command.withDescription("Manage saved Weaviate connections"),
  Command.withSubcommands([addCommand, updateCommand, listCommand, showCommand, testCommand, removeCommand, migrateSecretsCommand, exportCommand, importCommand])
)
