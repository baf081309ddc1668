/**
 * The nodes of a Weaviate cluster and its health, as Weaviate reports them:
 *  - `GET /v1/nodes` lists the nodes the cluster's membership currently knows, each `HEALTHY`,
 *    `UNHEALTHY`, `UNAVAILABLE` or `TIMEOUT` (with `?output=verbose`: its shards and object counts);
 *  - `GET /v1/cluster/statistics` gives the Raft configuration: the nodes the cluster expects.
 * A node Weaviate has noticed is dead drops out of `/v1/nodes` (about 20 s after it died, with 1.39's
 * defaults); before that it is listed `UNAVAILABLE`. Either way it is named here: missing against the
 * Raft members, or unhealthy.
 *
 * Health:
 * | health | when |
 * |---|---|
 * | `healthy` | every node `HEALTHY` and every Raft member listed |
 * | `degraded` | at least one node is healthy, and some node is not, or is missing against the Raft members or the shard placement |
 * | `unavailable` | no node is healthy, or `/v1/nodes` itself failed (refused, timed out) |
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { type AuthenticationFailed, ClusterDegraded, ConsistencyNotReached, type PermissionDenied } from "./DriverError.ts"
import type * as WeaviateHttp from "./WeaviateHttp.ts"

// ===== Models =====

/** @category models */
export type Health = "healthy" | "degraded" | "unavailable"

/** One shard of a node (`?output=verbose`). @category models */
export interface NodeShard {
  readonly collection: string
  readonly name: string
  readonly objectCount: number
  readonly vectorIndexingStatus?: string
  readonly loaded?: boolean
  /** the replicas Weaviate placed this shard on (sharding state), when it says */
  readonly numberOfReplicas?: number
  readonly replicationFactor?: number
}

/** @category models */
export interface Node {
  readonly name: string
  /** `HEALTHY`, `UNHEALTHY`, `UNAVAILABLE`, `TIMEOUT` */
  readonly status: string
  readonly version?: string
  readonly shardCount?: number
  readonly objectCount?: number
  readonly shards?: ReadonlyArray<NodeShard>
}

/** Why the cluster is not healthy, one node at a time. @category models */
export interface Problem {
  readonly node: string
  readonly reason: "unhealthy" | "missing"
  readonly detail: string
}

/** @category models */
export interface Status {
  readonly health: Health
  readonly nodes: ReadonlyArray<Node>
  /** the Raft members (`/v1/cluster/statistics`), when Weaviate said */
  readonly members?: ReadonlyArray<string>
  readonly problems: ReadonlyArray<Problem>
  /** why `/v1/nodes` could not be read (`unavailable` only) */
  readonly error?: string
}

// ===== Requests =====

/** How long the status requests may take: a degraded cluster must not hold the status itself. @category constants */
export const STATUS_TIMEOUT_MS = 5_000

const record = (u: unknown): Record<string, unknown> => (typeof u === "object" && u !== null && !Array.isArray(u) ? u as Record<string, unknown> : {})

const parseNode = (raw: unknown, verbose: boolean): Node => {
  const n = record(raw)
  const stats = record(n["stats"])
  const shards = Array.isArray(n["shards"]) ? n["shards"].map(record) : undefined
  return {
    name: String(n["name"] ?? "?"),
    status: typeof n["status"] === "string" ? n["status"] : "UNKNOWN",
    ...(typeof n["version"] === "string" ? { version: n["version"] } : {}),
    ...(verbose && typeof stats["shardCount"] === "number" ? { shardCount: stats["shardCount"] } : {}),
    ...(verbose && typeof stats["objectCount"] === "number" ? { objectCount: stats["objectCount"] } : {}),
    ...(verbose && shards !== undefined
      ? {
        shards: shards.map((s): NodeShard => ({
          collection: String(s["class"] ?? ""),
          name: String(s["name"] ?? ""),
          objectCount: typeof s["objectCount"] === "number" ? s["objectCount"] : 0,
          ...(typeof s["vectorIndexingStatus"] === "string" ? { vectorIndexingStatus: s["vectorIndexingStatus"] } : {}),
          ...(typeof s["loaded"] === "boolean" ? { loaded: s["loaded"] } : {}),
          ...(typeof s["numberOfReplicas"] === "number" ? { numberOfReplicas: s["numberOfReplicas"] } : {}),
          ...(typeof s["replicationFactor"] === "number" ? { replicationFactor: s["replicationFactor"] } : {})
        }))
      }
      : {})
  }
}

