/**
 * The signed `requestState` of an `input_required` result.
 *
 * A state is `base64url(claims JSON) + "." + base64url(HMAC-SHA256(secret, claims JSON))`. The claims
 * bind the principal, the method, the purpose of the question (a write approval or a first access),
 * a digest of the parameters that matter (SHA-256 of their canonical JSON), the issue time and a
 * random nonce. The secret is generated when the layer is built and never leaves the process, so a
 * restart invalidates every outstanding state.
 *
 * A state is single use (docs/design.md "Decisions" 8: a write must never run twice): `consume` records its nonce, and
 * a second `consume` of the same state is refused. Nonces are forgotten once their state has expired,
 * since an expired state is refused anyway. Every refusal is an `InvalidParams` (-32602) whose message
 * says what was wrong without revealing anything about the secret.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as NodeCrypto from "node:crypto"
import { InvalidParams } from "../Schema/McpErrors.js"

// ===== Models =====

/**
 * What a state is bound to. `params` holds only the parameters that matter (for `tools/call`: the
 * tool `name` and its `arguments`); they are digested, never stored in the state.
 *
 * @category models
 */
export interface Binding {
  readonly principalId: string
  readonly method: string
  readonly purpose: Purpose
  readonly params: unknown
}

/**
 * Why the state was issued. A state issued for one purpose is never accepted for another.
 *
 * @category models
 */
export type Purpose = "write" | "firstAccess"

/**
 * Why a state was refused.
 *
 * @category models
 */
export type Refusal =
  | "malformed"
  | "signature"
  | "purpose"
  | "principal"
  | "method"
  | "params"
  | "expired"
  | "replayed"
  | "capacity"

/**
 * A refused state. `purpose` lets a flow tell "this state belongs to another question" (which it
 * ignores) from a bad state (a protocol error).
 *
 * @category errors
 */
export class RequestStateError extends Schema.TaggedError<RequestStateError>()("RequestStateError", {
  reason: Schema.Literal("malformed", "signature", "purpose", "principal", "method", "params", "expired", "replayed", "capacity")
}) {
  override get message() {
    return messages[this.reason]
  }

  /** The protocol error the client sees. */
  toInvalidParams(): InvalidParams {
    return new InvalidParams({ message: this.message, data: { field: "requestState", reason: this.reason } })
  }
}

const messages: Record<Refusal, string> = {
  malformed: "Invalid requestState: it is not a state issued by this server",
  signature: "Invalid requestState: it has been altered or was issued by another server instance",
  purpose: "Invalid requestState: it answers another question",
  principal: "Invalid requestState: it was issued to another principal",
  method: "Invalid requestState: it was issued for another method",
  params: "Invalid requestState: the call's name or arguments changed since the approval was requested",
  expired: "Invalid requestState: it has expired (states live 5 minutes); call again without requestState",
  replayed: "Invalid requestState: it has already been used; a state is valid for one call only",
  capacity: "Invalid requestState: too many approvals in flight; call again without requestState"
}

// ===== Service =====

/**
 * Most consumed nonces remembered at once (each until its state expires, 5 minutes after issue). When
 * full, a state is refused (`capacity`: the client asks again without it); nothing is forgotten early,
 * since a forgotten nonce would let its state be spent twice. @category constants
 */
export const MAX_CONSUMED = 65_536

/**
 * @category models
 */
export declare namespace RequestState {
  export interface Options {
    /** Lifetime of a state; the contract's value is 5 minutes. */
    readonly lifetime?: Duration.DurationInput
    /** Most consumed nonces remembered at once; when full, new states are refused (fail closed). Default `MAX_CONSUMED`. */
    readonly maxConsumed?: number
    /** Fixed secret, for tests only; by default 32 random bytes. */
    readonly secret?: Uint8Array
  }

  export interface Service {
    /** Issues a state bound to `binding`. */
    readonly issue: (binding: Binding) => Effect.Effect<string>
    /**
     * Checks `state` against `binding` and marks it used: the next `consume` of the same state fails
     * with `replayed`. Checks run in a fixed order (format, signature, purpose, binding, age, replay),
     * so a state for another purpose is reported as `purpose` before anything is recorded.
     */
    readonly consume: (state: string, binding: Binding) => Effect.Effect<Claims, RequestStateError>
  }
}

/**
 * The authenticated content of a state.
 *
 * @category models
 */
export interface Claims {
  readonly purpose: Purpose
  readonly principalId: string
  readonly method: string
  readonly digest: string
  readonly issuedAt: number
  readonly nonce: string
}

/**
 * @category tags
 */
export class RequestState extends Context.Tag("weaviate-mcp/Approval/RequestState")<
  RequestState,
  RequestState.Service
>() {
  static readonly make = (options: RequestState.Options = {}) => Effect.sync(() => makeUnsafe(options))

  /** The daemon's service: a fresh random secret, 5-minute lifetime. */
  static readonly layer: Layer.Layer<RequestState> = Layer.effect(RequestState, RequestState.make())

  static readonly layerWith = (options: RequestState.Options): Layer.Layer<RequestState> =>
    Layer.effect(RequestState, RequestState.make(options))
}

