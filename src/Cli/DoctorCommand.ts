/**
 * `weaviate-mcp doctor [--json] [--home DIR]`: one run checks what a user would otherwise debug by
 * hand, and says for each failing check what is wrong and the command that fixes it. Exit 0 when no
 * check fails (warnings and skipped checks included), 1 otherwise.
 *
 * The checks, in order (ids as in `--json`):
 * - `handshake`: the handshake file exists, belongs to this user and has mode 0600;
 * - `daemon`: its pid is alive and the daemon answers `server/discover` with the file's `instanceId`;
 * - `approvals`: the approval mode the daemon resolved; `deny` (headless) is a warning;
 * - `secrets`: where the connections' secrets are kept (the OS keychain or connections.json), whether
 *   a keychain answers here, and any secret the keychain should have but does not;
 * - `connection:<id>`: each saved connection answers its health check (`GET /v1/meta`, 5 s);
 * - `cluster:<id>`: and its cluster is healthy (`GET /v1/nodes` and the Raft members: every node up);
 * - `weaviate:<id>`: its Weaviate version is one we support;
 * - `permissions:<id>`: the Weaviate user behind its key, its roles and what they allow (RBAC), or
 *   that Weaviate does not restrict it by role (writes are then not checked before approval);
 * - `signin:<id>`: under OIDC, who it signed in as and when the token expires (a warning when a token
 *   that cannot be renewed expires within the hour);
 * - `client:<client>:<name>`: each client config on this machine with an entry of ours points at a
 *   `weaviate-mcp` that exists, and its bridge starts and lists the tools (or its HTTP entry's
 *   endpoint and token list them);
 * - `activity-log`: the hash chain and the head of activity.log (docs/activity.md);
 * - `history`: the query history's size, entry count and integrity (`PRAGMA quick_check`; docs/history.md);
 * - `node`: the Node version.
 *
 * `--json` prints `{"version":1,"ok":boolean,"checks":[{"id","title","status","detail","fix"}]}`,
 * `status` one of `ok`, `warn`, `fail`, `skip`, `fix` a command or `null` (docs/clients.md). No
 * token is ever printed.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import * as ActivityHead from "../Activity/ActivityHead.ts"
import * as Line from "../Activity/ActivityLine.ts"
import { readState } from "../Activity/Clients.ts"
import { Home } from "../Base/Home.ts"
import * as ClientConfig from "../Bridge/ClientConfig.ts"
import * as Handshake from "../Daemon/Handshake.ts"
import { ConnectionStore } from "../Driver/ConnectionStore.ts"
import { Driver } from "../Driver/Driver.ts"
import * as Permissions from "../Driver/Permissions.ts"
import { signInLine } from "../Driver/OidcSignIn.ts"
import { type Connection, secretLabel, secretPlaces, secretStdinFlag } from "../Schema/Connection.ts"
import { AlreadyReported } from "./CliErrors.ts"
import * as CommonOptions from "./CommonOptions.ts"
import { driverLayer } from "./DriverCli.ts"
import * as HistoryCli from "./HistoryCli.ts"
import { probe } from "./StatusCommand.ts"

// ===== Report =====

/** @category models */
export type Status = "ok" | "warn" | "fail" | "skip"

/** One check's outcome: `fix` is the command (or step) that repairs a `fail` or `warn`. @category models */
export interface Check {
  readonly id: string
  readonly title: string
  readonly status: Status
  readonly detail: string
  readonly fix: string | null
}

/** The oldest Node the package runs on (package.json `engines`). @category constants */
export const MIN_NODE_MAJOR = 20
/** The oldest Weaviate the driver is written for; the tests run against 1.39. @category constants */
export const MIN_WEAVIATE = "1.25.0"

const check = (id: string, title: string, status: Status, detail: string, fix: string | null = null): Check => ({ id, title, status, detail, fix })

const q = (path: string) => (/^[\w@%+=:,./-]+$/.test(path) ? path : JSON.stringify(path))

const versionAtLeast = (version: string, minimum: string) => {
  const a = version.split(/[.-]/).map((p) => Number.parseInt(p, 10))
  const b = minimum.split(".").map((p) => Number.parseInt(p, 10))
  for (let i = 0; i < b.length; i++) {
    const x = Number.isNaN(a[i] ?? Number.NaN) ? 0 : a[i]!
    if (x !== b[i]) return x > b[i]!
  }
  return true
}

// ===== Probes =====

