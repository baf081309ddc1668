/**
 * The approvals of the daemon, from its settings: one `RequestState` (one signing secret) and one
 * `Dialog` (`serve --approvals`, `--approval-command`) shared by the write approval flow and first
 * access. Fails with `DialogConfigError` when the chosen dialog cannot work here, so `serve` stops
 * with a usage error instead of refusing every write later.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ApprovalFlow } from "../../Approval/ApprovalFlow.ts"
import { Dialog, type DialogConfigError } from "../../Approval/Dialog.ts"
import { FirstAccess } from "../../Approval/FirstAccess.ts"
import { RequestState } from "../../Approval/RequestState.ts"
import type { ServeSettings } from "../../Daemon/Settings.ts"
import { onRevocation, type TokenStore } from "../TokenStore.ts"

/**
 * Approval flow and first access over a given dialog (tests pass `Dialog.layerExec(...)`).
 *
 * @category layers
 */
export const layerWithDialog = <E, R>(
  dialog: Layer.Layer<Dialog, E, R>
): Layer.Layer<ApprovalFlow | FirstAccess, E, R> =>
  Layer.mergeAll(ApprovalFlow.layer, FirstAccess.layer).pipe(
    Layer.provide(Layer.merge(RequestState.layer, dialog))
  )

/**
 * From the daemon's settings (`DaemonSettings`): a function of the values rather than of the tag, so
 * the daemon's composition can call it without an import cycle.
 *
 * @category layers
 */
export const layer = (
  settings: Pick<ServeSettings, "approvals" | "approvalCommand">
): Layer.Layer<ApprovalFlow | FirstAccess, DialogConfigError> =>
  layerWithDialog(Dialog.layerFromMode(settings.approvals, { command: Option.getOrUndefined(settings.approvalCommand) }))

/**
 * A revoked token's first-access answers are forgotten (they are kept for the daemon's life otherwise).
 *
 * @category layers
 */
export const forgetOnRevocation: Layer.Layer<never, never, FirstAccess | TokenStore> = Layer.unwrapEffect(
  Effect.map(FirstAccess, (firstAccess) => onRevocation((tokenId) => firstAccess.forgetPrincipal(tokenId)))
)
