/**
 * Options shared by every command.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import { Home } from "../Base/Home.ts"

/**
 * The root command `weaviate-mcp` over `subcommands`: the full tree (src/Cli/RootCommand.ts) and the
 * daemon's own, with `serve` only (src/Main.ts), say the same of the tool.
 *
 * @category commands
 */
export const rootOf = <const Subcommands extends readonly [Command.Command<any, any, any, any>, ...Array<Command.Command<any, any, any, any>>]>(
  subcommands: Subcommands
) =>
  Command.make("weaviate-mcp").pipe(
    Command.withDescription("Work with Weaviate vector databases from AI clients (MCP) and the command line"),
    Command.withSubcommands(subcommands)
  )

/** `--home DIR`: the support directory (else `WEAVIATE_MCP_HOME`, else the platform default). @category options */
export const home = Options.directory("home").pipe(
  Options.withDescription("Support directory (default: WEAVIATE_MCP_HOME or the per-user data directory)"),
  Options.optional
)

/** `--json`: machine-readable output. @category options */
export const json = Options.boolean("json").pipe(Options.withDescription("Print JSON instead of text"))

/**
 * `--consistency-level ONE|QUORUM|ALL`: how many replicas must answer a read (default: the connection's
 * level, else Weaviate's own). @category options
 */
export const consistencyLevel = Options.choice("consistency-level", ["ONE", "QUORUM", "ALL"]).pipe(
  Options.withDescription("Replicas that must answer on a replicated collection: ONE, QUORUM or ALL (default: the connection's, else Weaviate's)"),
  Options.optional
)

/** The Home layer for a command's `--home` value. @category layers */
export const homeLayer = (dir: Option.Option<string>): Layer.Layer<Home> => Home.layer(dir)

/**
 * A flag that may be given any number of times, zero included. `Options.repeated` alone is shown in
 * the usage line without brackets, as if it were required; the default makes it `[--flag value...]`.
 *
 * @category combinators
 */
export const repeatable = <A>(option: Options.Options<A>): Options.Options<Array<A>> =>
  option.pipe(Options.repeated, Options.withDefault<Array<A>>([]))
