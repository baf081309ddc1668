/**
 * Against a real 3-node Weaviate cluster in a network namespace of its own (test/weaviate/Cluster.ts):
 * the cluster runner itself, cluster status, collections' replication and sharding, consistency
 * levels, and a node going down (SIGKILL) and coming back. The cases run in order on one cluster;
 * it stops after this file. Skipped, saying why, where no namespace can be made (not root).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as http from "node:http"
import * as os from "node:os"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BIN } from "../support/Cli.ts"
import { type Cluster, clusterUnavailable, startCluster, waitForNodes } from "../weaviate/Cluster.ts"

const why = clusterUnavailable()
if (why !== undefined) process.stderr.write(`SKIPPED the cluster tests (test/Driver/Cluster.test.ts): ${why}\n`)

const NODE1 = 8080

let cluster: Cluster
let probe: { pid: number; socket: string } | undefined
/** the probe's connection to node1, and a CLI home holding the same connection */
let connectionId: string
let home: string

/** A tool call through the probe inside the namespace. */
const callTool = (tool: string, args: Record<string, unknown>) => probeRequest("/call", { tool, args })

const probeRequest = (route: string, body?: unknown) =>
  new Promise<any>((resolve, reject) => {
    const req = http.request({ socketPath: probe!.socket, path: route, method: body === undefined ? "GET" : "POST" })
    req.on("response", (res) => {
      let text = ""
      res.on("data", (d) => (text += d))
      res.on("end", () => resolve(JSON.parse(text)))
    })
    req.on("error", reject)
    req.end(body === undefined ? undefined : JSON.stringify(body))
  })

