/**
 * Saved connections in `connections.json` (mode 0600, written atomically). `changes` emits the list
 * whenever it changes, through this service or in the file (checked every second while someone
 * listens); the MCP layer turns that into `resources/list_changed`.
 *
 * How fresh the list is, two ways:
 * - `layer` (the CLI, short-lived): a stat before each read, so it always sees the file as it is.
 * - `layerFollowed` (the daemon): a directory watch (`FileWatch`) expires the list when the file
 *   changes, and without an event the file is looked at (one stat) by the first use after a second:
 *   a request costs no system call, and a change by another process is seen within a second, usually
 *   within milliseconds. A connection not found is looked for once more in the file as it is now, so
 *   a connection the CLI has just added is found by the very next call.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Schedule from "effect/Schedule"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as NodeCrypto from "node:crypto"
import * as NodePath from "node:path"
import * as FileWatch from "../Base/FileWatch.ts"
import { Home } from "../Base/Home.ts"
import * as Keychain from "../Base/Keychain.ts"
import { readJsonIfExists, SecretFileError, signature, writeJsonAtomic } from "../Base/SecretFile.ts"
import * as Redacted from "effect/Redacted"
import { authMethodLabel, Connection, ConnectionInput, ConnectionsFile, SECRET_FIELDS, type SecretField } from "../Schema/Connection.ts"

// ===== Errors =====

/** @category errors */
export class ConnectionNotFound extends Schema.TaggedError<ConnectionNotFound>()("ConnectionNotFound", {
  connection: Schema.String
}) {
  override get message() {
    return `No saved connection has the id or name ${JSON.stringify(this.connection)}`
  }
}

/** @category errors */
export class ConnectionInvalid extends Schema.TaggedError<ConnectionInvalid>()("ConnectionInvalid", {
  reason: Schema.String
}) {
  override get message() {
    return `Invalid connection settings: ${this.reason}`
  }
}

/** @category errors */
export type StoreError = SecretFileError | ConnectionInvalid

/** What `migrateSecrets` moved, and what it could not. @category models */
export interface SecretsMoved {
  readonly moved: ReadonlyArray<{ readonly connection: string; readonly field: SecretField }>
  readonly availability: Keychain.Availability
}

// ===== Service =====

/** Fields that can be changed on a saved connection (`undefined` leaves a field as it is). @category models */
export type ConnectionPatch = { readonly [K in keyof typeof ConnectionInput.Encoded]?: (typeof ConnectionInput.Encoded)[K] | undefined }

/**
 * `read` of a file, kept until its signature changes (an atomic rewrite changes its inode; an edit in
 * place its size or times). `current` reads it as it is now (one stat); `fresh` trusts the value
 * for `maxAgeMs` after a look at the file, unless `expire` said the file changed (a watch event).
 */
const cachedBySignature = <A, E>(path: string, read: Effect.Effect<A, E>) => {
  let cached: { readonly signature: string; readonly value: A } | undefined
  let checkedAt = Number.NEGATIVE_INFINITY
  const current: Effect.Effect<A, E> = Effect.suspend(() => {
    const now = signature(path)
    if (cached !== undefined && cached.signature === now) return Effect.succeed(cached.value)
    return Effect.tap(read, (value) => Effect.sync(() => void (cached = { signature: now, value })))
  })
  return {
    current,
    fresh: (maxAgeMs: number): Effect.Effect<A, E> =>
      Effect.clockWith((clock) => {
        const now = clock.unsafeCurrentTimeMillis()
        if (cached !== undefined && now - checkedAt < maxAgeMs) return Effect.succeed(cached.value)
        checkedAt = now
        return current
      }),
    /** The file changed (or may have): the next use looks at it. */
    expire: () => void (checkedAt = Number.NEGATIVE_INFINITY),
    /** Forgets the value (after a save through this service). */
    forget: () => void (cached = undefined)
  }
}

/** How long the followed list is trusted without a file event: changes by others show within a second. */
const FOLLOWED_MAX_AGE_MS = 1_000

