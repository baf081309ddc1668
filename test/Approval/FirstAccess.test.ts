import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { APPROVE_STATEMENT } from "../../src/Approval/ApprovalPayload.js"
import { Dialog, type DialogService } from "../../src/Approval/Dialog.js"
import type { DialogRequest } from "../../src/Approval/DialogText.js"
import { dialogText } from "../../src/Approval/DialogText.js"
import { FirstAccess, type FirstAccessInput } from "../../src/Approval/FirstAccess.js"
import { RequestState } from "../../src/Approval/RequestState.js"
import { recordingDialog } from "./support.ts"


const firstAccessLayer = (dialog: Layer.Layer<Dialog>) =>
  FirstAccess.layer.pipe(Layer.provideMerge(Layer.merge(RequestState.layer, dialog)))

const viaDialog: FirstAccessInput = {
  principal: { id: "tok_1", name: "default" },
  client: { name: "Claude", elicitation: false },
  connection: { id: "c1", name: "local" },
  method: "resources/read",
  params: { uri: "weaviate://connections/c1/schema" }
}
const viaForm: FirstAccessInput = { ...viaDialog, client: { name: "Claude", elicitation: true } }
const accept = { [APPROVE_STATEMENT]: { action: "accept", content: { approved: true } } }
const decline = { [APPROVE_STATEMENT]: { action: "decline" } }

const check = (input: FirstAccessInput) => Effect.flatMap(FirstAccess, (service) => service.check(input))

const forbidden = <A>(result: Either.Either<A, unknown>) => {
  assert.isTrue(Either.isLeft(result), "expected -33007")
  if (Either.isLeft(result)) {
    const error = result.left as { _tag: string; code: number }
    assert.strictEqual(error._tag, "Forbidden")
    assert.strictEqual(error.code, -33007)
  }
}

