import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import {
  type ApprovalInput,
  ApprovalFlow,
  decide,
  type Facts,
  Outcome,
  Step,
  toolErrorCode
} from "../../src/Approval/ApprovalFlow.js"
import { APPROVE_STATEMENT } from "../../src/Approval/ApprovalPayload.js"
import { dialogText } from "../../src/Approval/DialogText.js"
import { Dialog } from "../../src/Approval/Dialog.js"
import { RequestState } from "../../src/Approval/RequestState.js"
import { InvalidParams } from "../../src/Schema/McpErrors.js"
import { recordingDialog } from "./support.ts"

// ===== The pure table =====

const facts = (overrides: Partial<Facts>): Facts => ({
  accessLevel: "readWrite",
  anonymous: false,
  elicitation: true,
  safeMode: "confirm",
  destructive: false,
  state: { _tag: "absent" },
  answer: "missing",
  dialogAvailable: true,
  ...overrides
})
const valid = { _tag: "valid" } as const

describe("ApprovalFlow.decide (the state table)", () => {
  it("write call, client without elicitation → the user's dialog (the call blocks)", () => {
    assert.deepStrictEqual(decide(facts({ elicitation: false })), Step.AskDialog({ second: false }))
    assert.deepStrictEqual(decide(facts({ elicitation: false, accessLevel: "fullAccess" })), Step.AskDialog({ second: false }))
  })

  it("write call, client without elicitation and no dialog available → user_cancelled", () => {
    assert.strictEqual(decide(facts({ elicitation: false, dialogAvailable: false }))._tag, "UserCancelled")
  })

  it("write call, client with elicitation → input_required", () => {
    assert.deepStrictEqual(decide(facts({})), Step.AskForm())
  })

  it("repeat with accept/approved true, fullAccess token → executes with no second prompt", () => {
    assert.deepStrictEqual(decide(facts({ accessLevel: "fullAccess", state: valid, answer: "approved" })), Step.Execute())
  })

  it("repeat with accept/approved true, readOnly or readWrite token or anonymous under confirm → second confirmation", () => {
    for (const f of [{ accessLevel: "readWrite" }, { accessLevel: "readOnly" }, { accessLevel: "fullAccess", anonymous: true }] as const) {
      assert.deepStrictEqual(decide(facts({ ...f, state: valid, answer: "approved" })), Step.AskDialog({ second: true }), JSON.stringify(f))
    }
  })

  it("repeat with accept/approved true under Safe Mode silent → executes with no second prompt", () => {
    assert.deepStrictEqual(decide(facts({ safeMode: "silent", state: valid, answer: "approved" })), Step.Execute())
    assert.deepStrictEqual(decide(facts({ safeMode: "silent", anonymous: true, state: valid, answer: "approved" })), Step.Execute())
  })

  it("second confirmation needed but no dialog available → user_cancelled, never execute", () => {
    assert.strictEqual(decide(facts({ state: valid, answer: "approved", dialogAvailable: false }))._tag, "UserCancelled")
  })

  it("repeat with any other answer → denied", () => {
    assert.strictEqual(decide(facts({ state: valid, answer: "denied", accessLevel: "fullAccess" }))._tag, "Denied")
  })

  it("repeat with a state but no answer → input_required again", () => {
    assert.deepStrictEqual(decide(facts({ state: valid, answer: "missing" })), Step.AskForm())
    assert.deepStrictEqual(decide(facts({ state: valid, answer: "missing", elicitation: false })), Step.AskDialog({ second: false }))
  })

  it("bad state (altered, expired, replayed, other principal, method or arguments) → -32602", () => {
    for (const reason of ["signature", "expired", "replayed", "principal", "method", "params", "malformed"] as const) {
      assert.deepStrictEqual(decide(facts({ state: { _tag: "invalid", reason } })), Step.InvalidState({ reason }))
    }
  })

  it("Safe Mode readOnly → denied, whatever else holds", () => {
    for (const f of [{}, { elicitation: false }, { state: valid, answer: "approved" as const, accessLevel: "fullAccess" as const }]) {
      assert.strictEqual(decide(facts({ ...f, safeMode: "readOnly" }))._tag, "Denied")
    }
  })

  it("confirm_destructive_operation: not fullAccess (or anonymous) → Forbidden", () => {
    for (const f of [{ accessLevel: "readWrite" as const }, { accessLevel: "readOnly" as const }, { accessLevel: "fullAccess" as const, anonymous: true }]) {
      assert.strictEqual(decide(facts({ ...f, destructive: true }))._tag, "Forbidden")
    }
  })

  it("confirm_destructive_operation: the user's dialog every time, even after an accepted form and under silent", () => {
    const trusted = { accessLevel: "fullAccess" as const, destructive: true }
    assert.deepStrictEqual(decide(facts({ ...trusted })), Step.AskForm())
    assert.deepStrictEqual(decide(facts({ ...trusted, state: valid, answer: "approved" })), Step.AskDialog({ second: true }))
    assert.deepStrictEqual(decide(facts({ ...trusted, safeMode: "silent", state: valid, answer: "approved" })), Step.AskDialog({ second: true }))
    assert.deepStrictEqual(decide(facts({ ...trusted, elicitation: false })), Step.AskDialog({ second: false }))
  })

  it("a client's yes never replaces a required dialog: exhaustively, Execute after a form only for fullAccess or silent", () => {
    for (const accessLevel of ["readOnly", "readWrite", "fullAccess"] as const) {
      for (const anonymous of [false, true]) {
        for (const safeMode of ["silent", "confirm", "readOnly"] as const) {
          for (const destructive of [false, true]) {
            for (const dialogAvailable of [false, true]) {
              const step = decide(facts({ accessLevel, anonymous, safeMode, destructive, dialogAvailable, state: valid, answer: "approved" }))
              const formSuffices = !destructive && safeMode !== "readOnly" &&
                ((accessLevel === "fullAccess" && !anonymous) || safeMode === "silent")
              assert.strictEqual(step._tag === "Execute", formSuffices, JSON.stringify({ accessLevel, anonymous, safeMode, destructive, dialogAvailable }))
            }
          }
        }
      }
    }
  })
})

