/**
 * The client configuration printed for a new token (the first run of `serve`, `tokens create`): the
 * `mcpServers` block most MCP clients read, with the endpoint URL and the bearer token. Printed on
 * stdout once, never logged.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Handshake from "../Daemon/Handshake.ts"
import * as Settings from "../Daemon/Settings.ts"

/**
 * The JSON to paste into an MCP client.
 *
 * @category formatting
 */
export const render = (url: string, token: string): string =>
  JSON.stringify(
    { mcpServers: { weaviate: { type: "http", url, headers: { Authorization: `Bearer ${token}` } } } },
    null,
    2
  )

/**
 * The endpoint URL of the home's daemon: the running daemon's port (its handshake file), else the
 * configured port (`settings.json`, `WEAVIATE_MCP_PORT`), else the default port.
 *
 * @category accessors
 */
export const endpointUrl = Effect.gen(function*() {
  const running = Option.filter(yield* Handshake.read(), (file) => Handshake.isPidAlive(file.pid))
  if (Option.isSome(running)) return `http://127.0.0.1:${running.value.port}/mcp`
  const configured = yield* Settings.provider().pipe(
    Effect.flatMap((provider) => Effect.withConfigProvider(Settings.ServeSettings, provider)),
    Effect.map((settings) => settings.port),
    Effect.orElseSucceed(() => Option.none<number>())
  )
  const port = Option.getOrElse(Option.filter(configured, (p) => p > 0), () => Settings.DEFAULT_PORT)
  return `http://127.0.0.1:${port}/mcp`
})
