/**
 * The "Approval of a write" state table of the contract as an explicit state machine.
 *
 * `decide` is the table: a pure function from what is known about a call (who calls, what the client
 * can do, the connection's Safe Mode, what the `requestState` check found, what the client answered)
 * to the next step. `ApprovalFlow.approve` is the driver: it checks the state, asks `decide`, shows
 * the dialog when the table says so, and returns the outcome `tools/call` acts on.
 *
 * Rules, in order:
 * 1. `confirm_destructive_operation` by a principal that is not `fullAccess` → `Forbidden` (-33007):
 *    the tool needs the access level as other tools need a scope, so it is refused like a scope.
 * 2. Safe Mode `readOnly` → `Denied`.
 * 3. A `requestState` for this question that fails its check (altered, expired, replayed, another
 *    principal, another method, changed name or arguments) → `InvalidParams` (-32602). A state is
 *    consumed by the call that carries it, whatever the answer, so a state runs at most one write.
 * 4. A valid state without an answer → asked again (a fresh `InputRequired`, or the dialog for a
 *    client that no longer declares `elicitation`).
 * 5. A valid state with any answer other than accept + `approved: true` → `Denied`.
 * 6. An accepted form: `fullAccess` (not anonymous) → `Execute`; any other principal → `Execute` under
 *    Safe Mode `silent`, the user's dialog under `confirm`. `confirm_destructive_operation` always
 *    goes to the dialog. The client's "yes" never stands in for the user's dialog.
 * 7. No state: a client with `elicitation` → `InputRequired`; otherwise the user's dialog.
 * 8. Dialog: approve → `Execute`; deny or time-out → `Denied`; no dialog available → `UserCancelled`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Forbidden, InvalidParams } from "../Schema/McpErrors.js"
import type { AccessLevel, SafeMode } from "../Schema/Policy.js"
import * as ApprovalPayload from "./ApprovalPayload.js"
import { Dialog, type DialogKind } from "./Dialog.js"
import type { DialogRequest } from "./DialogText.js"
import { quoted } from "./DialogText.js"
import { type Binding, type Refusal, RequestState, RequestStateError } from "./RequestState.js"

// ===== Models =====

/** @category models */
export interface Principal {
  readonly id: string
  readonly name: string
  readonly accessLevel: AccessLevel
  /** The anonymous loopback principal of `serve --auth off`: always confirmed on the user's machine. */
  readonly anonymous: boolean
}

/** @category models */
export interface ApprovalInput {
  readonly principal: Principal
  readonly client: { readonly name: string; readonly elicitation: boolean }
  readonly connection: { readonly id: string; readonly name: string; readonly safeMode: SafeMode }
  /** The JSON-RPC method; `tools/call` unless said otherwise. */
  readonly method?: string
  readonly tool: { readonly name: string; readonly arguments: unknown }
  /** The exact operation shown to the user. */
  readonly statement: string
  /** `confirm_destructive_operation`: fullAccess only, and the user's dialog every time. */
  readonly destructive: boolean
  readonly requestState?: string | undefined
  readonly inputResponses?: unknown
}

/**
 * What `tools/call` does next. `Denied` and `UserCancelled` become tool results with `isError: true`
 * and the tool error codes `denied` and `user_cancelled`.
 *
 * @category models
 */
export type Outcome = Data.TaggedEnum<{
  /** Run the write now; `approvedBy` names the mechanism whose "yes" let it run. */
  Execute: { readonly approvedBy: ApprovedBy }
  /** The one `InputRequired` model (`Schema/InputRequired`): its fields, under its tag. */
  InputRequired: Omit<ApprovalPayload.ApprovalInput, "_tag">
  Denied: { readonly reason: string }
  UserCancelled: { readonly reason: string }
}>

/** @category constructors */
export const Outcome = Data.taggedEnum<Outcome>()

/**
 * The mechanism that approved a write, as results and logs name it: the client's form (`form`), or
 * the user's own confirmation on this machine: a native dialog (`dialog`), the terminal prompt
 * (`terminal`) or `--approval-command` (`exec`). When a form was accepted and the user was asked on
 * their machine as well, the machine's answer is the one that decided, so it is the one named.
 *
 * @category models
 */
export type ApprovedBy = "form" | "dialog" | "terminal" | "exec"

/** The `approvedBy` of a dialog kind (`deny` never approves; named for completeness). @category conversions */
export const approvedByDialog: Record<DialogKind, ApprovedBy> = { native: "dialog", terminal: "terminal", exec: "exec", deny: "dialog" }

/** The tool error code of a refusal. @category conversions */
export const toolErrorCode = (outcome: Outcome): "denied" | "user_cancelled" | undefined =>
  outcome._tag === "Denied" ? "denied" : outcome._tag === "UserCancelled" ? "user_cancelled" : undefined

