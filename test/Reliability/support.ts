/**
 * Daemons for the reliability suite, over real HTTP on 127.0.0.1:
 * - `catalogueDaemon`: the endpoint test catalogue (echo, slow, …) with transport limits of the
 *   test's choosing (short time-outs, few slots), so that no test waits 30 s;
 * - `toolsDaemon`: the default catalogue over a Weaviate test instance with sample data, approvals
 *   answered yes by a command (so only the server's own rules stand between a caller and a write),
 *   and tokens of each access level.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as PubSub from "effect/PubSub"
import * as Ref from "effect/Ref"
import { homeLayer } from "../../src/Cli/CommonOptions.ts"
import * as Daemon from "../../src/Daemon/Daemon.ts"
import type * as Settings from "../../src/Daemon/Settings.ts"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { BoundAddress, type Limits } from "../../src/Mcp/HttpTransport.ts"
import { TokenStore } from "../../src/Auth/TokenStore.ts"
import { catalogue, defaults, type Signals } from "../Mcp/support/EndpointHarness.ts"
import * as TestDaemon from "../support/TestDaemon.ts"
import * as TestHome from "../support/TestHome.ts"
import { loadSampleData } from "../weaviate/SampleData.ts"
import { startWeaviate, type WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"

export interface CatalogueDaemon {
  readonly url: string
  readonly endpoint: string
  readonly port: number
  readonly token: string
  readonly signals: Signals
  readonly dispose: () => Promise<void>
}

export const catalogueDaemon = async (
  options: { readonly limits?: Partial<Limits>; readonly settings?: Partial<Settings.ServeSettings> } = {}
): Promise<CatalogueDaemon> => {
  const home = TestHome.tempDirSync("weaviate-mcp-reliability-")
  const settings = await Effect.runPromise(TestDaemon.settings({ ...defaults, ...options.settings }))
  const signals: Signals = await Effect.runPromise(Effect.gen(function*() {
    return {
      listChanged: yield* PubSub.unbounded<void>(),
      updated: yield* PubSub.unbounded<string>(),
      slowStarted: yield* Ref.make(yield* Deferred.make<string | number>()),
      slowInterrupted: yield* Ref.make(0)
    }
  }))
  let token = ""
  const runtime = ManagedRuntime.make(
    Daemon.layer({
      settings,
      port: 0,
      ...(options.limits !== undefined ? { limits: options.limits } : {}),
      catalogue: catalogue(signals),
      onDefaultToken: (created) => Effect.sync(() => void (token = created.token))
    }).pipe(Layer.provide(homeLayer(Option.some(home))))
  ) as ManagedRuntime.ManagedRuntime<unknown, unknown>
  const address = await runtime.runPromise(BoundAddress as never) as { url: string; port: number }
  return { url: address.url, endpoint: `${address.url}/mcp`, port: address.port, token, signals, dispose: () => runtime.dispose() }
}

export interface ToolsDaemon {
  readonly w: WeaviateTestInstance
  readonly endpoint: string
  /** Connection ids: `local` (Safe Mode confirm), `silent` (Safe Mode silent). */
  readonly ids: Readonly<Record<"local" | "silent", string>>
  readonly tokens: Readonly<Record<"readOnly" | "readWrite" | "fullAccess", string>>
  readonly dispose: () => Promise<void>
}

export const toolsDaemon = async (options: { readonly settings?: Partial<Settings.ServeSettings> } = {}): Promise<ToolsDaemon> => {
  const w = await startWeaviate()
  await loadSampleData(w, { scale: 0.1 })
  const home = TestHome.tempDirSync("weaviate-mcp-reliability-tools-")
  const ids = { local: "", silent: "" }
  const tokens = { readOnly: "", readWrite: "", fullAccess: "" }
  await Effect.runPromise(
    Effect.gen(function*() {
      const store = yield* ConnectionStore
      ids.local = (yield* store.add({ name: "local", host: "127.0.0.1", port: w.port, safeMode: "confirm" })).id
      ids.silent = (yield* store.add({ name: "silent", host: "127.0.0.1", port: w.port, safeMode: "silent" })).id
      const tokenStore = yield* TokenStore
      for (const access of ["readOnly", "readWrite", "fullAccess"] as const) {
        tokens[access] = (yield* tokenStore.create({ name: access, access })).token
      }
    }).pipe(Effect.provide(Layer.merge(ConnectionStore.layer, TokenStore.layerOneShot).pipe(Layer.provide(homeLayer(Option.some(home))))), Effect.scoped)
  )
  // Every question is answered yes: the classifier is the only thing between a caller and a drop.
  const settings = await Effect.runPromise(
    TestDaemon.settings({ rateLimit: 0, authLockout: 0, approvals: "exec", approvalCommand: Option.some("cat > /dev/null; true"), ...options.settings })
  )
  const runtime = ManagedRuntime.make(
    Daemon.layer({ settings, port: 0 }).pipe(Layer.provide(homeLayer(Option.some(home))))
  ) as ManagedRuntime.ManagedRuntime<unknown, unknown>
  const address = await runtime.runPromise(BoundAddress as never) as { url: string }
  return {
    w,
    endpoint: `${address.url}/mcp`,
    ids,
    tokens,
    dispose: async () => {
      await runtime.dispose()
      await w.close()
    }
  }
}
