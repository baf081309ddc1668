/**
 * The whole daemon as one layer: what `serve` runs, what tests start on a free port, and what a
 * host program embeds. Every part is its own layer; this only composes them:
 *
 * - the transport and handshake file (`Serve`), answering through the MCP `Endpoint`;
 * - authentication: `Authenticator.layerTokens` (token store + bridge token) or, with `auth: "off"`,
 *   the anonymous loopback principal; both rate limited by `RateLimiter`;
 * - `InFlight` (cancellation, deadline) and `LegacySessions`;
 * - revocation: a revoked token's in-flight requests are cancelled and its legacy sessions ended;
 * - the catalogue (tools, resources, prompts, completions) behind the `Catalogue` seam;
 * - first run: with authentication on and an empty token store, a `default` readWrite token is
 *   created once listening and handed to `onDefaultToken` (never logged).
 *
 * @since 0.1.0
 */
import { ActivityLog, type Options as ActivityLogOptions } from "../Activity/ActivityLog.ts"
import * as ActivityObserver from "../Activity/ActivityObserver.ts"
import { Clients } from "../Activity/Clients.ts"
import { Dialog } from "../Approval/Dialog.ts"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { InFlight } from "../Cancellation/InFlight.ts"
import { ConnectionStore } from "../Driver/ConnectionStore.ts"
import * as CollectionSchema from "../Driver/CollectionSchema.ts"
import { Driver } from "../Driver/Driver.ts"
import * as WeaviateHttp from "../Driver/WeaviateHttp.ts"
import { Authenticator } from "../Auth/Authenticator.ts"
import { BridgeToken, type Options as BridgeTokenOptions } from "../Auth/BridgeToken.ts"
import * as Catalogue from "../Mcp/Catalogue.ts"
import { CompletionsLive } from "../Catalogue/Completions/Completions.ts"
import * as Endpoint from "../Mcp/Endpoint.ts"
import * as Lifecycle from "../Mcp/Lifecycle.ts"
import type * as HttpTransport from "../Mcp/HttpTransport.ts"
import { LegacySessions } from "../Mcp/LegacySessions.ts"
import { PromptsLive } from "../Catalogue/Prompts/Prompts.ts"
import { RateLimiter } from "../Auth/RateLimiter.ts"
import { ResourcesLive } from "../Catalogue/Resources/Resources.ts"
import * as ApprovalsLayer from "../Approval/ApprovalsLayer.ts"
import { ToolsLive } from "../Catalogue/Tools/ToolsLive.ts"
import { ensureDefaultToken, onRevocation, TokenStore, type Options as TokenStoreOptions } from "../Auth/TokenStore.ts"
import * as HandshakeToken from "./HandshakeToken.ts"
import type { Home } from "../Base/Home.ts"
import * as Redaction from "../Base/Redaction.ts"
import * as Pause from "./Pause.ts"
import { PauseSwitch } from "../Mcp/PauseSwitch.ts"
import { ServerInstance } from "../Mcp/ServerInstance.ts"
import * as Serve from "./Serve.ts"
import * as Tracing from "../Tracing/Tracing.ts"
import { HistoryStore, type Options as HistoryOptions } from "../History/HistoryStore.ts"
import type { ServeSettings } from "./Settings.ts"
import * as Console from "./Console.ts"
import { PendingApprovals } from "../Approval/PendingApprovals.ts"

/**
 * The daemon's settings, for layers that need them.
 *
 * @category services
 */
export class DaemonSettings extends Context.Tag("weaviate-mcp/DaemonSettings")<DaemonSettings, ServeSettings>() {}

/** The services a catalogue provides. @category models */
export type CatalogueServices = Catalogue.Tools | Catalogue.Resources | Catalogue.Prompts | Catalogue.Completions

/** What the daemon offers the catalogue layers it composes. @category models */
export type CatalogueEnvironment = Home | DaemonSettings | InFlight | TokenStore | HistoryStore | Driver | ConnectionStore | PendingApprovals

