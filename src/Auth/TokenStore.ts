/**
 * The token store `tokens.json` in the home: one record per token with a salted hash of the token,
 * never the token itself; mode 0600, written atomically.
 *
 * Tokens look like `wmcp_<id>_<secret>`: `id` is 16 hex digits (not secret; it finds the record and is
 * what `tokens list` / `tokens revoke` show) and `secret` is 32 random bytes in base64url.
 *
 * The hash is HMAC-SHA256 keyed with a per-token 16-byte random salt. A slow password hash (scrypt)
 * buys nothing here: a token carries 256 random bits, so guessing is infeasible at any hash speed,
 * while scrypt on every request would cost tens of milliseconds of CPU and hand unauthenticated
 * callers a cheap way to load the daemon. The salt keeps equal digests from appearing across stores.
 * Digests are compared with `crypto.timingSafeEqual`.
 *
 * A daemon that holds the store keeps a snapshot in memory and follows every change to the file
 * within a second (`fs.watch` on the home directory, which survives atomic renames, plus a poll of
 * the file's stat as a fallback), and publishes the ids of tokens that stopped being valid
 * (`revocations`) so their in-flight requests can be cancelled.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as NodeCrypto from "node:crypto"
import * as NodePath from "node:path"
import { Home } from "../Base/Home.ts"
import * as FileWatch from "../Base/FileWatch.ts"
import * as SecretFile from "../Base/SecretFile.ts"
import { AccessLevel, defaultScopes, Scope as ScopeSchema } from "../Schema/Policy.ts"
import { type TenantMap, TokenPrincipal } from "./Principal.ts"

// ===== File format =====

/** @category schemas */
export const StoredToken = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  access: AccessLevel,
  scopes: Schema.Array(ScopeSchema),
  /** `null` = every connection. */
  connections: Schema.NullOr(Schema.Array(Schema.String)),
  /** Tenant-scoped tokens: connection id → collection → tenants. Absent or `null` = every tenant. */
  tenants: Schema.optional(Schema.NullOr(Schema.Record({
    key: Schema.String,
    value: Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) })
  }))),
  /**
   * `2` for tokens created once `history:read` existed; a token without it (created before) that has
   * `tools:read` is granted `history:read` when read (`scopesOf`).
   */
  scopesRevision: Schema.optional(Schema.Literal(2)),
  createdAt: Schema.String,
  expiresAt: Schema.NullOr(Schema.String),
  revokedAt: Schema.NullOr(Schema.String),
  hash: Schema.Struct({
    algorithm: Schema.Literal("hmac-sha256"),
    salt: Schema.String,
    digest: Schema.String
  })
})
export type StoredToken = typeof StoredToken.Type

/** @category schemas */
export const TokensFile = Schema.Struct({
  version: Schema.Literal(1),
  tokens: Schema.Array(StoredToken)
})
export type TokensFile = typeof TokensFile.Type

const decodeFile = Schema.decodeUnknown(TokensFile)

// ===== Models =====

/**
 * What may be shown about a token: everything but the hash. Times are epoch milliseconds.
 *
 * @category models
 */
export interface TokenInfo {
  readonly id: string
  readonly name: string
  readonly access: AccessLevel
  readonly scopes: ReadonlyArray<ScopeSchema>
  readonly connections: Option.Option<ReadonlyArray<string>>
  readonly tenants: Option.Option<TenantMap>
  readonly createdAt: number
  readonly expiresAt: Option.Option<number>
  readonly revokedAt: Option.Option<number>
}

/** @category models */
export type TokenStatus = "active" | "expired" | "revoked"

/** A token expires at `expiresAt` exactly: valid one millisecond before, expired from then on. @category combinators */
export const statusAt = (info: TokenInfo, now: number): TokenStatus =>
  Option.isSome(info.revokedAt)
    ? "revoked"
    : Option.isSome(info.expiresAt) && now >= info.expiresAt.value
    ? "expired"
    : "active"

/** The principal a valid token authenticates as. @category conversions */
export const toPrincipal = (info: TokenInfo): TokenPrincipal =>
  new TokenPrincipal({
    id: info.id,
    name: info.name,
    access: info.access,
    scopes: info.scopes,
    connections: info.connections,
    expiresAt: info.expiresAt,
    source: "store",
    ...(Option.isSome(info.tenants) ? { tenants: info.tenants.value } : {})
  })