/**
 * `GET /v1/nodes` (`/v1/nodes/{collection}` for one collection), verbose when shard and object counts
 * are wanted.
 *
 * @category requests
 */
export const nodes = Effect.fn("Cluster.nodes")(function*(
  http: WeaviateHttp.WeaviateHttp,
  options: { readonly verbose?: boolean; readonly collection?: string; readonly timeoutMs?: number } = {}
) {
  const verbose = options.verbose === true
  const response = yield* http.requestOk({
    method: "GET",
    path: options.collection === undefined ? "/v1/nodes" : `/v1/nodes/${encodeURIComponent(options.collection)}`,
    ...(verbose ? { query: { output: "verbose" } } : {}),
    timeoutMs: options.timeoutMs ?? STATUS_TIMEOUT_MS
  })
  const list = record(response.json)["nodes"]
  return (Array.isArray(list) ? list : []).map((n) => parseNode(n, verbose))
})

/**
 * The Raft members from `GET /v1/cluster/statistics`, or undefined when Weaviate does not say (an
 * older server, a key without the permission, a node that cannot answer in time).
 *
 * @category requests
 */
export const members = (http: WeaviateHttp.WeaviateHttp): Effect.Effect<ReadonlyArray<string> | undefined, AuthenticationFailed> =>
  http.request({ method: "GET", path: "/v1/cluster/statistics", timeoutMs: STATUS_TIMEOUT_MS }).pipe(
    // A user without `read_cluster` (RBAC): the members are not known, the nodes still are.
    Effect.catchTag("PermissionDenied", () => Effect.succeed({ status: 403, contentType: undefined, text: "", json: undefined })),
    Effect.map((response) => {
      if (response.status !== 200) return undefined
      const names = new Set<string>()
      const statistics = record(response.json)["statistics"]
      for (const s of Array.isArray(statistics) ? statistics.map(record) : []) {
        const configuration = record(s["raft"])["latestConfiguration"]
        for (const member of Array.isArray(configuration) ? configuration.map(record) : []) {
          if (typeof member["id"] === "string") names.add(member["id"])
        }
        if (typeof s["name"] === "string") names.add(s["name"])
      }
      return names.size === 0 ? undefined : [...names].sort()
    }),
    Effect.catchTag("ConnectionFailed", () => Effect.succeed(undefined))
  )

// ===== Health =====

/**
 * The health of a cluster from its nodes, its Raft members and (verbose) its shard placement: a shard
 * whose replicas are fewer on the listed nodes than Weaviate placed is missing some node.
 *
 * @category combinators
 */
export const assess = (listed: ReadonlyArray<Node>, expected: ReadonlyArray<string> | undefined): Omit<Status, "error"> => {
  const problems: Array<Problem> = []
  for (const node of listed) {
    if (node.status !== "HEALTHY") problems.push({ node: node.name, reason: "unhealthy", detail: `${node.name} is ${node.status}` })
  }
  const names = new Set(listed.map((n) => n.name))
  for (const member of expected ?? []) {
    if (!names.has(member)) {
      problems.push({ node: member, reason: "missing", detail: `${member} is a Raft member but not among the nodes Weaviate lists (down or unreachable)` })
    }
  }
  if (problems.length === 0) {
    // Without the Raft members (no permission), the shard placement still shows a missing replica.
    const holders = new Map<string, { placed: number; seen: number }>()
    for (const node of listed) {
      for (const shard of node.shards ?? []) {
        const key = `${shard.collection}/${shard.name}`
        const entry = holders.get(key) ?? { placed: shard.numberOfReplicas ?? 0, seen: 0 }
        entry.seen++
        holders.set(key, entry)
      }
    }
    for (const [shard, { placed, seen }] of holders) {
      if (seen < placed) problems.push({ node: "?", reason: "missing", detail: `shard ${shard} has ${seen} of its ${placed} replicas on the listed nodes` })
    }
  }
  const healthy = listed.filter((n) => n.status === "HEALTHY").length
  const health: Health = healthy === 0 ? "unavailable" : problems.length > 0 ? "degraded" : "healthy"
  return { health, nodes: listed, ...(expected !== undefined ? { members: expected } : {}), problems }
}

/**
 * The cluster's status. Only an authentication failure, or a user without the permission to read
 * the nodes (RBAC `read_nodes`), fails: a cluster that cannot say is
 * `unavailable`, with why.
 *
 * @category requests
 */
