/**
 * The whole daemon as one layer: what `serve` runs, what tests start on a free port, and what a
 * host program embeds. Every part is its own layer; this only composes them.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { BridgeToken } from "../Mcp/BridgeToken.ts"
import * as Endpoint from "../Mcp/Endpoint.ts"
import type * as HttpTransport from "../Mcp/HttpTransport.ts"
import * as Handshake from "./Handshake.ts"
import * as HandshakeToken from "./HandshakeToken.ts"
import type { Home } from "./Home.ts"
import * as Serve from "./Serve.ts"
import type { ServeSettings } from "./Settings.ts"

/** @category models */
export interface DaemonOptions {
  readonly settings: ServeSettings
  /** Where to listen; default: the configured port, else the default port or a free one. */
  readonly port: HttpTransport.ListenOptions["port"]
  readonly limits?: Partial<HttpTransport.Limits>
  readonly onListening?: (address: Context.Tag.Service<HttpTransport.BoundAddress>) => Effect.Effect<void>
}

/**
 * The daemon's settings, for layers that need them.
 *
 * @category services
 */
export class DaemonSettings extends Context.Tag("weaviate-mcp/DaemonSettings")<DaemonSettings, ServeSettings>() {}

/**
 * The running daemon: provides the bound address; needs the home.
 *
 * @category layers
 */
export const layer = (options: DaemonOptions): Layer.Layer<HttpTransport.BoundAddress | Handshake.ServerInstance, unknown, Home> =>
  Serve.layer({
    port: options.port,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.onListening ? { onListening: options.onListening } : {})
  }).pipe(
    Layer.provide(Endpoint.layer),
    Layer.provide(HandshakeToken.layer),
    Layer.provide(BridgeToken.layer()),
    Layer.provide(Layer.succeed(DaemonSettings, options.settings)),
    Layer.provideMerge(Handshake.ServerInstance.layer)
  )
