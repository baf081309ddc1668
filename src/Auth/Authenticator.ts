/**
 * Turns a request's `Authorization` header and client address into a `Principal`, or into the
 * contract's challenge:
 *
 * | case | code | `WWW-Authenticate` |
 * |---|---|---|
 * | no bearer token | -33009 | `Bearer realm="weaviate-mcp"` |
 * | unknown, malformed or revoked token | -33009 | `Bearer realm="weaviate-mcp", error="invalid_token"` |
 * | expired token | -33008 | `Bearer realm="weaviate-mcp", error="invalid_token", error_description="token expired"` |
 *
 * A presented token that is unknown (or revoked) counts towards its address's lockout: those are
 * the guesses the lockout is for. A missing token cannot be a guess (clients probe without a token to
 * discover that auth is needed) and an expired one is a known token: during a lockout they still get
 * their `-33009` challenge and `-33008`. While an address is locked out, requests from it with an
 * unknown token are answered -33010; a valid token still passes, because every local client shares 127.0.0.1 and one misconfigured client must not
 * lock the others out (256-bit tokens make guessing hopeless regardless). An authenticated principal
 * then takes one request from its rate bucket.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Immediate from "../Base/Immediate.ts"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { RateLimited, TokenExpired, Unauthenticated } from "../Schema/McpErrors.ts"
import { BridgeToken } from "./BridgeToken.ts"
import { anonymous, type Principal, type TokenPrincipal } from "./Principal.ts"
import { RateLimiter } from "./RateLimiter.ts"
import { statusAt, type TokenInfo, TokenStore, toPrincipal } from "./TokenStore.ts"

/** The realm of every challenge: the service name. @category constants */
export const REALM = "weaviate-mcp"

/** @category models */
export interface Credentials {
  /** The raw `Authorization` header, if any. */
  readonly authorization: string | undefined
  /** The client's address (lockouts are counted per address). */
  readonly remoteAddress: string
}

/** @category errors */
export const missingToken = (): Unauthenticated =>
  new Unauthenticated({
    message: "Authentication required: send Authorization: Bearer <token>",
    headers: { "www-authenticate": `Bearer realm="${REALM}"` }
  })

/** @category errors */
export const invalidToken = (): Unauthenticated =>
  new Unauthenticated({
    message: "Invalid or revoked token",
    headers: { "www-authenticate": `Bearer realm="${REALM}", error="invalid_token"` }
  })

/** @category errors */
export const expiredToken = (): TokenExpired =>
  new TokenExpired({
    message: "Token expired",
    headers: { "www-authenticate": `Bearer realm="${REALM}", error="invalid_token", error_description="token expired"` }
  })

// RFC 6750 §2.1: `Bearer` 1*SP b64token, and nothing else.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i

/**
 * The bearer token of an `Authorization` header, parsed exactly per RFC 6750 §2.1
 * (`Bearer <b64token>`, the scheme case-insensitive); `none` for no header, another scheme (RFC 6750
 * §3.1: answered without an error code), an empty or malformed token, or anything around it
 * (`Basic x Bearer <tok>`, `Bearer <tok> extra`): no bearer token was sent.
 *
 * @category parsing
 */
export const bearerToken = (authorization: string | undefined): Option.Option<string> => {
  if (authorization === undefined) return Option.none()
  const value = authorization.trim()
  const space = value.indexOf(" ")
  // Another scheme is refused by name, before its credentials are looked at.
  if (space === -1 || value.slice(0, space).toLowerCase() !== "bearer") return Option.none()
  const match = BEARER.exec(value)
  return match === null ? Option.none() : Option.some(match[1]!)
}

/**
 * The principal once its request is counted against its rate: an `Exit` when the count is decided at
 * once (the limiter decides without a fiber), so that the endpoint needs no fiber either.
 */
const counted = <P extends Principal, E>(consumed: Effect.Effect<void, RateLimited>, principal: Exit.Exit<P, E>): Effect.Effect<P, E | RateLimited> =>
  Exit.isExit(consumed)
    ? Exit.isSuccess(consumed as Exit.Exit<void, RateLimited>) ? principal : consumed as Exit.Exit<never, RateLimited>
    : Effect.zipRight(consumed, principal)

/**
 * @category services
 */
