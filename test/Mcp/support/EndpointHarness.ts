/**
 * The real daemon on a free port of 127.0.0.1, serving a small test catalogue, with the first-run
 * token captured; plus an HTTP client and the official JSON Schemas of both eras, so that every
 * message the server sends in the endpoint tests is validated.
 */
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import type { AccessLevel, Scope as TokenScope } from "../../../src/Schema/Policy.ts"
import * as Daemon from "../../../src/Daemon/Daemon.ts"
import { Home } from "../../../src/Base/Home.ts"
import type * as Settings from "../../../src/Daemon/Settings.ts"
import * as Catalogue from "../../../src/Mcp/Catalogue.ts"
import { BoundAddress } from "../../../src/Mcp/HttpTransport.ts"
import * as McpHttpApp from "../../../src/Mcp/McpHttpApp.ts"
import type * as HttpTransport from "../../../src/Mcp/HttpTransport.ts"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeHttp from "node:http"
import { CurrentPrincipal } from "../../../src/Auth/Principal.ts"
import { TokenStore } from "../../../src/Auth/TokenStore.ts"
import { InvalidParams } from "../../../src/Schema/McpErrors.ts"
import * as TestDaemon from "../../support/TestDaemon.ts"
import * as TestHome from "../../support/TestHome.ts"

// ===== The test catalogue =====

/** Signals the tests drive and observe. */
export interface Signals {
  readonly listChanged: PubSub.PubSub<void>
  readonly updated: PubSub.PubSub<string>
  /** Completed by `slow` once it runs; its value is the request id. */
  readonly slowStarted: Ref.Ref<Deferred.Deferred<string | number>>
  /** Set when `slow` was interrupted. */
  readonly slowInterrupted: Ref.Ref<number>
}

export const FILLER_TOOLS = 115

const schema = (properties: Record<string, unknown> = {}) => ({ type: "object", properties })

const tool = (
  name: string,
  call: Catalogue.Tool["call"],
  options: { scopes?: Catalogue.Tool["scopes"]; properties?: Record<string, unknown> } = {}
): Catalogue.Tool => ({
  descriptor: { name, description: `The ${name} test tool`, inputSchema: schema(options.properties) },
  scopes: options.scopes ?? [],
  call
})

const text = (value: string): Catalogue.CallToolResult => ({ content: [{ type: "text", text: value }] })

