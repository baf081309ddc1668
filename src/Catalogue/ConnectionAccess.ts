/**
 * What the catalogue checks before it touches a connection. Tools go through
 * `Tools/ConnectionGate` (tool errors); resources, prompts and completions through this service
 * (protocol errors). Both ask first access with the same request (`checkFirstAccess`), in this order:
 * the connection exists (else `InvalidParams`, the contract's "not found"); the principal may read
 * it — allowlist and AI policy (else `Forbidden` -33007); and, for `resources/read` and
 * `prompts/get`, first access (which may ask the user: `input_required` or the dialog).
 *
 * Listings (`resources/list`, `completion/complete`) skip first access: they cannot answer
 * `input_required`, and they only show names. They do hide every connection the principal may not
 * see.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { FirstAccess } from "../Approval/FirstAccess.ts"
import { ConnectionStore } from "../Driver/ConnectionStore.ts"
import * as Redaction from "../Base/Redaction.ts"
import type { Connection } from "../Schema/Connection.ts"
import { Forbidden, InternalError, InvalidParams, type McpError, RequestTimeout } from "../Schema/McpErrors.ts"
import { complete, type Outcome, RequestContext } from "../Mcp/Catalogue.ts"
import { allowedTenants, canSeeConnection, CurrentPrincipal, requireConnection, toFirstAccessPrincipal } from "../Auth/Principal.ts"
import { TenantScope } from "../Driver/Tenants.ts"

// ===== Errors =====

/**
 * A driver or store failure as a protocol error: what names something that does not exist is
 * `InvalidParams`; the rest (database unreachable, refused, store unreadable) is `InternalError`
 * with the driver's message, redacted.
 *
 * @category errors
 */
export const toMcpError = (error: { readonly _tag: string; readonly message: string }): McpError => {
  const message = Redaction.global.redact(error.message)
  switch (error._tag) {
    case "ConnectionNotFound":
    case "CollectionNotFound":
    case "TenantRefused":
      return new InvalidParams({ message })
    case "TenantForbidden":
      return new Forbidden({ message })
    case "ConnectionFailed":
    case "ClusterDegraded":
      // A database that got no answer in time (the driver's default time-outs): -33003.
      return (error as { readonly code?: string }).code === "TIMEOUT" ? new RequestTimeout({ message }) : new InternalError({ message })
    default:
      return new InternalError({ message })
  }
}

// ===== Tenants =====

/**
 * Runs `effect` with the tenant scope of the current principal (`Tenants.TenantScope`): a
 * tenant-scoped token sees, and may name, only its tenants.
 *
 * @category combinators
 */
export const withTenantScope = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R | CurrentPrincipal> =>
  Effect.flatMap(CurrentPrincipal, (principal) => Effect.provideService(effect, TenantScope, tenantScopeOf(principal)))

/**
 * The tenant scope of a principal, for callers that provide it with other services at once (every
 * service provided copies the fiber's context).
 *
 * @category constructors
 */
export const tenantScopeOf = (principal: CurrentPrincipal["Type"]): TenantScope["Type"] => ({
  allowed: (connectionId, collection) => allowedTenants(principal, connectionId, collection)
})

// ===== First access =====

/**
 * Who asks, as the approval dialogs and forms name it. `elicitation` is true only for a modern
 * request whose capabilities declare it: `input_required` exists only in the modern era, so a
 * legacy client is always asked on the dialog.
 *
 * @category accessors
 */
export const asker = Effect.map(RequestContext, (context) => ({
  name: Option.match(context.clientInfo, { onNone: () => "", onSome: (info) => info.title ?? info.name }),
  elicitation: context.era === "modern" && Object.hasOwn(context.clientCapabilities, "elicitation")
}))

/**
 * Asks first access for the current principal, client and request; `params` are what the
 * `requestState` is bound to.
 *
 * @category combinators
 */
export const checkFirstAccess = Effect.fnUntraced(function*(
  firstAccess: FirstAccess["Type"],
  connection: Connection,
  params: unknown
) {
  const principal = yield* CurrentPrincipal
  const request = yield* RequestContext
  return yield* firstAccess.check({
    principal: toFirstAccessPrincipal(principal),
    client: yield* asker,
    connection: { id: connection.id, name: connection.name },
    method: request.method,
    params,
    requestState: Option.getOrUndefined(request.requestState),
    inputResponses: Option.getOrUndefined(request.inputResponses)
  })
})

// ===== Service =====

/** @category models */
export interface ConnectionAccess {
  /** The connections the current principal may see (allowlist, AI policy not blocked), in store order. */
  readonly visible: Effect.Effect<ReadonlyArray<Connection>, McpError, CurrentPrincipal>
  /**
   * A connection named by id (`byName`: or by name) that the principal may read: unknown →
   * `InvalidParams`, forbidden → `Forbidden`.
   */
  readonly readable: (
    idOrName: string,
    options?: { readonly byName?: boolean }
  ) => Effect.Effect<Connection, McpError, CurrentPrincipal>
  /** First access for the current principal and client; `params` are bound into the `requestState`. */
  readonly firstAccess: (
    connection: Connection,
    params: unknown
  ) => Effect.Effect<Outcome<void>, McpError, RequestContext | CurrentPrincipal>
}

/** @category constructors */
export const make: Effect.Effect<ConnectionAccess, never, ConnectionStore | FirstAccess> = Effect.gen(function*() {
  const store = yield* ConnectionStore
  const gate = yield* FirstAccess

  const all = Effect.mapError(store.list, toMcpError)

  const visible = Effect.gen(function*() {
    const principal = yield* CurrentPrincipal
    return (yield* all).filter((connection) => canSeeConnection(principal, connection))
  })

  const readable = Effect.fnUntraced(function*(idOrName: string, options?: { readonly byName?: boolean }) {
    const principal = yield* CurrentPrincipal
    const connections = yield* all
    const connection = connections.find((c) => c.id === idOrName) ??
      (options?.byName === true ? connections.find((c) => c.name === idOrName) : undefined)
    if (connection === undefined) {
      return yield* new InvalidParams({
        message: `Unknown connection ${JSON.stringify(idOrName)}`,
        data: { connectionId: idOrName }
      })
    }
    yield* requireConnection(principal, connection, "read")
    return connection
  })

  const firstAccess = Effect.fnUntraced(function*(connection: Connection, params: unknown) {
    const outcome = yield* checkFirstAccess(gate, connection, params)
    return outcome._tag === "Granted" ? complete<void>(undefined) : outcome
  })

  return { visible, readable, firstAccess }
})