/** What the stdio bridge of a client entry did when started and asked for the tools. */
type BridgeAnswer = { readonly ok: true; readonly tools: number } | { readonly ok: false; readonly reason: string }

/**
 * Starts a client entry's bridge as the client would, initializes a session and lists the tools;
 * the bridge is ended afterwards. Bounded by `timeoutMs`.
 */
const startBridge = (command: string, args: ReadonlyArray<string>, timeoutMs: number) =>
  new Promise<BridgeAnswer>((resolve) => {
    let settled = false
    let out = ""
    let err = ""
    const child = NodeChild.spawn(command, [...args], { stdio: ["pipe", "pipe", "pipe"] })
    const done = (answer: BridgeAnswer) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      child.stdin.end()
      child.kill("SIGTERM")
      resolve(answer)
    }
    const timer = setTimeout(() => done({ ok: false, reason: `it did not list the tools within ${timeoutMs / 1000} s` }), timeoutMs)
    child.on("error", (error) => done({ ok: false, reason: `it cannot be started (${error.message})` }))
    child.on("exit", (code) => done({ ok: false, reason: `it exited (${code}) before listing the tools${err.trim() === "" ? "" : `: ${err.trim().split("\n")[0]}`}` }))
    child.stderr.on("data", (d) => (err += d))
    child.stdout.on("data", (d) => {
      out += d
      let end: number
      while ((end = out.indexOf("\n")) !== -1) {
        const text = out.slice(0, end)
        out = out.slice(end + 1)
        let message: { id?: unknown; result?: { tools?: unknown }; error?: { message?: unknown } }
        try {
          message = JSON.parse(text)
        } catch {
          continue
        }
        if (message.id !== 2) continue
        if (Array.isArray(message.result?.tools)) done({ ok: true, tools: message.result.tools.length })
        else done({ ok: false, reason: `tools/list failed: ${String(message.error?.message ?? "no tools in the answer")}` })
      }
    })
    const send = (message: unknown) => child.stdin.write(JSON.stringify(message) + "\n")
    child.stdin.on("error", () => undefined)
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "weaviate-mcp-doctor", version: "1" } } })
    send({ jsonrpc: "2.0", method: "notifications/initialized" })
    send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} })
  })

/** Lists the tools over HTTP with an entry's own URL and headers. */
const listOverHttp = async (url: string, headers: Record<string, string>): Promise<BridgeAnswer> => {
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        ...headers,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": Handshake.PROTOCOL_VERSION,
        "mcp-method": "tools/list"
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { _meta: { "io.modelcontextprotocol/protocolVersion": Handshake.PROTOCOL_VERSION, "io.modelcontextprotocol/clientInfo": { name: "weaviate-mcp-doctor", version: "1" }, "io.modelcontextprotocol/clientCapabilities": {} } }
      }),
      signal: AbortSignal.timeout(5000)
    })
    if (response.status === 401) return { ok: false, reason: "its token is not accepted (revoked, expired or from another home)" }
    const json = (await response.json().catch(() => ({}))) as { result?: { tools?: unknown }; error?: { message?: unknown } }
    if (response.status === 200 && Array.isArray(json.result?.tools)) return { ok: true, tools: json.result.tools.length }
    return { ok: false, reason: `tools/list answered HTTP ${response.status}${json.error?.message === undefined ? "" : ` (${String(json.error.message)})`}` }
  } catch (error) {
    return { ok: false, reason: `nothing answers on ${url} (${(error as Error).message})` }
  }
}

const isFile = (path: string) => NodeFs.stat(path).then((s) => s.isFile(), () => false)

// ===== Checks =====

