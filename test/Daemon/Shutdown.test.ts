/**
 * SIGINT/SIGTERM shut the daemon down even while requests are open, and remove the handshake file
 * (issue 2; conventions.md, the FiberSet note). The 1-second bound itself is checked on the
 * TestClock in test/Mcp/HttpTransport.test.ts (wall time on a loaded machine proves nothing);
 * here a daemon that waited for its open requests would never exit.
 */
import * as NodeFs from "node:fs/promises"
import * as NodeNet from "node:net"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import * as Cli from "../support/Cli.ts"

const homes: Array<string> = []
afterEach(async () => {
  for (const dir of homes.splice(0)) await NodeFs.rm(dir, { recursive: true, force: true })
})

const tempHome = async () => {
  const dir = await NodeFs.mkdtemp(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-shutdown-"))
  homes.push(dir)
  return dir
}

/** Opens a request that the server cannot finish: headers sent, body still owed. */
const openRequest = (port: number) =>
  new Promise<NodeNet.Socket>((resolve) => {
    const socket = NodeNet.connect(port, "127.0.0.1", () => {
      socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"jsonrpc":`)
      resolve(socket)
    })
    socket.on("error", () => {})
  })

describe("shutdown", () => {
  it.each(["SIGINT", "SIGTERM"] as const)("%s with open requests ends the daemon and removes the handshake file", async (signal) => {
    const home = await tempHome()
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
})
