/**
 * The clients the daemon has seen, and the state file the command line reads.
 *
 * `daemon-state.json` (mode 0600, written atomically) is the daemon's answer to `weaviate-mcp
 * clients` and `status`: its instance id, resolved approval mode, whether AI access is paused, and
 * every client seen in the last 5 minutes (`clientInfo` name and version, principal, era, last call,
 * calls in flight), at most `MAX_CLIENTS` of them. It is written at start, rewritten at most once a second while something changed
 * (and never while nothing did: an idle daemon does not touch it), and removed when the daemon stops.
 *
 * Why a file and not an admin method on the endpoint: the CLI already trusts the home (tokens.json,
 * the handshake file) and nothing else; a file adds no network surface and no new credential, keeps
 * working while AI access is paused, and `clients disconnect` needs no channel back at all — it
 * revokes the token in tokens.json, which the daemon follows at once (cancelling that token's calls
 * and ending its sessions), exactly as `tokens revoke` does.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as NodePath from "node:path"
import { Home } from "../Base/Home.ts"
import * as SecretFile from "../Base/SecretFile.ts"

/** The state file, in the home. @category constants */
export const STATE_FILE = "daemon-state.json"

/** How long a client stays listed after its last call. @category constants */
export const SEEN_WITHIN: Duration.Duration = Duration.minutes(5)

/**
 * Most clients remembered at once. A client names itself (`clientInfo`), so one token could otherwise
 * fill the table with made-up names; past the bound, the client first seen longest ago with no call
 * in flight is forgotten (listed again at its next call). @category constants
 */
export const MAX_CLIENTS = 1000

/** @category schemas */
export const SeenClient = Schema.Struct({
  name: Schema.String,
  version: Schema.NullOr(Schema.String),
  principal: Schema.NullOr(Schema.String),
  principalName: Schema.NullOr(Schema.String),
  /** `store` (tokens.json), `bridge` (the handshake token) or `anonymous` (`--auth off`). */
  principalSource: Schema.Literal("store", "bridge", "anonymous"),
  era: Schema.Literal("modern", "legacy"),
  lastCall: Schema.String,
  inFlight: Schema.Int
})
export type SeenClient = typeof SeenClient.Type

/** @category schemas */
export const StateFile = Schema.Struct({
  version: Schema.Literal(1),
  instanceId: Schema.String,
  updatedAt: Schema.String,
  approvals: Schema.String,
  paused: Schema.Boolean,
  clients: Schema.Array(SeenClient)
})
export type StateFile = typeof StateFile.Type

/** Who called. @category models */
export interface Caller {
  readonly name: string
  readonly version: string | null
  readonly principal: string | null
  readonly principalName: string | null
  readonly principalSource: SeenClient["principalSource"]
  readonly era: SeenClient["era"]
}