// ===== Canonical digest =====

/**
 * JSON with object keys sorted at every depth, so that two equal argument objects written in a
 * different key order digest the same. `undefined` members are dropped, as `JSON.stringify` does.
 *
 * @category encoding
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== "object") {
    return JSON.stringify(value) ?? "null"
  }
  if (Array.isArray(value)) {
    // An `undefined` or function element is `null`, as in JSON.stringify: canonicalJson gives it "null".
    return `[${value.map((item) => canonicalJson(item)).join(",")}]`
  }
  const record = value as Record<string, unknown>
  const members = Object.keys(record)
    .filter((key) => record[key] !== undefined && typeof record[key] !== "function")
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`)
  return `{${members.join(",")}}`
}

/**
 * SHA-256 of the canonical JSON, base64url.
 *
 * @category encoding
 */
export const digest = (params: unknown): string =>
  NodeCrypto.createHash("sha256").update(canonicalJson(params), "utf8").digest("base64url")

// ===== Internal =====

const ClaimsJson = Schema.parseJson(
  Schema.Struct({
    v: Schema.Literal(1),
    u: Schema.Literal("write", "firstAccess"),
    p: Schema.String,
    m: Schema.String,
    d: Schema.String,
    t: Schema.Number,
    n: Schema.String
  })
)
const decodeClaims = Schema.decodeUnknownEither(ClaimsJson)

const BASE64URL = /^[A-Za-z0-9_-]+$/

const makeUnsafe = (options: RequestState.Options): RequestState.Service => {
  const secret = options.secret ?? NodeCrypto.randomBytes(32)
  const lifetimeMs = Duration.toMillis(Duration.decode(options.lifetime ?? Duration.minutes(5)))
  const maxConsumed = options.maxConsumed ?? MAX_CONSUMED
  // nonce -> time after which its state is expired and the nonce need not be remembered
  const consumed = new Map<string, number>()

  const sign = (payload: string) => NodeCrypto.createHmac("sha256", secret).update(payload, "utf8").digest()

  const prune = (now: number) => {
    // Insertion order is consumption order, not expiry order, so scan everything; the map is bounded.
    for (const [nonce, expiresAt] of consumed) {
      if (expiresAt <= now) consumed.delete(nonce)
    }
  }

  const issue = Effect.fnUntraced(function*(binding: Binding) {
    const now = yield* Clock.currentTimeMillis
    const payload = JSON.stringify({
      v: 1,
      u: binding.purpose,
      p: binding.principalId,
      m: binding.method,
      d: digest(binding.params),
      t: now,
      n: NodeCrypto.randomBytes(16).toString("base64url")
    })
    return `${Buffer.from(payload, "utf8").toString("base64url")}.${sign(payload).toString("base64url")}`
  })

  const consume = Effect.fnUntraced(function*(state: string, binding: Binding) {
    const now = yield* Clock.currentTimeMillis
    const claims = check(state, binding, now)
    if (Either.isLeft(claims)) return yield* new RequestStateError({ reason: claims.left })
    // Check-and-record in one synchronous step: two concurrent calls with the same state cannot both pass.
    const recorded = yield* Effect.sync(() => {
      if (consumed.has(claims.right.nonce)) return "replayed" as const
      if (consumed.size >= maxConsumed) prune(now)
      if (consumed.size >= maxConsumed) return "capacity" as const
      consumed.set(claims.right.nonce, claims.right.issuedAt + lifetimeMs)
      return undefined
    })
    if (recorded !== undefined) return yield* new RequestStateError({ reason: recorded })
    return claims.right
  })

  const check = (state: string, binding: Binding, now: number): Either.Either<Claims, Refusal> => {
    const parts = state.split(".")
    if (parts.length !== 2 || !BASE64URL.test(parts[0]!) || !BASE64URL.test(parts[1]!)) {
      return Either.left("malformed")
    }
    const payload = Buffer.from(parts[0]!, "base64url").toString("utf8")
    const given = Buffer.from(parts[1]!, "base64url")
    const expected = sign(payload)
    // Lengths are public (always 32 bytes); the comparison itself is constant-time.
    if (given.length !== expected.length || !NodeCrypto.timingSafeEqual(given, expected)) {
      return Either.left("signature")
    }
    const decoded = decodeClaims(payload)
    if (Either.isLeft(decoded)) return Either.left("malformed")
    const c = decoded.right
    if (c.u !== binding.purpose) return Either.left("purpose")
    if (c.p !== binding.principalId) return Either.left("principal")
    if (c.m !== binding.method) return Either.left("method")
    const d = Buffer.from(digest(binding.params), "utf8")
    const claimed = Buffer.from(c.d, "utf8")
    if (d.length !== claimed.length || !NodeCrypto.timingSafeEqual(d, claimed)) return Either.left("params")
    if (now - c.t >= lifetimeMs || c.t > now) return Either.left("expired")
    return Either.right({ purpose: c.u, principalId: c.p, method: c.m, digest: c.d, issuedAt: c.t, nonce: c.n })
  }

  return RequestState.of({ issue, consume })
}
