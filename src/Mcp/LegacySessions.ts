/**
 * Sessions of the legacy era: `initialize` mints an `Mcp-Session-Id`; every later request carries it.
 * A session belongs to the principal that created it (another principal's id is as unknown as a
 * made-up one: `-33001`, HTTP 404, and the client initializes again). At most 16 are held; creating
 * one more evicts the least recently used. Sessions live until the daemon stops, or until their
 * token is revoked.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import * as NodeCrypto from "node:crypto"
import { SessionNotFound } from "../Schema/McpErrors.ts"
import type { ClientInfo } from "./Catalogue.ts"

/** @category constants */
export const MAX_SESSIONS = 16

/** @category models */
export interface Session {
  readonly id: string
  readonly principalId: string
  readonly protocolVersion: string
  readonly clientCapabilities: Readonly<Record<string, unknown>>
  readonly clientInfo: Option.Option<ClientInfo>
}

/** @category errors */
export const sessionNotFound = (): SessionNotFound =>
  new SessionNotFound({ message: "Session not found: send initialize to start a new session" })

/**
 * @category services
 */
export class LegacySessions extends Context.Tag("weaviate-mcp/LegacySessions")<LegacySessions, {
  /** Starts a session (evicting the least recently used one when 16 are held); returns it. */
  readonly create: (init: Omit<Session, "id">) => Effect.Effect<Session>
  /** The session, marked used; `SessionNotFound` when unknown or owned by another principal. */
  readonly get: (id: string, principalId: string) => Effect.Effect<Session, SessionNotFound>
  /** Ends every session of a principal (its token was revoked); returns how many. */
  readonly endPrincipal: (principalId: string) => Effect.Effect<number>
  readonly size: Effect.Effect<number>
}>() {
  static readonly make = (max: number = MAX_SESSIONS) =>
    Effect.sync(() => {
      // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
      const sessions = new Map<string, Session>()
      return LegacySessions.of({
        create: (init) =>
          Effect.sync(() => {
            const session: Session = { id: NodeCrypto.randomUUID(), ...init }
            while (sessions.size >= max) sessions.delete(sessions.keys().next().value!)
            sessions.set(session.id, session)
            return session
          }),
        get: (id, principalId) =>
          Effect.suspend(() => {
            const session = sessions.get(id)
            if (session === undefined || session.principalId !== principalId) return Effect.fail(sessionNotFound())
            sessions.delete(id)
            sessions.set(id, session)
            return Effect.succeed(session)
          }),
        endPrincipal: (principalId) =>
          Effect.sync(() => {
            let ended = 0
            for (const [id, session] of sessions) {
              if (session.principalId === principalId) {
                sessions.delete(id)
                ended++
              }
            }
            return ended
          }),
        size: Effect.sync(() => sessions.size)
      })
    })

  /** @category layers */
  static readonly layer = Layer.effect(LegacySessions, LegacySessions.make())
}