export const catalogue = (signals: Signals): Layer.Layer<Daemon.CatalogueServices> => {
  const tools: Array<Catalogue.Tool> = [
    tool("echo", (args) =>
      Effect.gen(function*() {
        const context = yield* Catalogue.RequestContext
        const principal = yield* CurrentPrincipal
        return Catalogue.complete({
          content: [{ type: "text", text: JSON.stringify(args) }],
          structuredContent: {
            arguments: args,
            era: context.era,
            protocolVersion: context.protocolVersion,
            principal: principal.id,
            clientName: context.clientInfo._tag === "Some" ? context.clientInfo.value.name : null,
            // A handler must not set envelope members: the core strips these.
            ttlMs: 1
          },
          ttlMs: 1,
          cacheScope: "public"
        } as Catalogue.CallToolResult)
      }), {
      properties: {
        query: { type: "string", "x-mcp-header": "query" },
        limit: { type: "integer", "x-mcp-header": "limit" },
        flag: { type: "boolean", "x-mcp-header": "flag" },
        filter: { type: "object", properties: { Region: { type: "string", "x-mcp-header": "Region" } } }
      }
    }),
    tool("progress", () =>
      Effect.gen(function*() {
        const context = yield* Catalogue.RequestContext
        yield* context.progress(0, "started")
        yield* context.progress(0.3, "running")
        yield* context.progress(0.3, "again (dropped)")
        yield* context.progress(0.2, "backwards (dropped)")
        yield* context.progress(1, "done")
        return Catalogue.complete(text("finished"))
      })),
    tool("ask", () =>
      Effect.gen(function*() {
        const context = yield* Catalogue.RequestContext
        if (context.requestState._tag === "Some") return Catalogue.complete(text(`approved ${context.requestState.value}`))
        return Catalogue.inputRequired({
          approve_statement: {
            method: "elicitation/create",
            params: {
              mode: "form",
              message: "Run it?",
              requestedSchema: { type: "object", properties: { approved: { type: "boolean", title: "Approve", description: "x" } }, required: ["approved"] }
            }
          }
        }, "state-1")
      })),
    tool("write", () => Effect.succeed(Catalogue.complete(text("written"))), { scopes: ["tools:write"] }),
    tool("admin_only", () => Effect.succeed(Catalogue.complete(text("admin"))), { scopes: ["tools:write", "admin"] }),
    tool("slow", () =>
      Effect.gen(function*() {
        const context = yield* Catalogue.RequestContext
        const started = yield* Ref.get(signals.slowStarted)
        yield* Deferred.succeed(started, context.requestId)
        return yield* Effect.never
      }).pipe(Effect.onInterrupt(() => Ref.update(signals.slowInterrupted, (n) => n + 1)))),
    tool("defect", () => Effect.die(new Error("boom with secret wmcp_0000000000000000_shouldnotleak"))),
    tool("fails", () => Effect.fail(new InvalidParams({ message: "bad arguments" }))),
    ...Array.from({ length: FILLER_TOOLS }, (_, i) => tool(`filler_${String(i).padStart(3, "0")}`, () => Effect.succeed(Catalogue.complete(text("ok")))))
  ]
  const resources: Array<Catalogue.ResourceDescriptor> = Array.from({ length: 60 }, (_, i) => ({
    uri: `test://items/${i}`,
    name: `item ${i}`,
    mimeType: "application/json"
  }))
  return Layer.mergeAll(
    Layer.succeed(Catalogue.Tools, Catalogue.Tools.of({ all: tools })),
    Layer.succeed(Catalogue.Resources, Catalogue.Resources.of({
      list: Effect.succeed(resources),
      templates: [{ uriTemplate: "test://items/{id}", name: "item" }],
      read: (uri) =>
        uri === "test://ask"
          ? Effect.gen(function*() {
            const context = yield* Catalogue.RequestContext
            return context.requestState._tag === "Some"
              ? Catalogue.complete({ contents: [{ uri, text: "approved" }], ttlMs: 60_000 })
              : Catalogue.inputRequired({}, "read-state")
          })
          : uri.startsWith("test://items/")
          ? Effect.succeed(Catalogue.complete({ contents: [{ uri, mimeType: "application/json", text: "{}" }], ttlMs: uri.endsWith("/1") ? 1 : 60_000 }))
          : Effect.fail(new InvalidParams({ message: `Unknown resource: ${uri}` })),
      // Subscribed when the effect completes: a signal published after the acknowledgement is seen.
      listChanged: Effect.map(PubSub.subscribe(signals.listChanged), Stream.fromQueue),
      watch: (uri) =>
        uri.startsWith("test://items/")
          ? Effect.map(PubSub.subscribe(signals.updated), (updates) =>
            Stream.fromQueue(updates).pipe(Stream.filter((changed) => changed === uri), Stream.as(undefined as void)))
          : Effect.fail(new InvalidParams({ message: `Unknown resource: ${uri}` }))
    })),
    Layer.succeed(Catalogue.Prompts, Catalogue.Prompts.of({
      all: [{ name: "greet", description: "Greets", arguments: [{ name: "who", required: true }] }],
      get: (name, args) =>
        Effect.succeed(Catalogue.complete({ messages: [{ role: "user", content: { type: "text", text: `${name} ${args.who ?? ""}` } }] }))
    })),
    Layer.succeed(Catalogue.Completions, Catalogue.Completions.of({
      complete: (request) => Effect.succeed({ values: Array.from({ length: 150 }, (_, i) => `${request.argument.value}${i}`) })
    }))
  )
}

// ===== The harness =====

export class Harness extends Context.Tag("test/EndpointHarness")<Harness, {
  readonly url: string
  readonly endpoint: string
  readonly port: number
  readonly home: string
  /** The first-run `default` token (readWrite); empty with `auth: "off"`. */
  readonly token: string
  readonly signals: Signals
  /** The running daemon's own token store (the one its authenticator reads). */
  readonly tokenStore: TokenStore["Type"]
}>() {}

/** Test defaults: no rate limit (tests send many requests), tokens on. */
export const defaults: Partial<Settings.ServeSettings> = { rateLimit: 0, authLockout: 0 }

/**
 * The transports the endpoint runs behind: the daemon's default `node:http` transport, and an
 * `@effect/platform` node server whose `HttpRouter` mounts `McpHttpApp.handler`. The transport and era
 * contract tests run over both.
 */
export const TRANSPORTS: ReadonlyArray<{ readonly name: string; readonly transport: HttpTransport.Transport | undefined }> = [
  { name: "node:http", transport: undefined },
  { name: "HttpRouter", transport: McpHttpApp.transport(NodeHttpServer.layer(() => NodeHttp.createServer(), { host: "127.0.0.1", port: 0 })) }
]