/** The handshake file and the daemon; returns the daemon's port when it runs. */
const daemonChecks = Effect.gen(function*() {
  const home = yield* Home
  const path = home.path("handshake")
  const checks: Array<Check> = []
  const stat = yield* Effect.promise(() => NodeFs.stat(path).catch(() => undefined))
  if (stat === undefined) {
    checks.push(check("handshake", "handshake file", "skip", `no handshake file at ${path} (written by a running daemon)`))
  } else if (typeof process.getuid === "function" && stat.uid !== process.getuid()) {
    checks.push(check("handshake", "handshake file", "fail", `${path} belongs to uid ${stat.uid}, not to you (uid ${process.getuid()})`,
      `rm ${q(path)}, then start the daemon as yourself: weaviate-mcp serve --home ${q(home.dir)}`))
  } else if (process.platform !== "win32" && (stat.mode & 0o077) !== 0) {
    checks.push(check("handshake", "handshake file", "fail", `${path} has mode ${(stat.mode & 0o777).toString(8).padStart(4, "0")}: others can read the bridge token in it`, `chmod 600 ${q(path)}`))
  } else {
    checks.push(check("handshake", "handshake file", "ok", `${path}: yours, mode 0600`))
  }
  const serve = `weaviate-mcp serve --home ${q(home.dir)}`
  const probed = yield* Effect.either(probe)
  if (probed._tag === "Left") {
    const reason = probed.left.reason
    const stale = /stale handshake|nothing answers|not the daemon/.test(reason)
    checks.push(check("daemon", "daemon", "fail", `the daemon is not running: ${reason}`, stale ? `${serve} (it takes over the stale handshake file)` : serve))
    return { checks, running: undefined }
  }
  const { handshake, url, discovered } = probed.right
  checks.push(discovered === undefined
    ? check("daemon", "daemon", "warn", `running (pid ${handshake.pid}) on ${url}, but AI access is paused: server/discover is refused`, "weaviate-mcp resume")
    : check("daemon", "daemon", "ok", `running (pid ${handshake.pid}) on ${url}, version ${discovered.version}; server/discover names instance ${handshake.instanceId}, as its handshake file does`))
  const state = Option.filter(yield* readState(), (s) => s.instanceId === handshake.instanceId)
  if (Option.isNone(state)) {
    checks.push(check("approvals", "approval mode", "skip", "the daemon has not written its state file yet"))
  } else if (state.value.approvals === "deny" || state.value.approvals === "unavailable") {
    checks.push(check("approvals", "approval mode", "warn",
      `the daemon resolved approvals to ${state.value.approvals}: no dialog or terminal can ask you (headless), so first access to a connection and writes are refused unless the AI client's own approval form suffices`,
      `${serve} --approvals exec --approval-command CMD (works without a display), or grant access up front: weaviate-mcp tokens create --name NAME --connections ID`))
  } else {
    checks.push(check("approvals", "approval mode", "ok", `the daemon resolved approvals to ${state.value.approvals}`))
  }
  return { checks, running: { port: handshake.port } }
})