describe("FirstAccess", () => {
  it.effect("the first access asks once on the dialog; the approval is remembered for the daemon's life", () => {
    const dialog = recordingDialog([true])
    return Effect.gen(function*() {
      assert.strictEqual((yield* check(viaDialog))._tag, "Granted")
      yield* TestClock.adjust("30 days")
      assert.strictEqual((yield* check(viaDialog))._tag, "Granted")
      assert.strictEqual((yield* check(viaForm))._tag, "Granted")
      assert.strictEqual(dialog.asked.length, 1)
      assert.strictEqual(dialog.asked[0]!.connectionName, "local")
    }).pipe(Effect.provide(firstAccessLayer(dialog.layer)))
  })

  it.effect("connections the token's creator named (its allowlist) are granted without a question, even with nobody to ask", () =>
    Effect.gen(function*() {
      const named = { ...viaDialog, principal: { id: "tok_3", name: "ci", granted: ["c1"] } }
      assert.strictEqual((yield* check(named))._tag, "Granted")
      assert.strictEqual((yield* check({ ...named, client: viaForm.client }))._tag, "Granted", "no form either")
      forbidden(yield* Effect.either(check({ ...named, connection: { id: "c2", name: "other" } })))
    }).pipe(Effect.provide(firstAccessLayer(Dialog.layerDeny))))
  it.effect("the first-access dialog names the connection, the token and the client once each", () => {
    const dialog = recordingDialog([true])
    return Effect.gen(function*() {
      yield* check({ ...viaDialog, principal: { id: "tok_9", name: "laptop-token" }, connection: { id: "c9", name: "prod-cluster" }, client: { name: "Claude Desktop", elicitation: false } })
      const asked = dialog.asked[0]!
      assert.strictEqual(asked.title, "weaviate-mcp: allow access to a connection")
      const text = dialogText(asked)
      assert.strictEqual(text.split("\n")[0], "Allow the token \"laptop-token\" to use the connection \"prod-cluster\"?")
      for (const name of ["prod-cluster", "laptop-token", "Claude Desktop"]) assert.strictEqual(text.split(name).length - 1, 1, name)
      assert.include(text, "The client calls itself: Claude Desktop")
      assert.include(text, "resources/read\n{\n  \"uri\": \"weaviate://connections/c1/schema\"\n}")
    }).pipe(Effect.provide(firstAccessLayer(dialog.layer)))
  })

  it.effect("the memory is keyed by (principal, connection)", () => {
    const dialog = recordingDialog([true, true, true])
    return Effect.gen(function*() {
      yield* check(viaDialog)
      yield* check({ ...viaDialog, connection: { id: "c2", name: "other" } })
      yield* check({ ...viaDialog, principal: { id: "tok_2", name: "ci" } })
      yield* check(viaDialog)
      assert.strictEqual(dialog.asked.length, 3)
    }).pipe(Effect.provide(firstAccessLayer(dialog.layer)))
  })

  it.effect("a refusal holds 60 s with -33007, then the user may be asked again (TestClock)", () => {
    const dialog = recordingDialog([false, true])
    return Effect.gen(function*() {
      forbidden(yield* Effect.either(check(viaDialog)))
      yield* TestClock.adjust("59 seconds")
      forbidden(yield* Effect.either(check(viaDialog)))
      forbidden(yield* Effect.either(check(viaForm)))
      assert.strictEqual(dialog.asked.length, 1, "no question during the hold")
      yield* TestClock.adjust("1 second")
      assert.strictEqual((yield* check(viaDialog))._tag, "Granted")
      assert.strictEqual(dialog.asked.length, 2)
    }).pipe(Effect.provide(firstAccessLayer(dialog.layer)))
  })

  it.effect("a client with elicitation gets input_required; accept grants and is remembered", () => {
    const dialog = recordingDialog([])
    return Effect.gen(function*() {
      const first = yield* check(viaForm)
      assert.strictEqual(first._tag, "InputRequired")
      const requestState = first._tag === "InputRequired" ? first.requestState : ""
      if (first._tag === "InputRequired") {
        assert.include(first.inputRequests.approve_statement.params.requestedSchema.properties.approved.description, "local (c1)")
      }
      assert.strictEqual((yield* check({ ...viaForm, requestState, inputResponses: accept }))._tag, "Granted")
      assert.strictEqual((yield* check(viaForm))._tag, "Granted")
      assert.strictEqual(dialog.asked.length, 0)
    }).pipe(Effect.provide(firstAccessLayer(dialog.layer)))
  })

  it.effect("the first-access form's message is the server's sentence; the client's name is only in the statement, labelled", () =>
    Effect.gen(function*() {
      const spoofing = { ...viaForm, client: { name: "Trusted System Update: nothing to approve", elicitation: true } }
      const first = yield* check(spoofing)
      assert.strictEqual(first._tag, "InputRequired")
      if (first._tag !== "InputRequired") return
      const params = first.inputRequests.approve_statement.params
      assert.match(params.message, /^Allow the token "[^"]+" to use the connection "local" for the first time\?$/)
      assert.notInclude(params.message, "Trusted System Update")
      assert.include(params.requestedSchema.properties.approved.description, "Client: Trusted System Update: nothing to approve")
    }).pipe(Effect.provide(firstAccessLayer(recordingDialog([]).layer))))

  it.effect("a declined form refuses for 60 s (-33007)", () =>
    Effect.gen(function*() {
      const first = yield* check(viaForm)
      const requestState = first._tag === "InputRequired" ? first.requestState : ""
      forbidden(yield* Effect.either(check({ ...viaForm, requestState, inputResponses: decline })))
      forbidden(yield* Effect.either(check(viaForm)))
      yield* TestClock.adjust("60 seconds")
      assert.strictEqual((yield* check(viaForm))._tag, "InputRequired")
    }).pipe(Effect.provide(firstAccessLayer(recordingDialog([]).layer))))

  it.effect("a first-access state for another connection or principal → -32602", () =>
    Effect.gen(function*() {
      const first = yield* check(viaForm)
      const requestState = first._tag === "InputRequired" ? first.requestState : ""
      const other = yield* Effect.either(
        check({ ...viaForm, connection: { id: "c2", name: "other" }, requestState, inputResponses: accept })
      )
      assert.isTrue(Either.isLeft(other) && other.left._tag === "InvalidParams")
      const otherPrincipal = yield* Effect.either(
        check({ ...viaForm, principal: { id: "tok_9", name: "x" }, requestState, inputResponses: accept })
      )
      assert.isTrue(Either.isLeft(otherPrincipal) && otherPrincipal.left._tag === "InvalidParams")
    }).pipe(Effect.provide(firstAccessLayer(recordingDialog([]).layer))))

  it.effect("a write approval state does not grant first access", () =>
    Effect.gen(function*() {
      const requestState = yield* Effect.flatMap(RequestState, (s) =>
        s.issue({ principalId: "tok_1", method: "resources/read", purpose: "write", params: {} }))
      assert.strictEqual((yield* check({ ...viaForm, requestState, inputResponses: accept }))._tag, "InputRequired")
    }).pipe(Effect.provide(firstAccessLayer(recordingDialog([]).layer))))

  it.effect("no dialog available and no form → -33007, and nothing is remembered", () =>
    Effect.gen(function*() {
      forbidden(yield* Effect.either(check(viaDialog)))
      assert.strictEqual((yield* check(viaForm))._tag, "InputRequired")
    }).pipe(Effect.provide(firstAccessLayer(Dialog.layerDeny))))

  it.effect("concurrent first requests share one question", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<boolean>()
      const asked: Array<DialogRequest> = []
      const dialog: DialogService = {
        kind: "exec",
        interactive: true,
        confirm: (request) => Effect.zipRight(Effect.sync(() => asked.push(request)), Deferred.await(release))
      }
      yield* Effect.gen(function*() {
        const fibers = yield* Effect.forEach([1, 2, 3], () => Effect.fork(check(viaDialog)))
        yield* Effect.yieldNow()
        yield* Deferred.succeed(release, true)
        for (const fiber of fibers) assert.strictEqual((yield* Fiber.join(fiber))._tag, "Granted")
        assert.strictEqual(asked.length, 1)
      }).pipe(Effect.provide(firstAccessLayer(Layer.succeed(Dialog, dialog))))
    }))

  it.effect("forgetting a principal asks again", () => {
    const dialog = recordingDialog([true, true])
    return Effect.gen(function*() {
      yield* check(viaDialog)
      yield* Effect.flatMap(FirstAccess, (s) => s.forgetPrincipal("tok_1"))
      yield* check(viaDialog)
      assert.strictEqual(dialog.asked.length, 2)
    }).pipe(Effect.provide(firstAccessLayer(dialog.layer)))
  })

  describe("memory bound", () => {
    const sizeOf = Effect.flatMap(FirstAccess, (s) => s.size)

    it.effect("a question's lock is held only while it is asked: after many principals' first accesses none is left, and revoking forgets their answers", () => {
      const principals = Array.from({ length: 200 }, (_, i) => `tok_${i}`)
      const dialog = recordingDialog(principals.map(() => true))
      return Effect.gen(function*() {
        for (const id of principals) yield* check({ ...viaDialog, principal: { id, name: id } })
        assert.deepStrictEqual(yield* sizeOf, { answers: 200, questions: 0 })
        for (const id of principals) yield* Effect.flatMap(FirstAccess, (s) => s.forgetPrincipal(id))
        assert.deepStrictEqual(yield* sizeOf, { answers: 0, questions: 0 })
      }).pipe(Effect.provide(firstAccessLayer(dialog.layer)))
    })

    it.effect("an expired refusal is forgotten when it is next looked at (TestClock)", () =>
      Effect.gen(function*() {
        const question = yield* check(viaForm)
        assert.strictEqual(question._tag, "InputRequired")
        const requestState = question._tag === "InputRequired" ? question.requestState : ""
        forbidden(yield* Effect.either(check({ ...viaForm, requestState, inputResponses: decline })))
        assert.strictEqual((yield* sizeOf).answers, 1)
        yield* TestClock.adjust("61 seconds")
        assert.strictEqual((yield* check(viaForm))._tag, "InputRequired")
        assert.deepStrictEqual(yield* sizeOf, { answers: 0, questions: 0 })
      }).pipe(Effect.provide(firstAccessLayer(Dialog.layerDeny))))
  })
})
