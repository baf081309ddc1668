// The baselines of `bench:tools-list`, each run as a process of its own:
//   [LEAN_TOKEN=TOKEN] node tools-list-servers.mjs NAME REPLY_FILE [DIR]   → prints `listening on http://127.0.0.1:PORT/mcp`
// - `node:http`: a bare server answering REPLY_FILE's bytes (our `tools/list` answer) to every request,
//   after reading its body (as any server must), with the request's id spliced in: the ceiling;
// - `lean-node`: plain `node:http` doing only the per-request work the contract asks of a `tools/list`,
//   without any framework: the Host and protocol-version checks, the bearer token checked by HMAC
//   against a salted digest, the JSON body parsed, the id spliced into the cached reply, one
//   SHA-256-chained activity line and one log line per request (both appended to files in DIR once per
//   tick). It shows how far the 0.6× target is reachable at all with that work;
// - `sdk-v2`: the official SDK v2 server (`createMcpHandler` from `@modelcontextprotocol/server`, a
//   server built per request, modern era only, JSON responses) behind the official Node adapter
//   (`toNodeHandler` from `@modelcontextprotocol/node`), listing the tools of REPLY_FILE.
// Plain JavaScript, as the daemon under test is (the built CLI): run through a TypeScript loader, every
// function a server creates per request would also pay the loader's `__name` call (esbuild's
// `keepNames`), which the shipped bundle does not have.
import { toNodeHandler } from "@modelcontextprotocol/node"
import { createMcpHandler, McpServer } from "@modelcontextprotocol/server"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import { leanIntake, leanToken, openLeanLines } from "./lean-contract.mjs"

/**
 * Fixed bytes for every request, after reading the body, with the request's id in them (found by a
 * regular expression, not parsed), so that the load generator can time each answer (bench/support/Wrk.ts).
 */
const bareServer = (reply) => {
  const head = "{\"jsonrpc\":\"2.0\",\"id\":1,"
  if (reply.subarray(0, head.length).toString("latin1") !== head) throw new Error("node:http: the reply does not start with the expected id")
  const rest = reply.subarray(head.length)
  return NodeHttp.createServer((request, response) => {
    const chunks = []
    request.on("data", (chunk) => chunks.push(chunk))
    request.on("end", () => {
      const id = Buffer.from(`{"jsonrpc":"2.0","id":${/"id":(\d+)/.exec(Buffer.concat(chunks).toString("latin1"))?.[1] ?? 1},`)
      response.writeHead(200, { "content-type": "application/json", "content-length": id.length + rest.length })
      response.write(id)
      response.end(rest)
    })
  })
}

const leanServer = (reply, dir) => {
  const intake = leanIntake(leanToken())
  const lines = openLeanLines(dir)
  // The reply without its id: `{"jsonrpc":"2.0","id":1,` is re-made per request.
  const head = Buffer.from("{\"jsonrpc\":\"2.0\",\"id\":1,")
  if (!reply.subarray(0, head.length).equals(head)) throw new Error("lean-node: the reply does not start with the expected id")
  const rest = reply.subarray(head.length)
  return NodeHttp.createServer((request, response) => {
    const chunks = []
    request.on("data", (chunk) => chunks.push(chunk))
    request.on("end", () => {
      const started = performance.now()
      const refuse = (status) => (response.writeHead(status), response.end())
      const message = intake(request, chunks)
      if (typeof message === "number") return refuse(message)
      if (message.method !== "tools/list") return refuse(400)
      const id = Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},`)
      response.writeHead(200, { "content-type": "application/json", "content-length": id.length + rest.length })
      response.write(id)
      response.end(rest)
      lines.append(
        { time: new Date().toISOString(), client: "weaviate-mcp-bench", method: "tools/list", outcome: "ok", prev: lines.previous },
        `timestamp=${new Date().toISOString()} level=INFO message="mcp request" method=tools/list durationMs=${(performance.now() - started).toFixed(1)}`
      )
    })
  })
}

/** The official SDK v2 server: `createMcpHandler` builds a server per request, as its docs show. */
const sdkServer = (tools) => {
  const handler = createMcpHandler(() => {
    const mcp = new McpServer({ name: "weaviate-mcp-bench", version: "0.0.0" }, { capabilities: { tools: {} } })
    mcp.server.setRequestHandler("tools/list", () => ({ tools }))
    return mcp
  }, { legacy: "reject", responseMode: "json" })
  const serve = toNodeHandler(handler)
  return NodeHttp.createServer((request, response) => void serve(request, response))
}

const [name, replyFile, dir] = process.argv.slice(2)
if (name === undefined || replyFile === undefined) {
  console.error("usage: [LEAN_TOKEN=TOKEN] tools-list-servers.mjs node:http|lean-node|sdk-v2 REPLY_FILE [DIR]")
  process.exit(2)
}
const reply = NodeFs.readFileSync(replyFile)
const server = name === "node:http"
  ? bareServer(reply)
  : name === "lean-node"
  ? leanServer(reply, dir ?? ".")
  : name === "sdk-v2"
  ? sdkServer(JSON.parse(reply.toString("utf8")).result.tools)
  : undefined
if (server === undefined) {
  console.error(`unknown server: ${name}`)
  process.exit(2)
}
server.listen(0, "127.0.0.1", () => process.stdout.write(`listening on http://127.0.0.1:${server.address().port}/mcp\n`))
process.once("SIGTERM", () => {
  server.closeAllConnections()
  server.close(() => process.exit(0))
})
