/**
 * Who may use the console: one-time sign-in codes, the sessions they open, and the key the command
 * line proves itself with.
 *
 * - **The key.** At start the daemon writes `console-key.json` (mode 0600) in the home: a random key
 *   and the daemon's instance id. `weaviate-mcp console` reads it, as it reads the handshake file, and
 *   sends the key to ask for a code or to sign every session out. Nothing else opens the console: an
 *   MCP token (the store's or the bridge's) is never accepted here. The file is removed at stop and
 *   a new key is drawn at every start.
 * - **The code.** Valid `CODE_TTL_MS` (60 s) and usable once: exchanging it, in time or not, removes it.
 *   It travels in the link's fragment (never sent to a server, never in a request line); the page
 *   exchanges it and drops it from the address bar and the history.
 * - **The session.** A cookie `HttpOnly; SameSite=Strict; Path=/console; Max-Age=43200` (12 hours)
 *   holding a random id, and a CSRF token the page reads from `GET /console/api/session` and sends with
 *   every state-changing request. Sessions live in the daemon's memory only: they end at its restart,
 *   on `weaviate-mcp console --sign-out-all`, on sign-out, and after their lifetime.
 *
 * The clock is injectable (`now`), so expiries are tested in virtual time.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeCrypto from "node:crypto"
import * as NodePath from "node:path"
import { Home } from "../Base/Home.ts"
import * as SecretFile from "../Base/SecretFile.ts"
import { ServerInstance } from "../Mcp/ServerInstance.ts"

/** How long a sign-in code is valid. @category constants */
export const CODE_TTL_MS = 60_000

/** A session's stated lifetime (the cookie's `Max-Age`). @category constants */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000

/** The session cookie's name. @category constants */
export const COOKIE = "wmcp_console"

/** The key file, in the home. @category constants */
export const KEY_FILE = "console-key.json"

/** The header that carries the key (the command line's requests). @category constants */
export const KEY_HEADER = "x-weaviate-mcp-console-key"

/** The header that carries the CSRF token. @category constants */
export const CSRF_HEADER = "x-csrf-token"

/** Most codes outstanding and sessions open at once; the oldest go first. @category constants */
export const MAX_CODES = 16
export const MAX_SESSIONS = 64

/** An open session. @category models */
export interface Session {
  readonly id: string
  readonly csrf: string
  readonly expiresAt: number
}

/** @category models */
export interface Options {
  /** The clock (epoch milliseconds); injectable for tests. */
  readonly now?: (() => number) | undefined
}

const random = (bytes: number) => NodeCrypto.randomBytes(bytes).toString("base64url")

/** Compares two secrets in constant time (different lengths never match). @category secrets */
export const sameSecret = (a: string, b: string): boolean => {
  const left = Buffer.from(a, "utf8")
  const right = Buffer.from(b, "utf8")
  if (left.length !== right.length) {
    NodeCrypto.timingSafeEqual(left, left)
    return false
  }
  return NodeCrypto.timingSafeEqual(left, right)
}

/** The value of one cookie in a `Cookie` header. @category parsing */
export const cookieValue = (header: string | undefined, name: string): string | undefined => {
  if (header === undefined) return undefined
  for (const part of header.split(";")) {
    const at = part.indexOf("=")
    if (at === -1) continue
    if (part.slice(0, at).trim() === name) return part.slice(at + 1).trim()
  }
  return undefined
}

/** The `Set-Cookie` of a new session. @category formatting */
export const sessionCookie = (id: string): string =>
  `${COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/console; Max-Age=${SESSION_TTL_MS / 1000}`

/** The `Set-Cookie` that removes the session cookie. @category formatting */
export const clearedCookie = `${COOKIE}=; HttpOnly; SameSite=Strict; Path=/console; Max-Age=0`

/** @category services */
export class ConsoleSessions extends Context.Tag("weaviate-mcp/Daemon/ConsoleSessions")<ConsoleSessions, {
  /** Whether `key` is this daemon's key. */
  readonly isKey: (key: string | undefined) => boolean
  /** A new one-time code and when it expires. */
  readonly issueCode: () => { readonly code: string; readonly expiresAt: number }
  /** Exchanges a code for a new session; `undefined` when it is unknown, used or expired. */
  readonly exchange: (code: string) => Session | undefined
  /** The open session a cookie names. */
  readonly session: (id: string | undefined) => Session | undefined
  readonly end: (id: string) => void
  /** Ends every session (and forgets every code); how many sessions ended. */
  readonly endAll: () => number
}>() {
  /** The sessions alone, without the key file (tests of the rules). */
  static readonly makeMemory = (key: string, options: Options = {}) => {
    const now = options.now ?? Date.now
    const codes = new Map<string, number>()
    const sessions = new Map<string, Session>()
    const trim = <V>(map: Map<string, V>, max: number) => {
      while (map.size > max) map.delete(map.keys().next().value!)
    }
    return ConsoleSessions.of({
      isKey: (candidate) => candidate !== undefined && sameSecret(candidate, key),
      issueCode: () => {
        const code = random(24)
        const expiresAt = now() + CODE_TTL_MS
        codes.set(code, expiresAt)
        trim(codes, MAX_CODES)
        return { code, expiresAt }
      },
      exchange: (code) => {
        const expiresAt = codes.get(code)
        // Used once, in time or not.
        codes.delete(code)
        if (expiresAt === undefined || now() >= expiresAt) return undefined
        const session: Session = { id: random(32), csrf: random(32), expiresAt: now() + SESSION_TTL_MS }
        sessions.set(session.id, session)
        trim(sessions, MAX_SESSIONS)
        return session
      },
      session: (id) => {
        if (id === undefined) return undefined
        const session = sessions.get(id)
        if (session === undefined) return undefined
        if (now() >= session.expiresAt) {
          sessions.delete(id)
          return undefined
        }
        return session
      },
      end: (id) => void sessions.delete(id),
      endAll: () => {
        const ended = sessions.size
        sessions.clear()
        codes.clear()
        return ended
      }
    })
  }

  /** Draws the key, writes `console-key.json` (0600) and removes it when the scope closes. */
  static readonly make = (options: Options = {}) =>
    Effect.gen(function*() {
      const home = yield* Home
      const instance = yield* ServerInstance
      const key = random(32)
      const path = NodePath.join(home.dir, KEY_FILE)
      yield* SecretFile.writeJsonAtomic(path, { version: 1, instanceId: instance.instanceId, key })
      yield* Effect.addFinalizer(() => SecretFile.remove(path).pipe(Effect.ignore))
      return ConsoleSessions.makeMemory(key, options)
    })

  static readonly layer = (options: Options = {}) => Layer.scoped(ConsoleSessions, ConsoleSessions.make(options))
}