describe.skipIf(why !== undefined)("a real 3-node cluster", () => {
  beforeAll(async () => {
    cluster = await startCluster(3)
    const socket = path.join(os.tmpdir(), `weaviate-mcp-probe-${process.pid}.sock`)
    const started = await cluster.spawn(
      [process.execPath, "--import", "tsx", path.resolve(import.meta.dirname, "../weaviate/ClusterProbe.ts"), socket, String(NODE1)],
      "probe listening"
    )
    if (started.match === undefined) throw new Error(`the probe did not start: ${JSON.stringify(started)}`)
    probe = { pid: started.pid, socket }
    connectionId = (await probeRequest("/connection", {})).id
    home = fs.mkdtempSync(path.join(os.tmpdir(), "weaviate-mcp-cluster-home-"))
    const added = await cluster.cli(["connections", "add", "--home", home, "--name", "cluster", "--host", "127.0.0.1", "--port", String(NODE1)])
    if (added.code !== 0) throw new Error(`connections add: ${added.stderr}`)
  }, 180_000)
  afterAll(async () => {
    if (probe !== undefined) await cluster.end(probe.pid)
    await cluster?.stop()
    if (home !== undefined) fs.rmSync(home, { recursive: true, force: true })
  }, 60_000)

  it("the cluster runner starts every node in a namespace where only loopback exists", async () => {
    expect(cluster.nodes.map((n) => n.name)).toEqual(["node1", "node2", "node3"])
    const links = await cluster.run(["ip", "-o", "link", "show"])
    expect(links.stdout.trim().split("\n").map((l) => l.split(":")[1]!.trim())).toEqual(["lo"])
    const nodes = await waitForNodes(cluster, NODE1, (ns) => ns.length === 3 && ns.every((n) => n.status === "HEALTHY"))
    expect(nodes.map((n) => n.name)).toEqual(["node1", "node2", "node3"])
    const memory = await cluster.memory()
    const mb = Object.values(memory).reduce<number>((a, b) => a + (b ?? 0), 0) / 2 ** 20
    process.stderr.write(`cluster: 3 nodes ready in ${cluster.startupMs} ms, ${Math.round(mb)} MB resident\n`)
    expect(Object.values(memory).every((b) => b !== undefined && b > 0)).toBe(true)
  })

  it("get_connection_status reports every node of the cluster, healthy", async () => {
    const r = await callTool("get_connection_status", { connection_id: connectionId, include_shards: true })
    const cluster_ = structured(r).cluster
    expect(cluster_.health).toBe("healthy")
    expect(cluster_.nodes.map((n: { name: string; status: string; version: string }) => [n.name, n.status, n.version])).toEqual([
      ["node1", "HEALTHY", cluster.version],
      ["node2", "HEALTHY", cluster.version],
      ["node3", "HEALTHY", cluster.version]
    ])
    expect(cluster_.members).toEqual(["node1", "node2", "node3"])
    expect(cluster_.nodes.every((n: { shardCount?: number }) => typeof n.shardCount === "number")).toBe(true)
    expect(textOf(r)).toContain("cluster healthy: 3 nodes (node1, node2, node3)")
  })

  it("connections test shows the same nodes and health as get_connection_status", async () => {
    const text = await cluster.cli(["connections", "test", "cluster", "--home", home])
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toContain("cluster healthy: 3 nodes (node1, node2, node3)")
    const json = await cluster.cli(["connections", "test", "cluster", "--home", home, "--json"])
    expect(JSON.parse(json.stdout).cluster.nodes.map((n: { name: string }) => n.name)).toEqual(["node1", "node2", "node3"])
  })

  it("weaviate-mcp status shows every connection's cluster health", async () => {
    const daemon = await cluster.spawn([process.execPath, BIN, "serve", "--home", home, "--port", "0"], "listening on http://127\\.0\\.0\\.1:\\d+/mcp")
    expect(daemon.match, JSON.stringify(daemon)).toBeDefined()
    try {
      const text = await cluster.cli(["status", "--home", home])
      expect(text.code, text.stderr).toBe(0)
      expect(text.stdout).toContain("cluster healthy: 3 nodes (node1, node2, node3)")
      const json = JSON.parse((await cluster.cli(["status", "--home", home, "--json"])).stdout)
      expect(json.connections[0].cluster.health).toBe("healthy")
      expect(json.connections[0].cluster.nodes.map((n: { name: string }) => n.name)).toEqual(["node1", "node2", "node3"])
    } finally {
      await cluster.end(daemon.pid)
    }
  })

  it("describe_table shows replication, sharding and each shard's nodes and readiness", async () => {
    await createReplicated()
    const r = await callTool("describe_table", { connection_id: connectionId, table: "Rep" })
    const d = structured(r)
    expect(d.replication).toEqual({ factor: 3, asyncEnabled: expect.any(Boolean), deletionStrategy: expect.any(String) })
    expect(d.sharding).toEqual({ desiredCount: 3, actualCount: 3 })
    expect(d.shards).toHaveLength(3)
    for (const shard of d.shards) {
      expect(shard).toMatchObject({ status: "READY", ready: true, replicas: 3, nodes: ["node1", "node2", "node3"] })
    }
    expect(textOf(r)).toContain("replication: factor 3")
  })

  it("list_tables flags a collection whose shards are not all ready", async () => {
    const shards = (await cluster.json(NODE1, "GET", "/v1/schema/Rep/shards")) as Array<{ name: string }>
    const shard = shards[0]!.name
    await cluster.json(NODE1, "PUT", `/v1/schema/Rep/shards/${shard}`, { status: "READONLY" })
    try {
      // Weaviate applies the status through Raft after it answered: wait (bounded) until it shows
      await pollUntil(async () => (await shardStatus(shard)) === "READONLY", "the shard to be READONLY")
      // The shard status is cached (one /v1/nodes for every collection, SessionCaches.ShardStatusTtl): a change made
      // elsewhere shows once the cache is older than its time (2 s), read again in the background.
      let r: any
      await pollUntil(async () => {
        r = await callTool("list_tables", { connection_id: connectionId })
        return structured(r).tables.find((t: { name: string }) => t.name === "Rep").unreadyShards !== undefined
      }, "list_tables to flag the shard")
      const rep = structured(r).tables.find((t: { name: string }) => t.name === "Rep")
      expect(rep.unreadyShards).toEqual([`${shard} (READONLY)`])
      expect(textOf(r)).toContain(`shards not ready: Rep: ${shard} (READONLY)`)
    } finally {
      await cluster.json(NODE1, "PUT", `/v1/schema/Rep/shards/${shard}`, { status: "READY" })
      // Each node answers for its own replica (all three hold one): a write at ALL needs every replica
      // READY, and node1 can show READY while another node has not yet applied the change.
      await pollUntil(async () => (await Promise.all(cluster.nodes.map((n) => shardStatus(shard, n.rest)))).every((s) => s === "READY"), "the shard to be READY again on every node")
    }
    await pollUntil(async () =>
      structured(await callTool("list_tables", { connection_id: connectionId })).tables.find((t: { name: string }) => t.name === "Rep").unreadyShards ===
        undefined, "list_tables to show every shard ready again")
  })

  it("consistency_level reaches Weaviate on reads and writes, and the approval shows a write's level", async () => {
    await createReplicated()
    const confirm = (await probeRequest("/connection", { name: "confirm", safeMode: "confirm" })).id
    for (const level of ["ONE", "QUORUM", "ALL"]) {
      const page = structured(await callTool("browse_table", { connection_id: connectionId, table: "Rep", limit: 5, consistency_level: level }))
      expect(page.rows).toHaveLength(5)
      const row = structured(await callTool("get_row", { connection_id: connectionId, table: "Rep", uuid: uuid(1), consistency_level: level }))
      expect(row.row.title).toBe("row 1")
      const found = structured(await callTool("vector_search", {
        connection_id: connectionId,
        table: "Rep",
        mode: "near_vector",
        vector: [1, 0, 0.5],
        limit: 3,
        consistency_level: level
      }))
      expect(found.query).toContain(`consistencyLevel: ${level}`)
      expect(found.rows).toHaveLength(3)
    }
    const inserted = structured(await callTool("insert_rows", {
      connection_id: confirm,
      table: "Rep",
      rows: [{ id: uuid(100), properties: { title: "written at ALL", n: 100 }, vector: [0, 1, 0] }],
      consistency_level: "ALL"
    }))
    expect(inserted.applied, JSON.stringify(inserted)).toBe(1)
    const { asked } = await probeRequest("/dialog")
    expect(JSON.stringify(asked.at(-1))).toContain("consistency level: ALL")
    expect(JSON.stringify(asked.at(-1))).toContain("consistency_level=ALL")
    // the CLI's graphql and browse take --consistency-level too
    const graphql = await cluster.cli(["graphql", "cluster", "{ Get { Rep(limit: 2) { title } } }", "--consistency-level", "ALL", "--home", home, "--json"])
    expect(graphql.code, graphql.stderr).toBe(0)
    const browse = await cluster.cli(["browse", "cluster", "Rep", "--limit", "3", "--consistency-level", "ONE", "--home", home])
    expect(browse.code, browse.stderr).toBe(0)
  })

  it("a node going down: reads at ONE/QUORUM succeed, ALL names the level and the node, writes at QUORUM succeed and at ALL say what may have happened, and a request waiting on the dead node is bounded by the request time-out", async () => {
    await createReplicated()
    const short = (await probeRequest("/connection", { name: "short", requestTimeoutSeconds: 3 })).id
    // The node that goes down is a follower: a dead Raft leader stalls schema reads and writes for the
    // election (15 to 30 s on a loaded machine), which is Weaviate's business, not the consistency
    // levels this test is about. When node3 leads, it is restarted first and leads no more.
    await ensureNotLeader("node3")
    const killed = await cluster.kill("node3")
    expect(killed.up).toBe(false)
    const started = Date.now()
    const timed = async (p: Promise<any>) => {
      const r = await p
      return { r, ms: Date.now() - started }
    }
    // All at once, while Weaviate is still detecting the failure (about 20 s with 1.39's defaults).
    const [allRead, bounded, allWrite, quorumWrite, oneRead, quorumRead, statement, counted] = await Promise.all([
      timed(callTool("get_row", { connection_id: connectionId, table: "Rep", uuid: uuid(2), consistency_level: "ALL" })),
      timed(callTool("get_row", { connection_id: short, table: "Rep", uuid: uuid(3), consistency_level: "ALL" })),
      timed(callTool("insert_rows", {
        connection_id: connectionId,
        table: "Rep",
        rows: [{ id: uuid(200), properties: { title: "at ALL while node3 is down", n: 200 }, vector: [0, 0, 1] }],
        consistency_level: "ALL"
      })),
      timed(callTool("insert_rows", {
        connection_id: connectionId,
        table: "Rep",
        rows: [{ id: uuid(201), properties: { title: "at QUORUM while node3 is down", n: 201 }, vector: [0, 0, 1] }],
        consistency_level: "QUORUM"
      })),
      timed(callTool("get_row", { connection_id: connectionId, table: "Rep", uuid: uuid(4), consistency_level: "ONE" })),
      timed(callTool("get_row", { connection_id: connectionId, table: "Rep", uuid: uuid(5), consistency_level: "QUORUM" })),
      timed(callTool("execute_query", {
        connection_id: connectionId,
        query: "{ Get { Rep(limit: 50, consistencyLevel: ALL) { title } } }",
        timeout_seconds: 2
      })),
      timed(callTool("count_rows", { connection_id: short, table: "Rep" }))
    ])
    process.stderr.write(`node3 down: ALL read ${allRead.ms} ms, bounded ${bounded.ms} ms, ALL write ${allWrite.ms} ms, QUORUM write ${quorumWrite.ms} ms\n`)
    // reads at ONE and QUORUM
    expect(structured(oneRead.r).row.title).toBe("row 4")
    expect(structured(quorumRead.r).row.title).toBe("row 5")
    // a read at ALL: the level and the node, not a connection or TLS error
    const allReadText = toolErrorText(allRead.r)
    expect(allReadText).toMatch(/^query_failed: Read at consistency level ALL failed: node3 did not answer/)
    expect(allReadText).not.toMatch(/Connection failed|SSL Mode|HTTPS/)
    // bounded by the connection's request time-out (3 s), naming the degraded cluster and the node
    const boundedText = toolErrorText(bounded.r)
    expect(boundedText).toMatch(/^timeout: The cluster is degraded \(.*node3.*\)/)
    expect(boundedText).toContain("within 3 s")
    expect(bounded.ms).toBeLessThan(10_000)
    // a statement is bounded by its timeout_seconds, and its time-out names the degraded cluster and the node
    expect(statement.r.exit).toBe("failure")
    // (Under load another node may be reported unhealthy for a moment too, listed before node3.)
    expect(statement.r.cause).toMatch(/^RequestTimeout: Statement timed out after 2 s \(timeout_seconds\); the cluster is degraded: (?:\S+ is [A-Z_]+; )*node3 is [A-Z_]+/)
    expect(statement.ms).toBeLessThan(10_000)
    // count_rows (an Aggregate, Weaviate's default level) waits on the dead node too: bounded, named
    expect(toolErrorText(counted.r)).toMatch(/^timeout: The cluster is degraded \(.*node3.*\).*within 3 s/)
    // a write at QUORUM is applied; at ALL the error says so, and what may have happened
    expect(structured(quorumWrite.r).applied).toBe(1)
    const allWriteText = JSON.stringify(allWrite.r.result.value.content)
    expect(allWriteText).toContain("Write at consistency level ALL failed")
    expect(allWriteText).toContain("Weaviate may have applied the write on the nodes that were up")
    expect(allWriteText).toContain("node3")
    // the status names the node
    const degraded = structured(await callTool("get_connection_status", { connection_id: connectionId })).cluster
    expect(degraded.health).toBe("degraded")
    expect(degraded.problems.map((p: { node: string }) => p.node)).toEqual(["node3"])
    const status = await cluster.cli(["connections", "test", "cluster", "--home", home])
    expect(status.stdout).toMatch(/cluster degraded: node3 is/)
  }, 120_000)

  it("when the node is back the status returns to healthy, and a row written at QUORUM while it was down reads back at ALL", async () => {
    const back = await cluster.restart("node3")
    process.stderr.write(`node3 restarted in ${back.startupMs} ms\n`)
    await waitForNodes(cluster, NODE1, (ns) => ns.length === 3 && ns.every((n) => n.status === "HEALTHY"))
    const healthy = structured(await callTool("get_connection_status", { connection_id: connectionId })).cluster
    expect(healthy.health).toBe("healthy")
    // read-repair at ALL brings node3's copy up to date
    const row = structured(await callTool("get_row", { connection_id: connectionId, table: "Rep", uuid: uuid(201), consistency_level: "ALL" }))
    expect(row.row.title).toBe("at QUORUM while node3 is down")
    // and node3 itself holds it now (asked directly, at ONE)
    await pollUntil(async () => (await cluster.http(8082, "GET", `/v1/objects/Rep/${uuid(201)}?consistency_level=ONE`)).status === 200, "node3 to hold the row")
  }, 180_000)
})