/** Where a connection's secrets are kept: read back from the keychain, left out of the file, placed in it. */
const secretPlacement = (keychain: Keychain.Keychain["Type"]) => {
  /** The secrets the file lists as kept in the keychain, read from it (left out when it does not have them). */
  const fromKeychain = (c: Connection): Effect.Effect<Connection> => {
    const listed = c.keychain ?? []
    if (listed.length === 0) return Effect.succeed(c)
    return Effect.map(
      Effect.forEach(listed, (field) => Effect.map(keychain.get(Keychain.accountOf(c.id, field)), (value) => [field, value] as const)),
      (values) => {
        const found = Object.fromEntries(values.filter(([, v]) => v !== undefined).map(([f, v]) => [f, Redacted.make(v!)]))
        return Object.keys(found).length === 0 ? c : new Connection({ ...c, ...found })
      }
    )
  }

  /** The file's form: a secret kept in the keychain is only named there (`keychain`), its value left out. */
  const forFile = (c: Connection): Connection => {
    const listed = c.keychain ?? []
    if (listed.length === 0) return c
    const copy: Record<string, unknown> = { ...c }
    for (const field of listed) delete copy[field]
    return new Connection(copy as ConstructorParameters<typeof Connection>[0])
  }

  /**
   * Puts the given secrets of a connection into the keychain when one answers; each one it does not
   * take stays in the file (and is no longer listed as in the keychain).
   */
  const placeSecrets = (c: Connection, fields: ReadonlyArray<SecretField>) =>
    Effect.gen(function*() {
      const listed = new Set(c.keychain ?? [])
      for (const field of fields) {
        const value = c[field]
        if (value === undefined) continue
        const kept = yield* keychain.set(Keychain.accountOf(c.id, field), Redacted.value(value))
        if (kept) listed.add(field)
        else listed.delete(field)
      }
      const keychainList = SECRET_FIELDS.filter((f) => listed.has(f))
      const { keychain: _old, ...rest } = c
      return new Connection({ ...rest, ...(keychainList.length > 0 ? { keychain: keychainList } : {}) })
    })

  return { fromKeychain, forFile, placeSecrets }
}

const find = (connections: ReadonlyArray<Connection>, idOrName: string) => {
  const found = connections.find((c) => c.id === idOrName) ?? connections.find((c) => c.name === idOrName)
  return found === undefined ? Effect.fail(new ConnectionNotFound({ connection: idOrName })) : Effect.succeed(found)
}

const checkName = (connections: ReadonlyArray<Connection>, name: string, self?: string) =>
  connections.some((c) => c.name === name && c.id !== self)
    ? Effect.fail(new ConnectionInvalid({ reason: `a connection named ${JSON.stringify(name)} already exists` }))
    : Effect.void

const checkKey = (c: Connection) => {
  if (c.apiKey !== undefined && c.apiKeyEnv !== undefined) {
    return Effect.fail(new ConnectionInvalid({ reason: "give the API key or the name of its environment variable, not both" }))
  }
  const missing = missingSecrets(c)
  return missing.length === 0 ? Effect.void : Effect.fail(new ConnectionInvalid({ reason: missing.join("; ") }))
}

/** A new id not among `taken` (eight tries; ids are random). */
const freshId = (taken: ReadonlySet<string>) => {
  let id = newId()
  for (let i = 0; i < 8 && taken.has(id); i++) id = newId()
  return id
}

/** Connections imported from an export, and the secrets of the file moved to the keychain. */
const bulkOperations = (deps: {
  readonly keychain: Keychain.Keychain["Type"]
  readonly list: Effect.Effect<ReadonlyArray<Connection>, StoreError>
  readonly save: (connections: ReadonlyArray<Connection>) => Effect.Effect<void, StoreError | ConnectionInvalid>
  readonly decodeInput: (input: unknown) => Effect.Effect<typeof ConnectionInput.Type, ParseResult.ParseError>
  readonly invalid: (error: ParseResult.ParseError) => ConnectionInvalid
  readonly placeSecrets: ReturnType<typeof secretPlacement>["placeSecrets"]
}) => {
  const { decodeInput, invalid, keychain, list, placeSecrets, save } = deps
  const importAll = Effect.fnUntraced(function*(inputs: ReadonlyArray<typeof ConnectionInput.Encoded>) {
    const connections = [...(yield* list)]
    const added: Array<Connection> = []
    for (const input of inputs) {
      const decoded = yield* Effect.mapError(decodeInput(input), invalid)
      yield* checkName(connections, decoded.name)
      const taken = new Set(connections.map((c) => c.id))
      let id = newId()
      for (let i = 0; i < 8 && taken.has(id); i++) id = newId()
      const connection = new Connection({ ...decoded, id })
      connections.push(connection)
      added.push(connection)
    }
    yield* save(connections)
    return added
  })

  const migrateSecrets = Effect.gen(function*() {
    const availability = yield* keychain.availability
    if (!availability.available) return { moved: [], availability }
    const connections = yield* list
    const moved: Array<{ connection: string; field: SecretField }> = []
    const next: Array<Connection> = []
    for (const c of connections) {
      const inFile = SECRET_FIELDS.filter((f) => c[f] !== undefined && !(c.keychain ?? []).includes(f))
      const placed = yield* placeSecrets(c, inFile)
      for (const field of inFile) if ((placed.keychain ?? []).includes(field)) moved.push({ connection: c.name, field })
      next.push(placed)
    }
    if (moved.length > 0) yield* save(next)
    return { moved, availability }
  })

  return { importAll, migrateSecrets }
}

