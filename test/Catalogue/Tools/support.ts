/**
 * The tools in process: a Weaviate test instance with sample data, a temporary home with saved
 * connections (one per Safe Mode and AI policy), the real driver and approvals, and a dialog whose
 * answer the test sets and whose questions it reads.
 */
import Ajv2020 from "ajv/dist/2020.js"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import { expect } from "vitest"
import { Dialog } from "../../../src/Approval/Dialog.ts"
import type { DialogRequest } from "../../../src/Approval/DialogText.ts"
import { ConnectionStore } from "../../../src/Driver/ConnectionStore.ts"
import { Driver } from "../../../src/Driver/Driver.ts"
import { homeLayer } from "../../../src/Cli/CommonOptions.ts"
import { type CallToolResult, type Outcome, RequestContext, Tools } from "../../../src/Mcp/Catalogue.ts"
import { CurrentPrincipal, type Principal, TokenPrincipal } from "../../../src/Auth/Principal.ts"
import * as ApprovalsLayer from "../../../src/Approval/ApprovalsLayer.ts"
import { ToolsLive } from "../../../src/Catalogue/Tools/ToolsLive.ts"
import type { McpError } from "../../../src/Schema/McpErrors.ts"
import { type AccessLevel, defaultScopes } from "../../../src/Schema/Policy.ts"
import { tempHome } from "../../Driver/support.ts"
import { loadSampleData } from "../../weaviate/SampleData.ts"
import { startTestWeaviate } from "../../weaviate/TestWeaviate.ts"
import type { RecordedRequest, WeaviateTestInstance, WeaviateTestOptions } from "../../weaviate/WeaviateServer.ts"

export const token = (access: AccessLevel, overrides: Partial<ConstructorParameters<typeof TokenPrincipal>[0]> = {}) =>
  new TokenPrincipal({
    id: `tok-${access}`,
    name: `${access} token`,
    access,
    scopes: defaultScopes[access],
    connections: Option.none(),
    expiresAt: Option.none(),
    source: "store",
    ...overrides
  })

/** A dialog the test answers: `answer` is read at each question, `asked` records every question. */
export interface FakeDialog {
  answer: boolean
  readonly asked: Array<DialogRequest>
}

export interface CallOptions {
  readonly principal?: Principal
  readonly elicitation?: boolean
  readonly era?: "modern" | "legacy"
  readonly requestState?: string
  readonly inputResponses?: Record<string, unknown>
  readonly progress?: Array<readonly [number, string]>
  /** What the client calls itself (`clientInfo`); `test-client` unless said otherwise. */
  readonly clientInfo?: { readonly name: string; readonly title?: string }
  /** Runs the call under a TestClock set to this epoch time (e.g. to expire a requestState). */
  readonly clockAt?: number
  /** Runs the call under a TestClock and moves it by `advance` once the instance saw a request matching `waitFor`. */
  readonly timeTravel?: { readonly waitFor: (r: RecordedRequest) => boolean; readonly advance: Duration.DurationInput }
}

export type CallExit = Exit.Exit<Outcome<CallToolResult>, McpError>

export interface Harness {
  readonly w: WeaviateTestInstance
  readonly dialog: FakeDialog
  /** Connection ids by name: local (confirm), silent, guarded (readOnly Safe Mode), aiRead, blocked. */
  readonly ids: Readonly<Record<string, string>>
  readonly tools: Tools["Type"]
  readonly call: (name: string, args: Record<string, unknown>, options?: CallOptions) => Promise<CallExit>
  /** Every connection the store looked up (`get`), in order: what a test clears and reads. */
  readonly lookups: Array<string>
  readonly close: () => Promise<void>
}

export const connectionSettings = {
  local: { safeMode: "confirm", aiPolicy: "readWrite" },
  silent: { safeMode: "silent", aiPolicy: "readWrite" },
  guarded: { safeMode: "readOnly", aiPolicy: "readWrite" },
  aiRead: { safeMode: "confirm", aiPolicy: "readOnly" },
  blocked: { safeMode: "confirm", aiPolicy: "blocked" }
} as const