/** `Rep`: replication factor 3 over 3 shards, 30 rows with vectors (once per file). */
let created = false
const createReplicated = async () => {
  if (created) return
  created = true
  await cluster.json(NODE1, "POST", "/v1/schema", {
    class: "Rep",
    vectorizer: "none",
    replicationConfig: { factor: 3 },
    shardingConfig: { desiredCount: 3 },
    properties: [{ name: "title", dataType: ["text"] }, { name: "n", dataType: ["int"] }]
  })
  const objects = Array.from({ length: 30 }, (_, i) => ({ class: "Rep", id: uuid(i + 1), properties: { title: `row ${i + 1}`, n: i + 1 }, vector: [1, 0, (i + 1) / 30] }))
  await cluster.json(NODE1, "POST", "/v1/batch/objects?consistency_level=ALL", { objects })
}
/** The Raft leader as node1 sees it (`/v1/cluster/statistics`), when there is one. */
const raftLeader = async () => {
  const answer = await cluster.http(NODE1, "GET", "/v1/cluster/statistics", undefined, 5_000)
  if (answer.status !== 200) return undefined
  const statistics = (JSON.parse(answer.text!) as { statistics?: Array<{ leaderId?: unknown }> }).statistics ?? []
  const leader = statistics.map((s) => s.leaderId).find((id) => typeof id === "string" && id.length > 0)
  return leader as string | undefined
}

