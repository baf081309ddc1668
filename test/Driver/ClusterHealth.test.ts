/** The cluster health rules (src/Driver/Cluster.ts), on the shapes real Weaviate 1.39 answers with. */
import { describe, expect, it } from "vitest"
import * as Cluster from "../../src/Driver/Cluster.ts"

const node = (name: string, status = "HEALTHY", shards?: Array<{ name: string; numberOfReplicas: number }>): Cluster.Node => ({
  name,
  status,
  version: "1.39.0",
  ...(shards !== undefined ? { shards: shards.map((s) => ({ collection: "Rep", objectCount: 0, ...s })) } : {})
})
const members = ["node1", "node2", "node3"]

describe("cluster health", () => {
  it("healthy: every node HEALTHY and every Raft member listed", () => {
    const s = Cluster.assess([node("node1"), node("node2"), node("node3")], members)
    expect(s.health).toBe("healthy")
    expect(Cluster.summary(s)).toBe("healthy: 3 nodes (node1, node2, node3)")
  })
  it("degraded names a node Weaviate lists as UNAVAILABLE (while it is still detecting the failure)", () => {
    const s = Cluster.assess([node("node1"), node("node2"), node("node3", "UNAVAILABLE")], members)
    expect(s.health).toBe("degraded")
    expect(Cluster.troubled(s)).toEqual(["node3"])
    expect(Cluster.summary(s)).toContain("node3 is UNAVAILABLE")
  })
  it("degraded names a Raft member missing from /v1/nodes (after Weaviate dropped the dead node)", () => {
    const s = Cluster.assess([node("node1"), node("node2")], members)
    expect(s.health).toBe("degraded")
    expect(Cluster.troubled(s)).toEqual(["node3"])
    expect(Cluster.summary(s)).toContain("node3 is a Raft member but not among the nodes Weaviate lists")
  })
  it("degraded from the shard placement when the Raft members are unknown", () => {
    const shards = [{ name: "s1", numberOfReplicas: 3 }]
    const s = Cluster.assess([node("node1", "HEALTHY", shards), node("node2", "HEALTHY", shards)], undefined)
    expect(s.health).toBe("degraded")
    expect(Cluster.summary(s)).toContain("shard Rep/s1 has 2 of its 3 replicas")
  })
  it("unavailable when no node is healthy", () => {
    expect(Cluster.assess([node("node1", "UNAVAILABLE")], ["node1"]).health).toBe("unavailable")
  })
  it("a single node is one node, healthy", () => {
    const s = Cluster.assess([node("node1")], ["node1"])
    expect(s.health).toBe("healthy")
    expect(Cluster.summary(s)).toBe("healthy: 1 node (node1)")
  })
})
