/**
 * The local web console, served by the daemon under `/console`: the page, its assets and a small
 * JSON API (with a live event stream) over what the daemon knows: the calls, the clients, the tokens,
 * the connections, the pause switch, the approvals waiting and the query history.
 *
 * It answers the paths the endpoint does not (`Endpoint.OtherRoutes`): `/mcp` requests never reach
 * it and do no more work for it.
 *
 * Rules, each with a test (test/Daemon/Console.test.ts, test/Reliability/ConsoleBrowser.test.ts):
 * - the `Host` must name loopback and the daemon's port (`Endpoint.isAllowedHost`, the check of
 *   `/mcp`, so a DNS-rebinding page is refused); an `Origin`, when sent, must be the console's own
 *   (`http://<Host>`): the origins allowed on `/mcp` are not allowed here;
 * - everything but the page and its assets needs the session cookie (`ConsoleSessions`); an MCP
 *   bearer token opens nothing here, and the cookie opens nothing on `/mcp`;
 * - every state-changing request (POST) needs the cookie and the session's CSRF token
 *   (`x-csrf-token`), is refused from another origin, and must be JSON;
 * - the command line's two requests (a sign-in code, signing every session out) carry the key of
 *   `console-key.json` and no `Origin` (a browser cannot send them);
 * - every answer carries a strict Content-Security-Policy (nothing but the daemon's own scripts,
 *   styles and connections; no inline script), `X-Frame-Options: DENY`, `frame-ancestors 'none'`,
 *   `nosniff`, no referrer, and is not cached;
 * - secrets are never rendered: tokens are listed without them (a new token is in the answer to the
 *   request that created it, once), connections without their API keys or URL credentials.
 *
 * @since 0.1.0
 */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { ActivityLog } from "../Activity/ActivityLog.ts"
import { Clients } from "../Activity/Clients.ts"
import { PendingApprovals } from "../Approval/PendingApprovals.ts"
import { statusAt, toJson, TokenStore } from "../Auth/TokenStore.ts"
import { Home } from "../Base/Home.ts"
import * as Redaction from "../Base/Redaction.ts"
import * as Version from "../Base/Version.ts"
import * as Cluster from "../Driver/Cluster.ts"
import { ConnectionStore } from "../Driver/ConnectionStore.ts"
import { Driver } from "../Driver/Driver.ts"
import { HistoryStore } from "../History/HistoryStore.ts"
import { isAllowedHost, OtherRoutes } from "../Mcp/Endpoint.ts"
import * as HttpTransport from "../Mcp/HttpTransport.ts"
import { PauseSwitch } from "../Mcp/PauseSwitch.ts"
import { ServerInstance } from "../Mcp/ServerInstance.ts"
import { AccessLevel, Scope } from "../Schema/Policy.ts"
import * as ConsoleFeed from "./ConsoleFeed.ts"
import type * as Wire from "./ConsoleWire.ts"
import {
  clearedCookie,
  ConsoleSessions,
  cookieValue,
  COOKIE,
  CSRF_HEADER,
  KEY_HEADER,
  type Options as SessionOptions,
  sameSecret,
  type Session,
  sessionCookie
} from "./ConsoleSessions.ts"
import { PauseControl } from "./Pause.ts"

// ===== Options =====

/** @category models */
export interface Options extends SessionOptions {
  /** Where the built page is (`dist/console`); found from the package by default. */
  readonly assetsDir?: string | undefined
  /** The approval mode `serve` was given, shown beside the approvals waiting. */
  readonly approvals?: string | undefined
  /** Keep-alive comment interval of the live stream (default 15 s). */
  readonly keepAliveMs?: number | undefined
}

/** Largest request body the console reads. @category constants */
export const MAX_BODY_BYTES = 64 * 1024

/** Live streams open at once (the transport has 64 connections). @category constants */
export const MAX_STREAMS = 8

/** The Content-Security-Policy of every answer. @category constants */
export const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** The headers of every answer. @category constants */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": CSP,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
  "cache-control": "no-store"
}

// ===== Assets =====

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png"
}

