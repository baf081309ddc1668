/**
 * `weaviate-mcp pause` / `resume`: flip `paused` in settings.json. A running daemon follows within a
 * second: while paused every MCP request gets HTTP 503 `-33006` and the calls in flight are cancelled.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Pause from "../Daemon/Pause.ts"
import * as CommonOptions from "./CommonOptions.ts"

const flip = (paused: boolean) => (flags: { readonly home: Parameters<typeof CommonOptions.homeLayer>[0] }) =>
  Pause.setPaused(paused).pipe(
    Effect.zipRight(Console.log(paused
      ? "AI access paused: MCP requests get 503 (-33006) and calls in flight are cancelled. `weaviate-mcp resume` turns it back on."
      : "AI access resumed.")),
    Effect.provide(CommonOptions.homeLayer(flags.home))
  )

/** @category commands */
export const pauseCommand = Command.make("pause", { home: CommonOptions.home }, flip(true)).pipe(
  Command.withDescription("Pause AI access: every MCP request is refused (503) and calls in flight are cancelled")
)

/** @category commands */
export const resumeCommand = Command.make("resume", { home: CommonOptions.home }, flip(false)).pipe(
  Command.withDescription("Resume AI access after `pause`")
)
