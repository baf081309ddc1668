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
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { ConnectionStore, type ConnectionPatch } from "../Driver/ConnectionStore.ts"
import { Driver } from "../Driver/Driver.ts"
import { authMethodLabel, type Connection, sslModeLabel, toPublic } from "../Schema/Connection.ts"
import * as CommonOptions from "./CommonOptions.ts"
import { UsageError } from "./CliErrors.ts"
import { driverLayer, formatTable } from "./DriverCli.ts"

// ===== Options =====

const connectionArg = Args.text({ name: "CONN" }).pipe(Args.withDescription("Connection id or name"))

const settingOptions = {
  host: Options.text("host").pipe(Options.withDescription("Node host name (localhost for a local container)"), Options.optional),
  port: Options.integer("port").pipe(Options.withDescription("Port (default 8080; hosted clusters use 443)"), Options.optional),
  authMethod: Options.choice("auth-method", ["none", "api-key"]).pipe(Options.optional),
  apiKey: Options.redacted("api-key").pipe(Options.withDescription("API key (sent as Authorization: Bearer)"), Options.optional),
  apiKeyEnv: Options.text("api-key-env").pipe(
    Options.withDescription("Name of an environment variable holding the API key"),
    Options.optional
  ),
  sslMode: Options.choice("ssl-mode", ["disabled", "preferred", "required", "required-skip-verify", "verify-ca", "verify-identity"])
    .pipe(Options.optional),
  ca: Options.file("ca", { exists: "yes" }).pipe(Options.withDescription("CA certificate (PEM) for Verify CA / Verify Identity"), Options.optional),
  skipTlsVerify: Options.boolean("skip-tls-verify").pipe(Options.withDescription("Trust any certificate")),
  safeMode: Options.choice("safe-mode", ["silent", "confirm", "readOnly"]).pipe(Options.optional),
  aiPolicy: Options.choice("ai-policy", ["blocked", "readOnly", "readWrite"]).pipe(Options.optional)
}

type SettingFlags = {
  readonly [K in keyof typeof settingOptions]: (typeof settingOptions)[K] extends Options.Options<infer A> ? A : never
}

const undef = <A>(option: Option.Option<A>): A | undefined => Option.getOrUndefined(option)

/** The flags as stored fields (`undefined` = not given). */
const toPatch = (flags: SettingFlags, name: Option.Option<string>): Effect.Effect<ConnectionPatch, UsageError> => {
  if (Option.isSome(flags.apiKey) && Option.isSome(flags.apiKeyEnv)) {
    return Effect.fail(new UsageError({ message: "Give --api-key or --api-key-env, not both" }))
  }
  const keyGiven = Option.isSome(flags.apiKey) || Option.isSome(flags.apiKeyEnv)
  if (keyGiven && Option.getOrUndefined(flags.authMethod) === "none") {
    return Effect.fail(new UsageError({ message: "--api-key and --api-key-env need --auth-method api-key" }))
  }
  const authMethod = Option.match(flags.authMethod, {
    onNone: () => (keyGiven ? ("apiKey" as const) : undefined),
    onSome: (m) => (m === "api-key" ? ("apiKey" as const) : ("none" as const))
  })
  return Effect.succeed({
    name: undef(name),
    host: undef(flags.host),
    port: undef(flags.port),
    authMethod,
    apiKey: Option.getOrUndefined(Option.map(flags.apiKey, (key) => String(Redacted.value(key)))),
    apiKeyEnv: undef(flags.apiKeyEnv),
    sslMode: undef(flags.sslMode),
    caFile: undef(flags.ca),
    skipTlsVerify: flags.skipTlsVerify ? true : undefined,
    safeMode: undef(flags.safeMode),
    aiPolicy: undef(flags.aiPolicy)
  })
}

const describeConnection = (c: Connection) => {
  const p = toPublic(c)
  const key = c.authMethod === "none" ? "-" : c.apiKeyEnv !== undefined ? `from $${c.apiKeyEnv}` : p.apiKeyConfigured ? "saved (hidden)" : "missing"
  return [
    ["id", p.id],
    ["name", p.name],
    ["url", p.url],
    ["host", p.host],
    ["port", String(p.port)],
    ["auth method", authMethodLabel[p.authMethod]],
    ["api key", key],
    ["ssl mode", sslModeLabel[p.sslMode]],
    ["ca file", p.caFile ?? "-"],
    ["skip tls verify", String(p.skipTlsVerify)],
    ["safe mode", p.safeMode],
    ["ai policy", p.aiPolicy]
  ].map(([k, v]) => `${k!.padEnd(16)}${v}`).join("\n")
}

const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

// ===== Commands =====

/** `connections add`. @category commands */
export const addCommand = Command.make(
  "add",
  { home: CommonOptions.home, json: CommonOptions.json, name: Options.text("name"), ...settingOptions },
  (flags) =>
    Effect.gen(function*() {
      if (Option.isNone(flags.host)) return yield* new UsageError({ message: "Missing --host" })
      const patch = yield* toPatch(flags, Option.some(flags.name))
      const input = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined))
      const store = yield* ConnectionStore
      const saved = yield* store.add(input as Parameters<typeof store.add>[0])
      yield* flags.json ? printJson(toPublic(saved)) : Console.log(`Saved connection ${saved.name} (id ${saved.id}, ${saved.baseUrl})`)
    }).pipe(Effect.provide(driverLayer(flags.home)))
).pipe(Command.withDescription("Save a new connection"))

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
      const saved = yield* store.update(flags.connection, patch)
      yield* flags.json ? printJson(toPublic(saved)) : Console.log(`Updated connection ${saved.name} (id ${saved.id})`)
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
      yield* flags.json
        ? printJson({ id: connection.id, ok: true, ...health })
        : Console.log(
          `OK: ${connection.name} (${connection.baseUrl}) Weaviate ${health.version}, modules: ${
            health.modules.length === 0 ? "none" : health.modules.join(", ")
          }, ${health.latencyMs} ms`
        )
    }).pipe(Effect.provide(driverLayer(flags.home)))
).pipe(Command.withDescription("Check a connection (GET /v1/meta, authenticated)"))

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

/** `connections`. @category commands */
export const connectionsCommand = Command.make("connections").pipe(
  Command.withDescription("Manage saved Weaviate connections"),
  Command.withSubcommands([addCommand, updateCommand, listCommand, showCommand, testCommand, removeCommand])
)
