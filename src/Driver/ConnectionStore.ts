/**
 * Saved connections in `connections.json` (mode 0600, written atomically). The file is read on
 * every call, so a daemon sees what the CLI saved a moment ago. `changes` emits the list whenever
 * it changes, through this service or in the file (checked every second while someone listens);
 * the MCP layer turns that into `resources/list_changed`.
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
import { Home } from "../Base/Home.ts"
import { readJsonIfExists, SecretFileError, signature, writeJsonAtomic } from "../Base/SecretFile.ts"
import { Connection, ConnectionInput, ConnectionsFile } from "../Schema/Connection.ts"

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

// ===== Service =====

/** Fields that can be changed on a saved connection (`undefined` leaves a field as it is). @category models */
export type ConnectionPatch = { readonly [K in keyof typeof ConnectionInput.Encoded]?: (typeof ConnectionInput.Encoded)[K] | undefined }

/**
 * `read` of a file, kept until a stat says the file changed. Every tool call names a connection, so
 * the file is read and decoded again only when it changed (an atomic rewrite changes its inode; an
 * edit in place its size or times): a change by any process is still seen on the next call.
 */
const cachedByStat = <A, E>(path: string, read: Effect.Effect<A, E>): Effect.Effect<A, E> => {
  let cached: { readonly signature: string; readonly value: A } | undefined
  return Effect.suspend(() => {
    const current = signature(path)
    if (cached !== undefined && cached.signature === current) return Effect.succeed(cached.value)
    return Effect.tap(read, (value) => Effect.sync(() => void (cached = { signature: current, value })))
  })
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
   * The list after every change. The first element is the list read once listening has started, so
   * every change made after it was read is emitted (saves through this service at once, edits of the
   * file by others within a second).
   */
  readonly changes: Stream.Stream<ReadonlyArray<Connection>, StoreError>
}>() {
  static readonly make = Effect.gen(function*() {
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

    const read = Effect.flatMap(readJsonIfExists(path), (json) =>
      json === undefined
        ? Effect.succeed<ReadonlyArray<Connection>>([])
        : decodeFile(json).pipe(
          Effect.map((file) => file.connections),
          Effect.mapError((e) => new SecretFileError({ path, operation: "read", reason: e.message }))
        ))

    const list = cachedByStat(path, read)

    const save = (connections: ReadonlyArray<Connection>) =>
      encodeFile({ version: 1, connections }).pipe(
        Effect.mapError(invalid),
        Effect.flatMap((encoded) => writeJsonAtomic(path, encoded)),
        Effect.zipRight(PubSub.publish(pubsub, undefined))
      )

    const find = (connections: ReadonlyArray<Connection>, idOrName: string) => {
      const found = connections.find((c) => c.id === idOrName) ?? connections.find((c) => c.name === idOrName)
      return found === undefined ? Effect.fail(new ConnectionNotFound({ connection: idOrName })) : Effect.succeed(found)
    }

    const checkName = (connections: ReadonlyArray<Connection>, name: string, self?: string) =>
      connections.some((c) => c.name === name && c.id !== self)
        ? Effect.fail(new ConnectionInvalid({ reason: `a connection named ${JSON.stringify(name)} already exists` }))
        : Effect.void

    const checkKey = (c: Connection) =>
      c.apiKey !== undefined && c.apiKeyEnv !== undefined
        ? Effect.fail(new ConnectionInvalid({ reason: "give the API key or the name of its environment variable, not both" }))
        : Effect.void

    const get = Effect.fn("ConnectionStore.get")(function*(idOrName: string) {
      return yield* find(yield* list, idOrName)
    })

    const add = Effect.fn("ConnectionStore.add")(function*(input: typeof ConnectionInput.Encoded) {
      const decoded = yield* Effect.mapError(decodeInput(input), invalid)
      const connections = yield* list
      yield* checkName(connections, decoded.name)
      const taken = new Set(connections.map((c) => c.id))
      let id = newId()
      for (let i = 0; i < 8 && taken.has(id); i++) id = newId()
      const connection = new Connection({ ...decoded, id })
      yield* checkKey(connection)
      yield* save([...connections, connection])
      return connection
    })

    const update = Effect.fn("ConnectionStore.update")(function*(idOrName: string, patch: ConnectionPatch) {
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
      yield* save(connections.map((c) => (c.id === current.id ? next : c)))
      return next
    })

    const remove = Effect.fn("ConnectionStore.remove")(function*(idOrName: string) {
      const connections = yield* list
      const current = yield* find(connections, idOrName)
      yield* save(connections.filter((c) => c.id !== current.id))
      return current
    })

    const digest = (connections: ReadonlyArray<Connection>) =>
      JSON.stringify(Schema.encodeSync(Schema.Array(Connection))(connections))

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

    return ConnectionStore.of({ list, get, add, update, remove, changes })
  })

  static readonly layer = Layer.effect(ConnectionStore, ConnectionStore.make)
}

const newId = () => NodeCrypto.randomBytes(6).toString("hex")