/** Each saved connection's health, and its Weaviate version. */
const connectionChecks = Effect.gen(function*() {
  const home = yield* Home
  const listed = yield* Effect.either((yield* ConnectionStore).list)
  if (listed._tag === "Left") {
    return [check("connections", "connections", "fail", `the saved connections cannot be read: ${listed.left.message}`, `fix or restore ${q(home.path("connections"))}`)]
  }
  const connections = listed.right
  const driver = yield* Driver
  const secrets = yield* secretsCheck(connections)
  /** With clusters: the cluster's health (every node, and the Raft members), asked only of a connection that answers. */
  const clusterCheck = (connection: (typeof connections)[number]) =>
    driver.cluster(connection.id).pipe(
      Effect.timeout("5 seconds"),
      Effect.match({
        onSuccess: (status): Check =>
          status.health === "healthy"
            ? check(`cluster:${connection.id}`, `cluster of ${connection.name}`, "ok", `${status.nodes.length} node(s), healthy`)
            : check(`cluster:${connection.id}`, `cluster of ${connection.name}`, "fail",
              `the cluster is ${status.health}: ${status.problems.map((p) => p.detail).join("; ") || status.error || "no node answers"}`,
              `bring the named nodes back (their logs say why they stopped), then weaviate-mcp connections test ${connection.name}`),
        onFailure: (error): Check =>
          error._tag === "PermissionDenied"
            ? check(`cluster:${connection.id}`, `cluster of ${connection.name}`, "warn", `its nodes cannot be listed (GET /v1/nodes): ${error.message}`,
              `give the Weaviate user a role with read_nodes to see the cluster's health`)
            : check(`cluster:${connection.id}`, `cluster of ${connection.name}`, "fail", `its nodes cannot be listed (GET /v1/nodes): ${error.message}`,
              `weaviate-mcp connections test ${connection.name}`)
      })
    )
  /** Who the connection is in Weaviate and what its roles allow (RBAC); informational unless they cannot be read. */
  const permissionsCheck = (connection: (typeof connections)[number]) =>
    driver.permissions(connection.id).pipe(
      Effect.timeout("5 seconds"),
      Effect.match({
        onSuccess: ({ value }): Check =>
          check(`permissions:${connection.id}`, `permissions of ${connection.name}`, "ok",
            value._tag === "Rbac"
              ? Permissions.line(value)
              : `${Permissions.line(value)}; writes are not checked against Weaviate permissions before approval`),
        onFailure: (error): Check =>
          check(`permissions:${connection.id}`, `permissions of ${connection.name}`, "warn", `its user and permissions cannot be read (GET /v1/users/own-info): ${error.message}`,
            `weaviate-mcp connections test ${connection.name}`)
      })
    )
  /** OIDC: who the connection signed in as and when its token expires (never the token). */
  const signInCheck = (connection: (typeof connections)[number]) =>
    Effect.map(Effect.option(driver.http(connection.id)), (http): ReadonlyArray<Check> => {
      const who = Option.getOrUndefined(http)?.identity()
      if (who === undefined) return []
      const soon = !who.renewable && who.expiresAt !== undefined && who.expiresAt - Date.now() < 3_600_000
      return [check(`signin:${connection.id}`, `sign-in of ${connection.name}`, soon ? "warn" : "ok", signInLine(who),
        soon ? `weaviate-mcp connections update ${connection.name} --oidc-access-token-stdin --oidc-refresh-token-stdin` : null)]
    })
  const results = yield* Effect.forEach(connections, (connection) =>
    driver.health(connection.id).pipe(
      Effect.timeout("5 seconds"),
      Effect.match({
        onSuccess: (health): ReadonlyArray<Check> => [
          check(`connection:${connection.id}`, `connection ${connection.name}`, "ok", `${connection.name} (${connection.id}) answers: Weaviate ${health.version}, ${health.latencyMs} ms`),
          versionAtLeast(health.version, MIN_WEAVIATE)
            ? check(`weaviate:${connection.id}`, `Weaviate version of ${connection.name}`, "ok", `Weaviate ${health.version} is supported (${MIN_WEAVIATE} or newer)`)
            : check(`weaviate:${connection.id}`, `Weaviate version of ${connection.name}`, "fail", `Weaviate ${health.version} is older than ${MIN_WEAVIATE}, the oldest supported`, `upgrade the Weaviate server of ${connection.name} to ${MIN_WEAVIATE} or newer`)
        ],
        onFailure: (error): ReadonlyArray<Check> => [
          check(`connection:${connection.id}`, `connection ${connection.name}`, "fail", `${connection.name} (${connection.id}) does not answer its health check: ${error.message}`,
            `start its Weaviate server, or fix its settings: weaviate-mcp connections update ${connection.name} --host HOST --port PORT, then weaviate-mcp connections test ${connection.name}`)
        ]
      }),
      Effect.flatMap((checks) =>
        checks[0]?.status === "ok"
          ? Effect.map(Effect.all([clusterCheck(connection), permissionsCheck(connection)], { concurrency: 2 }), (more) => [...checks, ...more])
          : Effect.succeed(checks)),
      Effect.flatMap((checks) => checks[0]?.status === "ok" ? Effect.map(signInCheck(connection), (signIn) => [...checks, ...signIn]) : Effect.succeed(checks))
    ), { concurrency: 4 })
  return [...secrets, ...results.flat()]
})

/**
 * Where the connections' secrets are kept: the OS keychain or connections.json, whether a keychain
 * answers here, and each secret the file says is in the keychain but the keychain does not have
 * (a home moved from another machine): that one must be entered again.
 */
const secretsCheck = (connections: ReadonlyArray<Connection>) =>
  Effect.gen(function*() {
    const places = connections.map((c) => ({ c, places: secretPlaces(c) }))
    const inKeychain = places.flatMap(({ places }) => Object.values(places).filter((p) => p === "keychain")).length
    const inFile = places.flatMap(({ places }) => Object.values(places).filter((p) => p === "file")).length
    const missing = connections.flatMap((c) => (c.keychain ?? []).filter((f) => c[f] === undefined).map((f) => ({ c, f })))
    if (inKeychain + inFile === 0) return []
    const availability = yield* (yield* ConnectionStore).secretStore
    const where = availability.available ? "an OS keychain answers here" : `no OS keychain answers here (${availability.reason})`
    const counts = `${inKeychain} secret(s) in the OS keychain, ${inFile} in connections.json (mode 0600); ${where}`
    if (missing.length > 0) {
      return [check("secrets", "secrets", "fail",
        `${counts}; not in the keychain here: ${missing.map(({ c, f }) => `the ${secretLabel[f]} of ${c.name}`).join(", ")}`,
        missing.map(({ c, f }) => `weaviate-mcp connections update ${c.name} ${secretStdinFlag[f]}`).join("; "))]
    }
    if (inFile > 0 && availability.available) {
      return [check("secrets", "secrets", "warn", `${counts}: the secrets in the file can move there`, "weaviate-mcp connections migrate-secrets")]
    }
    return [check("secrets", "secrets", "ok", counts)]
  })