// ===== The state table =====

/**
 * What the driver knows when it consults the table.
 *
 * @category models
 */
export interface Facts {
  readonly accessLevel: AccessLevel
  readonly anonymous: boolean
  readonly elicitation: boolean
  readonly safeMode: SafeMode
  readonly destructive: boolean
  /** `absent` also covers a state issued for another question (e.g. first access). */
  readonly state: { readonly _tag: "absent" } | { readonly _tag: "valid" } | { readonly _tag: "invalid"; readonly reason: Refusal }
  readonly answer: ApprovalPayload.Answer
  readonly dialogAvailable: boolean
}

/**
 * The next step.
 *
 * @category models
 */
export type Step = Data.TaggedEnum<{
  /** Run the write now. */
  Execute: {}
  /** Return `input_required` with a fresh state. */
  AskForm: {}
  /** Ask on the user's machine; approve → Execute, otherwise Denied. */
  AskDialog: { readonly second: boolean }
  Denied: { readonly reason: string }
  UserCancelled: { readonly reason: string }
  InvalidState: { readonly reason: Refusal }
  Forbidden: { readonly reason: string }
}>

/** @category constructors */
export const Step = Data.taggedEnum<Step>()

const isTrusted = (facts: Pick<Facts, "accessLevel" | "anonymous">) => facts.accessLevel === "fullAccess" && !facts.anonymous

/**
 * Rules 1 and 2: refusals that hold whatever the state and the answer say. The driver applies them
 * before touching the state, so a refused call never spends a state.
 *
 * @category state machine
 */
export const refuseOutright = (
  facts: Pick<Facts, "accessLevel" | "anonymous" | "destructive" | "safeMode">
): Step | undefined => {
  if (facts.destructive && !isTrusted(facts)) {
    return Step.Forbidden({ reason: "confirm_destructive_operation requires a fullAccess token" })
  }
  if (facts.safeMode === "readOnly") {
    return Step.Denied({ reason: "the connection's Safe Mode is readOnly: writes are refused" })
  }
  return undefined
}

const NO_DIALOG = "no approval dialog is available on the user's machine (serve --approvals)"

/**
 * The state table. Pure: the same facts always give the same step.
 *
 * @category state machine
 */
export const decide = (facts: Facts): Step => {
  const refused = refuseOutright(facts)
  if (refused !== undefined) return refused
  const trusted = isTrusted(facts)
  const dialog = (second: boolean): Step =>
    facts.dialogAvailable ? Step.AskDialog({ second }) : Step.UserCancelled({ reason: NO_DIALOG })
  switch (facts.state._tag) {
    case "invalid":
      return Step.InvalidState({ reason: facts.state.reason })
    case "valid": {
      if (facts.answer === "missing") return facts.elicitation ? Step.AskForm() : dialog(false)
      if (facts.answer === "denied") return Step.Denied({ reason: "the user declined the write" })
      if (facts.destructive) return dialog(true)
      if (trusted || facts.safeMode === "silent") return Step.Execute()
      return dialog(true)
    }
    case "absent":
      return facts.elicitation ? Step.AskForm() : dialog(false)
  }
}

// ===== Service =====

/** @category models */
export interface ApprovalFlowService {
  /**
   * Decides a write. Fails only with protocol errors: `InvalidParams` for a bad `requestState`,
   * `Forbidden` for `confirm_destructive_operation` without `fullAccess`.
   */
  readonly approve: (input: ApprovalInput) => Effect.Effect<Outcome, InvalidParams | Forbidden>
}

/**
 * @category tags
 */
