/**
 * The floor of the bridge's start (`bench/bridge.ts`, baseline `minimal-bridge`): the least a stdio
 * bridge must do before it answers `initialize`, as plain CommonJS with no dependencies. It reads the
 * handshake file and checks it as the real bridge does (a regular file of this user, mode 0600, valid
 * JSON), asks the daemon `server/discover` over node:http with the file's token (the trust check:
 * the same instanceId), then answers `initialize` from what the daemon said, and exits when stdin ends.
 * It forwards nothing: only spawn → initialize is compared against it.
 *
 * Usage: node minimal-bridge.cjs HANDSHAKE_FILE
 */
"use strict"
const fs = require("node:fs")
const http = require("node:http")

const path = process.argv[2]
const stat = fs.lstatSync(path)
if (!stat.isFile() || stat.uid !== process.getuid() || (stat.mode & 0o777) !== 0o600) throw new Error(`${path}: not trusted`)
const file = JSON.parse(fs.readFileSync(path, "utf8"))
const meta = {
  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "minimal-bridge", version: "1" }
}
const body = JSON.stringify({ jsonrpc: "2.0", id: "discover", method: "server/discover", params: { _meta: meta } })

const discovered = new Promise((resolve, reject) => {
  const request = http.request({
    host: "127.0.0.1",
    port: file.port,
    path: "/mcp",
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "server/discover",
      authorization: `Bearer ${file.token}`,
      "content-length": Buffer.byteLength(body)
    }
  }, (response) => {
    let text = ""
    response.setEncoding("utf8")
    response.on("data", (chunk) => (text += chunk))
    response.on("end", () => {
      const result = JSON.parse(text).result
      const info = result.serverInfo ?? result._meta?.["io.modelcontextprotocol/serverInfo"] ?? {}
      if (info.instanceId !== file.instanceId) reject(new Error("instanceId differs"))
      else resolve(result)
    })
  })
  request.on("error", reject)
  request.end(body)
})

let buffer = ""
process.stdin.setEncoding("utf8")
process.stdin.on("data", (chunk) => {
  buffer += chunk
  let end = buffer.indexOf("\n")
  while (end !== -1) {
    const message = JSON.parse(buffer.slice(0, end))
    buffer = buffer.slice(end + 1)
    if (message.method === "initialize") {
      discovered.then((result) => {
        process.stdout.write(JSON.stringify({
          jsonrpc: "2.0",
          id: message.id,
          result: {
            protocolVersion: message.params.protocolVersion,
            capabilities: result.capabilities ?? {},
            serverInfo: { name: "minimal-bridge", version: "1" },
            instructions: result.instructions ?? ""
          }
        }) + "\n")
      })
    }
    end = buffer.indexOf("\n")
  }
})
process.stdin.on("end", () => process.exit(0))
