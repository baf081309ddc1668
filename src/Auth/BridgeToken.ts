/**
 * The bridge token of the handshake file: a readWrite principal whose token lives in memory only
 * (never in `tokens.json`), is rotated every hour, and stays valid for a grace period after its
 * rotation so that a bridge that read the file just before never fails a call.
 *
 * The handshake writer follows `changes` and rewrites the file with the current `{ token, expiresAt }`;
 * `expiresAt` is when the token stops being accepted (rotation time plus the grace period).
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as NodeCrypto from "node:crypto"
import { defaultScopes } from "../Schema/Policy.ts"
import { TokenPrincipal } from "./Principal.ts"
import { digestsEqual } from "./TokenStore.ts"

/** The principal id of the bridge; stable across rotations so its sessions and requests survive them. @category constants */
export const BRIDGE_PRINCIPAL_ID = "bridge"

/** What the handshake file publishes. Times are epoch milliseconds. @category models */
export interface BridgeCredential {
  readonly token: string
  /** When this token stops being accepted: its rotation time plus the grace period. */
  readonly expiresAt: number
  /** When the next token replaces it in the handshake file. */
  readonly rotatesAt: number
}

/** @category models */
export interface Options {
  /** Default 1 hour. */
  readonly rotateEvery?: Duration.DurationInput | undefined
  /** How long a replaced token is still accepted. Default 5 minutes. */
  readonly grace?: Duration.DurationInput | undefined
}

const principalFor = (expiresAt: number) =>
  new TokenPrincipal({
    id: BRIDGE_PRINCIPAL_ID,
    name: "bridge",
    access: "readWrite",
    scopes: defaultScopes.readWrite,
    connections: Option.none(),
    expiresAt: Option.some(expiresAt),
    source: "bridge"
  })

const fingerprint = (token: string) => NodeCrypto.createHash("sha256").update(token, "utf8").digest()

interface Issued {
  readonly credential: BridgeCredential
  readonly digest: Buffer
}

/**
 * @category services
 */
export class BridgeToken extends Context.Tag("weaviate-mcp/BridgeToken")<BridgeToken, {
  /** The current credential: its value now, then one per rotation. */
  readonly current: SubscriptionRef.SubscriptionRef<BridgeCredential>
  /** `current.changes`: the current credential first, then each rotation. */
  readonly changes: Stream.Stream<BridgeCredential>
  /**
   * The bridge principal when `token` is the current or the previous bridge token (compared in
   * constant time), with that token's `expiresAt`; the caller checks expiry.
   */
  readonly verify: (token: string) => Effect.Effect<Option.Option<TokenPrincipal>>
  /** Replaces the token now (the previous one keeps its grace period). */
  readonly rotate: Effect.Effect<BridgeCredential>
}>() {
  static readonly make = (options: Options = {}) =>
    Effect.gen(function*() {
      const rotateEvery = Duration.toMillis(Duration.decode(options.rotateEvery ?? "1 hour"))
      const grace = Duration.toMillis(Duration.decode(options.grace ?? "5 minutes"))
      const lock = yield* Effect.makeSemaphore(1)

      const issue = (now: number): Issued => {
        const token = `wmcp_bridge_${NodeCrypto.randomBytes(32).toString("base64url")}`
        return { credential: { token, rotatesAt: now + rotateEvery, expiresAt: now + rotateEvery + grace }, digest: fingerprint(token) }
      }

      let latest = issue(yield* Clock.currentTimeMillis)
      let previous: Option.Option<Issued> = Option.none()
      const current = yield* SubscriptionRef.make(latest.credential)

      const rotateNow = Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        // A replaced token lives for the grace period from now, also when rotated early.
        const expiresAt = Math.min(latest.credential.expiresAt, now + grace)
        previous = Option.some({ ...latest, credential: { ...latest.credential, expiresAt } })
        latest = issue(now)
        yield* SubscriptionRef.set(current, latest.credential)
        return latest.credential
      })

      // Rotation follows the clock even if the background fiber has not run yet (verify calls this too).
      const rotateIfDue = lock.withPermits(1)(
        Effect.flatMap(Clock.currentTimeMillis, (now) => (now >= latest.credential.rotatesAt ? rotateNow : Effect.void))
      )

      const rotate = lock.withPermits(1)(rotateNow).pipe(Effect.withSpan("BridgeToken.rotate"))

      // Runs on every request of the bridge: untraced, like TokenStore.verify.
      const verify = Effect.fnUntraced(function*(token: string) {
        yield* rotateIfDue
        const presented = fingerprint(token)
        let match: Issued | undefined
        // Compare against every live token, so the timing does not say which one matched.
        for (const issued of [latest, ...Option.toArray(previous)]) {
          if (digestsEqual(presented, issued.digest) && match === undefined) match = issued
        }
        return match === undefined ? Option.none<TokenPrincipal>() : Option.some(principalFor(match.credential.expiresAt))
      })

      yield* Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        yield* Effect.sleep(Duration.millis(Math.max(0, latest.credential.rotatesAt - now)))
        yield* rotateIfDue
      }).pipe(Effect.forever, Effect.forkScoped)

      return BridgeToken.of({ current, changes: current.changes, verify, rotate })
    })

  /** @category layers */
  static readonly layer = (options: Options = {}) => Layer.scoped(BridgeToken, BridgeToken.make(options))
}