/** The JSON shape of `tokens list --json`. @category conversions */
export const toJson = (info: TokenInfo, now: number) => ({
  id: info.id,
  name: info.name,
  access: info.access,
  scopes: info.scopes,
  connections: Option.getOrNull(info.connections),
  tenants: Option.getOrNull(info.tenants),
  createdAt: new Date(info.createdAt).toISOString(),
  expiresAt: Option.getOrNull(Option.map(info.expiresAt, (ms) => new Date(ms).toISOString())),
  revokedAt: Option.getOrNull(Option.map(info.revokedAt, (ms) => new Date(ms).toISOString())),
  status: statusAt(info, now)
})

/** @category models */
export interface CreateTokenInput {
  readonly name: string
  readonly access: AccessLevel
  /** Defaults to the access level's scopes; may only narrow them. */
  readonly scopes?: ReadonlyArray<ScopeSchema> | undefined
  /** The connection allowlist; omitted = every connection. */
  readonly connections?: ReadonlyArray<string> | undefined
  /** Tenant scope (connection id → collection → tenants); omitted = every tenant. */
  readonly tenants?: TenantMap | undefined
  /** Epoch milliseconds; omitted = never expires. */
  readonly expiresAt?: number | undefined
}

// ===== Errors =====

/** `tokens.json` could not be read, decoded or written. @category errors */
export class TokenStoreError extends Schema.TaggedError<TokenStoreError>()("TokenStoreError", {
  reason: Schema.String
}) {
  override get message() {
    return `Token store: ${this.reason}`
  }
}

/** No token with this id. @category errors */
export class TokenNotFound extends Schema.TaggedError<TokenNotFound>()("TokenNotFound", {
  id: Schema.String
}) {
  override get message() {
    return `Unknown token id: ${this.id}`
  }
}

/** A token request that makes no sense (empty name, scopes beyond the access level). @category errors */
export class InvalidTokenRequest extends Schema.TaggedError<InvalidTokenRequest>()("InvalidTokenRequest", {
  reason: Schema.String
}) {
  override get message() {
    return this.reason
  }
}

// ===== Secrets =====

const TOKEN_PATTERN = /^wmcp_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/

/** The non-secret id embedded in a token, if it has the token shape. @category parsing */
export const parseTokenId = (token: string): Option.Option<string> => {
  const match = TOKEN_PATTERN.exec(token)
  return match === null ? Option.none() : Option.some(match[1]!)
}

const digestOf = (salt: Buffer, token: string): Buffer => NodeCrypto.createHmac("sha256", salt).update(token, "utf8").digest()

/**
 * Compares two digests in constant time. Buffers of different length (a tampered file) never match,
 * and still cost one comparison so that timing says nothing.
 *
 * @category secrets
 */
export const digestsEqual = (a: Buffer, b: Buffer): boolean => {
  if (a.length !== b.length) {
    NodeCrypto.timingSafeEqual(a, a)
    return false
  }
  return NodeCrypto.timingSafeEqual(a, b)
}

const DUMMY_SALT = NodeCrypto.randomBytes(16)
const DUMMY_DIGEST = NodeCrypto.randomBytes(32)

interface Entry {
  readonly info: TokenInfo
  readonly salt: Buffer
  readonly digest: Buffer
}

interface Snapshot {
  readonly entries: ReadonlyMap<string, Entry>
}

const emptySnapshot: Snapshot = { entries: new Map() }

const parseTime = (iso: string): number => {
  const ms = Date.parse(iso)
  return Number.isNaN(ms) ? 0 : ms
}

/**
 * The scopes of a stored token: a token created before `history:read` existed (no `scopesRevision`)
 * that may call tools (`tools:read`) may also read the query history of its connections.
 *
 * @category conversions
 */
export const scopesOf = (stored: Pick<StoredToken, "scopes" | "scopesRevision">): ReadonlyArray<ScopeSchema> =>
  stored.scopesRevision === undefined && stored.scopes.includes("tools:read") && !stored.scopes.includes("history:read")
    ? [...stored.scopes, "history:read"]
    : stored.scopes

const toEntry = (stored: StoredToken): Entry => ({
  info: {
    id: stored.id,
    name: stored.name,
    access: stored.access,
    scopes: scopesOf(stored),
    connections: Option.fromNullable(stored.connections),
    tenants: Option.fromNullable(stored.tenants),
    createdAt: parseTime(stored.createdAt),
    expiresAt: Option.map(Option.fromNullable(stored.expiresAt), parseTime),
    revokedAt: Option.map(Option.fromNullable(stored.revokedAt), parseTime)
  },
  salt: Buffer.from(stored.hash.salt, "base64url"),
  digest: Buffer.from(stored.hash.digest, "base64url")
})