export const makeHarness = async (
  options: {
    readonly weaviate?: WeaviateTestOptions
    readonly apiKey?: string
    readonly dialog?: Layer.Layer<Dialog>
    readonly sample?: boolean
  } = {}
): Promise<Harness> => {
  const w = await startTestWeaviate(options.weaviate)
  if (options.sample !== false) await loadSampleData(w, { scale: 0.1, ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}) })
  const dialog: FakeDialog = { answer: true, asked: [] }
  const dialogLayer = options.dialog ??
    Layer.succeed(Dialog, {
      kind: "exec",
      interactive: true,
      confirm: (request) => Effect.sync(() => (dialog.asked.push(request), dialog.answer))
    })
  const lookups: Array<string> = []
  // The real store, with its lookups recorded.
  const store = Layer.scoped(
    ConnectionStore,
    Effect.map(ConnectionStore.make(), (real) => ({ ...real, get: (idOrName: string) => (lookups.push(idOrName), real.get(idOrName)) }))
  )
  const base = Layer.mergeAll(Driver.layer, ApprovalsLayer.layerWithDialog(dialogLayer)).pipe(
    Layer.provideMerge(store),
    Layer.provide(homeLayer(Option.some(tempHome())))
  )
  const runtime = ManagedRuntime.make(ToolsLive.pipe(Layer.provideMerge(base)))
  const ids: Record<string, string> = {}
  for (const [name, settings] of Object.entries(connectionSettings)) {
    const saved = await runtime.runPromise(Effect.flatMap(ConnectionStore, (store) =>
      store.add({
        name,
        host: "127.0.0.1",
        port: w.port,
        ...settings,
        ...(options.apiKey !== undefined ? { authMethod: "apiKey", apiKey: options.apiKey } : {})
      })))
    ids[name] = saved.id
  }
  const tools = await runtime.runPromise(Tools)
  const call = (name: string, args: Record<string, unknown>, callOptions: CallOptions = {}) => {
    const tool = tools.all.find((t) => t.descriptor.name === name)
    if (tool === undefined) throw new Error(`no tool ${name}`)
    const context = RequestContext.of({
      era: callOptions.era ?? "modern",
      protocolVersion: callOptions.era === "legacy" ? "2025-11-25" : "2026-07-28",
      method: "tools/call",
      requestId: 1,
      clientCapabilities: callOptions.elicitation === true ? { elicitation: {} } : {},
      clientInfo: Option.some(callOptions.clientInfo ?? { name: "test-client" }),
      requestState: Option.fromNullable(callOptions.requestState),
      inputResponses: Option.fromNullable(callOptions.inputResponses),
      progress: (progress, message) => Effect.sync(() => void callOptions.progress?.push([progress, message]))
    })
    const run = tool.call(args).pipe(
      Effect.provideService(RequestContext, context),
      Effect.provideService(CurrentPrincipal, callOptions.principal ?? token("fullAccess"))
    )
    const travel = callOptions.timeTravel
    if (travel !== undefined) {
      return runtime.runPromiseExit(
        Effect.gen(function*() {
          const fiber = yield* Effect.fork(run)
          yield* Effect.promise(() => w.waitForRequest(travel.waitFor, 5_000))
          yield* TestClock.adjust(travel.advance)
          return yield* Fiber.join(fiber)
        }).pipe(Effect.provide(TestContext.TestContext))
      )
    }
    return runtime.runPromiseExit(
      callOptions.clockAt === undefined
        ? run
        : Effect.zipRight(TestClock.setTime(callOptions.clockAt), run).pipe(Effect.provide(TestContext.TestContext))
    )
  }
  return {
    w,
    dialog,
    ids,
    tools,
    call,
    lookups,
    close: async () => {
      await runtime.dispose()
      await w.close()
    }
  }
}

// ===== Assertions =====