/**
 * The catalogue `serve` serves: tools, resources, prompts and completions over the driver, with one
 * first-access memory, one approval flow (and one dialog, from `--approvals`) shared by everything
 * that touches a connection.
 *
 * @category layers
 */
export const defaultCatalogue: Layer.Layer<CatalogueServices, unknown, CatalogueEnvironment> = Layer.unwrapEffect(
  Effect.map(DaemonSettings, (settings) =>
    Layer.mergeAll(ToolsLive, ResourcesLive, PromptsLive, CompletionsLive, ApprovalsLayer.forgetOnRevocation).pipe(
      Layer.provide(ApprovalsLayer.layer(settings))
    ))
)

/** The first-run token, shown once. @category models */
export interface DefaultToken {
  readonly name: string
  readonly token: string
  /** The endpoint URL (`http://127.0.0.1:<port>/mcp`). */
  readonly url: string
}

/** @category models */
export interface DaemonOptions<R = never> {
  readonly settings: ServeSettings
  /** Where to listen; default: the configured port, else the default port or a free one. */
  readonly port: HttpTransport.ListenOptions["port"]
  readonly limits?: Partial<HttpTransport.Limits>
  /** What serves the endpoint; default the fast `node:http` transport (see `HttpTransport.Transport`). */
  readonly transport?: HttpTransport.Transport<R>
  readonly onListening?: (address: Context.Tag.Service<HttpTransport.BoundAddress>) => Effect.Effect<void>
  /**
   * First run (authentication on, empty token store): called once listening with the `default` token
   * just created. The only place the token is ever shown; it is registered for redaction, so no log
   * line can carry it.
   */
  readonly onDefaultToken?: (created: DefaultToken) => Effect.Effect<void>
  /** How the token store follows `tokens.json` (default: watch, polling every 500 ms). */
  readonly tokenStore?: TokenStoreOptions
  /** Bridge token rotation (default: hourly, 5 minutes of grace). */
  readonly bridgeToken?: BridgeTokenOptions
  /** Where to export spans (OTLP/HTTP traces URL); none: no exporter. */
  readonly otlpTracesUrl?: string | undefined
  /** Retention of the activity log (default 90 days, pruned daily). */
  readonly activity?: ActivityLogOptions
  /** The query history beyond `settings.history` (the reason it is off, a busy timeout, how often retention runs). */
  readonly history?: Partial<HistoryOptions>
  /** The catalogue; default `defaultCatalogue`. Tests and embedding programs bring their own. */
  readonly catalogue?: Layer.Layer<CatalogueServices, unknown, CatalogueEnvironment>
  /** The web console under `/console` (docs/console.md): its clock and where its page is; on by default. */
  readonly console?: Omit<Console.Options, "approvals"> | false
}

/**
 * The running daemon: provides the bound address; needs the home.
 *
 * @category layers
 */
