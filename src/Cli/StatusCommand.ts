/**
 * `weaviate-mcp status [--json]`: is the daemon running, and how. From the handshake file (trusted
 * only if owned by the current user, mode 0600, its pid alive) and `server/discover` on its port
 * (which must answer with the same `instanceId`); the daemon's state file adds the resolved approval
 * mode; settings.json says whether AI access is paused; tokens.json gives the token count; each
 * connection is checked (`GET /v1/meta`, 5 s), with the Weaviate user behind it and what its roles
 * allow (RBAC). Exit 1 when the daemon is not running.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs/promises"
import { readState } from "../Activity/Clients.ts"
import { ConnectionStore } from "../Driver/ConnectionStore.ts"
import * as Cluster from "../Driver/Cluster.ts"
import { Driver } from "../Driver/Driver.ts"
import * as Permissions from "../Driver/Permissions.ts"
import * as Handshake from "../Daemon/Handshake.ts"
import { Home } from "../Base/Home.ts"
import * as Pause from "../Daemon/Pause.ts"
import { statusAt, TokenStore } from "../Auth/TokenStore.ts"
import * as CommonOptions from "./CommonOptions.ts"
import { driverLayer } from "./DriverCli.ts"

/** The daemon is not running (or its handshake file cannot be trusted). @category errors */
export class NotRunning extends Schema.TaggedError<NotRunning>()("NotRunning", { reason: Schema.String }) {
  override get message() {
    return `weaviate-mcp is not running: ${this.reason}`
  }
}

/** What `server/discover` told. @category models */
export interface Discovered {
  readonly version: string
  readonly supportedVersions: ReadonlyArray<string>
}

/**
 * The running daemon of the home, verified: the handshake file and the discover answer.
 *
 * @category reading
 */