const ajv = new Ajv2020.default({ strict: false, allErrors: true })
const outputValidators = new Map<string, ReturnType<typeof ajv.compile>>()

/** The complete result of a call (fails the test otherwise). */
export const completed = (exit: CallExit): CallToolResult => {
  if (Exit.isFailure(exit)) throw new Error(`expected a result, got ${JSON.stringify(exit.cause)}`)
  if (exit.value._tag !== "Complete") throw new Error(`expected a complete result, got ${JSON.stringify(exit.value)}`)
  return exit.value.value
}

/** A successful result whose `structuredContent` matches the tool's `outputSchema`. */
export const success = (harness: Harness, name: string, exit: CallExit) => {
  const result = completed(exit)
  if (result.isError === true) throw new Error(`expected success, got ${JSON.stringify(result.content)}`)
  let validate = outputValidators.get(name)
  if (validate === undefined) {
    validate = ajv.compile(harness.tools.all.find((t) => t.descriptor.name === name)!.descriptor.outputSchema!)
    outputValidators.set(name, validate)
  }
  expect(validate(result.structuredContent), JSON.stringify(validate.errors)).toBe(true)
  return { structured: result.structuredContent as Record<string, any>, text: (result.content[0] as { text: string }).text }
}

/** A tool error with the given code; returns its text. */
export const toolError = (exit: CallExit, code: string): string => {
  const result = completed(exit)
  expect(result.isError).toBe(true)
  const text = (result.content[0] as { text: string }).text
  expect(text.startsWith(`${code}: `), text).toBe(true)
  return text
}

/** A protocol error with the given JSON-RPC code. */
export const protocolError = (exit: CallExit, code: number): McpError => {
  if (Exit.isSuccess(exit)) throw new Error(`expected a protocol error, got ${JSON.stringify(exit.value)}`)
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  if (failure === undefined) throw new Error(`expected a failure, got ${JSON.stringify(exit.cause)}`)
  expect(failure.code).toBe(code)
  return failure
}

/** The `input_required` outcome of a call. */
export const inputRequired = (exit: CallExit) => {
  if (Exit.isFailure(exit)) throw new Error(`expected input_required, got ${JSON.stringify(exit.cause)}`)
  if (exit.value._tag !== "InputRequired") throw new Error(`expected input_required, got ${JSON.stringify(exit.value)}`)
  return exit.value
}

export const approved = { approve_statement: { action: "accept", content: { approved: true } } }
export const declined = { approve_statement: { action: "decline" } }

/** Requests that reached the instance and wrote (anything but GET/HEAD and read-only GraphQL). */
export const writesTo = (w: WeaviateTestInstance) =>
  w.requests.filter((r) => r.method !== "GET" && r.method !== "HEAD" && r.path !== "/v1/graphql")

// ===== The harness as a layer fixture =====

/** A file's harness, as a service: `harnessLayer` creates it for the file's tests and closes it after them. */
export class ToolHarness extends Context.Tag("test/ToolHarness")<ToolHarness, Harness>() {}

/** The harness as a scoped layer; `setup` runs once after it started (schema, data). */
export const harnessLayer = (options: Parameters<typeof makeHarness>[0] = {}, setup: (h: Harness) => Promise<void> = async () => undefined) =>
  Layer.scoped(
    ToolHarness,
    Effect.acquireRelease(
      Effect.promise(async () => {
        const h = await makeHarness(options)
        await setup(h)
        return h
      }),
      (h) => Effect.promise(() => h.close())
    )
  )

/**
 * A test body run with the file's harness, after `reset` put the harness back in its starting state
 * (dialog answer, recorded requests, faults), so no test depends on another's leftovers.
 */
export const withHarness = (reset: (h: Harness) => void = () => undefined) => (body: (h: Harness) => Promise<void>) =>
  Effect.flatMap(ToolHarness, (h) =>
    Effect.promise(async () => {
      reset(h)
      await body(h)
    }))
