/**
 * Shared set-up of the resource, prompt and completion tests: a Weaviate test instance with the
 * sample data, a temporary home with saved connections of every AI policy (and one whose server is
 * down), and the three catalogue layers over the real driver and first access.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as NodeNet from "node:net"
import { Dialog } from "../../../src/Approval/Dialog.ts"
import type { DialogRequest } from "../../../src/Approval/DialogText.ts"
import { FirstAccess } from "../../../src/Approval/FirstAccess.ts"
import { RequestState } from "../../../src/Approval/RequestState.ts"
import { driverLayer } from "../../../src/Cli/DriverCli.ts"
import { ConnectionStore } from "../../../src/Driver/ConnectionStore.ts"
import type { Driver } from "../../../src/Driver/Driver.ts"
import { type Completions, type Prompts, RequestContext, type Resources } from "../../../src/Mcp/Catalogue.ts"
import { CompletionsLive } from "../../../src/Catalogue/Completions/Completions.ts"
import { type Principal, TokenPrincipal } from "../../../src/Auth/Principal.ts"
import { CurrentPrincipal } from "../../../src/Auth/Principal.ts"
import { PromptsLive } from "../../../src/Catalogue/Prompts/Prompts.ts"
import { ResourcesLive } from "../../../src/Catalogue/Resources/Resources.ts"
import { defaultScopes } from "../../../src/Schema/Policy.ts"
import { tempHome } from "../../Driver/support.ts"
import { loadSampleData } from "../../weaviate/SampleData.ts"
import { startTestWeaviate } from "../../weaviate/TestWeaviate.ts"
import { startWeaviate, type WeaviateTestInstance } from "../../weaviate/WeaviateServer.ts"

export type CatalogueServices = Resources | Prompts | Completions | Driver | ConnectionStore | FirstAccess

export interface Catalogue {
  readonly w: WeaviateTestInstance
  readonly runtime: ManagedRuntime.ManagedRuntime<CatalogueServices, never>
  /** The services, to provide inside `it.effect` (so TestClock drives them). */
  readonly context: Context.Context<CatalogueServices>
  /** Connection ids by name: `local` (readWrite), `readonly`, `blocked`, `down` (nothing listens). */
  readonly ids: { readonly local: string; readonly readonly: string; readonly blocked: string; readonly down: string }
  /** What the local dialog was asked (it approves everything). */
  readonly asked: Array<DialogRequest>
  readonly dispose: () => Promise<void>
}

/** A port on 127.0.0.1 where nothing listens. */
const closedPort = () =>
  new Promise<number>((resolve, reject) => {
    const server = NodeNet.createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as NodeNet.AddressInfo).port
      server.close(() => resolve(port))
    })
    server.on("error", reject)
  })

export const startCatalogue = async (
  options: {
    readonly scale?: number
    /** the compatible instance even when a real Weaviate is available */
    readonly compatible?: boolean
  } = {}
): Promise<Catalogue> => {
  const w = options.compatible === true ? await startWeaviate() : await startTestWeaviate()
  await loadSampleData(w, { scale: options.scale ?? 0.05 })
  const asked: Array<DialogRequest> = []
  const dialog = Layer.succeed(Dialog, {
    kind: "exec",
    interactive: true,
    confirm: (request) => Effect.sync(() => (asked.push(request), true))
  })
  const layer = Layer.mergeAll(ResourcesLive, PromptsLive, CompletionsLive).pipe(
    Layer.provideMerge(FirstAccess.layer),
    Layer.provide(Layer.merge(RequestState.layer, dialog)),
    Layer.provideMerge(driverLayer(Option.some(tempHome())))
  )
  const runtime = ManagedRuntime.make(layer)
  const down = await closedPort()
  const ids = await runtime.runPromise(Effect.gen(function*() {
    const store = yield* ConnectionStore
    const add = (name: string, port: number, aiPolicy: "readWrite" | "readOnly" | "blocked") =>
      Effect.map(store.add({ name, host: "127.0.0.1", port, aiPolicy }), (c) => c.id)
    return {
      local: yield* add("local", w.port, "readWrite"),
      readonly: yield* add("readonly", w.port, "readOnly"),
      blocked: yield* add("blocked", w.port, "blocked"),
      down: yield* add("down", down, "readWrite")
    }
  }).pipe(Effect.orDie))
  const context = await runtime.runPromise(Effect.context<CatalogueServices>())
  return {
    w,
    runtime,
    context,
    ids,
    asked,
    dispose: async () => {
      await runtime.dispose()
      await w.close()
    }
  }
}

let principals = 0

/** A token principal with a fresh id (first access is remembered per principal). */
export const token = (options: {
  readonly access?: "readOnly" | "readWrite" | "fullAccess"
  readonly connections?: ReadonlyArray<string>
  readonly tenants?: Readonly<Record<string, Readonly<Record<string, ReadonlyArray<string>>>>>
} = {}): Principal => {
  const access = options.access ?? "readWrite"
  principals += 1
  return new TokenPrincipal({
    id: `tok_test_${principals}`,
    name: `test ${principals}`,
    access,
    scopes: defaultScopes[access],
    connections: options.connections === undefined ? Option.none() : Option.some(options.connections),
    expiresAt: Option.none(),
    source: "store",
    ...(options.tenants === undefined ? {} : { tenants: options.tenants })
  })
}

/** The request context of a modern request. */
export const requestContext = (options: {
  readonly method?: string
  readonly era?: "modern" | "legacy"
  readonly elicitation?: boolean
  readonly requestState?: string
  readonly inputResponses?: Record<string, unknown>
} = {}): Context.Tag.Service<RequestContext> => ({
  era: options.era ?? "modern",
  protocolVersion: options.era === "legacy" ? "2025-11-25" : "2026-07-28",
  method: options.method ?? "resources/read",
  requestId: 1,
  clientCapabilities: options.elicitation === true ? { elicitation: {} } : {},
  clientInfo: Option.some({ name: "test-client" }),
  requestState: Option.fromNullable(options.requestState),
  inputResponses: Option.fromNullable(options.inputResponses),
  progress: () => Effect.void
})

/** Provides a principal and a request context. */
export const as = (principal: Principal, context: Context.Tag.Service<RequestContext> = requestContext()) =>
<A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.provideService(CurrentPrincipal, principal), Effect.provideService(RequestContext, context))

/** The JSON-RPC code of a failure (fails the test when there is none). */
export const codeOf = async <A, E>(promise: Promise<import("effect/Either").Either<A, E>>): Promise<number> => {
  const result = await promise
  if (result._tag === "Right") throw new Error(`expected a failure, got ${JSON.stringify(result.right)}`)
  return (result.left as { code: number }).code
}
