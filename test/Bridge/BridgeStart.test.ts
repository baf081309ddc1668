/**
 * `weaviate-mcp bridge` in a home without a running daemon: it says how to start one, or with
 * `--start` starts it and waits for it. The session here is a raw stdio client that offers
 * `2026-07-28`, so the bridge passes modern results through unchanged.
 */
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as NodeReadline from "node:readline"
import { describe, expect, it } from "vitest"
import { isPidAlive } from "../../src/Daemon/Handshake.ts"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"

/** A raw newline-delimited JSON-RPC client over the bridge's stdio. */
const rawSession = (home: string, args: ReadonlyArray<string>) => {
  const child = NodeChild.spawn(process.execPath, [Cli.BIN, "bridge", "--home", home, ...args], { stdio: "pipe" })
  let stderr = ""
  child.stderr.on("data", (d) => (stderr += d))
  const waiting = new Map<unknown, (message: any) => void>()
  const lines: Array<string> = []
  NodeReadline.createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(line)
    const message = JSON.parse(line)
    waiting.get(message.id)?.(message)
  })
  const request = (id: number, method: string, params: Record<string, unknown>) =>
    new Promise<any>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${method}\n${stderr}`)), 20_000)
      waiting.set(id, (message) => {
        clearTimeout(timer)
        resolve(message)
      })
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n")
    })
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve))
  return { child, request, exited, lines, stderr: () => stderr }
}

const modernMeta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {}
}

describe("weaviate-mcp bridge without a running daemon", () => {
  it("says how to start it and exits 1 without --start", async () => {
    const home = TestHome.tempDirSync()
    const r = await Cli.run(["bridge", "--home", home])
    expect(r.code).toBe(1)
    expect(r.stdout).toBe("")
    expect(r.stderr).toContain(`Start it with: weaviate-mcp serve --home "${home}"`)
  })

  it("with --start starts the daemon, waits for it, and serves a 2026-07-28 client modern results", async () => {
    const home = TestHome.tempDirSync()
    const session = rawSession(home, ["--start"])
    let daemonPid: number | undefined
    try {
      const init = await session.request(1, "initialize", { protocolVersion: "2026-07-28", capabilities: {}, clientInfo: { name: "raw", version: "1" } })
      expect(init.result.protocolVersion).toBe("2026-07-28")
      expect(init.result.capabilities.resources.subscribe).toBe(true)
      const handshake = JSON.parse(NodeFs.readFileSync(NodePath.join(home, "mcp-handshake.json"), "utf8"))
      daemonPid = handshake.pid
      expect(daemonPid).not.toBe(session.child.pid)
      // Started with its young generation capped, as npm start starts it: the memory a burst of
      // requests takes comes back (docs/configuration.md, "Memory").
      if (process.platform === "linux") {
        expect(NodeFs.readFileSync(`/proc/${daemonPid}/cmdline`, "utf8").split("\0")).toContain("--max-semi-space-size=4")
      }
      const list = await session.request(2, "tools/list", { _meta: modernMeta })
      expect(list.result.resultType).toBe("complete")
      expect(list.result.tools.length).toBeGreaterThan(0)
      expect(session.stderr()).toContain("started the daemon")
      // stdout carried protocol only.
      expect(session.lines.every((line) => JSON.parse(line).jsonrpc === "2.0")).toBe(true)
    } finally {
      session.child.stdin.end()
      expect(await session.exited).toBe(0)
      if (daemonPid !== undefined) {
        process.kill(daemonPid, "SIGTERM")
        for (let attempt = 0; attempt < 200 && isPidAlive(daemonPid); attempt++) await new Promise((r) => setTimeout(r, 50))
        expect(isPidAlive(daemonPid)).toBe(false)
      }
    }
  }, 30_000)
})
