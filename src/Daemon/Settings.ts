/**
 * Configuration of the daemon. Precedence: command-line flags, then the environment
 * (`WEAVIATE_MCP_*`), then `settings.json` in the home, then the defaults — all read through
 * Effect `Config`, so an embedding program can supply its own `ConfigProvider`.
 *
 * @since 0.1.0
 */
import * as Config from "effect/Config"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { Home } from "../Base/Home.ts"
import * as SecretFile from "../Base/SecretFile.ts"

/** The default port, stable so that users paste one URL into their AI client once. @category constants */
export const DEFAULT_PORT = 23518

/** The origins allowed by default: HTTPS web origins of AI clients. @category constants */
export const DEFAULT_ALLOWED_ORIGINS: ReadonlyArray<string> = ["https://claude.ai", "https://app.cursor.com"]

/** How writes are confirmed on the user's machine. @category schemas */
export const ApprovalsMode = Schema.Literal("auto", "dialog", "terminal", "deny", "exec")
export type ApprovalsMode = typeof ApprovalsMode.Type

/** @category schemas */
export const AuthMode = Schema.Literal("tokens", "off")
export type AuthMode = typeof AuthMode.Type

const literal = <const A extends ReadonlyArray<string>>(name: string, ...values: A) =>
  Config.literal(...values)(name) as Config.Config<A[number]>

const atLeastOne = { message: "must be 1 or more", validation: (n: number) => n >= 1 }

/**
 * The query history's settings (`history.enabled`, `history.retentionDays`, `history.maxEntries`,
 * `history.recordText`), nested under `history` in settings.json and `WEAVIATE_MCP_HISTORY_*` in the
 * environment.
 *
 * @category config
 */
export const HistorySettings = Config.all({
  enabled: Config.boolean("enabled").pipe(Config.withDefault(true)),
  retentionDays: Config.integer("retentionDays").pipe(Config.validate(atLeastOne), Config.withDefault(90)),
  maxEntries: Config.integer("maxEntries").pipe(Config.validate(atLeastOne), Config.withDefault(1_000_000)),
  recordText: Config.boolean("recordText").pipe(Config.withDefault(true))
}).pipe(Config.nested("history"))
export type HistorySettings = Config.Config.Success<typeof HistorySettings>

/**
 * The settings of `serve`, as `Config` (names are camelCase in settings.json and
 * `WEAVIATE_MCP_CONSTANT_CASE` in the environment).
 *
 * @category config
 */
export const ServeSettings = Config.all({
  port: Config.integer("port").pipe(Config.option),
  auth: literal("auth", "tokens", "off").pipe(Config.withDefault<AuthMode>("tokens")),
  approvals: literal("approvals", "auto", "dialog", "terminal", "deny", "exec").pipe(Config.withDefault<ApprovalsMode>("auto")),
  approvalCommand: Config.string("approvalCommand").pipe(Config.option),
  allowedOrigins: Config.array(Config.string(), "allowedOrigins").pipe(Config.withDefault(DEFAULT_ALLOWED_ORIGINS)),
  rateLimit: Config.integer("rateLimit").pipe(Config.validate({ message: "must be 0 or more", validation: (n) => n >= 0 }), Config.withDefault(50)),
  authLockout: Config.integer("authLockout").pipe(Config.validate({ message: "must be 0 or more", validation: (n) => n >= 0 }), Config.withDefault(10)),
  /** Seconds a database health check may take (`get_connection_status`, connecting); `0` = no limit. */
  healthTimeoutSeconds: Config.integer("healthTimeoutSeconds").pipe(Config.validate({ message: "must be 0 or more", validation: (n) => n >= 0 }), Config.withDefault(10)),
  /** Seconds a schema read may take (resource reads, completions, describe); `0` = no limit. */
  schemaTimeoutSeconds: Config.integer("schemaTimeoutSeconds").pipe(Config.validate({ message: "must be 0 or more", validation: (n) => n >= 0 }), Config.withDefault(15)),
  /** Milliseconds a collection read from the schema is reused (`CollectionSchema.CacheTtl`); `0` = read every time. */
  schemaCacheMs: Config.integer("schemaCacheMs").pipe(Config.validate({ message: "must be 0 or more", validation: (n) => n >= 0 }), Config.withDefault(2000)),
  /** The query history (`history.db`): settings.json `"history": { "enabled", "retentionDays", "maxEntries", "recordText" }`. */
  history: HistorySettings,
  logLevel: literal("logLevel", "all", "trace", "debug", "info", "warning", "error", "fatal", "none").pipe(Config.withDefault("info" as const)),
  logFormat: literal("logFormat", "text", "json").pipe(Config.withDefault("text" as const))
})
export type ServeSettings = Config.Config.Success<typeof ServeSettings>

/**
 * The environment provider: `WEAVIATE_MCP_RATE_LIMIT` for `rateLimit`.
 *
 * @category config
 */
export const envProvider = (env: ConfigProvider.ConfigProvider = ConfigProvider.fromEnv()) =>
  env.pipe(ConfigProvider.nested("WEAVIATE_MCP"), ConfigProvider.constantCase)

/**
 * Reads `settings.json` of the home (an empty object when it does not exist).
 *
 * @category config
 */
export const readSettingsFile = Effect.fn("Settings.readSettingsFile")(function*() {
  const home = yield* Home
  const json = yield* SecretFile.readJsonIfExists(home.path("settings"))
  if (json === undefined) return {} as Record<string, unknown>
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return yield* new SecretFile.SecretFileError({ path: home.path("settings"), operation: "read", reason: "expected a JSON object" })
  }
  return json as Record<string, unknown>
})

/**
 * The provider for the daemon: the environment first, then `settings.json`.
 *
 * @category config
 */
export const provider = Effect.fn("Settings.provider")(function*(env?: ConfigProvider.ConfigProvider) {
  const file = yield* readSettingsFile()
  return ConfigProvider.orElse(envProvider(env), () => ConfigProvider.fromJson(file))
})

/**
 * Flags win over `Config`: each flag given on the command line replaces the configured value.
 *
 * @category combinators
 */
export const overrideWith = <A extends Record<string, unknown>>(settings: A, flags: { readonly [K in keyof A]?: Option.Option<A[K]> }): A => {
  const out: Record<string, unknown> = { ...settings }
  for (const key of Object.keys(flags)) {
    const flag = flags[key as keyof A]
    if (flag !== undefined && Option.isSome(flag)) out[key] = flag.value
  }
  return out as A
}