// ===== The driver =====


const flowLayer = (dialog: Layer.Layer<Dialog>) =>
  ApprovalFlow.layer.pipe(Layer.provideMerge(Layer.merge(RequestState.layer, dialog)))

const baseInput: ApprovalInput = {
  principal: { id: "tok_1", name: "default", accessLevel: "readWrite", anonymous: false },
  client: { name: "Claude", elicitation: true },
  connection: { id: "c1", name: "local", safeMode: "confirm" },
  tool: { name: "insert_rows", arguments: { connection_id: "c1", table: "Article", rows: [{ title: "Hello" }] } },
  statement: "POST /v1/batch/objects\n{\"objects\":[{\"class\":\"Article\"}]}",
  destructive: false
}

const accept = { [APPROVE_STATEMENT]: { action: "accept", content: { approved: true } } }

const approve = (input: ApprovalInput) => Effect.flatMap(ApprovalFlow, (flow) => flow.approve(input))

/** Asks, then answers the form with the state it got back. */
const askThenAnswer = (input: ApprovalInput, inputResponses: unknown) =>
  Effect.gen(function*() {
    const first = yield* approve(input)
    assert.strictEqual(first._tag, "InputRequired")
    const requestState = first._tag === "InputRequired" ? first.requestState : ""
    return { requestState, outcome: yield* approve({ ...input, requestState, inputResponses }) }
  })

const invalidParams = <A>(result: Either.Either<A, unknown>, reason: string) => {
  assert.isTrue(Either.isLeft(result), "expected -32602")
  if (Either.isLeft(result)) {
    assert.instanceOf(result.left, InvalidParams)
    assert.strictEqual((result.left as InvalidParams).code, -32602)
    assert.deepStrictEqual((result.left as InvalidParams).data, { field: "requestState", reason })
  }
}

