/**
 * The real daemon on a free port of 127.0.0.1 in a temporary home, for tests over real HTTP.
 */
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Daemon from "../../src/Daemon/Daemon.ts"
import { Home } from "../../src/Base/Home.ts"
import * as Settings from "../../src/Daemon/Settings.ts"
import { BoundAddress } from "../../src/Mcp/HttpTransport.ts"
import * as TestHome from "./TestHome.ts"

/** The default settings with overrides (no environment, no settings.json). */
export const settings = (overrides: Partial<Settings.ServeSettings> = {}): Effect.Effect<Settings.ServeSettings> =>
  Effect.withConfigProvider(Settings.ServeSettings, ConfigProvider.fromJson({})).pipe(
    Effect.orDie,
    Effect.map((defaults) => ({ ...defaults, ...overrides }))
  )

/** What a test needs to talk to the daemon. */
export class TestDaemon extends Context.Tag("test/TestDaemon")<TestDaemon, {
  readonly url: string
  readonly endpoint: string
  readonly port: number
  readonly home: string
}>() {}

/** A daemon on a free port with the given settings, in the given home. */
export const layerIn = (overrides: Partial<Settings.ServeSettings> = {}): Layer.Layer<TestDaemon, unknown, Home> =>
  Layer.unwrapEffect(
    Effect.map(settings(overrides), (resolved) =>
      Layer.effect(
        TestDaemon,
        Effect.gen(function*() {
          const address = yield* BoundAddress
          const home = yield* Home
          return TestDaemon.of({ url: address.url, endpoint: `${address.url}/mcp`, port: address.port, home: home.dir })
        })
      ).pipe(Layer.provide(Daemon.layer({ settings: resolved, port: 0 }))))
  )

/** A daemon on a free port in a fresh temporary home. */
export const layer = (overrides: Partial<Settings.ServeSettings> = {}) =>
  layerIn(overrides).pipe(Layer.provideMerge(TestHome.layer))