export class ApprovalFlow extends Context.Tag("weaviate-mcp/Approval/ApprovalFlow")<ApprovalFlow, ApprovalFlowService>() {
  static readonly make: Effect.Effect<ApprovalFlowService, never, RequestState | Dialog> = Effect.gen(function*() {
    const requestState = yield* RequestState
    const dialog = yield* Dialog

    const approve = Effect.fnUntraced(function*(input: ApprovalInput) {
      const binding: Binding = {
        principalId: input.principal.id,
        method: input.method ?? "tools/call",
        purpose: "write",
        params: { name: input.tool.name, arguments: input.tool.arguments ?? {} }
      }
      const base = {
        accessLevel: input.principal.accessLevel,
        anonymous: input.principal.anonymous,
        elicitation: input.client.elicitation,
        safeMode: input.connection.safeMode,
        destructive: input.destructive,
        dialogAvailable: dialog.interactive
      }
      const refused = refuseOutright(base)
      if (refused !== undefined) return yield* toOutcome(refused)

      const state: Facts["state"] = input.requestState === undefined
        ? { _tag: "absent" }
        : yield* requestState.consume(input.requestState, binding).pipe(
          Effect.as({ _tag: "valid" } as const),
          Effect.catchTag("RequestStateError", (error) =>
            Effect.succeed(
              error.reason === "purpose" ? { _tag: "absent" } as const : { _tag: "invalid", reason: error.reason } as const
            ))
        )
      const answer = state._tag === "valid" ? ApprovalPayload.parseAnswer(input.inputResponses) : "missing"
      // Object.assign, not a spread: V8 gave each spread copy a map of its own (docs/benchmarks.md).
      return yield* toOutcome(decide(Object.assign(base, { state, answer })))

      function toOutcome(step: Step): Effect.Effect<Outcome, InvalidParams | Forbidden> {
        return Step.$match(step, {
          Execute: () => Effect.succeed(Outcome.Execute({ approvedBy: "form" })),
          Denied: ({ reason }) => Effect.succeed(Outcome.Denied({ reason })),
          UserCancelled: ({ reason }) => Effect.succeed(Outcome.UserCancelled({ reason })),
          Forbidden: ({ reason }) => Effect.fail(new Forbidden({ message: reason })),
          InvalidState: ({ reason }) => Effect.fail(new RequestStateError({ reason }).toInvalidParams()),
          AskForm: () =>
            Effect.map(requestState.issue(binding), (token) =>
              ApprovalPayload.inputRequired({
                message: formMessage(input),
                title: input.destructive ? "Approve this destructive operation" : "Approve this write",
                statement: input.statement,
                requestState: token
              }) as Outcome),
          AskDialog: ({ second }) =>
            Effect.map(
              dialog.confirm(dialogRequest(input, second)).pipe(
                Effect.withSpan("approval.wait", { captureStackTrace: false, attributes: { "gen_ai.tool.name": input.tool.name, "approval.dialog": dialog.kind } })
              ),
              (approved) =>
                approved
                  ? Outcome.Execute({ approvedBy: approvedByDialog[dialog.kind] })
                  : Outcome.Denied({ reason: "the user declined the write on their machine" })
            )
        })
      }
    })

    // Approvals and refusals are worth a warning in the operational log (never the statement: it may hold data).
    const logged = (input: ApprovalInput) =>
      Effect.tap(approve(input), (outcome) =>
        outcome._tag === "InputRequired"
          ? Effect.void
          : Effect.logWarning(outcome._tag === "Execute" ? "write approved" : "write refused").pipe(
            Effect.annotateLogs({
              tool: input.tool.name,
              principal: input.principal.name,
              client: input.client.name,
              connection: input.connection.name,
              ...(outcome._tag === "Execute" ? { approvedBy: outcome.approvedBy } : { reason: outcome.reason })
            })
          ))

    return ApprovalFlow.of({ approve: logged })
  })

  /** Requires `RequestState` and `Dialog`. */
  static readonly layer: Layer.Layer<ApprovalFlow, never, RequestState | Dialog> = Layer.effect(ApprovalFlow, ApprovalFlow.make)
}

const formMessage = (input: ApprovalInput) =>
  input.destructive
    ? `Approve a destructive operation on the connection ${quoted(input.connection.name)}? It will also be confirmed on your machine.`
    : `Approve a write to the connection ${quoted(input.connection.name)}? The statement is below.`

/** Who asks, in the server's words: a token by its name, or the anonymous caller of `serve --auth off`. */
const principalPhrase = (principal: Principal) =>
  principal.anonymous ? "anonymous local access (serve --auth off)" : `the token ${quoted(principal.name)}`

/**
 * The dialog's words are the server's: the title names the action, the first line the action, the
 * connection and the token. The client's name is not part of them (the dialog shows it on its own
 * labelled line); a second dialog says that the user approved in that client, as far as the server can
 * know it: an accepted form is the client's report of the user's answer.
 */
const dialogRequest = (input: ApprovalInput, second: boolean): DialogRequest => {
  const where = `the connection ${quoted(input.connection.name)} for ${principalPhrase(input.principal)}`
  const base = {
    statement: input.statement,
    principalName: input.principal.name,
    connectionName: input.connection.name,
    clientName: input.client.name
  }
  // Object.assign, not a spread: V8 gave each spread copy a map of its own (docs/benchmarks.md).
  if (input.destructive) {
    return Object.assign(base, {
      title: "weaviate-mcp: approve a destructive operation",
      message: `Approve a destructive operation on ${where}?`,
      detail: second
        ? "You approved this operation in that client; destructive operations are also confirmed here, every time. It cannot be undone."
        : "It cannot be undone."
    })
  }
  return second
    ? Object.assign(base, {
      title: "weaviate-mcp: confirm the approved write",
      message: `Confirm a write to ${where}?`,
      detail: "You approved this write in that client; Safe Mode asks you to confirm it here."
    })
    : Object.assign(base, { title: "weaviate-mcp: approve a write", message: `Approve a write to ${where}?` })
}
