/**
 * `weaviate-mcp clients [--json]`: the AI clients the running daemon has seen in the last 5 minutes
 * (from its state file): name and version from `clientInfo`, principal, era, last call, calls in
 * flight. `clients disconnect NAME` revokes the token of every principal that client used (the
 * daemon follows tokens.json at once: their calls are cancelled and their sessions ended).
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { readState, SEEN_WITHIN, type SeenClient } from "../Activity/Clients.ts"
import * as Duration from "effect/Duration"
import { TokenStore } from "../Auth/TokenStore.ts"
import * as CommonOptions from "./CommonOptions.ts"
import { formatTable } from "./DriverCli.ts"
import { probe } from "./StatusCommand.ts"

/** No client of that name was seen. @category errors */
export class ClientNotFound extends Schema.TaggedError<ClientNotFound>()("ClientNotFound", { name: Schema.String }) {
  override get message() {
    return `No client named ${JSON.stringify(this.name)} was seen in the last 5 minutes (weaviate-mcp clients lists them)`
  }
}

/** The client's principal has no token to revoke. @category errors */
export class CannotDisconnect extends Schema.TaggedError<CannotDisconnect>()("CannotDisconnect", { reason: Schema.String }) {
  override get message() {
    return this.reason
  }
}

/** The clients the running daemon saw within 5 minutes. */
const seenClients = Effect.gen(function*() {
  const { handshake } = yield* probe
  const state = yield* readState()
  if (Option.isNone(state) || state.value.instanceId !== handshake.instanceId) return [] as ReadonlyArray<SeenClient>
  const cutoff = Date.now() - Duration.toMillis(SEEN_WITHIN)
  return state.value.clients.filter((c) => c.inFlight > 0 || Date.parse(c.lastCall) >= cutoff)
})

const listCommand = Command.make("clients", { home: CommonOptions.home, json: CommonOptions.json }, (flags) =>
  Effect.gen(function*() {
    const clients = yield* seenClients
    if (flags.json) return yield* Console.log(JSON.stringify(clients, null, 2))
    if (clients.length === 0) return yield* Console.log("No client in the last 5 minutes.")
    yield* Console.log(formatTable(
      ["client", "version", "principal", "era", "lastCall", "inFlight"],
      clients.map((c) => ({ client: c.name, version: c.version, principal: c.principalName ?? c.principal, era: c.era, lastCall: c.lastCall, inFlight: c.inFlight }))
    ))
  }).pipe(Effect.provide(CommonOptions.homeLayer(flags.home))))

const disconnectCommand = Command.make(
  "disconnect",
  { home: CommonOptions.home, name: Args.text({ name: "NAME" }).pipe(Args.withDescription("The client's name (clientInfo)")) },
  (flags) =>
    Effect.gen(function*() {
      const clients = (yield* seenClients).filter((c) => c.name === flags.name)
      if (clients.length === 0) return yield* new ClientNotFound({ name: flags.name })
      const untouchable = clients.find((c) => c.principalSource !== "store")
      if (untouchable !== undefined) {
        return yield* new CannotDisconnect({
          reason: untouchable.principalSource === "anonymous"
            ? `${flags.name} uses the anonymous principal (serve --auth off), which has no token to revoke; use weaviate-mcp pause`
            : `${flags.name} uses the bridge token of the handshake file, which cannot be revoked; use weaviate-mcp pause`
        })
      }
      const store = yield* TokenStore
      const ids = Array.from(new Set(clients.flatMap((c) => (c.principal === null ? [] : [c.principal]))))
      for (const id of ids) {
        const info = yield* store.revoke(id)
        yield* Console.log(`Revoked token ${info.name} (${info.id}) used by ${flags.name}; its calls in flight are cancelled. Other clients using this token are disconnected too.`)
      }
    }).pipe(Effect.provide(TokenStore.layerOneShot), Effect.provide(CommonOptions.homeLayer(flags.home)))
).pipe(Command.withDescription("Revoke the token a client uses and cancel its calls"))

/** @category commands */
export const clientsCommand = listCommand.pipe(
  Command.withDescription("AI clients seen in the last 5 minutes; `clients disconnect NAME` cuts one off"),
  Command.withSubcommands([disconnectCommand])
)