describe("ApprovalFlow.approve", () => {
  it.effect("client without elicitation: the dialog asks, approve → the write executes", () => {
    const dialog = recordingDialog([true])
    return Effect.gen(function*() {
      const outcome = yield* approve({ ...baseInput, client: { name: "Claude", elicitation: false } })
      assert.deepStrictEqual(outcome, Outcome.Execute({ approvedBy: "exec" }))
      assert.strictEqual(dialog.asked.length, 1)
      assert.strictEqual(dialog.asked[0]!.statement, baseInput.statement)
      assert.strictEqual(dialog.asked[0]!.principalName, "default")
      assert.strictEqual(dialog.asked[0]!.clientName, "Claude")
    }).pipe(Effect.provide(flowLayer(dialog.layer)))
  })

  it.effect("client without elicitation: the dialog denies → tool error denied", () => {
    const dialog = recordingDialog([false])
    return Effect.gen(function*() {
      const outcome = yield* approve({ ...baseInput, client: { name: "Claude", elicitation: false } })
      assert.strictEqual(toolErrorCode(outcome), "denied")
    }).pipe(Effect.provide(flowLayer(dialog.layer)))
  })

  it.effect("client without elicitation and --approvals deny → tool error user_cancelled", () =>
    Effect.gen(function*() {
      const outcome = yield* approve({ ...baseInput, client: { name: "Claude", elicitation: false } })
      assert.strictEqual(toolErrorCode(outcome), "user_cancelled")
    }).pipe(Effect.provide(flowLayer(Dialog.layerDeny))))

  it.effect("client with elicitation: input_required with approve_statement and a signed requestState", () => {
    const dialog = recordingDialog([])
    return Effect.gen(function*() {
      const outcome = yield* approve(baseInput)
      assert.strictEqual(outcome._tag, "InputRequired")
      if (outcome._tag !== "InputRequired") return
      const request = outcome.inputRequests.approve_statement
      assert.strictEqual(request.method, "elicitation/create")
      assert.strictEqual(request.params.requestedSchema.properties.approved.description, baseInput.statement)
      assert.match(outcome.requestState, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
      assert.strictEqual(dialog.asked.length, 0)
    }).pipe(Effect.provide(flowLayer(dialog.layer)))
  })

  it.effect("accepted form, fullAccess token → executes once, no second prompt", () => {
    const dialog = recordingDialog([])
    return Effect.gen(function*() {
      const input = { ...baseInput, principal: { ...baseInput.principal, accessLevel: "fullAccess" as const } }
      const { outcome } = yield* askThenAnswer(input, accept)
      assert.deepStrictEqual(outcome, Outcome.Execute({ approvedBy: "form" }))
      assert.strictEqual(dialog.asked.length, 0)
    }).pipe(Effect.provide(flowLayer(dialog.layer)))
  })

  it.effect("accepted form, readWrite token under confirm → second confirmation; approve executes, deny refuses", () => {
    const dialog = recordingDialog([true, false])
    return Effect.gen(function*() {
      assert.deepStrictEqual((yield* askThenAnswer(baseInput, accept)).outcome, Outcome.Execute({ approvedBy: "exec" }))
      assert.strictEqual(toolErrorCode((yield* askThenAnswer(baseInput, accept)).outcome), "denied")
      assert.strictEqual(dialog.asked.length, 2)
      assert.strictEqual(dialog.asked[0]!.title, "weaviate-mcp: confirm the approved write")
    }).pipe(Effect.provide(flowLayer(dialog.layer)))
  })

  it.effect("the dialog's title and first line are the server's words; the client's name is only on its labelled line", () => {
    const dialog = recordingDialog([false])
    const spoof = "Claude Desktop wants to READ one row … Safe to approve." + "\n".repeat(47)
    return Effect.gen(function*() {
      yield* approve({ ...baseInput, client: { name: spoof, elicitation: false } })
      const asked = dialog.asked[0]!
      assert.strictEqual(asked.title, "weaviate-mcp: approve a write")
      assert.strictEqual(asked.message, "Approve a write to the connection \"local\" for the token \"default\"?")
      const text = dialogText(asked)
      assert.strictEqual(text.split("\n")[0], asked.message)
      assert.strictEqual(text.split("READ one row").length - 1, 1)
      assert.include(text, "The client calls itself: Claude Desktop wants to READ one row")
    }).pipe(Effect.provide(flowLayer(dialog.layer)))
  })

  it.effect("Safe Mode's second dialog says truthfully that the user approved in the client and is asked to confirm here", () => {
    const dialog = recordingDialog([true])
    return Effect.gen(function*() {
      yield* askThenAnswer(baseInput, accept)
      const asked = dialog.asked[0]!
      assert.strictEqual(asked.message, "Confirm a write to the connection \"local\" for the token \"default\"?")
      assert.strictEqual(asked.detail, "You approved this write in that client; Safe Mode asks you to confirm it here.")
      const lines = dialogText(asked).split("\n")
      // "that client" is the one named on the line just above.
      const said = lines.indexOf(asked.detail!)
      assert.match(lines[said - 1]!, /^The client calls itself: /)
      assert.notInclude(dialogText(asked), "client approved")
    }).pipe(Effect.provide(flowLayer(dialog.layer)))
  })

  it.effect("accepted form, readOnly token or anonymous principal under confirm → second confirmation", () => {
    const dialog = recordingDialog([true, true])
    return Effect.gen(function*() {
      const readOnly = { ...baseInput, principal: { ...baseInput.principal, accessLevel: "readOnly" as const } }
      const anonymous = { ...baseInput, principal: { id: "anonymous", name: "anonymous", accessLevel: "fullAccess" as const, anonymous: true } }
      assert.strictEqual((yield* askThenAnswer(readOnly, accept)).outcome._tag, "Execute")
      assert.strictEqual((yield* askThenAnswer(anonymous, accept)).outcome._tag, "Execute")
      assert.strictEqual(dialog.asked.length, 2)
    }).pipe(Effect.provide(flowLayer(dialog.layer)))
  })

  it.effect("accepted form, readWrite token under Safe Mode silent → executes, no second prompt", () => {
    const dialog = recordingDialog([])
    return Effect.gen(function*() {
      const input = { ...baseInput, connection: { ...baseInput.connection, safeMode: "silent" as const } }
      assert.strictEqual((yield* askThenAnswer(input, accept)).outcome._tag, "Execute")
      assert.strictEqual(dialog.asked.length, 0)
    }).pipe(Effect.provide(flowLayer(dialog.layer)))
  })

  it.effect("accepted form but the user's dialog is unavailable → user_cancelled, the client cannot approve for the user", () =>
    Effect.gen(function*() {
      const { outcome } = yield* askThenAnswer(baseInput, accept)
      assert.strictEqual(toolErrorCode(outcome), "user_cancelled")
    }).pipe(Effect.provide(flowLayer(Dialog.layerDeny))))

  it.effect("any other answer → tool error denied (decline, cancel, approved false)", () => {
    const dialog = recordingDialog([])
    return Effect.gen(function*() {
      for (
        const answer of [
          { action: "decline" },
          { action: "cancel" },
          { action: "accept", content: { approved: false } }
        ]
      ) {
        const input = { ...baseInput, principal: { ...baseInput.principal, accessLevel: "fullAccess" as const } }
        const { outcome } = yield* askThenAnswer(input, { [APPROVE_STATEMENT]: answer })
        assert.strictEqual(toolErrorCode(outcome), "denied", JSON.stringify(answer))
      }
      assert.strictEqual(dialog.asked.length, 0)
    }).pipe(Effect.provide(flowLayer(dialog.layer)))
  })

  it.effect("a repeat with a state but no response → input_required again, with a fresh state", () => {
    const dialog = recordingDialog([])
    return Effect.gen(function*() {
      const { requestState, outcome } = yield* askThenAnswer(baseInput, undefined)
      assert.strictEqual(outcome._tag, "InputRequired")
      if (outcome._tag === "InputRequired") assert.notStrictEqual(outcome.requestState, requestState)
      // The first state was spent by the repeat.
      invalidParams(yield* Effect.either(approve({ ...baseInput, requestState, inputResponses: accept })), "replayed")
    }).pipe(Effect.provide(flowLayer(dialog.layer)))
  })

  it.effect("decision 8: a replayed approved state → -32602, the write executes exactly once", () => {
    const dialog = recordingDialog([])
    return Effect.gen(function*() {
      const input = { ...baseInput, principal: { ...baseInput.principal, accessLevel: "fullAccess" as const } }
      const { requestState, outcome } = yield* askThenAnswer(input, accept)
      assert.strictEqual(outcome._tag, "Execute")
      invalidParams(yield* Effect.either(approve({ ...input, requestState, inputResponses: accept })), "replayed")
    }).pipe(Effect.provide(flowLayer(dialog.layer)))
  })

  it.effect("a tampered state → -32602", () =>
    Effect.gen(function*() {
      const first = yield* approve(baseInput)
      const state = first._tag === "InputRequired" ? first.requestState : ""
      const tampered = (state[0] === "A" ? "B" : "A") + state.slice(1)
      invalidParams(yield* Effect.either(approve({ ...baseInput, requestState: tampered, inputResponses: accept })), "signature")
      invalidParams(yield* Effect.either(approve({ ...baseInput, requestState: "garbage", inputResponses: accept })), "malformed")
    }).pipe(Effect.provide(flowLayer(recordingDialog([]).layer))))

  it.effect("expiry: a state answered at 4:59 executes, one answered at 5:00 → -32602 (TestClock)", () =>
    Effect.gen(function*() {
      const input = { ...baseInput, principal: { ...baseInput.principal, accessLevel: "fullAccess" as const } }
      const stateOf = (o: Outcome) => (o._tag === "InputRequired" ? o.requestState : "")
      const a = stateOf(yield* approve(input))
      const b = stateOf(yield* approve(input))
      yield* TestClock.adjust("4 minutes")
      yield* TestClock.adjust("59 seconds")
      assert.strictEqual((yield* approve({ ...input, requestState: a, inputResponses: accept }))._tag, "Execute")
      yield* TestClock.adjust("1 second")
      invalidParams(yield* Effect.either(approve({ ...input, requestState: b, inputResponses: accept })), "expired")
    }).pipe(Effect.provide(flowLayer(recordingDialog([]).layer))))

  it.effect("a changed argument → -32602", () =>
    Effect.gen(function*() {
      const first = yield* approve(baseInput)
      const requestState = first._tag === "InputRequired" ? first.requestState : ""
      const changed = { ...baseInput, tool: { ...baseInput.tool, arguments: { ...(baseInput.tool.arguments as object), table: "Secrets" } } }
      invalidParams(yield* Effect.either(approve({ ...changed, requestState, inputResponses: accept })), "params")
    }).pipe(Effect.provide(flowLayer(recordingDialog([]).layer))))

  it.effect("another principal → -32602", () =>
    Effect.gen(function*() {
      const first = yield* approve(baseInput)
      const requestState = first._tag === "InputRequired" ? first.requestState : ""
      const other = { ...baseInput, principal: { ...baseInput.principal, id: "tok_2", accessLevel: "fullAccess" as const } }
      invalidParams(yield* Effect.either(approve({ ...other, requestState, inputResponses: accept })), "principal")
    }).pipe(Effect.provide(flowLayer(recordingDialog([]).layer))))

  it.effect("another method → -32602", () =>
    Effect.gen(function*() {
      const first = yield* approve(baseInput)
      const requestState = first._tag === "InputRequired" ? first.requestState : ""
      invalidParams(
        yield* Effect.either(approve({ ...baseInput, method: "prompts/get", requestState, inputResponses: accept })),
        "method"
      )
    }).pipe(Effect.provide(flowLayer(recordingDialog([]).layer))))

  it.effect("Safe Mode readOnly → tool error denied, and a valid state is not spent", () => {
    const dialog = recordingDialog([true])
    return Effect.gen(function*() {
      const first = yield* approve({ ...baseInput, principal: { ...baseInput.principal, accessLevel: "fullAccess" } })
      const requestState = first._tag === "InputRequired" ? first.requestState : ""
      const readOnly = { ...baseInput, connection: { ...baseInput.connection, safeMode: "readOnly" as const } }
      assert.strictEqual(toolErrorCode(yield* approve(readOnly)), "denied")
      assert.strictEqual(toolErrorCode(yield* approve({ ...readOnly, client: { name: "x", elicitation: false } })), "denied")
      assert.strictEqual(toolErrorCode(yield* approve({ ...readOnly, principal: { ...readOnly.principal, accessLevel: "fullAccess" }, requestState, inputResponses: accept })), "denied")
      assert.strictEqual(dialog.asked.length, 0)
    }).pipe(Effect.provide(flowLayer(dialog.layer)))
  })

  it.effect("confirm_destructive_operation by a readWrite token → Forbidden -33007", () =>
    Effect.gen(function*() {
      const result = yield* Effect.either(approve({ ...baseInput, tool: { name: "confirm_destructive_operation", arguments: {} }, destructive: true }))
      assert.isTrue(Either.isLeft(result) && result.left._tag === "Forbidden" && result.left.code === -33007)
    }).pipe(Effect.provide(flowLayer(recordingDialog([]).layer))))

  it.effect("confirm_destructive_operation by fullAccess: accepted form, then the user's dialog anyway", () => {
    const dialog = recordingDialog([true, false])
    return Effect.gen(function*() {
      const input: ApprovalInput = {
        ...baseInput,
        principal: { ...baseInput.principal, accessLevel: "fullAccess" },
        connection: { ...baseInput.connection, safeMode: "silent" },
        tool: { name: "confirm_destructive_operation", arguments: { operation: "drop_table", table: "Article", confirm: "Article" } },
        statement: "DELETE /v1/schema/Article",
        destructive: true
      }
      assert.strictEqual((yield* askThenAnswer(input, accept)).outcome._tag, "Execute")
      assert.strictEqual(toolErrorCode((yield* askThenAnswer(input, accept)).outcome), "denied")
      assert.strictEqual(dialog.asked.length, 2)
      assert.strictEqual(dialog.asked[0]!.title, "weaviate-mcp: approve a destructive operation")
    }).pipe(Effect.provide(flowLayer(dialog.layer)))
  })

  it.effect("a state issued for first access does not approve a write: the write is asked for", () =>
    Effect.gen(function*() {
      const requestState = yield* Effect.flatMap(RequestState, (s) =>
        s.issue({ principalId: "tok_1", method: "tools/call", purpose: "firstAccess", params: {} }))
      const outcome = yield* approve({ ...baseInput, requestState, inputResponses: accept })
      assert.strictEqual(outcome._tag, "InputRequired")
    }).pipe(Effect.provide(flowLayer(recordingDialog([]).layer))))

  it.effect("approvedBy names the mechanism that approved: dialog, terminal, exec, or the client's form", () =>
    Effect.gen(function*() {
      const noForm = { ...baseInput, client: { name: "Claude", elicitation: false } }
      for (const [kind, named] of [["native", "dialog"], ["terminal", "terminal"], ["exec", "exec"]] as const) {
        const dialog = Layer.succeed(Dialog, { kind, interactive: true, confirm: () => Effect.succeed(true) })
        assert.deepStrictEqual(yield* approve(noForm).pipe(Effect.provide(flowLayer(dialog))), Outcome.Execute({ approvedBy: named }))
      }
      const fullAccess = { ...baseInput, principal: { ...baseInput.principal, accessLevel: "fullAccess" as const } }
      const { outcome } = yield* askThenAnswer(fullAccess, accept).pipe(Effect.provide(flowLayer(recordingDialog([]).layer)))
      assert.deepStrictEqual(outcome, Outcome.Execute({ approvedBy: "form" }))
    }))

  it.live("the exec dialog end to end: --approval-command exit 0 executes, exit 1 denies", () =>
    Effect.gen(function*() {
      const noForm = { ...baseInput, client: { name: "Claude", elicitation: false } }
      assert.strictEqual((yield* approve(noForm).pipe(Effect.provide(flowLayer(Dialog.layerExec("exit 0")))))._tag, "Execute")
      assert.strictEqual(toolErrorCode(yield* approve(noForm).pipe(Effect.provide(flowLayer(Dialog.layerExec("exit 1"))))), "denied")
    }))
})
