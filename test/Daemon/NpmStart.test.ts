/**
 * `npm start` passes signals to the daemon: its script `exec`s the daemon, so npm's child is the
 * daemon itself and `kill <npm pid>` (npm forwards SIGTERM and SIGINT to its child) stops it. Were the
 * daemon a grandchild under a shell, the shell would die and the daemon live on, port and handshake
 * file included.
 */
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeNet from "node:net"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { tempDirSync } from "../support/TestHome.ts"

const root = fileURLToPath(new URL("../..", import.meta.url))

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = NodeNet.connect(port, "127.0.0.1")
    socket.once("connect", () => (socket.destroy(), resolve(false)))
    socket.once("error", () => resolve(true))
  })

describe("npm start", () => {
  it.each(["SIGTERM", "SIGINT"] as const)("kill -%s <npm pid> stops the daemon: port closed, handshake file removed", async (signal) => {
    const home = tempDirSync("weaviate-mcp-npm-start-")
    const env: NodeJS.ProcessEnv = {}
    for (const [key, value] of Object.entries(process.env)) if (!key.startsWith("WEAVIATE_MCP_") && !key.startsWith("npm_")) env[key] = value
    const npm = NodeChild.spawn("npm", ["start", "--", "--home", home, "--port", "0", "--auth", "off"], { cwd: root, env, stdio: "pipe" })
    let output = ""
    const exited = new Promise<void>((resolve) => npm.once("exit", () => resolve()))
    try {
      const port = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`npm start did not listen within 60 s:\n${output}`)), 60_000)
        const onData = (data: Buffer) => {
          output += data
          const match = /listening on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(output)
          if (match) (clearTimeout(timer), resolve(Number(match[1])))
        }
        npm.stdout.on("data", onData)
        npm.stderr.on("data", onData)
        void exited.then(() => (clearTimeout(timer), reject(new Error(`npm start exited early:\n${output}`))))
      })
      expect(NodeFs.existsSync(NodePath.join(home, "mcp-handshake.json"))).toBe(true)
      // npm start builds the web console's page too, and the daemon serves it.
      const page = await fetch(`http://127.0.0.1:${port}/console`)
      expect(page.status).toBe(200)
      expect(await page.text()).toContain("/console/assets/console.js")
      expect((await fetch(`http://127.0.0.1:${port}/console/assets/console.js`)).status).toBe(200)
      npm.kill(signal)
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`npm did not exit within 30 s of ${signal}:\n${output}`)), 30_000)
        void exited.then(() => (clearTimeout(timer), resolve()))
      })
      // npm exits after its child: the daemon has shut down by now.
      expect(NodeFs.existsSync(NodePath.join(home, "mcp-handshake.json")), output).toBe(false)
      expect(await refused(port)).toBe(true)
    } finally {
      if (npm.exitCode === null && npm.signalCode === null) npm.kill("SIGKILL")
      // A daemon the signal did not reach (the rule broken) must not outlive the test.
      const handshake = NodePath.join(home, "mcp-handshake.json")
      if (NodeFs.existsSync(handshake)) {
        try {
          process.kill(JSON.parse(NodeFs.readFileSync(handshake, "utf8")).pid, "SIGKILL")
        } catch {
          // Gone already.
        }
      }
    }
  }, 120_000)
})
