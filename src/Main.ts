/**
 * The `weaviate-mcp` command line: the daemon (`serve`) and the commands that manage it. Every
 * command hangs off this tree.
 *
 * Exit codes: 0 success; 1 the operation failed; 2 usage error (one line on stderr, no stack trace).
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as ValidationError from "@effect/cli/ValidationError"
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import * as Runtime from "@effect/platform/Runtime"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Redaction from "./Base/Redaction.ts"
import { VERSION } from "./Base/Version.ts"
import * as PlainText from "./Cli/PlainText.ts"
import { serveCommand } from "./Cli/ServeCommand.ts"
import * as CommonOptions from "./Cli/CommonOptions.ts"

/**
 * `weaviate-mcp serve` runs in a root of its own, with `serve` its only subcommand: the daemon's start
 * does not evaluate the modules of the sixteen other commands (`src/Cli/RootCommand.ts`, loaded on
 * demand for every other command line). Taking those modules out of the bundle saved 15 ms of a
 * 233 ms start; loaded on demand, 8 ms (its commit message). Its help
 * and errors read as the full root's: `weaviate-mcp serve --help` prints the subcommand's help either
 * way; `--completions` and `--wizard`, which act on the whole program, run under the full root
 * (test/Cli/ServeRoot.test.ts).
 */
const serveRoot = CommonOptions.rootOf([serveCommand])

/** A root command, ready to run: which subcommands it knows, and how it runs a command line. */
const commandLine = <Name extends string, R, E, A>(root: Command.Command<Name, R, E, A>) => ({
  knows: (name: string) => HashMap.has(Command.getSubcommands(root), name),
  run: Command.run(root, { name: "weaviate-mcp", version: VERSION })
})

/** @effect/cli's options that act on the whole program wherever they stand (a completion script, the wizard). */
const WHOLE_PROGRAM = /^--(completions|wizard)(=|$)/

/** The root `argv` runs in: the daemon's own for `serve`, else the full tree. */
const commandLineFor = (args: ReadonlyArray<string>) =>
  args[0] === "serve" && !args.some((arg) => WHOLE_PROGRAM.test(arg))
    ? Effect.succeed(commandLine(serveRoot))
    : Effect.promise(() => import("./Cli/RootCommand.ts")).pipe(Effect.map((module) => commandLine(module.root)))

const messageOf = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string" && error.message.length > 0) {
    return error.message
  }
  return String(error)
}

const tagOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string" ? error._tag : undefined

/** The one line of a usage error @effect/cli found (it printed it already, as help text). */
const validationLine = (error: ValidationError.ValidationError): string =>
  PlainText.stripAnsi(HelpDoc.toAnsiText(error.error)).trim().split("\n")[0] ?? error._tag

/**
 * With `--json`, a failure is also a JSON object on stdout, so a script that reads stdout learns why:
 * `{"error": {"code", "message", "exitCode"}}`. `code` is `usage_error`, `internal_error`, or the
 * failure's tag (e.g. `ConnectionNotFound`).
 */
const jsonError = (json: boolean, code: string, message: string, exitCode: number) =>
  json ? Console.log(JSON.stringify({ error: { code, message: Redaction.global.redact(message), exitCode } })) : Effect.void

/**
 * Help (asked for, or shown for a command group without its subcommand) and `--version` as a reader
 * gets them: no trailing blank lines, and without a terminal no escape codes and no line wider than
 * 80 columns. Errors of @effect/cli lose their escape codes when stderr is not a terminal.
 */
const helpConsole = (base: Console.Console, helpWanted: boolean): Console.Console => ({
  ...base,
  log: (...items) =>
    base.log(...items.map((item) =>
      typeof item === "string" && (helpWanted || PlainText.isHelp(item))
        ? (process.stdout.isTTY === true ? item.trimEnd() : PlainText.help(item))
        : item
    )),
  error: (...items) =>
    base.error(...items.map((item) => (typeof item === "string" && process.stderr.isTTY !== true ? PlainText.stripAnsi(item) : item)))
})

/**
 * The first argument when it names no command: @effect/cli would print the root help for
 * `frobnicate --help` and exit 0, telling a script that a mistyped command worked.
 */
const unknownCommand = (cli: { readonly knows: (name: string) => boolean }, args: ReadonlyArray<string>): string | undefined => {
  const first = args[0]
  if (first === undefined || first.startsWith("-")) return undefined
  return cli.knows(first) ? undefined : first
}

/**
 * The platform services the commands use: files, paths, child processes and the terminal.
 * `NodeContext.layer` is these plus a worker manager nobody here uses; without it the bundle no
 * longer carries the worker modules (15 KB).
 */
const platform = Layer.mergeAll(NodePath.layer, NodeCommandExecutor.layer, NodeTerminal.layer).pipe(
  Layer.provideMerge(NodeFileSystem.layer)
)

/**
 * Maps the outcome to an exit code: @effect/cli has already printed its one-line usage errors;
 * every other failure is printed here as one redacted line (and, with `--json`, as a JSON object on
 * stdout).
 *
 * @category running
 */
export const main = (argv: ReadonlyArray<string>) => {
  const args = argv.slice(2)
  const json = args.includes("--json")
  const helpWanted = args.some((arg) => arg === "--help" || arg === "-h" || arg === "--version")
  return commandLineFor(args).pipe(
    Effect.flatMap((cli) => {
      const unknown = unknownCommand(cli, args)
      if (unknown !== undefined) {
        const line = `unknown command: ${unknown} (see weaviate-mcp --help)`
        process.stderr.write(`${line}\n`)
        return Effect.as(jsonError(json, "usage_error", line, 2), 2)
      }
      return Effect.consoleWith((base) => cli.run(argv).pipe(Effect.withConsole(helpConsole(base, helpWanted)))).pipe(
        Effect.as(0),
        Effect.catchAll((error) => {
          if (ValidationError.isValidationError(error)) return Effect.as(jsonError(json, "usage_error", validationLine(error), 2), 2)
          if (tagOf(error) === "AlreadyReported") return Effect.succeed(1)
          const line = Redaction.global.redact(messageOf(error).split("\n")[0] ?? "")
          process.stderr.write(line + "\n")
          const tag = tagOf(error)
          const code = tag === "UsageError" ? 2 : 1
          return Effect.as(jsonError(json, tag === "UsageError" ? "usage_error" : tag ?? "error", line, code), code)
        }),
        Effect.catchAllDefect((defect) => {
          const line = Redaction.global.redact(messageOf(defect))
          process.stderr.write(`internal error: ${line}\n`)
          return Effect.as(jsonError(json, "internal_error", line, 1), 1)
        }),
        Effect.onInterrupt(() => Effect.void)
      )
    }),
    Effect.provide(platform)
  )
}

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
    NodeRuntime.runMain({
      disableErrorReporting: true,
      disablePrettyLogger: true,
      // A command interrupted by a signal may have set its own exit code (export: 1, rows kept as .partial).
      teardown: (exit, onExit) =>
        Runtime.defaultTeardown(exit, (code) => onExit(code === 0 && Exit.isInterrupted(exit) && typeof process.exitCode === "number" ? process.exitCode : code))
    })
  )

if (process.argv[1]?.endsWith("/src/Main.ts")) runCli()