export const status = Effect.fn("Cluster.status")(function*(
  http: WeaviateHttp.WeaviateHttp,
  options: { readonly verbose?: boolean } = {}
) {
  const [listed, expected] = yield* Effect.all([Effect.either(nodes(http, options)), members(http)], { concurrency: 2 })
  if (listed._tag === "Left") {
    const error = listed.left
    if (error._tag === "AuthenticationFailed" || error._tag === "PermissionDenied") return yield* (error as AuthenticationFailed | PermissionDenied)
    return { health: "unavailable", nodes: [], problems: [], error: error.message } satisfies Status as Status
  }
  return assess(listed.right, expected) as Status
})

/**
 * The status of a cluster whose nodes the connection's user may not read (RBAC `read_nodes`):
 * `unavailable`, saying why, rather than failing what shows it (a connection's status, its meta).
 *
 * @category combinators
 */
export const unknownWhenDenied = <E extends { readonly _tag: string }, R>(self: Effect.Effect<Status, E, R>) =>
  Effect.catchIf(
    self,
    (error): error is Extract<E, PermissionDenied> => error._tag === "PermissionDenied",
    (denied) => Effect.succeed<Status>({ health: "unavailable", nodes: [], problems: [], error: (denied as PermissionDenied).message })
  )

/** The nodes that are not healthy or missing, by name (`?` for a replica whose node Weaviate no longer lists). @category combinators */
export const troubled = (s: Pick<Status, "problems">): ReadonlyArray<string> => [...new Set(s.problems.map((p) => p.node).filter((n) => n !== "?"))]

/**
 * One line: `healthy: 3 nodes (node1, node2, node3)`, `degraded: node3 is UNAVAILABLE; …`.
 *
 * @category combinators
 */
export const summary = (s: Status): string => {
  if (s.error !== undefined) return `unavailable: ${s.error}`
  const names = s.nodes.map((n) => n.name).join(", ")
  const count = `${s.nodes.length} node${s.nodes.length === 1 ? "" : "s"}`
  if (s.problems.length === 0) return `${s.health}: ${count} (${names})`
  return `${s.health}: ${s.problems.map((p) => p.detail).join("; ")} (listed: ${count}${names === "" ? "" : `, ${names}`})`
}

// ===== Collections =====

/** A collection's replication settings (`replicationConfig`). @category models */
export interface Replication {
  readonly factor: number
  readonly asyncEnabled: boolean
  readonly deletionStrategy: string
}

/** One shard of a collection: its status, and the nodes that hold a replica of it now. @category models */
export interface ShardPlacement {
  readonly name: string
  /** `READY`, `READONLY`, `INDEXING`, … (`GET /v1/schema/{class}/shards`) */
  readonly status: string
  readonly nodes: ReadonlyArray<string>
  /** how many replicas Weaviate placed, when the verbose nodes say */
  readonly replicas?: number
  readonly objectCount?: number
}

/** @category models */
export interface Placement {
  readonly replication: Replication
  readonly sharding: { readonly desiredCount: number; readonly actualCount: number }
  /** absent for a multi-tenant collection (its shards are its tenants) */
  readonly shards?: ReadonlyArray<ShardPlacement>
}

const numberOr = (u: unknown, fallback: number) => (typeof u === "number" ? u : fallback)

/**
 * The shards of a collection with their status (`GET /v1/schema/{class}/shards`).
 *
 * @category requests
 */
export const shards = (http: WeaviateHttp.WeaviateHttp, collection: string) =>
  Effect.map(
    // A schema read like any other: bounded by the schema time-out.
    http.requestOk({ method: "GET", path: `/v1/schema/${encodeURIComponent(collection)}/shards` }),
    (response) =>
      (Array.isArray(response.json) ? response.json.map(record) : []).map((s) => ({
        name: String(s["name"] ?? ""),
        status: typeof s["status"] === "string" ? s["status"] : "UNKNOWN"
      }))
  )

/**
 * Replication, sharding and each shard's nodes and readiness of a collection (its class as the schema
 * returned it): the shards route for readiness, the verbose nodes of the collection for who holds what.
 * Without the permission to read them (RBAC `read_tenants`, `read_nodes`), only the settings.
 *
 * @category requests
 */