/** A daemon with the test catalogue in the given home. */
export const layerIn = (overrides: Partial<Settings.ServeSettings> = {}, transport?: HttpTransport.Transport): Layer.Layer<Harness, unknown, Home> =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const settings = yield* TestDaemon.settings({ ...defaults, ...overrides })
    const signals: Signals = {
      listChanged: yield* PubSub.unbounded<void>(),
      updated: yield* PubSub.unbounded<string>(),
      slowStarted: yield* Ref.make(yield* Deferred.make<string | number>()),
      slowInterrupted: yield* Ref.make(0)
    }
    const token = yield* Deferred.make<string>()
    const tokenStore = yield* Deferred.make<TokenStore["Type"]>()
    // The catalogue may use the daemon's token store: the harness takes it from there.
    const captureStore = Layer.effectDiscard(Effect.flatMap(TokenStore, (store) => Deferred.succeed(tokenStore, store)))
    const daemon = Daemon.layer({
      settings,
      port: 0,
      ...(transport === undefined ? {} : { transport }),
      catalogue: Layer.merge(catalogue(signals), captureStore),
      onDefaultToken: (created) => Deferred.succeed(token, created.token)
    })
    return Layer.effect(
      Harness,
      Effect.gen(function*() {
        const address = yield* BoundAddress
        const home = yield* Home
        const created = settings.auth === "tokens" ? yield* Deferred.await(token) : ""
        return Harness.of({
          url: address.url,
          endpoint: `${address.url}/mcp`,
          port: address.port,
          home: home.dir,
          token: created,
          signals,
          tokenStore: yield* Deferred.await(tokenStore)
        })
      })
    ).pipe(Layer.provide(daemon))
  }))

/** A daemon with the test catalogue in a fresh temporary home. */
export const layer = (overrides: Partial<Settings.ServeSettings> = {}, transport?: HttpTransport.Transport) =>
  layerIn(overrides, transport).pipe(Layer.provideMerge(TestHome.layer))

// ===== Tokens =====

let tokenNames = 0

/**
 * Creates a token through another TokenStore on the same home, as `tokens create` would, and returns
 * once the running daemon's store holds it (its change signal; bounded, in live time, so that a
 * daemon that never notices fails the test instead of hanging it). For blocks on the live clock; on
 * the TestClock create through `Harness.tokenStore` instead.
 */
export const createToken = (access: AccessLevel, options: { scopes?: ReadonlyArray<TokenScope>; expiresAt?: number } = {}) =>
  Effect.gen(function*() {
    const { tokenStore } = yield* Harness
    const created = yield* Effect.flatMap(TokenStore, (store) => store.create({ name: `t-${access}-${++tokenNames}`, access, ...options })).pipe(
      Effect.provide(TokenStore.layerOneShot),
      Effect.orDie
    )
    yield* tokenStore.tokens.pipe(
      Stream.filter((tokens) => tokens.some((info) => info.id === created.info.id)),
      Stream.take(1),
      Stream.runDrain,
      Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error("the daemon did not pick up the new token within 5 s") }),
      Effect.orDie
    )
    return created
  })

/** Revokes a token through another TokenStore on the same home, as `tokens revoke` would. */
export const revokeToken = (id: string) =>
  Effect.flatMap(TokenStore, (store) => store.revoke(id)).pipe(Effect.provide(TokenStore.layerOneShot), Effect.orDie)

/** A fresh deferred for the next `slow` call. */
export const armSlow = Effect.gen(function*() {
  const { signals } = yield* Harness
  const started = yield* Deferred.make<string | number>()
  yield* Ref.set(signals.slowStarted, started)
  return started
})

// ===== Requests =====

export const MODERN = "2026-07-28"

export const modernMeta = (extra: Record<string, unknown> = {}) => ({
  "io.modelcontextprotocol/protocolVersion": MODERN,
  "io.modelcontextprotocol/clientCapabilities": {},
  "io.modelcontextprotocol/clientInfo": { name: "endpoint-test", version: "1.0.0" },
  ...extra
})

/** A modern request body. */
export const modern = (method: string, params: Record<string, unknown> = {}, id: string | number = 1, meta: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id,
  method,
  params: { ...params, _meta: modernMeta(meta) }
})

/** The headers a modern request must carry. */
export const modernHeaders = (method: string, name?: string): Record<string, string> => ({
  "content-type": "application/json",
  "mcp-protocol-version": MODERN,
  "mcp-method": method,
  ...(name === undefined ? {} : { "mcp-name": name })
})

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The parsed body (JSON) or, for an event stream, the messages of its frames. */
  readonly json: any
  readonly frames: ReadonlyArray<any>
}

