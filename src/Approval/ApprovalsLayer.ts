/**
 * The approvals of the daemon, from its settings: one `RequestState` (one signing secret) and one
 * `Dialog` (`serve --approvals`, `--approval-command`) shared by the write approval flow and first
 * access. Fails with `DialogConfigError` when the chosen dialog cannot work here, so `serve` stops
 * with a usage error instead of refusing every write later.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ApprovalFlow } from "./ApprovalFlow.ts"
import { Dialog, type DialogConfigError, type DialogKind, type DialogMode } from "./Dialog.ts"
import { FirstAccess } from "./FirstAccess.ts"
import { PendingApprovals } from "./PendingApprovals.ts"
import { RequestState } from "./RequestState.ts"
import { onRevocation, type TokenStore } from "../Auth/TokenStore.ts"

/**
 * Approval flow and first access over a given dialog (tests pass `Dialog.layerExec(...)`).
 *
 * @category layers
 */
export const layerWithDialog = <E, R>(
  dialog: Layer.Layer<Dialog, E, R>
): Layer.Layer<ApprovalFlow | FirstAccess, E, R> =>
  Layer.mergeAll(ApprovalFlow.layer, FirstAccess.layer).pipe(
    Layer.provide(Layer.merge(RequestState.layer, tracked(dialog)))
  )

/**
 * The dialog, reporting each question it shows to `PendingApprovals` while it waits, when the daemon
 * provides the registry (the console lists them); as it is otherwise.
 *
 * @category layers
 */
export const tracked = <E, R>(dialog: Layer.Layer<Dialog, E, R>): Layer.Layer<Dialog, E, R> =>
  Layer.effect(
    Dialog,
    Effect.gen(function*() {
      const inner = yield* Dialog
      const pending = yield* Effect.serviceOption(PendingApprovals)
      if (Option.isNone(pending) || !inner.interactive) return inner
      return Dialog.of({ ...inner, confirm: (request) => pending.value.track(request, inner.kind, inner.confirm(request)) })
    })
  ).pipe(Layer.provide(dialog))

/**
 * From the daemon's settings (`DaemonSettings`): a function of the values rather than of the tag, so
 * the daemon's composition can call it without an import cycle.
 *
 * @category layers
 */
export const layer = (
  settings: { readonly approvals: DialogMode; readonly approvalCommand: Option.Option<string> }
): Layer.Layer<ApprovalFlow | FirstAccess, DialogConfigError> =>
  layerWithDialog(
    Dialog.layerFromMode(settings.approvals, { command: Option.getOrUndefined(settings.approvalCommand) }).pipe(
      Layer.tap((context) => announce(settings.approvals, Context.get(context, Dialog).kind))
    )
  )

/**
 * What `serve` says at start about the approval mode it resolved to, and what that means for the
 * user. `deny` is a warning: on a machine without a display or a terminal (`--approvals auto` on a
 * headless server), every first access and write that needs the user is refused.
 *
 * @category formatting
 */
export const describeMode = (mode: DialogMode, kind: DialogKind): string => {
  const resolved = mode === "auto" ? `auto -> ${kind === "native" ? "dialog" : kind}` : mode
  switch (kind) {
    case "native":
      return `approvals: ${resolved}: first access to a connection and writes are confirmed in a dialog on this machine's display`
    case "terminal":
      return `approvals: ${resolved}: first access to a connection and writes are confirmed at this terminal's prompt`
    case "exec":
      return `approvals: ${resolved}: first access to a connection and writes are confirmed by --approval-command (exit 0 approves)`
    case "deny":
      return `approvals: ${resolved}: ${mode === "auto" ? "no dialog available" : "nobody is asked"}: first access and writes ` +
        "will be refused unless the AI client's own approval form suffices; see --approvals (exec with --approval-command " +
        "works without a display), or tokens create --connections to grant access up front"
  }
}

const announce = (mode: DialogMode, kind: DialogKind) =>
  (kind === "deny" ? Effect.logWarning(describeMode(mode, kind)) : Effect.logInfo(describeMode(mode, kind))).pipe(
    Effect.annotateLogs({ approvals: mode, resolved: kind })
  )

/**
 * A revoked token's first-access answers are forgotten (they are kept for the daemon's life otherwise).
 *
 * @category layers
 */
export const forgetOnRevocation: Layer.Layer<never, never, FirstAccess | TokenStore> = Layer.unwrapEffect(
  Effect.map(FirstAccess, (firstAccess) => onRevocation((tokenId) => firstAccess.forgetPrincipal(tokenId)))
)
