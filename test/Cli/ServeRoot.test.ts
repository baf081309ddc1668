/**
 * `weaviate-mcp serve` runs in a root command of its own (src/Main.ts): starting the daemon must not
 * evaluate the modules of the other commands (src/Cli/RootCommand.ts is loaded on demand), and what
 * `serve` prints for help and usage errors must read exactly as under the full root; a completion
 * script asked for beside `serve` still covers every command.
 */
import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { vi } from "vitest"
import { VERSION } from "../../src/Base/Version.ts"
import * as PlainText from "../../src/Cli/PlainText.ts"
import { captureOutput } from "../support/CapturedOutput.ts"

const loads = vi.hoisted(() => ({ rootCommand: 0 }))

vi.mock("../../src/Cli/RootCommand.ts", async (importOriginal) => {
  loads.rootCommand++
  return await importOriginal()
})

const output = captureOutput()

const captured = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(output.run(Effect.exit(effect)), ({ value, stdout, stderr }) => ({ exit: value, stdout, stderr }))

const viaMain = (...args: ReadonlyArray<string>) =>
  captured(Effect.promise(() => import("../../src/Main.ts")).pipe(Effect.flatMap((Main) => Main.main(["node", "weaviate-mcp", ...args]))))

/** The same command line under the full root, run by @effect/cli directly (no src/Main.ts). */
const viaFullRoot = (...args: ReadonlyArray<string>) =>
  captured(
    Effect.promise(() => import("../../src/Cli/RootCommand.ts")).pipe(
      Effect.flatMap(({ root }) => Command.run(root, { name: "weaviate-mcp", version: VERSION })(["node", "weaviate-mcp", ...args])),
      Effect.provide(NodeContext.layer)
    )
  )

describe("the daemon's own root command", () => {
  it.live("serve runs without loading the other commands' modules; any other command loads them", () =>
    Effect.gen(function*() {
      const before = loads.rootCommand
      const serve = yield* viaMain("serve", "--help")
      assert.include(serve.stdout, "--approval-command")
      assert.strictEqual(loads.rootCommand, before, "serve --help loaded src/Cli/RootCommand.ts")
      const tokens = yield* viaMain("tokens", "--help")
      assert.include(tokens.stdout, "tokens")
      assert.strictEqual(loads.rootCommand, before + 1, "tokens --help did not load src/Cli/RootCommand.ts")
    }))

  it.live("a completion script asked for beside serve covers every command, as under the full root", () =>
    Effect.gen(function*() {
      for (const args of [["serve", "--completions", "bash"], ["serve", "--completions", "zsh"]]) {
        const ours = yield* viaMain(...args)
        const full = yield* viaFullRoot(...args)
        assert.include(ours.stdout, "export", `${args.join(" ")} leaves out the other commands`)
        assert.strictEqual(ours.stdout, full.stdout, `stdout of ${args.join(" ")}`)
      }
    }))

  it.live("serve's help and usage errors read as under the full root", () =>
    Effect.gen(function*() {
      for (
        const args of [["serve", "--help"], ["serve", "-h"], ["serve", "--bogus"], ["serve", "--port", "x"], ["serve", "extra"], ["serve", "--version"]]
      ) {
        const ours = yield* viaMain(...args)
        const full = yield* viaFullRoot(...args)
        // src/Main.ts prints help as plain text when stdout is no terminal (PlainText.help), and errors without colours.
        assert.strictEqual(ours.stdout, full.stdout === "" ? "" : PlainText.help(full.stdout), `stdout of ${args.join(" ")}`)
        assert.include(ours.stderr, PlainText.stripAnsi(full.stderr).trim(), `stderr of ${args.join(" ")}`)
        assert.isTrue(ours.stdout.length + ours.stderr.length > 0, `${args.join(" ")} printed nothing`)
      }
    }))
})
