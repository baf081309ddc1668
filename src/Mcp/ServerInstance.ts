/**
 * The running server's identity: one id and start time per daemon (or embedded endpoint), shown by
 * `server/discover`, written into the handshake file and used to tell a restarted daemon apart.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"

/**
 * The running daemon's identity.
 *
 * @category services
 */
export class ServerInstance extends Context.Tag("weaviate-mcp/ServerInstance")<ServerInstance, {
  readonly instanceId: string
  readonly startedAt: Date
}>() {
  static readonly layer = Layer.sync(ServerInstance, () =>
    ServerInstance.of({ instanceId: crypto.randomUUID(), startedAt: new Date() }))
}