/** The built page: `dist/console` of the package this module belongs to (src/ or dist/, bundled or not). */
export const findAssets = (from: string = import.meta.dirname): string | undefined => {
  let dir = from
  for (let i = 0; i < 6; i++) {
    const candidate = NodePath.join(dir, "dist", "console")
    if (NodeFs.existsSync(NodePath.join(candidate, "index.html"))) return candidate
    const parent = NodePath.dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  return undefined
}

/** Every file of the built page, read once at start (a few dozen KB). */
const loadAssets = (dir: string | undefined): ReadonlyMap<string, { readonly type: string; readonly body: Uint8Array }> => {
  const out = new Map<string, { type: string; body: Uint8Array }>()
  if (dir === undefined) return out
  for (const name of NodeFs.readdirSync(dir)) {
    const type = TYPES[NodePath.extname(name)]
    if (type === undefined) continue
    out.set(name, { type, body: NodeFs.readFileSync(NodePath.join(dir, name)) })
  }
  return out
}

// ===== Answers =====

const answer = (status: number, value: unknown, headers: Readonly<Record<string, string>> = {}): HttpTransport.HttpResponse =>
  HttpTransport.json(status, value, HttpTransport.withHeaders(SECURITY_HEADERS, headers))

const failure = (status: number, error: string, headers: Readonly<Record<string, string>> = {}) => answer(status, { error }, headers)

const text = (status: number, body: string) =>
  HttpTransport.full(status, body, HttpTransport.withHeaders(SECURITY_HEADERS, { "content-type": "text/plain; charset=utf-8" }))

const forbiddenHost = text(403, "Forbidden: the Host header must name localhost, 127.0.0.1 or [::1] with the server's port")
const crossOrigin = failure(403, "Forbidden: the console answers only its own page (cross-origin request)")
const notFound = text(404, "Not found")
const tooLarge = failure(413, "Payload too large: the console reads at most 64 KB")
const signInNeeded = failure(401, "Sign in first: run `weaviate-mcp console`")
const bearerRefused = failure(401, "The console does not accept MCP tokens: run `weaviate-mcp console` to sign in")
const csrfRefused = failure(403, "Forbidden: missing or wrong CSRF token (x-csrf-token)")
const notJson = failure(415, "The request body must be JSON (content-type: application/json)")

const methodNotAllowed = (allow: string) =>
  HttpTransport.full(405, "Method not allowed", HttpTransport.withHeaders(SECURITY_HEADERS, { allow, "content-type": "text/plain; charset=utf-8" }))

// ===== Request bodies =====

const CodeBody = Schema.Struct({ code: Schema.String.pipe(Schema.maxLength(200)) })
const PauseBody = Schema.Struct({ paused: Schema.Boolean })
const IdBody = Schema.Struct({ id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)) })
const CreateTokenBody = Schema.Struct({
  name: Schema.String.pipe(Schema.maxLength(200)),
  access: AccessLevel,
  scopes: Schema.optional(Schema.Array(Scope)),
  connections: Schema.optional(Schema.Array(Schema.String.pipe(Schema.maxLength(200)))),
  expiresInDays: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(1, 3650)))
})

const parseBody = <A, I>(schema: Schema.Schema<A, I>, body: string): Either.Either<A, string> => {
  let value: unknown
  try {
    value = JSON.parse(body)
  } catch {
    return Either.left("The request body is not valid JSON")
  }
  return Either.mapLeft(Schema.decodeUnknownEither(schema, { onExcessProperty: "error" })(value), (error) => `Invalid request: ${error.message}`)
}

/** The URL of a connection as shown: without credentials in it. */
const shownUrl = (url: string) => {
  try {
    const parsed = new URL(url)
    parsed.username = ""
    parsed.password = ""
    return parsed.toString().replace(/\/$/, "")
  } catch {
    return url
  }
}

const messageOf = (error: unknown) =>
  Redaction.global.redact(error instanceof Error ? error.message : typeof error === "object" && error !== null && "message" in error ? String(error.message) : String(error))

// ===== The handler =====

interface Request extends HttpTransport.HttpRequest {
  readonly session?: Session | undefined
}

type Answer = Effect.Effect<HttpTransport.HttpResponse>
type Route = (request: Request, query: URLSearchParams) => Answer

/** What the routes read and change. */
interface Deps {
  readonly options: Options
  readonly now: () => number
  readonly sessions: Context.Tag.Service<ConsoleSessions>
  readonly instance: Context.Tag.Service<ServerInstance>
  readonly tokens: Context.Tag.Service<TokenStore>
  readonly clients: Context.Tag.Service<Clients>
  readonly pause: Context.Tag.Service<PauseSwitch>
  readonly control: Context.Tag.Service<PauseControl>
  readonly connections: Context.Tag.Service<ConnectionStore>
  readonly driver: Context.Tag.Service<Driver>
  readonly history: Context.Tag.Service<HistoryStore>
  readonly pending: Context.Tag.Service<PendingApprovals>
  readonly feed: ConsoleFeed.Feed
}