const toSnapshot = (file: TokensFile): Snapshot => ({
  entries: new Map(file.tokens.map((stored) => [stored.id, toEntry(stored)]))
})

/** Ids that were usable before and are revoked or gone now. Expiry is not a revocation: it is checked per request. */
const revokedBetween = (before: Snapshot, after: Snapshot): ReadonlyArray<string> => {
  const ids: Array<string> = []
  for (const [id, entry] of before.entries) {
    if (Option.isSome(entry.info.revokedAt)) continue
    const now = after.entries.get(id)
    if (now === undefined || Option.isSome(now.info.revokedAt)) ids.push(id)
  }
  return ids
}

// ===== Service =====

/** @category models */
export interface Options extends FileWatch.Options {
  /** Follow changes made by other processes (the daemon). Default `true`. */
  readonly watch?: boolean | undefined
}

/** A token request that passed its checks: name trimmed, scopes within the access level, no duplicates. */
interface CheckedRequest {
  readonly name: string
  readonly access: CreateTokenInput["access"]
  readonly scopes: ReadonlyArray<ScopeSchema>
  readonly connections: ReadonlyArray<string> | null
  readonly tenants: TenantMap | null
  readonly expiresAt: number | undefined
}

const checkCreate = (input: CreateTokenInput): Effect.Effect<CheckedRequest, InvalidTokenRequest> => {
  const name = input.name.trim()
  if (name.length === 0) return Effect.fail(new InvalidTokenRequest({ reason: "A token needs a non-empty name" }))
  const allowed = defaultScopes[input.access]
  const scopes = input.scopes === undefined ? allowed : Array.from(new Set(input.scopes))
  const beyond = scopes.filter((scope) => !allowed.includes(scope))
  if (beyond.length > 0) {
    return Effect.fail(new InvalidTokenRequest({
      reason: `Scope ${beyond.join(", ")} exceeds access level ${input.access} (allowed: ${allowed.join(", ")})`
    }))
  }
  if (scopes.length === 0) return Effect.fail(new InvalidTokenRequest({ reason: "A token needs at least one scope" }))
  const connections = input.connections === undefined ? null : Array.from(new Set(input.connections))
  const tenants = input.tenants === undefined ? null : input.tenants
  if (tenants !== null) {
    const outside = Object.keys(tenants).filter((id) => connections !== null && !connections.includes(id))
    if (outside.length > 0) {
      return Effect.fail(new InvalidTokenRequest({ reason: `--tenants names a connection outside --connections: ${outside.join(", ")}` }))
    }
    if (Object.values(tenants).some((byCollection) => Object.values(byCollection).some((names) => names.length === 0))) {
      return Effect.fail(new InvalidTokenRequest({ reason: "each --tenants entry names a tenant" }))
    }
  }
  return Effect.succeed({ name, access: input.access, scopes, connections, tenants, expiresAt: input.expiresAt })
}

/** A new token (shown once) and what the store keeps of it: a salted HMAC, never the token. */
const newToken = (request: CheckedRequest, file: TokensFile, now: number): { readonly stored: StoredToken; readonly token: string } => {
  const taken = new Set(file.tokens.map((token) => token.id))
  let id = NodeCrypto.randomBytes(8).toString("hex")
  // 64 random bits: a collision is practically impossible, a few retries are plenty.
  for (let attempt = 0; attempt < 8 && taken.has(id); attempt++) id = NodeCrypto.randomBytes(8).toString("hex")
  const token = `wmcp_${id}_${NodeCrypto.randomBytes(32).toString("base64url")}`
  const salt = NodeCrypto.randomBytes(16)
  const stored: StoredToken = {
    id,
    name: request.name,
    access: request.access,
    scopes: [...request.scopes],
    scopesRevision: 2,
    connections: request.connections === null ? null : [...request.connections],
    ...(request.tenants === null ? {} : { tenants: request.tenants as StoredToken["tenants"] }),
    createdAt: new Date(now).toISOString(),
    expiresAt: request.expiresAt === undefined ? null : new Date(request.expiresAt).toISOString(),
    revokedAt: null,
    hash: { algorithm: "hmac-sha256", salt: salt.toString("base64url"), digest: digestOf(salt, token).toString("base64url") }
  }
  return { stored, token }
}

