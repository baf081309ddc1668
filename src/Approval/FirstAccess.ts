/**
 * First access: the first time a principal touches a connection, the user is asked once, through the
 * client's form (`input_required`, when the client declared `elicitation`) or the dialog on the
 * user's machine. An approval is remembered for the daemon's life; a refusal holds for 60 seconds,
 * during which every request of that principal on that connection is `Forbidden` (-33007), and the
 * question may then be asked again.
 *
 * A token created with an explicit connection allowlist (`tokens create --connections a,b`) has first
 * access to those connections granted at creation: naming them was the user's consent, given on their
 * own machine. Such a principal passes its allowlist as `principal.granted`.
 *
 * This is what lets `resources/read` and `prompts/get` answer `input_required`. The form uses the
 * contract's request key `approve_statement`; its `requestState` has the purpose `firstAccess`, so it
 * can never approve a write, and a write's state can never grant access.
 *
 * Order in `tools/call`: `FirstAccess.check` first, then `ApprovalFlow.approve` for a write, both with
 * the same `requestState` and `inputResponses`. Each flow consumes only a state issued for its own
 * question and treats the other's as absent, so the first write to a new connection takes two
 * questions (access, then the statement).
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Forbidden, type InvalidParams } from "../Schema/McpErrors.js"
import * as ApprovalPayload from "./ApprovalPayload.js"
import { Dialog } from "./Dialog.js"
import { quoted } from "./DialogText.js"
import { type Binding, RequestState } from "./RequestState.js"

// ===== Models =====

/** @category models */
export interface FirstAccessInput {
  /** `granted`: connection ids the user granted when creating the token (its explicit allowlist). */
  readonly principal: { readonly id: string; readonly name: string; readonly granted?: ReadonlyArray<string> | undefined }
  readonly client: { readonly name: string; readonly elicitation: boolean }
  readonly connection: { readonly id: string; readonly name: string }
  /** `tools/call`, `resources/read` or `prompts/get`. */
  readonly method: string
  /** The parameters that matter, bound into the state: tool name + arguments, the URI, or prompt name + arguments. */
  readonly params: unknown
  readonly requestState?: string | undefined
  readonly inputResponses?: unknown
}

/** @category models */
export type FirstAccessOutcome = Data.TaggedEnum<{
  Granted: {}
  /** The one `InputRequired` model (`Schema/InputRequired`): its fields, under its tag. */
  InputRequired: Omit<ApprovalPayload.ApprovalInput, "_tag">
}>

/** @category constructors */
export const FirstAccessOutcome = Data.taggedEnum<FirstAccessOutcome>()

/** @category models */
export interface FirstAccessService {
  /** Grants, asks, or refuses (`Forbidden`); a bad `requestState` for this question is `InvalidParams`. */
  readonly check: (input: FirstAccessInput) => Effect.Effect<FirstAccessOutcome, Forbidden | InvalidParams>
  /** Forgets every answer about a principal (its token was revoked or changed). */
  readonly forgetPrincipal: (principalId: string) => Effect.Effect<void>
  /** What is held (memory bound checks): answers remembered, and questions being asked. */
  readonly size: Effect.Effect<{ readonly answers: number; readonly questions: number }>
}

/** @category models */
export interface Options {
  /** How long a refusal holds. Default 60 seconds. */
  readonly refusalHold?: Duration.DurationInput
}

type Memory = { readonly _tag: "granted" } | { readonly _tag: "refused"; readonly until: number }

// ===== Service =====

/**
 * @category tags
 */
