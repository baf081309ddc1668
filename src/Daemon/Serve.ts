/**
 * The daemon: claims the home, starts the HTTP transport on 127.0.0.1, writes the handshake file
 * and keeps it current, and undoes all of it (in reverse) when its scope closes.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as HttpTransport from "../Mcp/HttpTransport.ts"
import * as Handshake from "./Handshake.ts"
import { ServerInstance } from "../Mcp/ServerInstance.ts"

/**
 * The token the handshake file hands to the stdio bridge, and its rotations.
 *
 * @category services
 */
export class HandshakeToken extends Context.Tag("weaviate-mcp/HandshakeToken")<HandshakeToken, {
  readonly current: Effect.Effect<{ readonly token: string; readonly expiresAt: Date }>
  readonly changes: Stream.Stream<{ readonly token: string; readonly expiresAt: Date }>
}>() {}

/** @category models */
export interface ServeOptions<R = never> {
  readonly port: HttpTransport.ListenOptions["port"]
  readonly limits?: Partial<HttpTransport.Limits>
  /** What serves the endpoint; default `HttpTransport.make`, the fast `node:http` transport. */
  readonly transport?: HttpTransport.Transport<R>
  /** Called once listening, e.g. to print the endpoint URL. */
  readonly onListening?: (address: Context.Tag.Service<HttpTransport.BoundAddress>) => Effect.Effect<void>
}

/**
 * Runs the daemon for the life of the scope and returns the bound address.
 *
 * @category constructors
 */
export const make = Effect.fn("Serve.make")(function*<R = never>(options: ServeOptions<R>) {
  yield* Handshake.acquireLock()
  // Added before the transport, so it runs after the transport has closed (finalizers run in reverse).
  yield* Effect.addFinalizer(() =>
    Effect.flatMap(ServerInstance, (instance) =>
      Effect.logInfo("stopped").pipe(Effect.annotateLogs({ uptimeSeconds: Math.round((Date.now() - instance.startedAt.getTime()) / 1000) }))))
  const address = yield* (options.transport ?? HttpTransport.make)({ port: options.port, ...(options.limits ? { limits: options.limits } : {}) })
  const instance = yield* ServerInstance
  const tokens = yield* HandshakeToken
  const writeWith = (token: { readonly token: string; readonly expiresAt: Date }) =>
    Handshake.write(
      new Handshake.HandshakeFile({
        version: 1,
        port: address.port,
        pid: process.pid,
        instanceId: instance.instanceId,
        protocolVersion: Handshake.PROTOCOL_VERSION,
        startedAt: instance.startedAt.toISOString(),
        token: token.token,
        tokenExpiresAt: token.expiresAt.toISOString()
      })
    )
  yield* writeWith(yield* tokens.current)
  yield* Effect.addFinalizer(() => Handshake.removeIfOurs(instance.instanceId).pipe(Effect.ignore))
  yield* tokens.changes.pipe(
    Stream.runForEach((token) => writeWith(token).pipe(Effect.catchAll((e) => Effect.logError("cannot rewrite the handshake file", e)))),
    Effect.forkScoped
  )
  yield* Effect.logInfo("listening").pipe(Effect.annotateLogs({ url: `${address.url}/mcp`, port: address.port }))
  if (options.onListening) yield* options.onListening(address)
  return address
})

/**
 * The daemon as a layer providing the bound address.
 *
 * @category layers
 */
export const layer = <R = never>(options: ServeOptions<R>) => Layer.scoped(HttpTransport.BoundAddress, make(options))