export class Authenticator extends Context.Tag("weaviate-mcp/Authenticator")<Authenticator, {
  readonly authenticate: (credentials: Credentials) => Effect.Effect<Principal, Unauthenticated | TokenExpired | RateLimited>
}>() {
  /** Tokens from the store and the bridge token; requires `TokenStore`, `BridgeToken` and `RateLimiter`. */
  static readonly makeTokens = Effect.gen(function*() {
    const store = yield* TokenStore
    const bridge = yield* BridgeToken
    const limiter = yield* RateLimiter
    const clock = yield* Effect.clock

    /** What a token of the store authenticates as at `now`: its principal, or the refusal. */
    const storePrincipal = (info: TokenInfo, now: number): Exit.Exit<TokenPrincipal, Unauthenticated | TokenExpired> => {
      const status = statusAt(info, now)
      return status === "revoked" ? Exit.fail(invalidToken()) : status === "expired" ? Exit.fail(expiredToken()) : Exit.succeed(toPrincipal(info))
    }

    const resolve = (token: string): Effect.Effect<TokenPrincipal, Unauthenticated | TokenExpired> =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const fromStore = yield* store.verify(token)
        if (Option.isSome(fromStore)) return yield* storePrincipal(fromStore.value, now)
        const fromBridge = yield* bridge.verify(token)
        if (Option.isNone(fromBridge)) return yield* invalidToken()
        if (Option.isSome(fromBridge.value.expiresAt) && now >= fromBridge.value.expiresAt.value) return yield* expiredToken()
        return fromBridge.value
      })

    // Untraced: it runs on every request, and a traced function pays a span and a stack capture per
    // call (measured ≈ 55 µs, a fifth of a `tools/list`); failures still carry their own traces.
    const authenticateEffect = Effect.fnUntraced(function*(credentials: Credentials) {
      const token = bearerToken(credentials.authorization)
      if (Option.isNone(token)) return yield* missingToken()
      const principal = yield* resolve(token.value).pipe(
        Effect.tapError((error) =>
          // Only an unknown (or revoked) token is a guess: an expired one is answered as such.
          error._tag === "TokenExpired" ? Effect.void : Effect.zipRight(
            limiter.checkLockout(credentials.remoteAddress),
            limiter.recordAuthFailure(credentials.remoteAddress)
          )
        )
      )
      yield* limiter.consume(principal.id)
      return principal as Principal
    })

    /**
     * The usual request (an active token of the store, within its rate) is decided at once: the
     * answer is an `Exit`, which the endpoint reads without running a fiber. Everything else (no
     * token, a bridge token, a refusal) takes the effect above, which decides the same way.
     */
    const authenticate = (credentials: Credentials): Effect.Effect<Principal, Unauthenticated | TokenExpired | RateLimited> => {
      const token = bearerToken(credentials.authorization)
      const verified = Option.isSome(token) ? store.verify(token.value) : undefined
      if (verified !== undefined && Immediate.succeeded(verified) && Option.isSome(verified.value)) {
        const principal = storePrincipal(verified.value.value, clock.unsafeCurrentTimeMillis())
        if (Exit.isSuccess(principal)) return counted(limiter.consume(principal.value.id), principal)
      }
      return authenticateEffect(credentials)
    }

    return Authenticator.of({ authenticate })
  })

  /** `serve --auth off`: every request is the anonymous loopback principal (still rate limited). */
  static readonly makeAnonymous = Effect.gen(function*() {
    const limiter = yield* RateLimiter
    // Untraced, like the token variant: every request runs it. Within the rate, the answer is an
    // `Exit` (as for a token): the endpoint then runs no fiber for it.
    const authenticated: Exit.Exit<Principal> = Exit.succeed(anonymous)
    const authenticate = (_credentials: Credentials): Effect.Effect<Principal, RateLimited> =>
      counted(limiter.consume(anonymous.id), authenticated)
    return Authenticator.of({ authenticate })
  })

  /** @category layers */
  static readonly layerTokens: Layer.Layer<Authenticator, never, TokenStore | BridgeToken | RateLimiter> = Layer.effect(
    Authenticator,
    Authenticator.makeTokens
  )

  /** @category layers */
  static readonly layerAnonymous: Layer.Layer<Authenticator, never, RateLimiter> = Layer.effect(
    Authenticator,
    Authenticator.makeAnonymous
  )
}
