/**
 * "Query stops": cancelling a request, interrupting its caller or reaching a deadline aborts the HTTP
 * request the driver has open to Weaviate (seen by the Weaviate-compatible test instance).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import { withStatementTimeout } from "../../src/Cancellation/Deadline.ts"
import { InFlight } from "../../src/Cancellation/InFlight.ts"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { Driver } from "../../src/Driver/Driver.ts"
import { type DriverRuntime, makeRuntime, tempHome } from "../Driver/support.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"

describe("interruptible database calls", () => {
  let w: WeaviateTestInstance
  let runtime: DriverRuntime
  let connection: string
  beforeAll(async () => {
    w = await startTestWeaviate()
    runtime = makeRuntime(tempHome())
    connection = (await runtime.runPromise(
      Effect.flatMap(ConnectionStore, (s) => s.add({ name: "hanging", host: "127.0.0.1", port: w.port } as never))
    )).id
  })
  afterAll(async () => {
    await runtime.dispose()
    await w.close()
  })

  const health = Effect.flatMap(Driver, (d) => d.health(connection))
  const graphql = Effect.flatMap(Driver, (d) => d.graphql(connection, "{ Get { Article { title } } }"))

  /** Runs `scenario` against a hanging instance, then waits for the instance to see the request aborted. */
  const abortedBy = async (path: string, scenario: Effect.Effect<void, unknown, Driver | ConnectionStore | Scope.Scope>) => {
    w.clearRequests()
    w.setFault({ kind: "hang" }, { pathPrefix: path })
    try {
      await runtime.runPromise(Effect.scoped(scenario))
      const aborted = await w.waitForRequest((r) => r.path === path && r.aborted)
      assert.isFalse(aborted.completed)
    } finally {
      w.setFault({ kind: "none" })
    }
  }

  const waitForDatabaseCall = (path: string) => Effect.promise(() => w.waitForRequest((r) => r.path === path))

  it("a cancelled request aborts its HTTP request to Weaviate and answers -33002", () =>
    abortedBy(
      "/v1/meta",
      Effect.gen(function*() {
        const inFlight = yield* InFlight.make
        const caller = yield* Effect.fork(inFlight.run({ principalId: "p", requestId: 1 }, health))
        yield* waitForDatabaseCall("/v1/meta")
        assert.isTrue(yield* inFlight.cancel({ principalId: "p", requestId: 1 }))
        const error = yield* Effect.flip(Fiber.join(caller))
        assert.strictEqual(error._tag, "RequestCancelled")
      })
    ))

  it("revoking the token aborts the HTTP requests of its in-flight calls", () =>
    abortedBy(
      "/v1/graphql",
      Effect.gen(function*() {
        const inFlight = yield* InFlight.make
        const caller = yield* Effect.fork(inFlight.run({ principalId: "p", requestId: 1 }, graphql))
        yield* waitForDatabaseCall("/v1/graphql")
        assert.strictEqual(yield* inFlight.cancelPrincipal("p"), 1)
        assert.strictEqual((yield* Effect.flip(Fiber.join(caller)))._tag, "RequestCancelled")
      })
    ))

  it("interrupting the caller (client gone) aborts the HTTP request to Weaviate", () =>
    abortedBy(
      "/v1/meta",
      Effect.gen(function*() {
        const inFlight = yield* InFlight.make
        const caller = yield* Effect.fork(inFlight.run({ principalId: "p", requestId: 1 }, health))
        yield* waitForDatabaseCall("/v1/meta")
        yield* Fiber.interrupt(caller)
        assert.strictEqual(yield* inFlight.size, 0)
      })
    ))

  it("a statement's own time-out aborts the HTTP request to Weaviate and answers -33003 (TestClock)", () =>
    abortedBy(
      "/v1/graphql",
      Effect.gen(function*() {
        const inFlight = yield* InFlight.make
        const caller = yield* Effect.fork(inFlight.run({ principalId: "p", requestId: 1 }, withStatementTimeout(30)(graphql)))
        yield* waitForDatabaseCall("/v1/graphql")
        yield* TestClock.adjust("30 seconds")
        const error = yield* Effect.flip(Fiber.join(caller))
        assert.strictEqual(error._tag, "RequestTimeout")
      }).pipe(Effect.provide(TestContext.TestContext))
    ))
})
