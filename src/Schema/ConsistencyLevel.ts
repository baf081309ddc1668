/**
 * Weaviate's consistency levels of a replicated read or write: how many replicas must answer.
 * `ONE` one replica, `QUORUM` a majority (`floor(factor / 2) + 1`), `ALL` every replica. Weaviate
 * takes it as the `consistency_level` query parameter on object routes and as the `consistencyLevel`
 * argument of a GraphQL `Get`; without one, Weaviate's own default applies (`QUORUM`).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** @category schemas */
export const ConsistencyLevel = Schema.Literal("ONE", "QUORUM", "ALL")
export type ConsistencyLevel = typeof ConsistencyLevel.Type

/** The query parameters of an object route (none without a level). @category combinators */
export const query = (level: ConsistencyLevel | undefined): Readonly<Record<string, string>> =>
  level === undefined ? {} : { consistency_level: level }

/** The argument of a GraphQL `Get` (an enum, unquoted), or undefined without a level. @category combinators */
export const graphqlArgument = (level: ConsistencyLevel | undefined): string | undefined =>
  level === undefined ? undefined : `consistencyLevel: ${level}`

/** The level a call uses: its own, else the connection's default, else none (Weaviate's default). @category combinators */
export const effective = (
  requested: ConsistencyLevel | undefined,
  connection: { readonly consistencyLevel?: ConsistencyLevel | undefined }
): ConsistencyLevel | undefined => requested ?? connection.consistencyLevel

/**
 * Whether a collection's `Get` takes `consistencyLevel`: Weaviate declares the argument only for a
 * replication factor above 1 (adapters/handlers/graphql/local/get/replication.go), and refuses it as an
 * unknown argument otherwise. A level is then simply not sent: one replica is all there is.
 *
 * @category combinators
 */
export const replicated = (raw: Readonly<Record<string, unknown>>): boolean => {
  const config = raw["replicationConfig"]
  const factor = typeof config === "object" && config !== null ? (config as Record<string, unknown>)["factor"] : undefined
  return typeof factor === "number" && factor > 1
}
