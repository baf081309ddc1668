/**
 * `weaviate-mcp setup <client> [--write] [--remove] [--token NAME] [--config FILE] [--name KEY] [--home DIR]`:
 * the configuration that connects an AI client. A client that speaks Streamable HTTP with headers
 * gets the endpoint and a bearer token when `--token NAME` creates one; every other case gets the
 * stdio bridge, which reads its token from the handshake file and so keeps no secret in the client's
 * file. `--write` merges it into the client's own config file (`ClientConfig.update`: symlinks
 * followed, JSONC and YAML comments kept, mode and owner kept, a concurrent change never overwritten); `--remove`
 * takes our entry out again, and only ours. See docs/clients.md.
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

const octal = (mode: number) => mode.toString(8).padStart(4, "0")

/** The file as the user named it, and the file written when it is a link. */
const where = (outcome: ClientConfig.Resolved) =>
  outcome.linked ? `${outcome.target} (through the link ${outcome.file}, which stays a link)` : outcome.file

/** Runs a file operation; its errors (ConfigFileError, ConfigChanged) exit 1 with their one line. */
const edit = <A>(operation: () => Promise<A>) =>
  Effect.tryPromise({
    try: operation,
    catch: (error) =>
      error instanceof ClientConfig.ConfigFileError || error instanceof ClientConfig.ConfigChanged
        ? error
        : new ClientConfig.ConfigFileError({ message: error instanceof Error ? error.message : String(error) })
  })

const REFORMATTED = "Its servers list could not be edited line by line, so the yaml library wrote the file again: values and comments stay, spacing may differ."

/** What an entry is, in words without its secrets (an HTTP entry's header holds a token). */
const describeEntry = (entry: unknown) => {
  const http = ClientConfig.endpoint(entry)
  return http === undefined ? "the weaviate-mcp bridge" : `the HTTP endpoint ${http.url}`
}

/** A client release that kept the file elsewhere, when that older file is there and this one is not. */
const olderNote = (client: ClientConfig.Client, file: string) =>
  Effect.promise(() => ClientConfig.olderFile(client, file)).pipe(
    Effect.flatMap((older) =>
      older === undefined
        ? Effect.void
        : Console.error(`Note: ${older.path} exists. ${older.note}; for an older release, run again with --config ${JSON.stringify(older.path)}.`)
    )
  )

/** `--remove`: shows (without --write) or removes our entry, and only ours. */
const remove = (client: ClientConfig.Client, file: string, name: string, write: boolean) =>
  Effect.gen(function*() {
    if (!write) {
      const found = yield* edit(() => ClientConfig.lookup(file, client, name))
      if (found.entry === undefined) return yield* Console.log(`${where(found)} has no entry "${name}"; nothing to remove.`)
      yield* Console.log(`Would remove "${name}" (${describeEntry(found.entry)}) from ${where(found)}.`)
      return yield* Console.error("Run again with --write to remove it.")
    }
    const outcome = yield* edit(() => ClientConfig.update(file, client, { kind: "remove", name }))
    if (!outcome.changed) return yield* Console.log(`${where(outcome)} has no entry "${name}"; nothing to remove.`)
    yield* Console.log(`Removed "${name}" (${describeEntry(outcome.removed)}) from ${where(outcome)} (the original is in ${outcome.backup}).`)
    if (outcome.reformatted) yield* Console.log(REFORMATTED)
    if (ClientConfig.endpoint(outcome.removed) !== undefined) {
      yield* Console.log("Its token stays valid until you revoke it: weaviate-mcp tokens list, then weaviate-mcp tokens revoke <id>.")
    }
    yield* Console.log(`Restart ${client} to pick it up.`)
  })

/** `setup`. @category commands */
export const setupCommand = Command.make(
  "setup",
  {
    client: Args.choice(ClientConfig.CLIENTS.map((c) => [c, c] as const), { name: "client" }),
    home: CommonOptions.home,
    write: Options.boolean("write").pipe(Options.withDescription("Merge the configuration into the client's config file (backed up first)")),
    remove: Options.boolean("remove").pipe(Options.withDescription("Remove weaviate-mcp's entry (only ours) from the client's config file; with --write it is done, without it is shown")),
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
      const file = Option.getOrElse(flags.config, () => ClientConfig.configPath(client))
      if (flags.remove) {
        if (Option.isSome(flags.token)) return yield* new UsageError({ message: "--remove and --token cannot be used together" })
        return yield* remove(client, file, flags.name, flags.write)
      }
      if (Option.isSome(flags.token) && !info.http) {
        return yield* new UsageError({ message: `${client} cannot send headers to an HTTP server; it uses the bridge, which needs no --token` })
      }
      const home = resolveHomeDir(flags.home)
      const bridgeArgs = [process.argv[1] ?? "weaviate-mcp", "bridge", "--home", home, "--start"]
      let target: ClientConfig.Target = { kind: "bridge", command: process.execPath, args: bridgeArgs }
      const tokens = TokenStore.layerOneShot.pipe(Layer.provide(CommonOptions.homeLayer(flags.home)))
      let createdId: string | undefined
      if (Option.isSome(flags.token)) {
        const name = flags.token.value
        const created = yield* Effect.flatMap(TokenStore, (store) => store.create({ name, access: flags.access })).pipe(
          Effect.catchTag("InvalidTokenRequest", (error) => Effect.fail(new UsageError({ message: error.reason }))),
          Effect.provide(tokens)
        )
        createdId = created.info.id
        target = { kind: "http", url: `http://127.0.0.1:${yield* endpointPort(home)}/mcp`, token: created.token }
      }
      if (Option.isNone(flags.config)) yield* olderNote(client, file)
      if (!flags.write) {
        yield* Console.log(yield* Effect.promise(() => ClientConfig.snippet(client, flags.name, target)))
        yield* Console.error(`Add this to ${file} (or run again with --write).`)
        return
      }
      // A token whose file was not written is revoked: it was never shown and nobody can use it.
      const outcome = yield* edit(() => ClientConfig.merge(file, client, flags.name, target)).pipe(
        Effect.tapError(() =>
          createdId === undefined ? Effect.void : Effect.flatMap(TokenStore, (store) => store.revoke(createdId!)).pipe(Effect.provide(tokens), Effect.ignore)
        )
      )
      yield* Console.log(`Wrote "${flags.name}" to ${where(outcome)}${outcome.backup === undefined ? "" : ` (the original is in ${outcome.backup})`}.`)
      if (outcome.reformatted) yield* Console.log(REFORMATTED)
      if (target.kind === "http") {
        const before = outcome.modeBefore === undefined ? "" : `; it was ${octal(outcome.modeBefore)}`
        yield* Console.log(`The file holds a token, so it is now readable by you only (0600${before}).`)
      }
      yield* Console.log(`Restart ${client} to pick it up.`)
    })
).pipe(Command.withDescription("Print or write the configuration that connects Claude Desktop, Claude Code, Cursor, VS Code, Cline, Continue, Windsurf or Zed"))