/** The file with one token revoked (kept, with its revocation time); a token revoked already stays as it was. */
const revokeIn = (file: TokensFile, id: string, now: number) => {
  const index = file.tokens.findIndex((token) => token.id === id)
  if (index < 0) return Effect.fail(new TokenNotFound({ id }))
  const current = file.tokens[index]!
  const updated: StoredToken = current.revokedAt === null ? { ...current, revokedAt: new Date(now).toISOString() } : current
  const tokens = file.tokens.map((token, i) => (i === index ? updated : token))
  return Effect.succeed([{ version: 1 as const, tokens }, toEntry(updated).info] as const)
}

/**
 * @category services
 */
export class TokenStore extends Context.Tag("weaviate-mcp/TokenStore")<TokenStore, {
  /** Creates a token and returns it in plain text, the only time it exists outside the caller. */
  readonly create: (input: CreateTokenInput) => Effect.Effect<{ readonly token: string; readonly info: TokenInfo }, TokenStoreError | InvalidTokenRequest>
  /** Every token, revoked and expired ones included; never a secret. Read from the file. */
  readonly list: Effect.Effect<ReadonlyArray<TokenInfo>, TokenStoreError>
  /** Marks a token revoked (idempotent); `TokenNotFound` for an unknown id. */
  readonly revoke: (id: string) => Effect.Effect<TokenInfo, TokenStoreError | TokenNotFound>
  /**
   * The record a presented token belongs to, from the in-memory snapshot; `none` when the token is
   * malformed, unknown, or its digest does not match. Revoked and expired records are returned:
   * the caller decides (see `statusAt`).
   */
  readonly verify: (token: string) => Effect.Effect<Option.Option<TokenInfo>>
  /** Re-reads the file now (the watcher does this on every change). */
  readonly reload: Effect.Effect<void>
  /** The tokens of the current snapshot: the current value, then one per reload that changed it. */
  readonly tokens: Stream.Stream<ReadonlyArray<TokenInfo>>
  /** Ids of tokens revoked or removed since the subscription began (by any process). */
  readonly revocations: Stream.Stream<string>
  /** The same as `revocations`, as a queue subscribed on the spot (for callers that must not miss one). */
  readonly subscribeRevocations: Effect.Effect<Queue.Dequeue<string>, never, Scope.Scope>
}>() {
  static readonly make = (options: Options = {}) =>
    Effect.gen(function*() {
      const home = yield* Home
      const path = home.path("tokens")
      const fileName = NodePath.basename(path)
      const writeLock = yield* Effect.makeSemaphore(1)
      const reloadLock = yield* Effect.makeSemaphore(1)
      const snapshotRef = yield* SubscriptionRef.make<Snapshot>(emptySnapshot)
      // The installed snapshot, also as a plain value: `verify` reads it without a fiber.
      let installed: Snapshot = emptySnapshot
      const revocationHub = yield* Effect.acquireRelease(PubSub.unbounded<string>(), PubSub.shutdown)
      let lastStat = ""

      const statSignature = () => SecretFile.signature(path)

      const readFile: Effect.Effect<TokensFile, TokenStoreError> = SecretFile.readJsonIfExists(path).pipe(
        Effect.mapError((error) => new TokenStoreError({ reason: error.message })),
        Effect.flatMap((json) =>
          json === undefined
            ? Effect.succeed<TokensFile>({ version: 1, tokens: [] })
            : decodeFile(json).pipe(
              Effect.mapError((error) => new TokenStoreError({ reason: `${path} is not a valid token store: ${error.message}` }))
            )
        )
      )

      const install = (next: Snapshot) =>
        Effect.gen(function*() {
          const previous = yield* SubscriptionRef.get(snapshotRef)
          yield* SubscriptionRef.set(snapshotRef, next)
          installed = next
          const revoked = revokedBetween(previous, next)
          if (revoked.length > 0) yield* PubSub.publishAll(revocationHub, revoked)
        })

      // An unreadable store fails closed: no token is valid until the file is readable again.
      const reload = reloadLock.withPermits(1)(
        Effect.gen(function*() {
          lastStat = statSignature()
          const next = yield* readFile.pipe(
            Effect.map(toSnapshot),
            Effect.tapError((error) => Effect.logError(`${error.message}; no token is accepted until it is fixed`)),
            Effect.orElseSucceed(() => emptySnapshot)
          )
          yield* install(next)
        })
      ).pipe(Effect.withSpan("TokenStore.reload"))

      const reloadIfChanged = Effect.suspend(() => (statSignature() === lastStat ? Effect.void : reload))

      const mutate = <A, E>(f: (file: TokensFile, now: number) => Effect.Effect<readonly [TokensFile, A], E>) =>
        writeLock.withPermits(1)(
          Effect.gen(function*() {
            const file = yield* readFile
            const now = yield* Clock.currentTimeMillis
            const [next, result] = yield* f(file, now)
            yield* SecretFile.writeJsonAtomic(path, next).pipe(
              Effect.mapError((error) => new TokenStoreError({ reason: error.message }))
            )
            yield* reload
            return result
          })
        )

      const create = Effect.fn("TokenStore.create")(function*(input: CreateTokenInput) {
        const request = yield* checkCreate(input)
        return yield* mutate((file, now) => {
          if (input.expiresAt !== undefined && input.expiresAt <= now) {
            return Effect.fail(new InvalidTokenRequest({ reason: "The expiry must be in the future" }))
          }
          const { stored, token } = newToken(request, file, now)
          return Effect.succeed([{ version: 1, tokens: [...file.tokens, stored] }, { token, info: toEntry(stored).info }] as const)
        })
      })

      const list = readFile.pipe(
        Effect.map((file) => file.tokens.map((stored) => toEntry(stored).info)),
        Effect.withSpan("TokenStore.list")
      )

      const revoke = Effect.fn("TokenStore.revoke")(function*(id: string) {
        return yield* mutate((file, now) => revokeIn(file, id, now))
      })

      // Runs on every authenticated request: synchronous, its outcome an `Exit` (no fiber, no span).
      const verify = (token: string): Effect.Effect<Option.Option<TokenInfo>> => {
        const entry = Option.flatMap(parseTokenId(token), (id) => Option.fromNullable(installed.entries.get(id)))
        if (Option.isNone(entry)) {
          // Do the same work for an unknown id as for a known one.
          digestsEqual(digestOf(DUMMY_SALT, token), DUMMY_DIGEST)
          return Effect.succeed(Option.none<TokenInfo>())
        }
        return Effect.succeed(
          digestsEqual(digestOf(entry.value.salt, token), entry.value.digest) ? Option.some(entry.value.info) : Option.none<TokenInfo>()
        )
      }

      yield* reload

      if (options.watch ?? true) yield* FileWatch.follow(home.dir, fileName, options, reloadIfChanged)

      const tokens = snapshotRef.changes.pipe(Stream.map((snapshot) => Array.from(snapshot.entries.values(), (entry) => entry.info)))

      return TokenStore.of({
        create,
        list,
        revoke,
        verify,
        reload,
        tokens,
        revocations: Stream.fromPubSub(revocationHub),
        subscribeRevocations: PubSub.subscribe(revocationHub)
      })
    })

  /** The daemon's store: follows changes to `tokens.json` made by any process. */
  static readonly layer = (options: Options = {}) => Layer.scoped(TokenStore, TokenStore.make(options))

  /** A store for one-shot commands (the CLI): reads and writes the file, does not watch it. */
  static readonly layerOneShot = Layer.scoped(TokenStore, TokenStore.make({ watch: false }))
}