/** The client configs of this machine that name weaviate-mcp. */
const clientChecks = (running: { readonly port: number } | undefined) =>
  Effect.gen(function*() {
    const home = yield* Home
    const checks: Array<Check> = []
    for (const client of ClientConfig.CLIENTS) {
      const file = ClientConfig.configPath(client)
      const text = yield* Effect.promise(() => NodeFs.readFile(file, "utf8").catch(() => undefined))
      if (text === undefined) continue
      const read = yield* Effect.either(Effect.tryPromise(() => ClientConfig.entries(client, file, text)))
      if (read._tag === "Left") {
        const reason = read.left.cause instanceof Error ? read.left.cause.message : String(read.left.cause)
        checks.push(check(`client:${client}`, `${client} config`, "warn", `${file} cannot be read: ${reason}`, `fix ${q(file)} by hand`))
        continue
      }
      for (const [name, entry] of Object.entries(read.right)) {
        if (!ClientConfig.isOurs(entry)) continue
        const id = `client:${client}:${name}`
        const title = `${client} entry "${name}"`
        const rewrite = `weaviate-mcp setup ${client} --write --home ${q(home.dir)}${name === "weaviate" ? "" : ` --name ${q(name)}`}`
        const record = entry as Record<string, unknown>
        const http = ClientConfig.endpoint(entry)
        if (http !== undefined) {
          const url = http.url
          const port = Number(/:(\d+)\/mcp$/.exec(url)?.[1])
          if (running === undefined) {
            checks.push(check(id, title, "skip", `${file}: points at ${url}; not tried, the daemon is not running`))
            continue
          }
          if (port !== running.port) {
            checks.push(check(id, title, "fail", `${file}: points at ${url}, but the daemon listens on port ${running.port}`, `${rewrite} --token NAME (or start the daemon on port ${port}: weaviate-mcp serve --port ${port})`))
            continue
          }
          const answer = yield* Effect.promise(() => listOverHttp(url, http.headers))
          checks.push(answer.ok
            ? check(id, title, "ok", `${file}: ${url} lists ${answer.tools} tools with the entry's token`)
            : check(id, title, "fail", `${file}: ${answer.reason}`, `${rewrite} --token NAME`))
          continue
        }
        const command = typeof record["command"] === "string" ? record["command"] : ""
        const args = Array.isArray(record["args"]) ? record["args"].filter((a): a is string => typeof a === "string") : []
        const program = [command, ...args].find((part) => /weaviate-mcp(\.m?js)?$/.test(part)) ?? command
        const absent: Array<string> = []
        for (const path of new Set([command, program])) if (NodePath.isAbsolute(path) && !(yield* Effect.promise(() => isFile(path)))) absent.push(path)
        if (absent.length > 0) {
          checks.push(check(id, title, "fail", `${file}: points at ${absent.join(" and ")}, which does not exist`, rewrite))
          continue
        }
        const homeAt = args.indexOf("--home")
        const entryHome = homeAt === -1 ? undefined : args[homeAt + 1]
        if (entryHome !== undefined && NodePath.resolve(entryHome) !== home.dir) {
          checks.push(check(id, title, "skip", `${file}: its bridge serves the home ${entryHome}, not ${home.dir}`, `weaviate-mcp doctor --home ${q(entryHome)}`))
          continue
        }
        if (running === undefined) {
          checks.push(check(id, title, "skip", `${file}: ${program} exists; its bridge was not started, the daemon is not running`))
          continue
        }
        const answer = yield* Effect.promise(() => startBridge(command, args, 15_000))
        checks.push(answer.ok
          ? check(id, title, "ok", `${file}: its bridge (${program}) starts and lists ${answer.tools} tools`)
          : check(id, title, "fail", `${file}: its bridge (${program}) ${answer.reason}`, rewrite))
      }
    }
    return checks
  })

