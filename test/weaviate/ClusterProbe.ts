/**
 * The code under test, run inside a cluster's network namespace (test/weaviate/Cluster.ts): the real
 * tools (ToolsLive), driver and approvals in one process, with a temporary home whose connections
 * point at the cluster's first node. It serves HTTP on a unix socket (a filesystem path, which crosses
 * network namespaces), so the test outside calls tools without ever reaching a node itself:
 *
 *   POST /call {"tool", "args", "connection"?}   -> {"exit": "success" | "failure", "result" | "cause"}
 *   POST /connection {settings}                  -> adds a connection, answers {"id"}
 *   GET  /dialog                                 -> the approval questions asked so far
 *
 * Usage: node --import tsx test/weaviate/ClusterProbe.ts <socket path> <REST port>
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import * as ApprovalsLayer from "../../src/Approval/ApprovalsLayer.ts"
import * as CollectionSchema from "../../src/Driver/CollectionSchema.ts"
import { Dialog } from "../../src/Approval/Dialog.ts"
import type { DialogRequest } from "../../src/Approval/DialogText.ts"
import { CurrentPrincipal, TokenPrincipal } from "../../src/Auth/Principal.ts"
import { ToolsLive } from "../../src/Catalogue/Tools/ToolsLive.ts"
import { homeLayer } from "../../src/Cli/CommonOptions.ts"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { Driver } from "../../src/Driver/Driver.ts"
import { RequestContext, Tools } from "../../src/Mcp/Catalogue.ts"
import * as RequestContexts from "../support/RequestContexts.ts"
import { defaultScopes } from "../../src/Schema/Policy.ts"

const [socketPath, restPort] = process.argv.slice(2)
if (socketPath === undefined || restPort === undefined) throw new Error("usage: ClusterProbe.ts <socket> <port>")

const home = fs.mkdtempSync(path.join(os.tmpdir(), "weaviate-mcp-probe-"))
const asked: Array<DialogRequest> = []
const dialog = Layer.succeed(Dialog, {
  kind: "exec",
  interactive: true,
  confirm: (request) => Effect.sync(() => (asked.push(request), true))
})
// A collection's schema is kept for the probe's life (no test changes one after reading it): a tool
// call while a node is down then reads no schema. A schema read goes to the Raft leader, and when the
// killed node was the leader it waits for the election (15 s on a loaded machine, the schema time-out),
// by which time Weaviate has noticed the dead node and a read at ALL no longer fails: the cluster tests
// are about consistency levels, not about how long an election takes.
const base = Layer.mergeAll(Driver.layer, ApprovalsLayer.layerWithDialog(dialog)).pipe(
  Layer.provideMerge(ConnectionStore.layer),
  Layer.provide(homeLayer(Option.some(home))),
  Layer.provide(Layer.succeed(CollectionSchema.CacheTtl, 3_600_000))
)
const runtime = ManagedRuntime.make(ToolsLive.pipe(Layer.provideMerge(base)))
const tools = await runtime.runPromise(Tools)
const principal = new TokenPrincipal({
  id: "tok-full",
  name: "full token",
  access: "fullAccess",
  scopes: defaultScopes["fullAccess"],
  connections: Option.none(),
  expiresAt: Option.none(),
  source: "store"
})

const addConnection = (settings: Record<string, unknown>) =>
  runtime.runPromise(Effect.flatMap(ConnectionStore, (store) =>
    store.add({ name: "cluster", host: "127.0.0.1", port: Number(restPort), safeMode: "silent", ...settings } as never)))

const call = async (name: string, args: Record<string, unknown>) => {
  const tool = tools.all.find((t) => t.descriptor.name === name)
  if (tool === undefined) return { exit: "failure", cause: `no tool ${name}` }
  const context = RequestContexts.toolCall("cluster-probe")
  const exit = await runtime.runPromiseExit(
    tool.call(args).pipe(Effect.provideService(RequestContext, context), Effect.provideService(CurrentPrincipal, principal))
  )
  return Exit.isSuccess(exit) ? { exit: "success", result: exit.value } : { exit: "failure", cause: String(exit.cause) }
}

const server = http.createServer((req, res) => {
  let body = ""
  req.on("data", (d) => (body += d))
  req.on("end", () => {
    const answer = (value: unknown) => {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify(value))
    }
    const input = body === "" ? {} : JSON.parse(body)
    const work: Promise<unknown> = req.url === "/call"
      ? call(input.tool, input.args)
      : req.url === "/connection"
      ? addConnection(input).then((c) => ({ id: c.id }))
      : Promise.resolve({ asked })
    work.then(answer, (e) => answer({ exit: "failure", cause: String(e) }))
  })
})
fs.rmSync(socketPath, { force: true })
server.listen(socketPath, () => process.stdout.write(`probe listening on ${socketPath}\n`))
const shutdown = () => {
  server.close()
  void runtime.dispose().finally(() => {
    fs.rmSync(home, { recursive: true, force: true })
    process.exit(0)
  })
}
process.on("SIGTERM", shutdown)
process.on("SIGINT", shutdown)