// ===== Wiring =====

/**
 * Runs `handler` for every token id revoked or removed while the layer lives (cancel the token's
 * in-flight requests, end its legacy sessions, forget its first-access answers). Subscribes before the
 * layer is built, so no revocation after that is missed; a failing handler is logged, not fatal.
 *
 * @category layers
 */
export const onRevocation = <R>(handler: (tokenId: string) => Effect.Effect<void, never, R>): Layer.Layer<never, never, TokenStore | R> =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      const store = yield* TokenStore
      const revocations = yield* store.subscribeRevocations
      yield* Queue.take(revocations).pipe(
        Effect.flatMap((id) => handler(id).pipe(Effect.catchAllCause((cause) => Effect.logError("revocation handler failed", cause)))),
        Effect.forever,
        Effect.forkScoped
      )
    })
  )

/**
 * First run of `serve`: when the store holds no token at all, creates a `default` readWrite token and
 * returns it (to be printed once); `none` otherwise.
 *
 * @category constructors
 */
export const ensureDefaultToken = Effect.gen(function*() {
  const store = yield* TokenStore
  const existing = yield* store.list
  if (existing.length > 0) return Option.none<{ readonly token: string; readonly info: TokenInfo }>()
  const created = yield* store.create({ name: "default", access: "readWrite" }).pipe(
    Effect.catchTag("InvalidTokenRequest", (error) => Effect.die(error))
  )
  return Option.some(created)
}).pipe(Effect.withSpan("TokenStore.ensureDefaultToken"))
