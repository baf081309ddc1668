/**
 * Helpers shared by the approval tests.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeFs from "node:fs"
import { Dialog, type DialogService } from "../../src/Approval/Dialog.js"
import type { DialogRequest } from "../../src/Approval/DialogText.js"
import * as TestHome from "../support/TestHome.ts"

/** A real-time pause, independent of the TestClock (for polling outside processes). */
export const realPause = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

/** Polls `probe` every 20 ms, at most `attempts` times; fails with `what` when it never holds. */
export const pollUntil = <A>(what: string, probe: () => A | undefined, attempts = 250): Effect.Effect<A> =>
  Effect.gen(function*() {
    for (let i = 0; i < attempts; i++) {
      const value = probe()
      if (value !== undefined) return value
      yield* realPause(20)
    }
    return yield* Effect.dieMessage(`timed out waiting for ${what}`)
  })

export const tempDir = () => TestHome.tempDirSync("wmcp-approval-")

export const readIfExists = (path: string): string | undefined => {
  try {
    const text = NodeFs.readFileSync(path, "utf8")
    return text.trim() === "" ? undefined : text
  } catch {
    return undefined
  }
}

export { isAlive } from "../support/Processes.ts"

export const sampleRequest: DialogRequest = {
  title: "weaviate-mcp: approve a write",
  message: "Approve a write to the connection \"local\" for the token \"default\"?",
  statement: "POST /v1/objects\n{\"class\":\"Article\",\"properties\":{\"title\":\"it's $(touch /tmp/wmcp-approval-pwned) `id`\"}}",
  principalName: "default",
  connectionName: "local",
  clientName: "Claude"
}

/** A dialog that records what it was asked and answers from a queue (then no). */
export const recordingDialog = (answers: ReadonlyArray<boolean>, interactive = true) => {
  const asked: Array<DialogRequest> = []
  const queue = [...answers]
  const service: DialogService = {
    kind: interactive ? "exec" : "deny",
    interactive,
    confirm: (request) =>
      Effect.sync(() => {
        asked.push(request)
        return queue.shift() ?? false
      })
  }
  return { asked, layer: Layer.succeed(Dialog, service) }
}