/**
 * @category services
 */
export class ConnectionStore extends Context.Tag("weaviate-mcp/ConnectionStore")<ConnectionStore, {
  readonly list: Effect.Effect<ReadonlyArray<Connection>, StoreError>
  /** By id, else by name. */
  readonly get: (idOrName: string) => Effect.Effect<Connection, StoreError | ConnectionNotFound>
  /** Validates and saves a new connection under a fresh id; names are unique. */
  readonly add: (input: typeof ConnectionInput.Encoded) => Effect.Effect<Connection, StoreError>
  readonly update: (idOrName: string, patch: ConnectionPatch) => Effect.Effect<Connection, StoreError | ConnectionNotFound>
  readonly remove: (idOrName: string) => Effect.Effect<Connection, StoreError | ConnectionNotFound>
  /**
   * Moves every secret still kept in the file into the OS keychain (`connections migrate-secrets`);
   * the file then holds only references. Nothing is moved when no keychain answers.
   */
  readonly migrateSecrets: Effect.Effect<SecretsMoved, StoreError>
  /**
   * Adds connections exported elsewhere (`connections import`): their secrets were not exported, so
   * they are saved without them, to be entered again; names must be free.
   */
  readonly importAll: (inputs: ReadonlyArray<typeof ConnectionInput.Encoded>) => Effect.Effect<ReadonlyArray<Connection>, StoreError>
  /** Where new secrets go: the OS keychain, or the file and why. */
  readonly secretStore: Effect.Effect<Keychain.Availability>
  /**
   * The list after every change. The first element is the list read once listening has started, so
   * every change made after it was read is emitted (saves through this service at once, edits of the
   * file by others within a second).
   */
  readonly changes: Stream.Stream<ReadonlyArray<Connection>, StoreError>
}>() {
  /** With `follow`, the file is followed for the life of the scope instead of stat'ed per read. */
  static readonly make = (follow?: FileWatch.Options) => Effect.gen(function*() {
    const home = yield* Home
    const path = home.path("connections")
    const pubsub = yield* PubSub.unbounded<void>()
    const decodeFile = Schema.decodeUnknown(ConnectionsFile)
    const encodeFile = Schema.encode(ConnectionsFile)
    const decodeInput = Schema.decodeUnknown(ConnectionInput)

    // Every problem as "field: what it must be", on one line (not the schema's tree of types).
    const invalid = (error: ParseResult.ParseError) =>
      new ConnectionInvalid({
        reason: ParseResult.ArrayFormatter.formatErrorSync(error)
          .map((issue) => (issue.path.length === 0 ? issue.message : `${issue.path.join(".")}: ${issue.message}`))
          .join("; ")
      })

    const keychain = yield* Keychain.Keychain
    const { forFile, fromKeychain, placeSecrets } = secretPlacement(keychain)

    const read = Effect.flatMap(readJsonIfExists(path), (json) =>
      json === undefined
        ? Effect.succeed<ReadonlyArray<Connection>>([])
        : decodeFile(json).pipe(
          Effect.mapError((e) => new SecretFileError({ path, operation: "read", reason: e.message })),
          Effect.flatMap((file) => Effect.forEach(file.connections, fromKeychain))
        ))

    const cache = cachedBySignature(path, read)
    // Followed: a watch event expires the list at once; without one (a filesystem without events) the
    // file is looked at by the first use after a second, never per call and with no fiber polling.
    if (follow !== undefined) {
      yield* FileWatch.follow(home.dir, NodePath.basename(path), { ...follow, pollInterval: "none" }, Effect.sync(cache.expire))
    }
    const list = follow === undefined ? cache.current : cache.fresh(FOLLOWED_MAX_AGE_MS)

    const save = (connections: ReadonlyArray<Connection>) =>
      encodeFile({ version: 1, connections: connections.map(forFile) }).pipe(
        Effect.mapError(invalid),
        Effect.flatMap((encoded) => writeJsonAtomic(path, encoded)),
        Effect.tap(() => Effect.sync(cache.forget)),
        Effect.zipRight(PubSub.publish(pubsub, undefined))
      )

    const get = Effect.fnUntraced(function*(idOrName: string) {
      const found = find(yield* list, idOrName)
      // Followed: one not found yet may have been saved a moment ago by another process.
      return yield* follow === undefined ? found : Effect.catchTag(found, "ConnectionNotFound", () => Effect.flatMap(cache.current, (all) => find(all, idOrName)))
    })

    const add = Effect.fnUntraced(function*(input: typeof ConnectionInput.Encoded) {
      const decoded = yield* Effect.mapError(decodeInput(input), invalid)
      const connections = yield* list
      yield* checkName(connections, decoded.name)
      const connection = new Connection({ ...decoded, id: freshId(new Set(connections.map((c) => c.id))) })
      yield* checkKey(connection)
      const placed = yield* placeSecrets(connection, SECRET_FIELDS)
      yield* save([...connections, placed])
      return placed
    })

    const update = Effect.fnUntraced(function*(idOrName: string, patch: ConnectionPatch) {
      const connections = yield* list
      const current = yield* find(connections, idOrName)
      const { id: _id, ...encoded } = yield* Effect.mapError(Schema.encode(Connection)(current), invalid)
      const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined))
      const merged = { ...encoded, ...defined }
      // A new key replaces the environment variable and the other way round.
      if (patch.apiKey !== undefined) delete (merged as { apiKeyEnv?: string }).apiKeyEnv
      if (patch.apiKeyEnv !== undefined) delete (merged as { apiKey?: string }).apiKey
      const decoded = yield* Effect.mapError(decodeInput(merged), invalid)
      yield* checkName(connections, decoded.name, current.id)
      const next = new Connection({ ...decoded, id: current.id })
      yield* checkKey(next)
      // Only the secrets given now move to the keychain; the others stay where they are.
      const placed = yield* placeSecrets(next, SECRET_FIELDS.filter((f) => patch[f] !== undefined))
      // One that is gone (another auth method) leaves the keychain too.
      for (const field of current.keychain ?? []) {
        if (placed[field] === undefined || !(placed.keychain ?? []).includes(field)) yield* keychain.remove(Keychain.accountOf(current.id, field))
      }
      yield* save(connections.map((c) => (c.id === current.id ? placed : c)))
      return placed
    })

    const remove = Effect.fnUntraced(function*(idOrName: string) {
      const connections = yield* list
      const current = yield* find(connections, idOrName)
      yield* save(connections.filter((c) => c.id !== current.id))
      for (const field of current.keychain ?? []) yield* keychain.remove(Keychain.accountOf(current.id, field))
      return current
    })

    const { importAll, migrateSecrets } = bulkOperations({ keychain, list, save, decodeInput, invalid, placeSecrets })

    const digest = (connections: ReadonlyArray<Connection>) => JSON.stringify(encodeList(connections))

    // Listening for saves starts before the first list is read: a save that completes after that
    // read has published after the subscription, so it is always read again and compared.
    const changes = Stream.unwrapScoped(Effect.map(PubSub.subscribe(pubsub), (saves) =>
      Stream.fromQueue(saves).pipe(
        Stream.merge(Stream.fromSchedule(Schedule.spaced(Duration.seconds(1)))),
        Stream.map(() => undefined),
        Stream.prepend(Chunk.of(undefined)),
        Stream.mapEffect(() => list),
        Stream.changesWith((a, b) => digest(a) === digest(b))
      )))

    return ConnectionStore.of({ list, get, add, update, remove, changes, migrateSecrets, importAll, secretStore: keychain.availability })
  })

  /** Stat'ed before each read: for short-lived programs (the CLI). */
  static readonly layer = Layer.scoped(ConnectionStore, ConnectionStore.make())

  /** Followed for the life of the layer (watch + poll): for the daemon, whose requests then cost no system call. */
  static readonly layerFollowed = (options: FileWatch.Options = {}) => Layer.scoped(ConnectionStore, ConnectionStore.make(options))
}

const encodeList = Schema.encodeSync(Schema.Array(Connection))

const has = (c: Connection, field: SecretField) => c[field] !== undefined || c.keychain?.includes(field) === true

/** What an OIDC method needs and the connection lacks, each as "what it needs (the flag that gives it)". */
const missingSecrets = (c: Connection): ReadonlyArray<string> => {
  const needs = (ok: boolean, what: string) => (ok ? [] : [what])
  switch (c.authMethod) {
    case "oidcClientCredentials":
      return needs(has(c, "oidcClientSecret"), `${authMethodLabel[c.authMethod]} needs a client secret (--oidc-client-secret-stdin)`)
    case "oidcPassword":
      return [
        ...needs(c.oidcUsername !== undefined, `${authMethodLabel[c.authMethod]} needs a username (--oidc-username)`),
        ...needs(has(c, "oidcPassword"), `${authMethodLabel[c.authMethod]} needs a password (--oidc-password-stdin)`)
      ]
    case "oidcToken":
      return needs(has(c, "oidcAccessToken"), `${authMethodLabel[c.authMethod]} needs an access token (--oidc-access-token-stdin)`)
    default:
      return []
  }
}

const newId = () => NodeCrypto.randomBytes(6).toString("hex")