/** Restarts `node` while it leads, until another node leads and every node is healthy again (bounded: 3 tries). */
const ensureNotLeader = async (node: string) => {
  for (let attempt = 0; attempt < 3 && (await raftLeader()) === node; attempt++) {
    process.stderr.write(`${node} leads the Raft cluster: restarting it so that a follower goes down\n`)
    await cluster.kill(node)
    await pollUntil(async () => {
      const leader = await raftLeader()
      return leader !== undefined && leader !== node
    }, "another node to lead")
    await cluster.restart(node)
    await waitForNodes(cluster, NODE1, (nodes) => nodes.length === 3 && nodes.every((n) => n.status === "HEALTHY"))
  }
  expect(await raftLeader()).not.toBe(node)
}

const uuid = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`

/** The shard's status as the node on `port` sees its own replica of it. */
const shardStatus = async (shard: string, port = NODE1) =>
  ((await cluster.json(port, "GET", "/v1/schema/Rep/shards")) as Array<{ name: string; status: string }>).find((s) => s.name === shard)?.status

/** Polls `check` until it holds, failing after `timeoutMs`: no sleep stands in for the cluster's state. */
const pollUntil = async (check: () => Promise<boolean>, what: string, timeoutMs = 60_000) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
}

/** The structured content of a successful tool call through the probe. */
const structured = (r: any) => {
  if (r.exit !== "success" || r.result._tag !== "Complete" || r.result.value.isError === true) throw new Error(`expected success: ${JSON.stringify(r)}`)
  return r.result.value.structuredContent
}
const textOf = (r: any): string => r.result.value.content[0].text
/** The text of a tool error through the probe. */
export const toolErrorText = (r: any): string => {
  if (r.exit !== "success" || r.result.value.isError !== true) throw new Error(`expected a tool error: ${JSON.stringify(r)}`)
  return textOf(r)
}
