/**
 * Faults, against the real Weaviate server and the built `weaviate-mcp serve`: the server killed
 * mid-query, the server stopped (SIGSTOP), a proxy that truncates answers, a token revoked while its
 * stream and call run, the handshake file deleted, and the home made read-only. Every answer is
 * validated against the official schema; the daemon must stay up through all of them.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { homeLayer } from "../../src/Cli/CommonOptions.ts"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { Driver } from "../../src/Driver/Driver.ts"
import * as Daemon from "../../src/Daemon/Daemon.ts"
import { BoundAddress } from "../../src/Mcp/HttpTransport.ts"
import { MODERN, modern, modernHeaders, parseFrames } from "../Mcp/support/EndpointHarness.ts"
import { failureOf, makeRuntime } from "../Driver/support.ts"
import * as AsNobody from "../support/AsNobody.ts"
import * as Cli from "../support/Cli.ts"
import { validateMessage } from "../support/McpSchemas.ts"
import * as TestDaemon from "../support/TestDaemon.ts"
import * as TestHome from "../support/TestHome.ts"
import { type RealWeaviate, startRealWeaviate } from "../weaviate/RealWeaviate.ts"
import { type RecordingProxy, startRecordingProxy } from "../weaviate/RecordingProxy.ts"
import { startWeaviate } from "../weaviate/WeaviateServer.ts"
import { callTool, eventually, makeHome, realUnavailable, rpc, serveApproved, toolText } from "./RealDaemon.ts"

const unavailable = realUnavailable()
const QUERY = "{ Get { Fault { name } } }"
/** The short time-outs the faults are measured against (settings.json). */
const HEALTH_S = 2
const SCHEMA_S = 2

let w: RealWeaviate | undefined
let proxy: RecordingProxy
let running: Cli.Running | undefined
let env: Awaited<ReturnType<typeof makeHome>>

const alive = () => running!.child.exitCode === null && running!.child.signalCode === null
const token = () => env.tokens["main"]!.token

const createCollection = async (server: RealWeaviate) => {
  const r = await fetch(`${server.url}/v1/schema`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ class: "Fault", vectorizer: "none", properties: [{ name: "name", dataType: ["text"] }] })
  })
  assert.strictEqual(r.status, 200, await r.text())
}

