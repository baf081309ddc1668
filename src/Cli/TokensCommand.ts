/**
 * `weaviate-mcp tokens create|list|revoke`: manage the tokens of `tokens.json`. A running daemon sees
 * every change within a second; a revocation cancels that token's requests.
 *
 * `tokens create --connections a,b` takes ids or names of saved connections and stores their ids:
 * that allowlist is also the user's consent, so the token's first access to those connections is
 * granted from the start (no question on first use). A name that matches no saved connection is kept
 * as given, with a warning.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { AccessLevel, Scope } from "../Schema/Policy.ts"
import { statusAt, type TokenInfo, TokenStore, toJson } from "../Auth/TokenStore.ts"
import { ConnectionStore } from "../Driver/ConnectionStore.ts"
import { UsageError } from "./CliErrors.ts"
import * as ClientConfig from "./ClientConfig.ts"
import * as CommonOptions from "./CommonOptions.ts"

// ===== Parsing =====

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }

/**
 * `--expires`: a lifetime (`90m`, `12h`, `30d`, `2w`, `3600s`) or an ISO 8601 date-time. Returns
 * epoch milliseconds.
 *
 * @category parsing
 */
export const parseExpires = (text: string, now: number): Effect.Effect<number, UsageError> => {
  const lifetime = /^(\d+)\s*([smhdw])$/.exec(text.trim())
  if (lifetime !== null) {
    const amount = Number(lifetime[1])
    if (amount > 0) return Effect.succeed(now + amount * UNITS[lifetime[2]!]!)
    return Effect.fail(new UsageError({ message: `--expires must be a positive lifetime, got '${text}'` }))
  }
  const at = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN
  if (Number.isNaN(at)) {
    return Effect.fail(new UsageError({ message: `--expires must be a lifetime like 30d, 12h, 90m or an ISO date, got '${text}'` }))
  }
  if (at <= now) return Effect.fail(new UsageError({ message: `--expires ${text} is in the past` }))
  return Effect.succeed(at)
}

const commaList = (text: string) =>
  text.split(",").map((item) => item.trim()).filter((item) => item.length > 0)

const isScope = Schema.is(Scope)

/** `--scopes a,b`: each must be a known scope. @category parsing */
export const parseScopes = (text: string): Effect.Effect<ReadonlyArray<Scope>, UsageError> => {
  const items = commaList(text)
  const unknown = items.filter((item) => !isScope(item))
  if (unknown.length > 0) {
    return Effect.fail(new UsageError({ message: `Unknown scope ${unknown.join(", ")} (known: ${Scope.literals.join(", ")})` }))
  }
  if (items.length === 0) return Effect.fail(new UsageError({ message: "--scopes needs at least one scope" }))
  return Effect.succeed(items as ReadonlyArray<Scope>)
}

/**
 * `--tenants CONN:COLLECTION:TENANT,…`: entries grouped by connection (as given) and collection.
 *
 * @category parsing
 */
export const parseTenants = (text: string): Effect.Effect<Readonly<Record<string, Record<string, Array<string>>>>, UsageError> => {
  const map: Record<string, Record<string, Array<string>>> = {}
  const items = commaList(text)
  if (items.length === 0) return Effect.fail(new UsageError({ message: "--tenants needs at least one CONNECTION:COLLECTION:TENANT" }))
  for (const item of items) {
    const parts = item.split(":")
    if (parts.length !== 3 || parts.some((part) => part.trim().length === 0)) {
      return Effect.fail(new UsageError({ message: `--tenants entry ${JSON.stringify(item)} is not CONNECTION:COLLECTION:TENANT` }))
    }
    const [connection, collection, tenant] = parts.map((part) => part.trim()) as [string, string, string]
    const byCollection = (map[connection] ??= {})
    const tenants = (byCollection[collection] ??= [])
    if (!tenants.includes(tenant)) tenants.push(tenant)
  }
  return Effect.succeed(map)
}

// ===== Output =====

