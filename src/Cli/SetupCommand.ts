/**
 * `weaviate-mcp setup <client> [--write] [--token NAME] [--config FILE] [--name KEY] [--home DIR]`:
 * the configuration that connects an AI client. A client that speaks Streamable HTTP with headers
 * gets the endpoint and a bearer token when `--token NAME` creates one; every other case gets the
 * stdio bridge, which reads its token from the handshake file and so keeps no secret in the client's
 * file. `--write` merges it into the client's own config file.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as NodePath from "node:path"
import * as ClientConfig from "../Bridge/ClientConfig.ts"
import * as DaemonLink from "../Bridge/DaemonLink.ts"
import { FileNames, resolveHomeDir } from "../Base/Home.ts"
import { DEFAULT_PORT } from "../Daemon/Settings.ts"
import { TokenStore } from "../Auth/TokenStore.ts"
import { AccessLevel } from "../Schema/Policy.ts"
import { UsageError } from "./CliErrors.ts"
import * as CommonOptions from "./CommonOptions.ts"

/** The endpoint's port: the running daemon's, else the stable default. */
const endpointPort = (home: string) =>
  Effect.promise(async () => {
    try {
      return (await DaemonLink.locate(NodePath.join(home, FileNames.handshake))).file.port
    } catch {
      return DEFAULT_PORT
    }
  })

/** `setup`. @category commands */
export const setupCommand = Command.make(
  "setup",
  {
    client: Args.choice(ClientConfig.CLIENTS.map((c) => [c, c] as const), { name: "client" }),
    home: CommonOptions.home,
    write: Options.boolean("write").pipe(Options.withDescription("Merge the configuration into the client's config file (backed up first)")),
    token: Options.text("token").pipe(
      Options.withDescription("Create a token with this name for the client and connect over HTTP (clients with HTTP support)"),
      Options.optional
    ),
    access: Options.choice("access", AccessLevel.literals).pipe(
      Options.withDescription("Access level of the token --token creates (default readWrite)"),
      Options.withDefault("readWrite" as const)
    ),
    config: Options.file("config").pipe(Options.withDescription("The client's config file (default: its per-platform path)"), Options.optional),
    name: Options.text("name").pipe(Options.withDescription("The server's name in the client's configuration"), Options.withDefault("weaviate"))
  },
  (flags) =>
    Effect.gen(function*() {
      const client = flags.client
      const info = ClientConfig.clients[client]
      if (Option.isSome(flags.token) && !info.http) {
        return yield* new UsageError({ message: `${client} cannot send headers to an HTTP server; it uses the bridge, which needs no --token` })
      }
      const home = resolveHomeDir(flags.home)
      const bridgeArgs = [process.argv[1] ?? "weaviate-mcp", "bridge", "--home", home, "--start"]
      let target: ClientConfig.Target = { kind: "bridge", command: process.execPath, args: bridgeArgs }
      if (Option.isSome(flags.token)) {
        const name = flags.token.value
        const created = yield* Effect.flatMap(TokenStore, (store) => store.create({ name, access: flags.access })).pipe(
          Effect.catchTag("InvalidTokenRequest", (error) => Effect.fail(new UsageError({ message: error.reason }))),
          Effect.provide(TokenStore.layerOneShot.pipe(Layer.provide(CommonOptions.homeLayer(flags.home))))
        )
        target = { kind: "http", url: `http://127.0.0.1:${yield* endpointPort(home)}/mcp`, token: created.token }
      }
      const file = Option.getOrElse(flags.config, () => ClientConfig.configPath(client))
      if (!flags.write) {
        yield* Console.log(JSON.stringify(ClientConfig.snippet(client, flags.name, target), null, 2))
        yield* Console.error(`Add this to ${file} (or run again with --write).`)
        return
      }
      const { backup } = yield* Effect.tryPromise({
        try: () => ClientConfig.merge(file, client, flags.name, target),
        catch: (error) => error instanceof Error ? error : new Error(String(error))
      })
      yield* Console.log(`Wrote "${flags.name}" to ${file}${backup === undefined ? "" : ` (the original is in ${backup})`}.`)
      if (target.kind === "http") yield* Console.log(`The file holds a token, so it is now readable by you only (0600).`)
      yield* Console.log(`Restart ${client} to pick it up.`)
    })
).pipe(Command.withDescription("Print or write the configuration that connects Claude Desktop, Claude Code, Cursor or VS Code"))