export class FirstAccess extends Context.Tag("weaviate-mcp/Approval/FirstAccess")<FirstAccess, FirstAccessService>() {
  static readonly make = (options: Options = {}): Effect.Effect<FirstAccessService, never, RequestState | Dialog> =>
    Effect.gen(function*() {
      const requestState = yield* RequestState
      const dialog = yield* Dialog
      const holdMs = Duration.toMillis(Duration.decode(options.refusalHold ?? Duration.seconds(60)))
      // One answer per (principal, connection) that asked: principals are tokens and connections are
      // saved ones (an unknown connection is refused before), both the user's. A revoked token's answers
      // are forgotten (`forgetPrincipal`); an expired refusal when it is next looked at.
      const memory = new Map<string, Memory>()
      // One question at a time per (principal, connection): concurrent first requests share the answer.
      const locks = questionLocks()
      const keyOf = (principalId: string, connectionId: string) => JSON.stringify([principalId, connectionId])

      const refuse = (key: string, input: FirstAccessInput, now: number) =>
        Effect.zipRight(
          Effect.sync(() => memory.set(key, { _tag: "refused", until: now + holdMs })),
          Effect.fail(refusedError(input, holdMs))
        )

      const decideLocked = Effect.fnUntraced(function*(key: string, input: FirstAccessInput) {
        const now = yield* Clock.currentTimeMillis
        const remembered = memory.get(key)
        if (remembered?._tag === "granted") return FirstAccessOutcome.Granted()
        if (remembered?._tag === "refused") {
          if (now < remembered.until) return yield* refusedError(input, remembered.until - now)
          memory.delete(key)
        }

        const binding: Binding = {
          principalId: input.principal.id,
          method: input.method,
          purpose: "firstAccess",
          params: { connection: input.connection.id, params: input.params ?? null }
        }
        const state = input.requestState === undefined
          ? "absent" as const
          : yield* requestState.consume(input.requestState, binding).pipe(
            Effect.as("valid" as const),
            Effect.catchTag("RequestStateError", (error) =>
              error.reason === "purpose" ? Effect.succeed("absent" as const) : Effect.fail(error.toInvalidParams()))
          )

        if (state === "valid") {
          const answer = ApprovalPayload.parseAnswer(input.inputResponses)
          if (answer === "approved") {
            memory.set(key, { _tag: "granted" })
            return FirstAccessOutcome.Granted()
          }
          if (answer === "denied") return yield* refuse(key, input, now)
        }
        if (input.client.elicitation) {
          const token = yield* requestState.issue(binding)
          return ApprovalPayload.inputRequired({
            message: `Allow the token "${input.principal.name}" to use the connection "${input.connection.name}" for the first time?`,
            title: "Allow access to this connection",
            statement: accessStatement(input),
            requestState: token
          })
        }
        if (!dialog.interactive) {
          return yield* new Forbidden({
            message: `First access to connection "${input.connection.name}" needs the user's approval, and no approval dialog is available`,
            data: { reason: "first_access" }
          })
        }
        const approved = yield* dialog.confirm({
          title: "weaviate-mcp: allow access to a connection",
          message: `Allow the token ${quoted(input.principal.name)} to use the connection ${quoted(input.connection.name)}?`,
          detail: `This is its first request there. If you allow it, the answer holds until the daemon stops; if you deny it, its requests there are refused for ${
            Math.ceil(holdMs / 1000)
          } seconds.`,
          statementLabel: "Its first request",
          statement: `${input.method}\n${JSON.stringify(input.params ?? null)}`,
          principalName: input.principal.name,
          connectionName: input.connection.name,
          clientName: input.client.name
        })
        if (!approved) return yield* refuse(key, input, yield* Clock.currentTimeMillis)
        memory.set(key, { _tag: "granted" })
        return FirstAccessOutcome.Granted()
      })

      const check = Effect.fnUntraced(function*(input: FirstAccessInput) {
        const key = keyOf(input.principal.id, input.connection.id)
        // Fast path without the lock: most calls come after the first.
        if (memory.get(key)?._tag === "granted") return FirstAccessOutcome.Granted()
        if (input.principal.granted?.includes(input.connection.id) === true) return FirstAccessOutcome.Granted()
        return yield* locks.withLock(key, decideLocked(key, input))
      })

      const forgetPrincipal = (principalId: string) =>
        Effect.sync(() => {
          for (const key of memory.keys()) {
            if ((JSON.parse(key) as [string, string])[0] === principalId) memory.delete(key)
          }
        })

      return FirstAccess.of({
        check,
        forgetPrincipal,
        size: Effect.sync(() => ({ answers: memory.size, questions: locks.size() }))
      })
    })

  /** Requires `RequestState` and `Dialog`. */
  static readonly layer: Layer.Layer<FirstAccess, never, RequestState | Dialog> = Layer.effect(FirstAccess, FirstAccess.make())

  static readonly layerWith = (options: Options): Layer.Layer<FirstAccess, never, RequestState | Dialog> =>
    Layer.effect(FirstAccess, FirstAccess.make(options))
}

// ===== Internal =====

/** A lock per key, held only while requests wait on it: the table holds the questions being asked. */
const questionLocks = () => {
  const locks = new Map<string, { readonly semaphore: Effect.Semaphore; users: number }>()
  const withLock = <A, E>(key: string, effect: Effect.Effect<A, E>) =>
    Effect.suspend(() => {
      let lock = locks.get(key)
      if (lock === undefined) {
        lock = { semaphore: Effect.unsafeMakeSemaphore(1), users: 0 }
        locks.set(key, lock)
      }
      const held = lock
      held.users++
      return Effect.ensuring(
        held.semaphore.withPermits(1)(effect),
        Effect.sync(() => {
          if (--held.users === 0) locks.delete(key)
        })
      )
    })
  return { withLock, size: () => locks.size }
}

const accessStatement = (input: FirstAccessInput) =>
  [
    `Connection: ${input.connection.name} (${input.connection.id})`,
    `Token: ${input.principal.name}`,
    `Client: ${input.client.name === "" ? "(it gave no name)" : input.client.name}`,
    `First request: ${input.method}`
  ].join("\n")

const refusedError = (input: FirstAccessInput, remainingMs: number) =>
  new Forbidden({
    message: `The user refused access to connection "${input.connection.name}"; it may be asked again in ${
      Math.max(1, Math.ceil(remainingMs / 1000))
    } s`,
    data: { reason: "first_access_refused", retryAfterSeconds: Math.max(1, Math.ceil(remainingMs / 1000)) }
  })