/** Parses SSE frames: `data:` lines per frame; comments are skipped. */
export const parseFrames = (text: string): Array<any> =>
  text.split("\n\n").filter((frame) => frame.trim().length > 0 && !frame.startsWith(":")).map((frame) => {
    const lines = frame.split("\n")
    if (lines.some((line) => line.startsWith("event:"))) throw new Error(`unexpected event name in ${frame}`)
    return JSON.parse(lines.filter((line) => line.startsWith("data: ")).map((line) => line.slice(6)).join("\n"))
  })

/** POSTs (or another method) to a URL and reads the whole answer. */
export const send = (
  url: string,
  options: { method?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {}
): Effect.Effect<Reply> =>
  Effect.promise(async (signal) => {
    const response = await fetch(url, {
      method: options.method ?? "POST",
      headers: options.headers ?? {},
      signal,
      ...(options.raw !== undefined ? { body: options.raw } : options.body !== undefined ? { body: JSON.stringify(options.body) } : {})
    })
    const text = await response.text()
    const isStream = (response.headers.get("content-type") ?? "").startsWith("text/event-stream")
    const frames = isStream ? parseFrames(text) : []
    let json: unknown = undefined
    if (!isStream && text.length > 0 && (response.headers.get("content-type") ?? "").includes("json")) json = JSON.parse(text)
    return { status: response.status, headers: response.headers, text, json, frames }
  })

/** POSTs a modern request with its headers and the harness token. */
export const postModern = (
  method: string,
  params: Record<string, unknown> = {},
  options: { id?: string | number; meta?: Record<string, unknown>; headers?: Record<string, string>; name?: string; token?: string } = {}
) =>
  Effect.flatMap(Harness, (harness) =>
    send(harness.endpoint, {
      body: modern(method, params, options.id ?? 1, options.meta ?? {}),
      headers: {
        ...modernHeaders(method, options.name ?? (typeof params.name === "string" ? params.name : typeof params.uri === "string" ? params.uri : undefined)),
        ...bearer(options.token ?? harness.token),
        ...options.headers
      }
    }))

export const bearer = (token: string): Record<string, string> => token === "" ? {} : { authorization: `Bearer ${token}` }

/** POSTs any body with the harness token. */
export const postRaw = (body: string, headers: Record<string, string> = {}) =>
  Effect.flatMap(Harness, (harness) =>
    send(harness.endpoint, { raw: body, headers: { "content-type": "application/json", ...bearer(harness.token), ...headers } }))

/** Starts a legacy session; returns its id. */
export const initializeLegacy = (options: { token?: string; version?: string } = {}) =>
  Effect.gen(function*() {
    const harness = yield* Harness
    const reply = yield* send(harness.endpoint, {
      body: {
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: options.version ?? "2025-11-25", capabilities: {}, clientInfo: { name: "legacy-test", version: "1" } }
      },
      headers: { "content-type": "application/json", ...bearer(options.token ?? harness.token) }
    })
    return { reply, sessionId: reply.headers.get("mcp-session-id") ?? "" }
  })

/** POSTs a legacy request in a session. */
export const postLegacy = (
  sessionId: string,
  method: string,
  params: Record<string, unknown> = {},
  options: { id?: string | number; token?: string; headers?: Record<string, string> } = {}
) =>
  Effect.flatMap(Harness, (harness) =>
    send(harness.endpoint, {
      body: { jsonrpc: "2.0", id: options.id ?? 1, method, params },
      headers: {
        "content-type": "application/json",
        "mcp-session-id": sessionId,
        "mcp-protocol-version": "2025-11-25",
        ...bearer(options.token ?? harness.token),
        ...options.headers
      }
    }))

/**
 * One valid request per catalogue method of the test catalogue, with the official result definition
 * its answer must match.
 */
export const catalogueRequests: ReadonlyArray<readonly [method: string, params: Record<string, unknown>, resultDef: string]> = [
  ["tools/list", {}, "ListToolsResult"],
  ["tools/call", { name: "echo", arguments: { query: "a" } }, "CallToolResult"],
  ["resources/list", {}, "ListResourcesResult"],
  ["resources/read", { uri: "test://items/3" }, "ReadResourceResult"],
  ["resources/templates/list", {}, "ListResourceTemplatesResult"],
  ["prompts/list", {}, "ListPromptsResult"],
  ["prompts/get", { name: "greet", arguments: { who: "x" } }, "GetPromptResult"],
  ["completion/complete", { ref: { type: "ref/prompt", name: "greet" }, argument: { name: "who", value: "a" } }, "CompleteResult"]
]

// ===== The official JSON Schemas =====

export { type Era, example, validateDef, validateMessage } from "../../support/McpSchemas.ts"