describe.skipIf(unavailable !== undefined)(`faults against the real Weaviate server${unavailable === undefined ? "" : ` (skipped: ${unavailable})`}`, () => {
  beforeAll(async () => {
    w = await startRealWeaviate()
    await createCollection(w)
    proxy = await startRecordingProxy({ upstream: w.url })
    env = await makeHome(
      { healthTimeoutSeconds: HEALTH_S, schemaTimeoutSeconds: SCHEMA_S },
      { real: w.port, proxied: proxy.port },
      ["main", "other", "victim"]
    )
    running = await serveApproved(env.home)
    // First access of each token to each connection is approved here, once.
    for (const name of ["main", "other", "victim"]) {
      for (const id of Object.values(env.connections)) {
        const listed = await callTool(running.endpoint, env.tokens[name]!.token, "list_tables", { connection_id: id })
        assert.notStrictEqual(listed.json.result?.isError, true, toolText(listed))
      }
    }
  }, 120_000)

  afterAll(async () => {
    if (running !== undefined && alive()) running.child.kill("SIGTERM")
    await running?.exited
    await proxy?.close()
    if (w !== undefined) {
      const pid = w.serverPid()
      if (pid !== undefined) process.kill(pid, "SIGCONT")
      await w.stop()
    }
  }, 60_000)

  it("the server killed mid-query: a `Connection failed:` tool error, the daemon stays up, and it recovers when a server is back on the port", async () => {
    const server = w!
    const pid = server.serverPid()
    assert.isDefined(pid, "the weaviate-server process")
    // Stopped first, so the query is surely in the server's hands (accepted by the kernel, unanswered) when it dies.
    process.kill(pid!, "SIGSTOP")
    const call = callTool(running!.endpoint, token(), "execute_query", { connection_id: env.connections["real"], query: QUERY, timeout_seconds: 60 }, "killed")
    await eventually("the query in flight", async () => {
      const clients = JSON.parse((await env.cli("clients", "--json")).stdout) as Array<{ inFlight: number }>
      return clients.some((c) => c.inFlight > 0) ? true : undefined
    }, 50)
    process.kill(pid!, "SIGKILL")
    const answer = await call
    assert.strictEqual(answer.status, 200)
    assert.strictEqual(answer.json.result?.isError, true, JSON.stringify(answer.json))
    assert.match(toolText(answer), /^\w+: Connection failed: /)
    await server.stop()
    assert.isTrue(alive(), "the daemon is still running")
    const down = await callTool(running!.endpoint, token(), "list_tables", { connection_id: env.connections["real"] }, "down")
    assert.strictEqual(down.json.result?.isError, true)
    assert.match(toolText(down), /^\w+: Connection failed: /)

    w = await startRealWeaviate({ port: server.port })
    await createCollection(w)
    const back = await callTool(running!.endpoint, token(), "list_tables", { connection_id: env.connections["real"] }, "back")
    assert.notStrictEqual(back.json.result?.isError, true, toolText(back))
    assert.include(toolText(back), "Fault")
  }, 120_000)

  it("the server stopped (SIGSTOP): calls end by their time-outs and the connection slots are freed", async () => {
    const pid = w!.serverPid()!
    process.kill(pid, "SIGSTOP")
    try {
      const started = performance.now()
      const timed = async (label: string, p: Promise<any>) => {
        const reply = await p
        return { label, reply, ms: performance.now() - started }
      }
      const id = env.connections["real"]
      const results = await Promise.all([
        timed("execute_query timeout_seconds 1", callTool(running!.endpoint, token(), "execute_query", { connection_id: id, query: QUERY, timeout_seconds: 1 }, "q")),
        timed(`get_connection_status (healthTimeoutSeconds ${HEALTH_S})`, callTool(running!.endpoint, token(), "get_connection_status", { connection_id: id }, "h")),
        timed(`describe_table (schemaTimeoutSeconds ${SCHEMA_S})`, callTool(running!.endpoint, token(), "describe_table", { connection_id: id, table: "Fault" }, "s"))
      ])
      for (const { label, reply, ms } of results) {
        console.log(`SIGSTOP: ${label} ended after ${Math.round(ms)} ms: ${JSON.stringify(reply.json).slice(0, 300)}`)
        assert.isBelow(ms, 8_000, label)
        assert.strictEqual(reply.status, 200, label)
      }
      // execute_query's own time-out ends the request with -33003 (README "Decisions" 7).
      assert.strictEqual(results[0]!.reply.json.error?.code, -33003, JSON.stringify(results[0]!.reply.json))
      // The health check and the schema read end by the configured time-outs, as tool errors.
      const [health, schema] = [results[1]!.reply, results[2]!.reply]
      assert.strictEqual(health.json.result?.isError, true, JSON.stringify(health.json))
      assert.match(toolText(health), new RegExp(`^timeout: Connection failed: 127\\.0\\.0\\.1:\\d+ did not answer GET /v1/meta within ${HEALTH_S} s \\(time-out\\)$`))
      assert.strictEqual(schema.json.result?.isError, true, JSON.stringify(schema.json))
      assert.match(toolText(schema), new RegExp(`^timeout: Connection failed: 127\\.0\\.0\\.1:\\d+ did not answer GET /v1/schema/Fault(/shards)? within ${SCHEMA_S} s \\(time-out\\)$`))
      for (const r of results.slice(1)) assert.isAtLeast(r.ms, 1_900, `${r.label} waited for its time-out`)
      // Nothing is left in flight, and another client is answered at once.
      await eventually("no call in flight", async () => {
        const clients = JSON.parse((await env.cli("clients", "--json")).stdout) as Array<{ inFlight: number }>
        return clients.every((c) => c.inFlight === 0) ? true : undefined
      }, 50)
      const other = await rpc(running!.endpoint, env.tokens["other"]!.token, "tools/list", {}, "other")
      assert.strictEqual(other.status, 200)
      assert.isAbove(other.json.result.tools.length, 0)
    } finally {
      process.kill(pid, "SIGCONT")
    }
    const after = await callTool(running!.endpoint, token(), "list_tables", { connection_id: env.connections["real"] }, "after")
    assert.include(toolText(after), "Fault")
  }, 60_000)

  it("a proxy that truncates answers: a clear tool error naming the cut answer (no HTTPS hint), nothing crashes", async () => {
    proxy.setFault({ kind: "truncate" })
    try {
      const id = env.connections["proxied"]
      for (const [name, args] of [
        ["execute_query", { connection_id: id, query: QUERY }],
        ["execute_query", { connection_id: id, query: "GET /v1/schema" }],
        ["browse_table", { connection_id: id, table: "Fault" }]
      ] as const) {
        const reply = await callTool(running!.endpoint, token(), name, args, `t-${name}`)
        assert.strictEqual(reply.status, 200)
        const text = toolText(reply)
        console.log(`truncated ${name}: ${text.slice(0, 200)}`)
        assert.strictEqual(reply.json.result?.isError, true, JSON.stringify(reply.json))
        assert.match(text, /^\w+: Connection failed: 127\.0\.0\.1:\d+ closed the connection in the middle of its answer \(HTTP 200; /)
        assert.notMatch(text, /HTTPS/, "the port answered in plain HTTP: no hint to switch to HTTPS")
        assert.notMatch(text, /\n\s+at /, "no stack trace")
      }
      assert.isTrue(alive())
    } finally {
      proxy.setFault({ kind: "none" })
    }
    const healthy = await callTool(running!.endpoint, token(), "list_tables", { connection_id: env.connections["proxied"] }, "healthy")
    assert.include(toolText(healthy), "Fault")
  }, 60_000)

  it("a token revoked mid-stream: its listen stream and its running call end, and its next request is 401", async () => {
    const victim = env.tokens["victim"]!
    const controller = new AbortController()
    const stream = await fetch(running!.endpoint, {
      method: "POST",
      signal: controller.signal,
      headers: { ...modernHeaders("subscriptions/listen"), accept: "text/event-stream", authorization: `Bearer ${victim.token}` },
      body: JSON.stringify(modern("subscriptions/listen", { notifications: { resourcesListChanged: true } }, "listen"))
    })
    assert.strictEqual(stream.status, 200)
    const streamText = stream.text()
    proxy.setFault({ kind: "hang" }, { pathPrefix: "/v1/graphql" })
    try {
      const call = callTool(running!.endpoint, victim.token, "execute_query", { connection_id: env.connections["proxied"], query: QUERY }, "held")
      await proxy.waitForRequest((r) => r.path === "/v1/graphql" && !r.completed && !r.aborted, 10_000)
      const revoked = await env.cli("tokens", "revoke", victim.id)
      assert.strictEqual(revoked.code, 0, revoked.stderr)
      const ended = await call
      assert.strictEqual(ended.json.error?.code, -33002, JSON.stringify(ended.json))
      // The stream ends (the body completes) without the test closing it; what it sent is valid.
      const frames = parseFrames(await streamText)
      for (const frame of frames) validateMessage(MODERN, frame)
      const next = await rpc(running!.endpoint, victim.token, "tools/list", {}, "after-revoke")
      assert.strictEqual(next.status, 401)
      const others = await rpc(running!.endpoint, token(), "tools/list", {}, "others")
      assert.strictEqual(others.status, 200)
    } finally {
      controller.abort()
      proxy.setFault({ kind: "none" })
    }
  }, 60_000)

  it("the handshake file deleted while running: the daemon keeps serving, the file stays gone until the next rotation, and shutdown does not fail", async () => {
    const file = NodePath.join(env.home, "mcp-handshake.json")
    assert.isTrue(NodeFs.existsSync(file))
    NodeFs.rmSync(file)
    const served = await rpc(running!.endpoint, token(), "tools/list", {}, "no-handshake")
    assert.strictEqual(served.status, 200)
    assert.isFalse(NodeFs.existsSync(file), "not rewritten before the next bridge-token rotation (hourly)")
    running!.child.kill("SIGTERM")
    const finished = await running!.exited
    assert.strictEqual(finished.code, 0, finished.stderr)
    assert.isFalse(NodeFs.existsSync(file))
  }, 30_000)
})

describe("an answer cut off mid-body, through the driver (any Weaviate)", () => {
  it("is reported as an answer cut in the middle, with its status and without the hint to switch to HTTPS", async () => {
    const weaviate = await startWeaviate()
    const runtime = makeRuntime(TestHome.tempDirSync("weaviate-mcp-truncate-"))
    try {
      weaviate.setFault({ kind: "truncate" }, { pathPrefix: "/v1/meta" })
      const error = await failureOf(runtime, Effect.flatMap(ConnectionStore, (store) =>
        Effect.flatMap(store.add({ name: "cut", host: "127.0.0.1", port: weaviate.port, sslMode: "disabled" }), (c) =>
          Effect.flatMap(Driver, (driver) => driver.health(c.id)))))
      assert.match(error.message, /^Connection failed: 127\.0\.0\.1:\d+ closed the connection in the middle of its answer \(HTTP 200; /)
      assert.notMatch(error.message, /HTTPS/)
    } finally {
      await runtime.dispose()
      await weaviate.close()
    }
  })
})

describe("the handshake file deleted while running: rewritten at the next bridge-token rotation", () => {
  it("the daemon rewrites the handshake file with the rotated token", async () => {
    const home = TestHome.tempDirSync("weaviate-mcp-handshake-")
    const settings = await Effect.runPromise(TestDaemon.settings({ auth: "tokens" }))
    const runtime = ManagedRuntime.make(
      Daemon.layer({ settings, port: 0, bridgeToken: { rotateEvery: "400 millis", grace: "1 second" } }).pipe(
        Layer.provide(homeLayer(Option.some(home)))
      )
    ) as ManagedRuntime.ManagedRuntime<unknown, unknown>
    try {
      const address = await runtime.runPromise(BoundAddress as never) as { url: string; port: number }
      const file = NodePath.join(home, "mcp-handshake.json")
      const first = JSON.parse(NodeFs.readFileSync(file, "utf8"))
      NodeFs.rmSync(file)
      const rewritten = await eventually("the handshake file rewritten", () =>
        NodeFs.existsSync(file) ? JSON.parse(NodeFs.readFileSync(file, "utf8")) : undefined, 50)
      assert.strictEqual(rewritten.port, address.port)
      assert.strictEqual(rewritten.instanceId, first.instanceId)
      assert.notStrictEqual(rewritten.token, first.token)
      assert.strictEqual((NodeFs.statSync(file).mode & 0o777), 0o600)
      const served = await rpc(`${address.url}/mcp`, rewritten.token, "tools/list", {}, "bridge")
      assert.strictEqual(served.status, 200)
    } finally {
      await runtime.dispose()
    }
  }, 30_000)
})

// `nobody` runs a world-readable copy of the built CLI: it cannot read a checkout inside a private
// directory (issue 31), and the copy makes the test independent of where the checkout lives.
const runnable = AsNobody.runnableCopy()
const asNobody = runnable._tag === "Skip" ? runnable.reason : undefined
const nobodyBin = runnable._tag === "Ready" ? runnable.bin : Cli.BIN

const nobody = (args: ReadonlyArray<string>) => [...AsNobody.SETPRIV, process.execPath, nobodyBin, ...args]

describe.skipIf(asNobody !== undefined)(`the home made read-only${asNobody === undefined ? "" : ` (skipped: ${asNobody})`}`, () => {
  // Root ignores file modes, so the daemon and the CLI run as `nobody` (setpriv) on a home nobody
  // owns; chmod then binds them as it binds any user.
  it("a clear error for `connections add` and `tokens create`, the daemon keeps serving with its tokens and connections, and nothing is lost", async () => {
    const home = TestHome.tempDirSync("weaviate-mcp-readonly-")
    const cli = (...args: ReadonlyArray<string>) => Cli.run([...args, "--home", home], { timeoutMs: 30_000 })
    const added = await cli("connections", "add", "--name", "c", "--host", "127.0.0.1", "--port", "9", "--json")
    assert.strictEqual(added.code, 0, added.stderr)
    const created = await cli("tokens", "create", "--name", "t", "--access", "readOnly", "--json")
    const secret = JSON.parse(created.stdout).token as string
    NodeChild.execFileSync("chown", ["-R", "nobody:nogroup", home])
    const before = Object.fromEntries(NodeFs.readdirSync(home).map((f) => [f, NodeFs.readFileSync(NodePath.join(home, f), "utf8")]))

    const child = NodeChild.spawn(nobody(["serve", "--port", "0", "--home", home])[0]!, nobody(["serve", "--port", "0", "--home", home]).slice(1), { stdio: "pipe" })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
    try {
      const endpoint = await eventually("serve listening", () => /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stdout)?.[1], 200)
      NodeFs.chmodSync(home, 0o500)
      for (const f of NodeFs.readdirSync(home)) NodeFs.chmodSync(NodePath.join(home, f), 0o400)

      const run = (args: ReadonlyArray<string>) => NodeChild.spawnSync(nobody(args)[0]!, nobody(args).slice(1), { encoding: "utf8", timeout: 30_000 })
      const add = run(["connections", "add", "--name", "d", "--host", "127.0.0.1", "--port", "10", "--home", home])
      console.log(`read-only home, connections add: exit ${add.status}: ${add.stderr.trim()}`)
      assert.notStrictEqual(add.status, 0)
      assert.match(add.stderr, /permission denied|EACCES|read-only|cannot write/i)
      assert.notMatch(add.stderr, /\n\s+at /, "no stack trace")
      const token = run(["tokens", "create", "--name", "u", "--access", "readOnly", "--home", home])
      console.log(`read-only home, tokens create: exit ${token.status}: ${token.stderr.trim()}`)
      assert.notStrictEqual(token.status, 0)
      assert.match(token.stderr, /permission denied|EACCES|read-only|cannot write/i)
      assert.notMatch(token.stderr + token.stdout, /wmcp_|"token"/, "no token shown that was never saved")

      // The daemon: its existing token still works, a call is answered (the activity line cannot be written).
      const listed = await rpc(endpoint, secret, "tools/list", {}, "ro-list")
      assert.strictEqual(listed.status, 200)
      const conns = await callTool(endpoint, secret, "list_connections", {}, "ro-conns")
      assert.notStrictEqual(conns.json.result?.isError, true, toolText(conns))
      assert.match(toolText(conns), /\bc\b/)
      assert.strictEqual(child.exitCode, null, "the daemon is still running")
      // What the daemon writes itself fails loudly: the call's activity line is refused by the file system and logged.
      const logged = await eventually("the activity.log write error logged", () => /cannot write activity\.log.*EACCES/.exec(stderr)?.[0], 50)
      console.log(`read-only home, daemon: ${logged}`)

      // Permissions back while it runs: the daemon writes its activity again, with an intact hash chain.
      NodeFs.chmodSync(home, 0o700)
      for (const f of NodeFs.readdirSync(home)) NodeFs.chmodSync(NodePath.join(home, f), 0o600)
      assert.strictEqual((await rpc(endpoint, secret, "tools/list", {}, "rw-list")).status, 200)
      const activity = NodePath.join(home, "activity.log")
      await eventually("activity written again", () => NodeFs.existsSync(activity) && NodeFs.readFileSync(activity, "utf8").includes("tools/list") ? true : undefined, 50)
      const verified = await cli("activity", "--verify")
      assert.strictEqual(verified.code, 0, verified.stdout + verified.stderr)

      // Nothing lost: every file as it was.
      for (const [f, text] of Object.entries(before)) {
        if (f === "activity.log" || f === "mcp-handshake.json" || f.startsWith("clients")) continue
        assert.strictEqual(NodeFs.readFileSync(NodePath.join(home, f), "utf8"), text, f)
      }
    } finally {
      NodeFs.chmodSync(home, 0o700)
      for (const f of NodeFs.readdirSync(home)) NodeFs.chmodSync(NodePath.join(home, f), 0o600)
      child.kill("SIGTERM")
      await exited
    }
    // Permissions back: the CLI writes again, and what was there is still there.
    const again = await cli("connections", "list", "--json")
    assert.strictEqual(again.code, 0, again.stderr)
    assert.include(again.stdout, "\"c\"")
  }, 90_000)
})
