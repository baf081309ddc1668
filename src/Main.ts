/**
 * The `weaviate-mcp` command line: the daemon (`serve`) and the commands that manage it. Every
 * command hangs off this tree.
 *
 * Exit codes: 0 success; 1 the operation failed; 2 usage error (one line on stderr, no stack trace).
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Redaction from "./Daemon/Redaction.ts"
import { VERSION } from "./Daemon/Version.ts"
import { serveCommand } from "./Cli/ServeCommand.ts"
import { tokensCommand } from "./Cli/TokensCommand.ts"
import { connectionsCommand } from "./Cli/ConnectionsCommand.ts"
import { browseCommand } from "./Cli/BrowseCommand.ts"
import { graphqlCommand } from "./Cli/GraphqlCommand.ts"
import { restCommand } from "./Cli/RestCommand.ts"
import { bridgeCommand } from "./Cli/BridgeCommand.ts"
import { setupCommand } from "./Cli/SetupCommand.ts"

/** The root command. @category commands */
export const root = Command.make("weaviate-mcp").pipe(
  Command.withDescription("Work with Weaviate vector databases from AI clients (MCP) and the command line"),
  Command.withSubcommands([serveCommand, tokensCommand, connectionsCommand, browseCommand, graphqlCommand, restCommand, bridgeCommand, setupCommand])
)

/** Runs the command line on `argv` (as `process.argv`). @category running */
export const run = Command.run(root, { name: "weaviate-mcp", version: VERSION })

const messageOf = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" && error.message.length > 0) {
    return error.message
  }
  return String(error)
}

/**
 * Maps the outcome to an exit code: @effect/cli has already printed its one-line usage errors;
 * every other failure is printed here as one redacted line.
 *
 * @category running
 */
export const main = (argv: ReadonlyArray<string>) =>
  run(argv).pipe(
    Effect.as(0),
    Effect.catchAll((error) => {
      if (ValidationError.isValidationError(error)) return Effect.succeed(2)
      const line = Redaction.global.redact(messageOf(error).split("\n")[0] ?? "")
      process.stderr.write(line + "\n")
      return Effect.succeed(typeof error === "object" && error !== null && "_tag" in error && error._tag === "UsageError" ? 2 : 1)
    }),
    Effect.catchAllDefect((defect) => {
      process.stderr.write(`internal error: ${Redaction.global.redact(messageOf(defect))}\n`)
      return Effect.succeed(1)
    }),
    Effect.onInterrupt(() => Effect.void),
    Effect.provide(NodeContext.layer)
  )

/**
 * Runs the command line on `process.argv` and sets the exit code. The process entry point.
 *
 * @category running
 */
export const runCli = (): void =>
  main(process.argv).pipe(
    Effect.flatMap((code) =>
      Effect.sync(() => {
        process.exitCode = code
      })
    ),
    Effect.catchAllCause((cause) =>
      Effect.sync(() => {
        if (!Cause.isInterruptedOnly(cause)) {
          process.stderr.write(`internal error: ${Redaction.global.redact(Cause.pretty(cause).split("\n")[0] ?? "")}\n`)
          process.exitCode = 1
        }
      })
    ),
    NodeRuntime.runMain({ disableErrorReporting: true, disablePrettyLogger: true })
  )

if (process.argv[1]?.endsWith("/src/Main.ts")) runCli()