/** The reads behind the page's sections. */
const makeReads = (deps: Deps) => {
  const { clients, connections, driver, feed, history, instance, now, options, pause, pending, tokens } = deps

  const overview = (): Wire.Overview => ({
    paused: pause.isPaused(),
    version: Version.VERSION,
    instanceId: instance.instanceId,
    startedAt: instance.startedAt.toISOString(),
    approvals: options.approvals ?? "unknown",
    pendingApprovals: pending.list().length,
    clients: clients.seen(now())
  })

  const tokenList = Effect.zipWith(tokens.list, feed.tail, (list, tail): { readonly tokens: ReadonlyArray<Wire.TokenView> } => ({
    tokens: list.map((info) => {
      const lastUse = tail.lastUse.get(info.id)
      return { ...toJson(info, now()), lastUsedAt: lastUse === undefined ? null : new Date(lastUse).toISOString() }
    })
  }))

  const connectionList = Effect.flatMap(connections.list, (list) =>
    Effect.forEach(list, (c) =>
      Effect.map(driver.isConnected(c.id), (connected) => ({
        id: c.id,
        name: c.name,
        url: shownUrl(c.baseUrl),
        aiPolicy: c.aiPolicy,
        safeMode: c.safeMode,
        connected
      })))).pipe(Effect.map((list): { readonly connections: ReadonlyArray<Wire.ConnectionView> } => ({ connections: list })))

  /** `get_connection_status`'s checks: health through /v1/meta, then the cluster; `undefined` for an unknown id. */
  const checkConnection = (id: string): Effect.Effect<Wire.ConnectionCheck | undefined> =>
    Effect.gen(function*() {
      const connection = yield* connections.get(id)
      const health = yield* driver.connect(connection)
      const cluster = yield* driver.cluster(connection)
      return {
        id: connection.id,
        ok: true,
        version: health.version,
        latencyMs: Math.round(health.latencyMs * 10) / 10,
        cluster: {
          health: cluster.health,
          summary: Cluster.summary(cluster),
          nodes: cluster.nodes.map((n) => ({ name: n.name, status: n.status, ...(n.version === undefined ? {} : { version: n.version }) })),
          problems: cluster.problems
        }
      }
    }).pipe(
      Effect.catchTag("ConnectionNotFound", () => Effect.succeed(undefined)),
      Effect.catchAll((error) => Effect.succeed({ id, ok: false, error: messageOf(error) })),
      Effect.timeoutTo({ duration: Cluster.STATUS_TIMEOUT_MS * 2, onSuccess: (r) => r, onTimeout: () => ({ id, ok: false, error: "no answer in 10 s" }) })
    )

  const approvals = Effect.map(feed.tail, (tail): Wire.Approvals => {
    const at = now()
    return {
      mode: options.approvals ?? "unknown",
      waiting: pending.list().map((p) => ({ ...p, since: new Date(p.since).toISOString() })),
      // Forms the AI clients were asked to show their user, in the last 10 minutes.
      forms: tail.calls.filter((c) => c.outcome === "input_required" && c.time >= at - 600_000).reverse()
    }
  })

  const historySearch = (query: URLSearchParams): Answer => {
    const state = history.state()
    if (state._tag === "Off") return Effect.succeed(answer(200, { state: "off", reason: state.reason, entries: [] } satisfies Wire.HistoryAnswer))
    const search = query.get("q")?.trim() ?? ""
    const limit = Number(query.get("limit") ?? "50")
    return history.search({ ...(search === "" ? {} : { search }), limit: Number.isInteger(limit) ? Math.min(Math.max(limit, 1), 200) : 50 }).pipe(
      Effect.map((page) => answer(200, { state: "on", entries: page.entries } satisfies Wire.HistoryAnswer)),
      Effect.catchAll((error) => Effect.succeed(failure(400, `History search failed: ${messageOf(error)}`)))
    )
  }

  return { overview, tokenList, connectionList, checkConnection, approvals, historySearch }
}