/** The activity log's chain and head. */
const activityCheck = Effect.gen(function*() {
  const home = yield* Home
  const path = home.path("activity")
  const content = yield* Effect.promise(() => NodeFs.readFile(path, "utf8").catch(() => undefined))
  if (content === undefined) return check("activity-log", "activity log", "ok", `no activity.log yet (${path})`)
  const aside = `mv ${q(path)} ${q(`${path}.damaged`)} && rm -f ${q(ActivityHead.pathIn(home.dir))} (keeps the damaged log for inspection; the daemon starts a new one)`
  const chain = Line.verify(content)
  if (chain._tag === "Broken") return check("activity-log", "activity log", "fail", `activity.log: line ${chain.line} no longer matches its hash (${chain.reason})`, aside)
  const comparison = ActivityHead.compare(content, yield* ActivityHead.read(home.dir))
  return ActivityHead.failed(comparison)
    ? check("activity-log", "activity log", "fail", `activity.log: ${ActivityHead.describe(comparison)}`, aside)
    : check("activity-log", "activity log", "ok", `activity.log: ${ActivityHead.describe(comparison)}`)
})

/** The query history: size, entries, `PRAGMA quick_check`; a damaged or unloadable store fails. */
const historyCheck = Effect.scoped(Effect.gen(function*() {
  const configured = yield* HistoryCli.settings
  const history = yield* HistoryCli.open({ forReading: true })
  const state = history.state()
  const off = configured.enabled ? "" : " (recording is off: history.enabled is false)"
  if (state._tag === "Off") {
    return check("history", "query history", "fail", `the query history is off: ${state.reason}`, state.damaged ? "weaviate-mcp history clear --yes (sets the damaged file aside), then restart serve" : "npm rebuild better-sqlite3 in the package's directory, then restart serve")
  }
  const stats = yield* Effect.either(history.stats)
  if (stats._tag === "Left") return check("history", "query history", "fail", stats.left.message, "weaviate-mcp history clear --yes, then restart serve")
  const { bytes, entries, path, quickCheck } = stats.right
  const size = `${(bytes / 1024 / 1024).toFixed(1)} MB`
  return quickCheck === "ok"
    ? check("history", "query history", "ok", `${path}: ${entries} entries, ${size}, quick_check ok${off}`)
    : check("history", "query history", "fail", `${path}: quick_check found: ${quickCheck}`, "weaviate-mcp history clear --yes (sets the damaged file aside), then restart serve")
}))

const nodeCheck = (): Check => {
  const major = Number.parseInt(process.versions.node.split(".")[0] ?? "0", 10)
  return major >= MIN_NODE_MAJOR
    ? check("node", "Node version", "ok", `Node ${process.versions.node} (${MIN_NODE_MAJOR} or newer is supported)`)
    : check("node", "Node version", "fail", `Node ${process.versions.node} is older than ${MIN_NODE_MAJOR}`, `install Node ${MIN_NODE_MAJOR} or newer`)
}

/**
 * Runs every check.
 *
 * @category checks
 */
export const run = Effect.gen(function*() {
  const daemon = yield* daemonChecks
  const connections = yield* connectionChecks
  const clients = yield* clientChecks(daemon.running)
  const checks = [...daemon.checks, ...connections, ...clients, yield* activityCheck, yield* historyCheck, nodeCheck()]
  return { version: 1 as const, ok: checks.every((c) => c.status !== "fail"), checks }
})

const LABEL: Record<Status, string> = { ok: "ok  ", warn: "WARN", fail: "FAIL", skip: "skip" }

/** The report as text: one line per check, its fix below it. @category formatting */
export const render = (report: { readonly ok: boolean; readonly checks: ReadonlyArray<Check> }): string =>
  [
    ...report.checks.flatMap((c) => [`${LABEL[c.status]}  ${c.title}: ${c.detail}`, ...(c.fix === null ? [] : [`      fix: ${c.fix}`])]),
    report.ok ? "All checks passed." : `${report.checks.filter((c) => c.status === "fail").length} check(s) failed.`
  ].join("\n")

/** `doctor`. @category commands */
export const doctorCommand = Command.make("doctor", { home: CommonOptions.home, json: CommonOptions.json }, (flags) =>
  Effect.gen(function*() {
    const report = yield* run
    yield* Console.log(flags.json ? JSON.stringify(report, null, 2) : render(report))
    if (!report.ok) return yield* new AlreadyReported()
  }).pipe(
    Effect.provide(driverLayer(flags.home)),
    Effect.provide(CommonOptions.homeLayer(flags.home))
  )).pipe(Command.withDescription("Check the daemon, connections, client configs, approvals, the activity log, the query history and versions; exit 1 when a check fails"))