/** @category services */
export class Clients extends Context.Tag("weaviate-mcp/Clients")<Clients, {
  /** A call began; returns what ends it (idempotent). Synchronous. */
  readonly begin: (caller: Caller) => () => void
  /** The clients seen within 5 minutes of `now`. */
  readonly seen: (now: number) => ReadonlyArray<SeenClient>
  /** Sets what the state file says about the daemon. */
  readonly describe: (facts: { readonly approvals?: string; readonly paused?: boolean }) => void
  /** Writes the state file now (once the daemon has described itself at start). */
  readonly writeNow: Effect.Effect<void>
}>() {
  static readonly make = (options: { readonly instanceId: string; readonly writeEvery?: Duration.DurationInput }) =>
    Effect.gen(function*() {
      const home = yield* Home
      const path = NodePath.join(home.dir, STATE_FILE)
      const entries = new Map<string, { caller: Caller; lastCall: number; inFlight: number }>()
      const facts = { approvals: "unknown", paused: false }
      // A change wakes the writer, which waits `writeEvery` and writes: no timer runs while nothing changes.
      // `dirty` says whether anything changed since the last write: a change that a write (`writeNow`
      // at start) already carried is not written again when the writer wakes.
      // Only the first change after a write wakes it: every call begins and ends with a change.
      const changed = yield* Queue.sliding<void>(1)
      let dirty = false
      const touch = () => {
        if (dirty) return
        dirty = true
        Queue.unsafeOffer(changed, undefined)
      }
      // Each part with its length first, so that no two callers share a key (names are the client's).
      const part = (text: string | null) => (text === null ? "-" : `${text.length}:${text}`)
      const keyOf = (c: Caller) => `${part(c.principal)}${part(c.era)}${part(c.name)}${part(c.version)}`
      const seenWithin = Duration.toMillis(SEEN_WITHIN)

      /**
       * Makes room for one more client: forgets the first one (in the order first seen) with no call in
       * flight. Runs only for a new client at the bound; the calls in flight it skips are bounded by
       * the transport's connections. `false` when every client has a call in flight.
       */
      const makeRoom = (): boolean => {
        for (const [key, entry] of entries) {
          if (entry.inFlight > 0) continue
          entries.delete(key)
          return true
        }
        return false
      }

      const seen = (now: number): ReadonlyArray<SeenClient> => {
        const out: Array<SeenClient> = []
        for (const [key, entry] of entries) {
          if (entry.inFlight === 0 && now - entry.lastCall > seenWithin) {
            entries.delete(key)
            continue
          }
          out.push({ ...entry.caller, lastCall: new Date(entry.lastCall).toISOString(), inFlight: entry.inFlight })
        }
        return out.sort((a, b) => b.lastCall.localeCompare(a.lastCall))
      }

      const write = Effect.suspend(() => {
        dirty = false
        const now = Date.now()
        const state: StateFile = {
          version: 1,
          instanceId: options.instanceId,
          updatedAt: new Date(now).toISOString(),
          approvals: facts.approvals,
          paused: facts.paused,
          clients: seen(now)
        }
        return SecretFile.writeJsonAtomic(path, state, { sync: false })
      }).pipe(Effect.catchAll((error) => Effect.logWarning("cannot write the daemon state file", error.message)))

      yield* Effect.forkScoped(
        Queue.take(changed).pipe(
          Effect.zipRight(Effect.sleep(options.writeEvery ?? Duration.seconds(1))),
          Effect.zipRight(Effect.suspend(() => (dirty ? write : Effect.void))),
          Effect.forever
        )
      )
      yield* Effect.addFinalizer(() => SecretFile.remove(path).pipe(Effect.ignore))

      return Clients.of({
        begin: (caller) => {
          const key = keyOf(caller)
          let entry = entries.get(key)
          if (entry === undefined) {
            const now = Date.now()
            // Every remembered client has a call in flight: this one is not listed (its call goes on).
            if (entries.size >= MAX_CLIENTS && !makeRoom()) return () => undefined
            entry = { caller, lastCall: now, inFlight: 0 }
            entries.set(key, entry)
          }
          const current = entry
          current.lastCall = Date.now()
          current.inFlight++
          touch()
          let ended = false
          return () => {
            if (ended) return
            ended = true
            current.inFlight--
            current.lastCall = Date.now()
            touch()
          }
        },
        seen,
        describe: (next) => {
          const approvals = next.approvals ?? facts.approvals
          const paused = next.paused ?? facts.paused
          if (approvals === facts.approvals && paused === facts.paused) return
          facts.approvals = approvals
          facts.paused = paused
          touch()
        },
        writeNow: write
      })
    })

  static readonly layer = (options: { readonly instanceId: string; readonly writeEvery?: Duration.DurationInput }) =>
    Layer.scoped(Clients, Clients.make(options))
}

const decodeState = Schema.decodeUnknownOption(StateFile)

/**
 * Reads the state file of a home (none when absent or malformed).
 *
 * @category reading
 */
export const readState = Effect.fn("Clients.readState")(function*() {
  const home = yield* Home
  const json = yield* SecretFile.readJsonIfExists(NodePath.join(home.dir, STATE_FILE)).pipe(Effect.orElseSucceed(() => undefined))
  return decodeState(json)
})