export const placement = Effect.fn("Cluster.placement")(function*(
  http: WeaviateHttp.WeaviateHttp,
  collection: { readonly name: string; readonly multiTenancy: boolean; readonly raw: Record<string, unknown> }
) {
  const replicationConfig = record(collection.raw["replicationConfig"])
  const shardingConfig = record(collection.raw["shardingConfig"])
  const base = {
    replication: {
      factor: numberOr(replicationConfig["factor"], 1),
      asyncEnabled: replicationConfig["asyncEnabled"] === true,
      deletionStrategy: typeof replicationConfig["deletionStrategy"] === "string" ? replicationConfig["deletionStrategy"] : "NoAutomatedResolution"
    },
    sharding: { desiredCount: numberOr(shardingConfig["desiredCount"], 1), actualCount: numberOr(shardingConfig["actualCount"], 1) }
  }
  if (collection.multiTenancy) return base satisfies Placement as Placement
  const read = yield* Effect.all([shards(http, collection.name), nodes(http, { verbose: true, collection: collection.name })], {
    concurrency: 2
  }).pipe(
    // A user whose roles do not let it read the shards or the nodes (RBAC) still gets the collection's settings.
    Effect.catchTag("PermissionDenied", () => Effect.succeed(undefined))
  )
  if (read === undefined) return base satisfies Placement as Placement
  const [listed, held] = read
  const placed = listed.map((shard): ShardPlacement => {
    const holders = held.filter((n) => n.status === "HEALTHY" && (n.shards ?? []).some((s) => s.name === shard.name))
    const copies = held.flatMap((n) => (n.shards ?? []).filter((s) => s.name === shard.name))
    const replicas = copies.find((s) => s.numberOfReplicas !== undefined)?.numberOfReplicas
    return {
      ...shard,
      nodes: holders.map((n) => n.name),
      ...(replicas !== undefined ? { replicas } : {}),
      ...(copies.length > 0 ? { objectCount: Math.max(...copies.map((s) => s.objectCount)) } : {})
    }
  })
  return { ...base, shards: placed } satisfies Placement as Placement
})

// ===== Failures on a degraded cluster =====

const CONSISTENCY = /cannot achieve consistency level\s*"?(ONE|QUORUM|ALL)?"?|cannot reach enough replicas/i

const CLOSED_OR_TIMED_OUT = new Set(["TIMEOUT", "UND_ERR_SOCKET", "ECONNRESET", "EPIPE"])

/**
 * Explains a failed request with the cluster's state: Weaviate's consistency failure becomes
 * `ConsistencyNotReached` naming the level and the nodes that are down; a time-out or a closed
 * connection while the cluster is degraded becomes `ClusterDegraded` naming the node. The daemon asks
 * `/v1/nodes` only when a request failed this way; other failures pass unchanged.
 *
 * @category combinators
 */
export const explain = (http: WeaviateHttp.WeaviateHttp, options: { readonly write: boolean; readonly level?: string | undefined }) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | ConsistencyNotReached | ClusterDegraded, R> =>
  Effect.catchIf(
    effect,
    (error): error is E => explainable(error),
    (error): Effect.Effect<never, E | ConsistencyNotReached | ClusterDegraded> => {
      const e = error as { _tag: string; detail?: string; reason?: string; code?: string }
      // The status of a cluster in trouble must not fail the explanation: no status, no names.
      const state = Effect.orElseSucceed(status(http), () => undefined)
      if (e._tag === "DatabaseRefused") {
        const match = CONSISTENCY.exec(e.detail ?? "")!
        return Effect.flatMap(state, (s) =>
          Effect.fail(
            new ConsistencyNotReached({
              level: match[1] ?? options.level ?? "QUORUM",
              write: options.write,
              nodes: s === undefined ? [] : troubled(s),
              detail: e.detail ?? ""
            })
          ))
      }
      return Effect.flatMap(state, (s): Effect.Effect<never, E | ClusterDegraded> =>
        // Only a cluster some of whose nodes answer is degraded; a server that is gone keeps its own error.
        s === undefined || s.health !== "degraded"
          ? Effect.fail(error)
          : Effect.fail(
            new ClusterDegraded({
              nodes: troubled(s).length > 0 ? troubled(s) : ["an unnamed node"],
              status: summary(s),
              reason: e.reason ?? "",
              ...(e.code !== undefined ? { code: e.code } : {})
            })
          ))
    }
  )

const explainable = (error: unknown): boolean => {
  const e = error as { _tag?: unknown; detail?: unknown; code?: unknown }
  if (e._tag === "DatabaseRefused") return typeof e.detail === "string" && CONSISTENCY.test(e.detail)
  return e._tag === "ConnectionFailed" && typeof e.code === "string" && CLOSED_OR_TIMED_OUT.has(e.code)
}
