/**
 * The contract's cache table: which results carry `ttlMs` and `cacheScope` (modern era only).
 * `public` answers do not depend on the token; `private` ones do. No other method carries a hint,
 * and a call that carries `inputResponses` or `requestState` is never cached.
 *
 * @since 0.1.0
 */

/** @category models */
export interface CacheHint {
  readonly ttlMs: number
  readonly cacheScope: "public" | "private"
}

/**
 * The fixed hints; `resources/read` takes the catalogue's lifetime of the URI (see `forRead`).
 *
 * @category constants
 */
export const table: Readonly<Record<string, CacheHint>> = {
  "server/discover": { ttlMs: 3_600_000, cacheScope: "public" },
  "prompts/list": { ttlMs: 3_600_000, cacheScope: "public" },
  "resources/templates/list": { ttlMs: 3_600_000, cacheScope: "public" },
  "tools/list": { ttlMs: 300_000, cacheScope: "private" },
  "resources/list": { ttlMs: 30_000, cacheScope: "private" }
}

/** `resources/read` TTLs lie between these. @category constants */
export const READ_TTL_MIN_MS = 5_000
/** @category constants */
export const READ_TTL_MAX_MS = 300_000

/** "Do not cache": the schema requires the members on `resources/read`, so a continued read says 0. @category constants */
export const noCache: CacheHint = { ttlMs: 0, cacheScope: "private" }

/**
 * The hint of a `resources/read`: the URI's lifetime, clamped to the contract's range; none (0) for a
 * continued call.
 *
 * @category constructors
 */
export const forRead = (ttlMs: number, continued: boolean): CacheHint =>
  continued ? noCache : { ttlMs: Math.min(READ_TTL_MAX_MS, Math.max(READ_TTL_MIN_MS, Math.round(ttlMs))), cacheScope: "private" }

/** Members a handler must never set itself: the core owns them. @category constants */
export const ENVELOPE_MEMBERS: ReadonlyArray<string> = ["ttlMs", "cacheScope", "resultType"]
