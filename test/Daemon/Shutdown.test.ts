/**
 * SIGINT/SIGTERM shut the daemon down even while requests are open, and remove the handshake file
 * (issue 2; conventions.md, the FiberSet note). The 1-second bound itself is checked on the
 * TestClock in test/Mcp/HttpTransport.test.ts (wall time on a loaded machine proves nothing);
 * here a daemon that waited for its open requests would never exit.
 */
import * as NodeFs from "node:fs/promises"
import * as NodeNet from "node:net"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"

const tempHome = () => TestHome.tempDirSync("weaviate-mcp-shutdown-")

/** Opens a request that the server cannot finish: headers sent, body still owed. */
const openRequest = (port: number) =>
  new Promise<NodeNet.Socket>((resolve) => {
    const socket = NodeNet.connect(port, "127.0.0.1", () => {
      socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc":`)
      resolve(socket)
    })
    socket.on("error", () => {})
  })

/** Opens a `subscriptions/listen` SSE stream and resolves once its acknowledgement arrived. */
const openStream = async (endpoint: string) => {
  const response = await fetch(endpoint, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "subscriptions/listen"
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: "listen-1",
      method: "subscriptions/listen",
      params: {
        notifications: { resourcesListChanged: true },
        _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} }
      }
    })
  })
  expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/)
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let seen = ""
  for (let i = 0; i < 100 && !seen.includes("notifications/subscriptions/acknowledged"); i++) {
    const chunk = await reader.read()
    if (chunk.done) break
    seen += decoder.decode(chunk.value)
  }
  expect(seen).toContain("notifications/subscriptions/acknowledged")
  /** Reads to the end of the stream; resolves with everything after the acknowledgement. */
  const rest = (async () => {
    let tail = ""
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }))
      if (chunk.done) return tail
      tail += decoder.decode(chunk.value)
    }
  })()
  return { rest }
}

describe("shutdown", () => {
  it("SIGINT with an SSE stream open ends the daemon, and the stream ends", async () => {
    const home = tempHome()
    const daemon = await Cli.serve(["--home", home, "--port", "0", "--auth", "off"])
    const stream = await openStream(daemon.endpoint)
    daemon.child.kill("SIGINT")
    const finished = await daemon.exited
    expect(finished.code).toBe(0)
    await stream.rest
    await expect(NodeFs.stat(NodePath.join(home, "mcp-handshake.json"))).rejects.toThrow()
  })

  it.each(["SIGINT", "SIGTERM"] as const)("%s with open requests ends the daemon and removes the handshake file", async (signal) => {
    const home = tempHome()
    const daemon = await Cli.serve(["--home", home, "--port", "0", "--auth", "off"])
    const sockets = await Promise.all([openRequest(daemon.port), openRequest(daemon.port), openRequest(daemon.port)])
    const closed = sockets.map((s) => new Promise<void>((resolve) => s.once("close", () => resolve())))
    daemon.child.kill(signal)
    const finished = await daemon.exited
    expect(finished.code).toBe(0)
    await Promise.all(closed)
    await expect(NodeFs.stat(NodePath.join(home, "mcp-handshake.json"))).rejects.toThrow()
    await expect(NodeFs.stat(NodePath.join(home, "serve.lock"))).rejects.toThrow()
  })

  it.runIf(process.platform === "linux")("SIGINT while an approval command runs: the command is killed, the approval helper exits, the call is answered", async () => {
    const home = tempHome()
    const added = await Cli.run(["connections", "add", "--home", home, "--name", "c", "--host", "127.0.0.1", "--port", "1", "--json"])
    const connectionId = (JSON.parse(added.stdout) as { id: string }).id
    const marker = NodePath.join(home, "approval.pid")
    const daemon = await Cli.serve([
      "--home", home, "--port", "0", "--auth", "off", "--approvals", "exec",
      "--approval-command", `cat > /dev/null; echo $$ > '${marker}'; exec sleep 300`
    ])
    const call = fetch(daemon.endpoint, {
      method: "POST",
      headers: { "content-type": "application/json", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "list_tables" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "list_tables",
          arguments: { connection_id: connectionId },
          _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} }
        }
      })
    }).then((response) => response.text())
    // First access asks the approval command, which waits: read its pid and its parent's (the helper).
    let pid = 0
    for (let i = 0; i < 200 && pid === 0; i++) {
      pid = Number((await NodeFs.readFile(marker, "utf8").catch(() => "")).trim()) || 0
      if (pid === 0) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(pid).toBeGreaterThan(0)
    const stat = await NodeFs.readFile(`/proc/${pid}/stat`, "utf8")
    const helper = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
    expect(helper).not.toBe(daemon.child.pid)
    daemon.child.kill("SIGINT")
    expect((await daemon.exited).code).toBe(0)
    expect(await call).toContain("shutting down")
    const alive = (p: number) => {
      try {
        process.kill(p, 0)
        return true
      } catch {
        return false
      }
    }
    for (let i = 0; i < 100 && (alive(pid) || alive(helper)); i++) await new Promise((resolve) => setTimeout(resolve, 50))
    expect(alive(pid)).toBe(false)
    expect(alive(helper)).toBe(false)
  })
})
