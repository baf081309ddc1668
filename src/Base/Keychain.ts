/**
 * The OS keychain, through `@napi-rs/keyring` (a maintained binding of the Rust `keyring` crate):
 * macOS Keychain, Windows Credential Manager, the Secret Service on Linux (GNOME Keyring, KWallet).
 * On Linux the Secret Service is required: the kernel keyring, the crate's fallback there, forgets
 * everything at reboot, so it is no place to keep a connection's key.
 *
 * Where no keychain answers (a headless server, a locked keyring that would wait for a person,
 * `WEAVIATE_MCP_KEYCHAIN=off`) every call says so quickly and the caller keeps the secret in its 0600
 * file instead. Each call is bounded (`CALL_TIMEOUT_MS`): an unlock prompt nobody answers must not
 * hold a command.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

/** The service name entries are stored under. @category constants */
export const SERVICE = "weaviate-mcp"

/** How long one keychain call may take before the keychain counts as not answering. @category constants */
export const CALL_TIMEOUT_MS = 5_000

/** Whether a keychain answers here, and if not why. @category models */
export type Availability = { readonly available: true } | { readonly available: false; readonly reason: string }

/** @category models */
export interface Service {
  /** Whether secrets can be kept in the keychain here (a write, read and delete of a probe entry; asked once). */
  readonly availability: Effect.Effect<Availability>
  /** Keeps a secret; `false` when no keychain answers (then keep it elsewhere). */
  readonly set: (account: string, secret: string) => Effect.Effect<boolean>
  /** The secret, or `undefined` when it is not there or no keychain answers. */
  readonly get: (account: string) => Effect.Effect<string | undefined>
  /** Removes a secret (nothing when it is not there). */
  readonly remove: (account: string) => Effect.Effect<void>
}

const unavailable = (reason: string): Service => ({
  availability: Effect.succeed({ available: false, reason }),
  set: () => Effect.succeed(false),
  get: () => Effect.succeed(undefined),
  remove: () => Effect.void
})

type Keyring = typeof import("@napi-rs/keyring")

const reasonOf = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause)).split("\n")[0]!

/**
 * The keychain of this machine (`@napi-rs/keyring`, loaded on first use).
 *
 * @category constructors
 */
export const make = (env: NodeJS.ProcessEnv = process.env): Service => {
  if (env["WEAVIATE_MCP_KEYCHAIN"] === "off") return unavailable("turned off (WEAVIATE_MCP_KEYCHAIN=off)")
  let keyring: Promise<Keyring> | undefined
  const entry = async (account: string) => {
    const { AsyncEntry } = await (keyring ??= import("@napi-rs/keyring"))
    // Linux: the Secret Service only (see the module comment).
    return new AsyncEntry(SERVICE, account, { linux: { store: "secret-service" } })
  }
  const call = <A>(run: (signal: AbortSignal) => Promise<A>) =>
    Effect.tryPromise({ try: (signal) => run(signal), catch: reasonOf }).pipe(
      Effect.timeoutFail({ duration: CALL_TIMEOUT_MS, onTimeout: () => `no answer within ${CALL_TIMEOUT_MS / 1000} s (a locked keyring waiting for a person?)` })
    )
  let probed: Availability | undefined
  const availability = Effect.suspend(() => {
    if (probed !== undefined) return Effect.succeed(probed)
    const probe = `probe-${process.pid}-${Date.now()}`
    return call(async (signal) => {
      const e = await entry(probe)
      await e.setPassword("probe", signal)
      const back = await e.getPassword(signal)
      await e.deletePassword(signal)
      if (back !== "probe") throw new Error("the keychain did not give back what was stored")
    }).pipe(
      Effect.match({ onSuccess: (): Availability => ({ available: true }), onFailure: (reason): Availability => ({ available: false, reason }) }),
      Effect.tap((a) => Effect.sync(() => void (probed = a)))
    )
  })
  return {
    availability,
    set: (account, secret) =>
      Effect.flatMap(availability, (a) =>
        a.available ? Effect.orElseSucceed(Effect.as(call(async (signal) => (await entry(account)).setPassword(secret, signal)), true), () => false) : Effect.succeed(false)),
    get: (account) => Effect.orElseSucceed(call(async (signal) => (await (await entry(account)).getPassword(signal)) ?? undefined), () => undefined),
    remove: (account) => Effect.ignore(call(async (signal) => (await entry(account)).deletePassword(signal)))
  }
}

/**
 * The keychain used by the connection store: this machine's by default; tests give another.
 *
 * @category services
 */
export class Keychain extends Context.Reference<Keychain>()("weaviate-mcp/Keychain", { defaultValue: () => make() }) {}

/** The account of one secret of one connection. @category constructors */
export const accountOf = (connectionId: string, field: string) => `connection/${connectionId}/${field}`
