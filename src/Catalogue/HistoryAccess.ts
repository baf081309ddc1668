/**
 * What of the query history a principal may read, shared by the tool `search_query_history`, the
 * history resource and the history prompt: the `history:read` scope, then only the connections it
 * can see (its allowlist, not blocked) and, on a connection where its token is tenant-scoped, only
 * the entries that name one of its tenants.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Principal from "../Auth/Principal.ts"
import type { ConnectionStore } from "../Driver/ConnectionStore.ts"
import type { Visibility } from "../History/HistoryQuery.ts"

/**
 * The history `principal` may read: fails with `Forbidden` (-33007) without `history:read`.
 *
 * @category combinators
 */
export const visibility = Effect.fnUntraced(function*(store: ConnectionStore["Type"], principal: Principal.Principal) {
  yield* Principal.requireScopes(principal, ["history:read"])
  const connections = yield* Effect.orElseSucceed(store.list, () => [])
  const visible: Visibility = {
    connections: connections.filter((c) => Principal.canSeeConnection(principal, c)).map((c) => c.id),
    ...(principal._tag === "TokenPrincipal" && principal.tenants !== undefined ? { tenants: principal.tenants } : {})
  }
  return visible
})

/**
 * The history of one connection that `principal` may read: the connection resolved by id or name, and
 * refused (-33007) outside its allowlist or when blocked.
 *
 * @category combinators
 */
export const onConnection = Effect.fnUntraced(function*(store: ConnectionStore["Type"], principal: Principal.Principal, idOrName: string) {
  const base = yield* visibility(store, principal)
  const connection = yield* store.get(idOrName)
  yield* Principal.requireConnection(principal, connection, "read")
  return { connection, visibility: base }
})
