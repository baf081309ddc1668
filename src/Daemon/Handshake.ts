/**
 * The handshake file `mcp-handshake.json`: tells clients (and the stdio bridge) on which port the
 * daemon listens. Written atomically with mode 0600 once the server is listening, rewritten when
 * the bridge token rotates, removed on clean shutdown.
 *
 * One daemon per home: `serve.lock` (created exclusively, holding the pid) guards the home while a
 * daemon runs. A lock or handshake whose pid is dead is stale and taken over.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { Home } from "../Base/Home.ts"
import * as SecretFile from "../Base/SecretFile.ts"
import { isPidAlive } from "./HandshakeWire.ts"

export { isPidAlive, PROTOCOL_VERSION } from "./HandshakeWire.ts"

/** The lock file that guards a home while a daemon runs. @category constants */
export const LOCK_FILE = "serve.lock"

/**
 * The file's content (`HandshakeWire.decode` checks the same shape without Effect, for the bridge).
 *
 * @category schemas
 */
export class HandshakeFile extends Schema.Class<HandshakeFile>("HandshakeFile")({
  version: Schema.Literal(1),
  port: Schema.Int,
  pid: Schema.Int,
  instanceId: Schema.String,
  protocolVersion: Schema.String,
  startedAt: Schema.String,
  token: Schema.String,
  tokenExpiresAt: Schema.String
}) {}

/**
 * Another daemon is serving this home.
 *
 * @category errors
 */
export class AlreadyRunning extends Schema.TaggedError<AlreadyRunning>()("AlreadyRunning", {
  home: Schema.String,
  pid: Schema.Int,
  port: Schema.optional(Schema.Int)
}) {
  override get message() {
    const where = this.port === undefined ? "" : ` on http://127.0.0.1:${this.port}/mcp`
    return `weaviate-mcp is already running for ${this.home} (pid ${this.pid}${where}); stop it first or use another --home`
  }
}

const decodeHandshake = Schema.decodeUnknownOption(HandshakeFile)

/**
 * Reads the handshake file of a home, if any and well-formed.
 *
 * @category reading
 */
export const read = Effect.fn("Handshake.read")(function*() {
  const home = yield* Home
  const json = yield* SecretFile.readJsonIfExists(home.path("handshake")).pipe(Effect.orElseSucceed(() => undefined))
  return decodeHandshake(json)
})

const tryCreateLock = (path: string) =>
  Effect.tryPromise({
    try: async () => {
      const handle = await NodeFs.open(path, "wx", 0o600)
      try {
        await handle.writeFile(String(process.pid))
      } finally {
        await handle.close()
      }
      return true
    },
    catch: (error) => error as NodeJS.ErrnoException
  }).pipe(
    Effect.catchIf((error) => error.code === "EEXIST", () => Effect.succeed(false)),
    Effect.mapError((error) => new SecretFile.SecretFileError({ path, operation: "write", reason: error.message }))
  )

const lockOwner = (path: string) =>
  SecretFile.readTextIfExists(path).pipe(
    Effect.map((text) => (text === undefined ? undefined : Number.parseInt(text.trim(), 10))),
    Effect.orElseSucceed(() => undefined)
  )

/** Homes claimed by daemons of this process: the pid alone cannot tell two in-process daemons apart. */
const claimedHere = new Set<string>()

/**
 * Claims the home for this process for the life of the scope. Refuses while another live daemon
 * holds it; takes over a lock or handshake left by a dead one.
 *
 * @category constructors
 */
export const acquireLock = Effect.fn("Handshake.acquireLock")(function*() {
  const home = yield* Home
  const lockPath = NodePath.join(home.dir, LOCK_FILE)
  const existing = yield* read()
  if (claimedHere.has(lockPath)) {
    return yield* new AlreadyRunning({ home: home.dir, pid: process.pid, ...(existing._tag === "Some" ? { port: existing.value.port } : {}) })
  }
  if (existing._tag === "Some" && existing.value.pid !== process.pid && isPidAlive(existing.value.pid)) {
    return yield* new AlreadyRunning({ home: home.dir, pid: existing.value.pid, port: existing.value.port })
  }
  for (let attempt = 0; attempt < 3; attempt++) {
    if (yield* tryCreateLock(lockPath)) {
      claimedHere.add(lockPath)
      yield* Effect.addFinalizer(() =>
        SecretFile.remove(lockPath).pipe(Effect.ignore, Effect.ensuring(Effect.sync(() => claimedHere.delete(lockPath)))))
      if (existing._tag === "Some") {
        yield* Effect.logInfo("taking over a stale handshake file").pipe(Effect.annotateLogs({ stalePid: existing.value.pid }))
      }
      return
    }
    const owner = yield* lockOwner(lockPath)
    if (owner !== undefined && owner !== process.pid && isPidAlive(owner)) {
      return yield* new AlreadyRunning({ home: home.dir, pid: owner, ...(existing._tag === "Some" ? { port: existing.value.port } : {}) })
    }
    yield* Effect.logInfo("taking over a stale lock").pipe(Effect.annotateLogs({ stalePid: owner ?? "unreadable" }))
    yield* SecretFile.remove(lockPath)
  }
  return yield* new SecretFile.SecretFileError({ path: lockPath, operation: "write", reason: "could not claim the lock" })
})

/**
 * Writes the handshake file atomically with mode 0600.
 *
 * @category writing
 */
export const write = Effect.fn("Handshake.write")(function*(file: HandshakeFile) {
  const home = yield* Home
  yield* SecretFile.writeJsonAtomic(home.path("handshake"), Schema.encodeSync(HandshakeFile)(file), { sync: false })
})

/**
 * Removes the handshake file if it is still ours (names our instance).
 *
 * @category writing
 */
export const removeIfOurs = Effect.fn("Handshake.removeIfOurs")(function*(instanceId: string) {
  const home = yield* Home
  const current = yield* read()
  if (current._tag === "Some" && current.value.instanceId !== instanceId) return
  yield* SecretFile.remove(home.path("handshake"))
})