/** The live streams: each belongs to a console session and ends with it. */
const makeStreams = (deps: Deps) => {
  const { feed, options, pause, sessions } = deps
  const keepAliveMs = options.keepAliveMs ?? 15_000
  const streams = new Set<{ readonly session: string; readonly push: (frame: string) => void; readonly end: () => void }>()
  pause.changes((paused) => {
    for (const stream of streams) stream.push(`event: pause\ndata: ${JSON.stringify({ paused })}\n\n`)
  })

  const end = (session?: string) => {
    for (const stream of streams) if (session === undefined || stream.session === session) stream.end()
  }

  const open = (session: Session): HttpTransport.HttpResponse => {
    if (streams.size >= MAX_STREAMS) return failure(503, "Too many live streams open: close a console tab", { "retry-after": "5" })
    const body = Stream.asyncPush<string>((emit) =>
      Effect.acquireRelease(
        Effect.sync(() => {
          const stream = { session: session.id, push: (frame: string) => void emit.single(frame), end: () => void emit.end() }
          streams.add(stream)
          // The log's calls reach the console only while a stream listens.
          const stopListening = feed.listen((calls) => stream.push(`event: calls\ndata: ${JSON.stringify(calls)}\n\n`))
          stream.push(`retry: 3000\n\nevent: pause\ndata: ${JSON.stringify({ paused: pause.isPaused() })}\n\n`)
          // Keep-alive, and the end of a console session that expired meanwhile.
          const timer = setInterval(() => {
            if (sessions.session(session.id) === undefined) stream.end()
            else stream.push(": keep-alive\n\n")
          }, keepAliveMs)
          timer.unref()
          return { stream, timer, stopListening }
        }),
        ({ stopListening, stream, timer }) =>
          Effect.sync(() => {
            clearInterval(timer)
            stopListening()
            streams.delete(stream)
          })
      ), { bufferSize: 256, strategy: "dropping" })
    return {
      _tag: "Stream",
      status: 200,
      headers: HttpTransport.withHeaders(SECURITY_HEADERS, { "content-type": "text/event-stream", "cache-control": "no-store, no-transform", "x-accel-buffering": "no" }),
      body
    }
  }

  return { open, end }
}