/** A token's tenant scope on one line: `CONN/Collection=a+b; …`, or `all`. */
const tenantText = (info: TokenInfo) =>
  Option.match(info.tenants, {
    onNone: () => "all",
    onSome: (map) =>
      Object.entries(map).flatMap(([connection, byCollection]) =>
        Object.entries(byCollection).map(([collection, tenants]) => `${connection}/${collection}=${tenants.join("+")}`)
      ).join("; ")
  })

const describe = (info: TokenInfo, now: number) => {
  const connections = Option.match(info.connections, { onNone: () => "all", onSome: (ids) => (ids.length === 0 ? "none" : ids.join(",")) })
  const expires = Option.match(info.expiresAt, { onNone: () => "never", onSome: (ms) => new Date(ms).toISOString() })
  return [info.id, info.name, info.access, info.scopes.join(","), connections, tenantText(info), expires, statusAt(info, now)]
}

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = header.map((cell, i) => Math.max(cell.length, ...rows.map((row) => row[i]!.length)))
  return [header, ...rows].map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n")
}

// ===== Commands =====

const storeLayer = (home: Option.Option<string>) =>
  Layer.merge(TokenStore.layerOneShot, ConnectionStore.layer).pipe(Layer.provideMerge(CommonOptions.homeLayer(home)))

/** The ids of the named connections; names that match no saved connection are returned apart. */
const resolveConnections = (names: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const store = yield* ConnectionStore
    const ids: Array<string> = []
    const unknown: Array<string> = []
    for (const name of names) {
      const found = yield* store.get(name).pipe(
        Effect.map((connection) => connection.id),
        Effect.catchTag("ConnectionNotFound", () => Effect.succeed(undefined))
      )
      if (found === undefined) unknown.push(name)
      ids.push(found ?? name)
    }
    return { ids: Array.from(new Set(ids)), unknown }
  })

/** The `--tenants` map with its connections named by id (names resolved like `--connections`). */
const resolveTenantConnections = (map: Readonly<Record<string, Record<string, Array<string>>>>) =>
  Effect.gen(function*() {
    const byId: Record<string, Record<string, Array<string>>> = {}
    const unknown: Array<string> = []
    for (const [given, byCollection] of Object.entries(map)) {
      const { ids, unknown: missing } = yield* resolveConnections([given])
      unknown.push(...missing)
      const id = ids[0] ?? given
      const merged = (byId[id] ??= {})
      for (const [collection, tenants] of Object.entries(byCollection)) {
        merged[collection] = Array.from(new Set([...(merged[collection] ?? []), ...tenants]))
      }
    }
    return { map: byId, unknown }
  })

