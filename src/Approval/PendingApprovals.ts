/**
 * The approvals waiting for the user right now: each question a dialog (the native dialog, the
 * terminal prompt, `--approval-command`) is asking, from when it is shown until it is answered or
 * times out. The console lists them read-only; they are answered where they are asked.
 *
 * The daemon provides the registry; the dialog of `ApprovalsLayer` reports to it when present, so an
 * embedded flow without it works as before.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { DialogKind } from "./Dialog.ts"
import type { DialogRequest } from "./DialogText.ts"

/** A question waiting for the user. Never the statement: it may hold data. @category models */
export interface Pending {
  readonly id: number
  readonly title: string
  readonly principalName: string
  readonly connectionName: string
  readonly clientName: string
  /** Where it is answered. */
  readonly dialog: DialogKind
  /** Epoch milliseconds when it was shown. */
  readonly since: number
}

/** @category services */
export class PendingApprovals extends Context.Tag("weaviate-mcp/Approval/PendingApprovals")<PendingApprovals, {
  readonly list: () => ReadonlyArray<Pending>
  /** Lists `request` while `asking` runs (answered, timed out or interrupted, it is gone). */
  readonly track: <A, E, R>(request: DialogRequest, dialog: DialogKind, asking: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>() {
  static readonly make = Effect.sync(() => {
    const waiting = new Map<number, Pending>()
    let next = 1
    return PendingApprovals.of({
      list: () => Array.from(waiting.values()),
      track: (request, dialog, asking) =>
        Effect.acquireUseRelease(
          Effect.sync(() => {
            const id = next++
            waiting.set(id, {
              id,
              title: request.title,
              principalName: request.principalName,
              connectionName: request.connectionName,
              clientName: request.clientName,
              dialog,
              since: Date.now()
            })
            return id
          }),
          () => asking,
          (id) => Effect.sync(() => waiting.delete(id))
        )
    })
  })

  static readonly layer: Layer.Layer<PendingApprovals> = Layer.effect(PendingApprovals, PendingApprovals.make)
}