/** Who may ask: the command line (the key), the page (its session, and for a POST its CSRF token). */
const makeGuards = (sessions: Context.Tag.Service<ConsoleSessions>) => {
  const isJson = (request: Request) => (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase() === "application/json"

  /** The command line's requests: the key, and no browser. */
  const fromCli = (request: Request, then: () => HttpTransport.HttpResponse): Answer => {
    if (request.headers.origin !== undefined || request.headers["sec-fetch-site"] !== undefined) return Effect.succeed(crossOrigin)
    if (!sessions.isKey(request.headers[KEY_HEADER])) return Effect.succeed(failure(401, "Unknown console key: run `weaviate-mcp console` on this machine"))
    return Effect.succeed(then())
  }

  /** A read of the page: its session. */
  const signedIn = (request: Request, then: (session: Session) => Answer): Answer => {
    const session = request.session
    if (session === undefined) return Effect.succeed(request.headers.authorization !== undefined ? bearerRefused : signInNeeded)
    return then(session)
  }

  /** A state-changing request of the page: its session, its CSRF token, JSON. */
  const guarded = (request: Request, then: (session: Session) => Answer): Answer =>
    signedIn(request, (session) => {
      const csrf = request.headers[CSRF_HEADER]
      if (csrf === undefined || !sameSecret(csrf, session.csrf)) return Effect.succeed(csrfRefused)
      if (!isJson(request)) return Effect.succeed(notJson)
      return then(session)
    })

  const body = <A, I>(schema: Schema.Schema<A, I>, request: Request, then: (value: A) => Answer): Answer =>
    Either.match(parseBody(schema, request.body), { onLeft: (message) => Effect.succeed(failure(400, message)), onRight: then })

  return { isJson, fromCli, signedIn, guarded, body }
}

/** A route for GET only, for POST only, or for both. */
const methods = (routes: { readonly get?: Route; readonly post?: Route }): Route => (request, query) => {
  if ((request.method === "GET" || request.method === "HEAD") && routes.get !== undefined) return routes.get(request, query)
  if (request.method === "POST" && routes.post !== undefined) return routes.post(request, query)
  return Effect.succeed(methodNotAllowed([routes.get === undefined ? [] : ["GET"], routes.post === undefined ? [] : ["POST"]].flat().join(", ")))
}

/** Signing in and out. */
const sessionRoutes = (deps: Deps, guards: ReturnType<typeof makeGuards>, streams: { readonly end: (session?: string) => void }) => {
  const { sessions } = deps
  const iso = (ms: number) => new Date(ms).toISOString()
  return {
    code: methods({
      post: (request) =>
        guards.fromCli(request, () => {
          const issued = sessions.issueCode()
          return answer(200, { code: issued.code, expiresAt: iso(issued.expiresAt) })
        })
    }),
    "sign-out-all": methods({
      post: (request) =>
        guards.fromCli(request, () => {
          const ended = sessions.endAll()
          streams.end()
          return answer(200, { ended })
        })
    }),
    session: methods({
      get: (request) => guards.signedIn(request, (session) => Effect.succeed(answer(200, { csrf: session.csrf, expiresAt: iso(session.expiresAt) }))),
      // The exchange: no console session yet, so no CSRF token; the code is the proof, and the Origin
      // check (done for every request) keeps other pages out.
      post: (request) =>
        !guards.isJson(request) ? Effect.succeed(notJson) : guards.body(CodeBody, request, ({ code }) => {
          const session = sessions.exchange(code)
          return Effect.succeed(session === undefined
            ? failure(401, "This sign-in code is unknown, used or expired: run `weaviate-mcp console` again")
            : answer(200, { csrf: session.csrf, expiresAt: iso(session.expiresAt) }, { "set-cookie": sessionCookie(session.id) }))
        })
    }),
    "sign-out": methods({
      post: (request) =>
        guards.guarded(request, (session) => {
          sessions.end(session.id)
          streams.end(session.id)
          return Effect.succeed(answer(200, { signedOut: true }, { "set-cookie": clearedCookie }))
        })
    })
  }
}

const orFailure = (status: number) => <A>(effect: Effect.Effect<A, unknown>) =>
  Effect.catchAll(Effect.map(effect, (value) => answer(200, value)), (error) => Effect.succeed(failure(status, messageOf(error))))

/** The page's reads and actions. */
const pageRoutes = (deps: Deps, guards: ReturnType<typeof makeGuards>, streams: { readonly open: (session: Session) => HttpTransport.HttpResponse }) => {
  const { control, feed, now, pause, tokens } = deps
  const reads = makeReads(deps)
  const { body, guarded, signedIn } = guards
  const createToken = (input: typeof CreateTokenBody.Type) =>
    tokens.create({
      name: input.name.trim(),
      access: input.access,
      scopes: input.scopes,
      connections: input.connections,
      expiresAt: input.expiresInDays === undefined ? undefined : now() + input.expiresInDays * 86_400_000
    }).pipe(
      Effect.tap((created) => Effect.sync(() => Redaction.global.register(created.token))),
      // The token itself, this once; the page shows it with a copy button and keeps it nowhere.
      Effect.map((created) => answer(200, { token: created.token, info: toJson(created.info, now()) })),
      Effect.catchTag("InvalidTokenRequest", (error) => Effect.succeed(failure(400, error.message))),
      Effect.catchAll((error) => Effect.succeed(failure(500, messageOf(error))))
    )
  return {
    overview: methods({ get: (request) => signedIn(request, () => Effect.succeed(answer(200, reads.overview()))) }),
    activity: methods({ get: (request) => signedIn(request, () => Effect.map(feed.tail, (tail) => answer(200, { windowMs: ConsoleFeed.WINDOW_MS, calls: tail.calls }))) }),
    events: methods({ get: (request) => signedIn(request, (session) => Effect.succeed(streams.open(session))) }),
    tokens: methods({
      get: (request) => signedIn(request, () => orFailure(500)(reads.tokenList)),
      post: (request) => guarded(request, () => body(CreateTokenBody, request, createToken))
    }),
    "tokens/revoke": methods({
      post: (request) =>
        guarded(request, () =>
          body(IdBody, request, ({ id }) =>
            tokens.revoke(id).pipe(
              Effect.map((info) => answer(200, { info: { ...toJson(info, now()), status: statusAt(info, now()) } })),
              Effect.catchTag("TokenNotFound", (error) => Effect.succeed(failure(404, error.message))),
              Effect.catchAll((error) => Effect.succeed(failure(500, messageOf(error))))
            )))
    }),
    connections: methods({ get: (request) => signedIn(request, () => orFailure(500)(reads.connectionList)) }),
    "connections/check": methods({
      post: (request) =>
        guarded(request, () =>
          body(IdBody, request, ({ id }) =>
            Effect.map(reads.checkConnection(id), (result) => result === undefined ? failure(404, `Unknown connection: ${id}`) : answer(200, result))))
    }),
    pause: methods({
      get: (request) => signedIn(request, () => Effect.succeed(answer(200, { paused: pause.isPaused() }))),
      post: (request) =>
        guarded(request, () =>
          body(PauseBody, request, ({ paused }) =>
            control.set(paused).pipe(
              Effect.map(() => answer(200, { paused: pause.isPaused() })),
              Effect.catchAll((error) => Effect.succeed(failure(500, `Cannot write settings.json: ${messageOf(error)}`)))
            )))
    }),
    approvals: methods({ get: (request) => signedIn(request, () => Effect.map(reads.approvals, (value) => answer(200, value))) }),
    history: methods({ get: (request, query) => signedIn(request, () => reads.historySearch(query)) })
  }
}

/**
 * The console's routes.
 *
 * @category constructors
 */
export const make = Effect.fn("Console.make")(function*(options: Options = {}) {
  const now = options.now ?? Date.now
  const sessions = yield* ConsoleSessions.make(options)
  const home = yield* Home
  const deps: Deps = {
    options,
    now,
    sessions,
    instance: yield* ServerInstance,
    tokens: yield* TokenStore,
    clients: yield* Clients,
    pause: yield* PauseSwitch,
    control: yield* PauseControl,
    connections: yield* ConnectionStore,
    driver: yield* Driver,
    history: yield* HistoryStore,
    pending: yield* PendingApprovals,
    feed: yield* ConsoleFeed.make(yield* ActivityLog, home.path("activity"), now)
  }
  const assets = loadAssets(options.assetsDir ?? findAssets())
  const streams = makeStreams(deps)
  const guards = makeGuards(sessions)
  const routes: Record<string, Route> = { ...sessionRoutes(deps, guards, streams), ...pageRoutes(deps, guards, streams) }

  const assetAnswer = (name: string): HttpTransport.HttpResponse => {
    const asset = assets.get(name)
    if (asset === undefined) return name === "index.html" ? text(503, "The console's page was not built: run `npm run build` in the package") : notFound
    return HttpTransport.full(200, asset.body, HttpTransport.withHeaders(SECURITY_HEADERS, {
      "content-type": asset.type,
      // The page is asked for again each time (it is small); its scripts are revalidated.
      "cache-control": name === "index.html" ? "no-store" : "no-cache"
    }))
  }

  const handle = (request: HttpTransport.HttpRequest): Answer => {
    const host = request.headers.host
    // The checks of /mcp (DNS rebinding): a loopback name and this port.
    if (!isAllowedHost(host, request.localPort)) return Effect.succeed(forbiddenHost)
    const origin = request.headers.origin
    if (origin !== undefined && origin !== `http://${host!.trim().toLowerCase()}`) return Effect.succeed(crossOrigin)
    const path = request.path
    const page = path === "/console" || path === "/console/" || path === "/console/index.html"
    if (page || path.startsWith("/console/assets/")) {
      if (request.method !== "GET" && request.method !== "HEAD") return Effect.succeed(methodNotAllowed("GET"))
      const name = page ? "index.html" : path.slice("/console/assets/".length)
      return Effect.succeed(!page && (name === "index.html" || name.includes("/")) ? notFound : assetAnswer(name))
    }
    const route = path.startsWith("/console/api/") ? routes[path.slice("/console/api/".length)] : undefined
    if (route === undefined || !Object.hasOwn(routes, path.slice("/console/api/".length))) return Effect.succeed(path.startsWith("/console/api/") ? failure(404, "Not found") : notFound)
    // Another site's request (a form, an image, a fetch): refused before anything is read.
    const site = request.headers["sec-fetch-site"]
    if (site !== undefined && site !== "same-origin" && site !== "none") return Effect.succeed(crossOrigin)
    const session = sessions.session(cookieValue(request.headers.cookie, COOKIE))
    const queryAt = request.url.indexOf("?")
    return route(Object.assign({}, request, { session }), new URLSearchParams(queryAt === -1 ? "" : request.url.slice(queryAt + 1)))
  }

  return OtherRoutes.of({
    handle,
    // Bodies are small: at most 64 KB is read.
    admit: () => Effect.succeed({ _tag: "Admit", value: undefined, bodyCap: { bytes: MAX_BODY_BYTES, response: tooLarge } }),
    decorate: (_head, response) =>
      response._tag === "Full" ? { ...response, headers: HttpTransport.withHeaders(response.headers, SECURITY_HEADERS) } : response,
    tooLarge: () => tooLarge
  })
})

/**
 * The console as the endpoint's other routes.
 *
 * @category layers
 */
export const layer = (options: Options = {}) => Layer.scoped(OtherRoutes, make(options))