/** `tokens create`. @category commands */
export const createCommand = Command.make(
  "create",
  {
    home: CommonOptions.home,
    name: Options.text("name").pipe(Options.withDescription("A name to recognise the token by")),
    access: Options.choice("access", AccessLevel.literals).pipe(
      Options.withDescription("readOnly (tools:read, resources:read, history:read), readWrite (+ tools:write) or fullAccess (+ admin)")
    ),
    scopes: Options.text("scopes").pipe(
      Options.withDescription("Comma-separated scopes, narrowing the access level's defaults"),
      Options.optional
    ),
    connections: Options.text("connections").pipe(
      Options.withDescription("Comma-separated connection ids the token may use (default: all)"),
      Options.optional
    ),
    tenants: Options.text("tenants").pipe(
      Options.withDescription(
        "Comma-separated CONNECTION:COLLECTION:TENANT entries: on those connections, multi-tenant collections are limited to the tenants listed (default: every tenant)"
      ),
      Options.optional
    ),
    expires: Options.text("expires").pipe(
      Options.withDescription("Lifetime (30d, 12h, 90m, 2w) or an ISO date-time (default: never)"),
      Options.optional
    ),
    json: CommonOptions.json
  },
  (flags) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const scopes = Option.isSome(flags.scopes) ? yield* parseScopes(flags.scopes.value) : undefined
      const expiresAt = Option.isSome(flags.expires) ? yield* parseExpires(flags.expires.value, now) : undefined
      const resolved = Option.isSome(flags.connections) ? yield* resolveConnections(commaList(flags.connections.value)) : undefined
      const tenants = Option.isSome(flags.tenants) ? yield* resolveTenantConnections(yield* parseTenants(flags.tenants.value)) : undefined
      const store = yield* TokenStore
      const created = yield* store.create({
        name: flags.name,
        access: flags.access,
        scopes,
        connections: resolved?.ids,
        tenants: tenants?.map,
        expiresAt
      }).pipe(Effect.catchTag("InvalidTokenRequest", (error) => Effect.fail(new UsageError({ message: error.reason }))))
      for (const name of [...(resolved?.unknown ?? []), ...(tenants?.unknown ?? [])]) {
        yield* Console.error(`warning: no saved connection has the id or name ${JSON.stringify(name)}; kept in the allowlist as given`)
      }
      if (flags.json) {
        yield* Console.log(JSON.stringify({ id: created.info.id, token: created.token }))
        return
      }
      const url = yield* ClientConfig.endpointUrl
      const [, , , scopeText, connectionText, tenantScope, expires] = describe(created.info, now)
      yield* Console.log(
        [
          `Created token ${created.info.id} (${created.info.name}, ${created.info.access}; scopes ${scopeText}; connections ${connectionText}; expires ${expires}).`,
          ...(tenantScope === "all" ? [] : [`Tenants: ${tenantScope} (other tenants of those connections' multi-tenant collections are invisible).`]),
          ...(resolved !== undefined && resolved.ids.length > 0
            ? ["First access to the listed connections is granted: naming them was your consent."]
            : []),
          "",
          "Client configuration (paste into your MCP client). The token is in the Authorization header;",
          "it is shown only this once and cannot be recovered (--json prints it alone):",
          ClientConfig.render(url, created.token)
        ].join("\n")
      )
    }).pipe(Effect.provide(storeLayer(flags.home)))
).pipe(Command.withDescription("Create a token and print it once"))

/** `tokens list`. @category commands */
export const listCommand = Command.make(
  "list",
  { home: CommonOptions.home, json: CommonOptions.json },
  (flags) =>
    Effect.gen(function*() {
      const store = yield* TokenStore
      const tokens = yield* store.list
      const now = yield* Clock.currentTimeMillis
      if (flags.json) {
        yield* Console.log(JSON.stringify(tokens.map((info) => toJson(info, now)), null, 2))
        return
      }
      if (tokens.length === 0) {
        yield* Console.log("No tokens. Create one with: weaviate-mcp tokens create --name NAME --access readWrite")
        return
      }
      yield* Console.log(
        table(["ID", "NAME", "ACCESS", "SCOPES", "CONNECTIONS", "TENANTS", "EXPIRES", "STATUS"], tokens.map((info) => describe(info, now)))
      )
    }).pipe(Effect.provide(storeLayer(flags.home)))
).pipe(Command.withDescription("List tokens (never their secrets)"))

/** `tokens revoke ID`. @category commands */
export const revokeCommand = Command.make(
  "revoke",
  { home: CommonOptions.home, id: Args.text({ name: "id" }).pipe(Args.withDescription("The token id (see tokens list)")) },
  (flags) =>
    Effect.gen(function*() {
      const store = yield* TokenStore
      const before = yield* store.list
      const info = yield* store.revoke(flags.id)
      const wasRevoked = before.some((token) => token.id === info.id && Option.isSome(token.revokedAt))
      yield* Console.log(wasRevoked ? `Token ${info.id} (${info.name}) was already revoked.` : `Revoked token ${info.id} (${info.name}).`)
    }).pipe(Effect.provide(storeLayer(flags.home)))
).pipe(Command.withDescription("Revoke a token; a running daemon cancels its requests within a second"))

/** `weaviate-mcp tokens`. @category commands */
export const tokensCommand = Command.make("tokens").pipe(
  Command.withDescription("Manage the bearer tokens of AI clients"),
  Command.withSubcommands([createCommand, listCommand, revokeCommand])
)