export const probe = Effect.gen(function*() {
  const home = yield* Home
  const file = yield* Handshake.read()
  if (Option.isNone(file)) return yield* new NotRunning({ reason: "no handshake file" })
  const handshake = file.value
  const stat = yield* Effect.promise(() => NodeFs.stat(home.path("handshake")).catch(() => undefined))
  if (stat === undefined) return yield* new NotRunning({ reason: "no handshake file" })
  if (typeof process.getuid === "function" && stat.uid !== process.getuid()) {
    return yield* new NotRunning({ reason: "the handshake file belongs to another user" })
  }
  if (process.platform !== "win32" && (stat.mode & 0o077) !== 0) {
    return yield* new NotRunning({ reason: "the handshake file is readable by others (mode is not 0600)" })
  }
  if (!Handshake.isPidAlive(handshake.pid)) return yield* new NotRunning({ reason: `the process ${handshake.pid} is gone (stale handshake file)` })
  const url = `http://127.0.0.1:${handshake.port}/mcp`
  const body = yield* Effect.tryPromise(async () => {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${handshake.token}`,
        "mcp-protocol-version": handshake.protocolVersion,
        "mcp-method": "server/discover"
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "server/discover",
        params: { _meta: { "io.modelcontextprotocol/protocolVersion": handshake.protocolVersion, "io.modelcontextprotocol/clientInfo": { name: "weaviate-mcp-status", version: "1" }, "io.modelcontextprotocol/clientCapabilities": {} } }
      }),
      signal: AbortSignal.timeout(5000)
    })
    return { status: response.status, json: (await response.json()) as Record<string, any> }
  }).pipe(Effect.mapError(() => new NotRunning({ reason: `nothing answers on ${url}` })))
  const result = body.json.result
  if (body.status === 503 && body.json.error?.code === -33006) {
    // Paused: the daemon answers, but not server/discover.
    return { handshake, url, discovered: undefined as Discovered | undefined }
  }
  if (body.status !== 200 || result === undefined || result.serverInfo?.instanceId !== handshake.instanceId) {
    const why = body.status === 200 ? "answers with another instance id" : `answered HTTP ${body.status}${body.json.error ? ` (${body.json.error.code} ${body.json.error.message})` : ""}`
    return yield* new NotRunning({ reason: `the server on ${url} is not the daemon named by the handshake file: it ${why}` })
  }
  return { handshake, url, discovered: { version: String(result.serverInfo.version), supportedVersions: result.supportedVersions as Array<string> } }
})

const formatUptime = (ms: number) => {
  const s = Math.floor(ms / 1000)
  const d = Math.floor(s / 86400)
  const h = Math.floor((s % 86400) / 3600)
  const m = Math.floor((s % 3600) / 60)
  return `${d > 0 ? `${d}d ` : ""}${h > 0 || d > 0 ? `${h}h ` : ""}${m}m ${s % 60}s`
}

/** @category commands */
export const statusCommand = Command.make("status", { home: CommonOptions.home, json: CommonOptions.json }, (flags) =>
  Effect.gen(function*() {
    const { discovered, handshake, url } = yield* probe
    const state = yield* readState()
    const facts = Option.filter(state, (s) => s.instanceId === handshake.instanceId)
    const paused = yield* Pause.readPaused
    const now = Date.now()
    const tokens = yield* Effect.map((yield* TokenStore).list, (list) => list.filter((t) => statusAt(t, now) === "active").length)
    const connections = yield* (yield* ConnectionStore).list
    const driver = yield* Driver
    const health = yield* Effect.forEach(connections, (connection) =>
      Effect.all([
        driver.health(connection.id),
        // A user without `read_nodes` (RBAC): the cluster is not known, the connection still answers.
        Cluster.unknownWhenDenied(driver.cluster(connection.id)),
        Effect.option(driver.permissions(connection.id))
      ], { concurrency: 3 }).pipe(
        Effect.timeout("5 seconds"),
        Effect.match({
          onSuccess: ([h, cluster, access]) => ({
            id: connection.id,
            name: connection.name,
            ok: true,
            version: h.version,
            latencyMs: h.latencyMs,
            cluster: { health: cluster.health, summary: Cluster.summary(cluster), nodes: cluster.nodes },
            ...(access._tag === "Some" ? { permissions: Permissions.toJson(access.value.value) } : {})
          }),
          onFailure: (e) => ({ id: connection.id, name: connection.name, ok: false, error: e.message })
        })
      ), { concurrency: 4 })
    const report = {
      running: true,
      pid: handshake.pid,
      url,
      startedAt: handshake.startedAt,
      uptimeSeconds: Math.floor((now - Date.parse(handshake.startedAt)) / 1000),
      version: discovered?.version ?? null,
      supportedVersions: discovered?.supportedVersions ?? [],
      approvals: Option.match(facts, { onNone: () => null, onSome: (s) => s.approvals }),
      paused,
      tokens,
      connections: health
    }
    if (flags.json) return yield* Console.log(JSON.stringify(report, null, 2))
    yield* Console.log([
      `weaviate-mcp is running (pid ${report.pid}) on ${url}`,
      `  version:     ${report.version ?? "unknown (paused)"}`,
      `  revisions:   ${report.supportedVersions.join(", ") || "unknown (paused)"}`,
      `  uptime:      ${formatUptime(now - Date.parse(handshake.startedAt))}`,
      `  approvals:   ${report.approvals ?? "unknown"}`,
      `  AI access:   ${paused ? "PAUSED (weaviate-mcp resume)" : "on"}`,
      `  tokens:      ${tokens} active`,
      `  connections: ${health.length === 0 ? "none" : ""}`,
      ...health.flatMap((h) => [
        `    ${h.ok ? "ok  " : "FAIL"} ${h.name} (${h.id})${"version" in h ? ` Weaviate ${h.version}, ${h.latencyMs} ms, cluster ${h.cluster.summary}` : `: ${h.error}`}`,
        ...("permissions" in h && h.permissions !== undefined ? [`         ${Permissions.line(h.permissions)}`] : [])
      ])
    ].join("\n"))
  }).pipe(
    Effect.provide(TokenStore.layerOneShot),
    Effect.provide(driverLayer(flags.home)),
    Effect.provide(CommonOptions.homeLayer(flags.home))
  )).pipe(Command.withDescription("Is the daemon running: pid, URL, uptime, version, approvals, paused, tokens, connection health; exit 1 when not"))