export const layer = <R = never>(
  options: DaemonOptions<R>
): Layer.Layer<HttpTransport.BoundAddress | ServerInstance | HttpTransport.HttpHandler, unknown, Home | R> => {
  const { settings } = options
  // What the driver reads when a session opens: the daemon's time-outs and schema cache time.
  const tuning = Layer.mergeAll(
    Layer.succeed(WeaviateHttp.Timeouts, {
      healthMs: settings.healthTimeoutSeconds * 1000,
      schemaMs: settings.schemaTimeoutSeconds * 1000
    }),
    Layer.succeed(CollectionSchema.CacheTtl, settings.schemaCacheMs)
  )
  const shared = Layer.mergeAll(
    TokenStore.layer(options.tokenStore),
    BridgeToken.layer(options.bridgeToken),
    InFlight.layer,
    LegacySessions.layer,
    Layer.succeed(DaemonSettings, settings),
    tuning,
    Lifecycle.layer,
    // Opened before the transport and closed after it, so the last calls' entries are written.
    HistoryStore.layer({ ...settings.history, lazy: true, ...options.history }),
    PendingApprovals.layer,
    // One driver (one session per connection) for the catalogue and the console.
    Driver.layer.pipe(Layer.provideMerge(ConnectionStore.layerFollowed()), Layer.provide(tuning))
  )
  const authenticator = (settings.auth === "tokens" ? Authenticator.layerTokens : Authenticator.layerAnonymous).pipe(
    Layer.provide(RateLimiter.layer({ requestsPerSecond: settings.rateLimit, authFailuresPerMinute: settings.authLockout }))
  )
  // What AI clients did: the activity log, the clients seen, the pause switch; one observation per call.
  const activity = Layer.unwrapEffect(Effect.gen(function*() {
    const instance = yield* ServerInstance
    return Layer.mergeAll(
      ActivityObserver.layer.pipe(Layer.provideMerge(Layer.merge(ActivityLog.layer(options.activity), Clients.layer({ instanceId: instance.instanceId })))),
      // settings.json is followed like tokens.json (same fallback poll).
      Pause.layer(options.tokenStore?.pollInterval === undefined ? {} : { pollInterval: options.tokenStore.pollInterval })
    )
  }))
  const describe = Layer.effectDiscard(Effect.gen(function*() {
    const clients = yield* Clients
    const pause = yield* PauseSwitch
    clients.describe({ approvals: yield* resolvedApprovals(settings) })
    pause.changes((paused) => clients.describe({ paused }))
    yield* clients.writeNow
  }))
  // The console answers the paths other than /mcp (`Endpoint.OtherRoutes`).
  const consoleRoutes = options.console === false ? Layer.empty : Console.layer({ ...options.console, approvals: settings.approvals })
  const endpoint = Endpoint.layer({ allowedOrigins: settings.allowedOrigins }).pipe(
    Layer.provide(Layer.mergeAll(authenticator, options.catalogue ?? defaultCatalogue, consoleRoutes)),
    Layer.merge(describe),
    Layer.provide(activity)
  )
  const revocation = Layer.unwrapEffect(Effect.gen(function*() {
    const inFlight = yield* InFlight
    const sessions = yield* LegacySessions
    return onRevocation((tokenId) =>
      Effect.asVoid(Effect.all([inFlight.cancelPrincipal(tokenId), sessions.endPrincipal(tokenId)], { concurrency: 2 }))
    )
  }))
  const serve = Layer.unwrapEffect(Effect.gen(function*() {
    const store = yield* TokenStore
    const firstRun = (address: Context.Tag.Service<HttpTransport.BoundAddress>) =>
      settings.auth !== "tokens" || options.onDefaultToken === undefined
        ? Effect.void
        : ensureDefaultToken.pipe(
          Effect.provideService(TokenStore, store),
          Effect.flatMap(Option.match({
            onNone: () => Effect.void,
            onSome: (created) => {
              Redaction.global.register(created.token)
              return options.onDefaultToken!({ name: created.info.name, token: created.token, url: `${address.url}/mcp` })
            }
          })),
          Effect.catchAll((error) => Effect.logError("cannot create the default token", error))
        )
    return Serve.layer({
      port: options.port,
      ...(options.limits ? { limits: options.limits } : {}),
      ...(options.transport ? { transport: options.transport } : {}),
      onListening: (address) => Effect.zipRight(options.onListening ? options.onListening(address) : Effect.void, firstRun(address))
    })
  }))
  // The endpoint stays in the output: a host router's `McpHttpApp.handler` answers through it.
  return Layer.mergeAll(serve, revocation).pipe(
    Layer.provideMerge(endpoint),
    Layer.provide(HandshakeToken.layer),
    Layer.provide(shared),
    Layer.provideMerge(ServerInstance.layer),
    Layer.provide(options.otlpTracesUrl === undefined ? Layer.empty : Tracing.layerOtlp(options.otlpTracesUrl))
  )
}

/**
 * The approval mode `serve` resolved to (`native`, `terminal`, `exec`, `deny`), for `status`:
 * the dialog resolution run once more over the same settings and environment.
 */
const resolvedApprovals = (settings: ServeSettings) =>
  Effect.map(Dialog, (dialog) => dialog.kind).pipe(
    Effect.provide(Dialog.layerFromMode(settings.approvals, { command: Option.getOrUndefined(settings.approvalCommand) })),
    Effect.orElseSucceed(() => "unavailable")
  )
