/**
 * Whether AI access is paused: the endpoint asks on every request and answers 503 `-33006` while it
 * is. The daemon provides the switch that follows `settings.json` (`Daemon/Pause`); an embedded
 * endpoint without it is never paused.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"

/**
 * Whether AI access is paused now; read by the endpoint on every request (default: never paused).
 *
 * @category services
 */
export class PauseSwitch extends Context.Reference<PauseSwitch>()("weaviate-mcp/PauseSwitch", {
  defaultValue: (): { readonly isPaused: () => boolean; readonly changes: (listener: (paused: boolean) => void) => void } => ({
    isPaused: () => false,
    changes: () => undefined
  })
}) {}
