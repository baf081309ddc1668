/**
 * The session's caches of a big database (`SessionCaches`) against the real Weaviate, on virtual time:
 * a change made elsewhere shows once the cache is older than its time to live, the listing served
 * meanwhile says it is stale, and a collection dropped elsewhere is `CollectionNotFound` for the tools
 * on it once the schema cache time has passed. Our own writes clear the caches at once.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { driverLayer } from "../../src/Cli/DriverCli.ts"
import * as CollectionSchema from "../../src/Driver/CollectionSchema.ts"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { Driver } from "../../src/Driver/Driver.ts"
import { PermissionDenied } from "../../src/Driver/DriverError.ts"
import type * as WeaviateHttp from "../../src/Driver/WeaviateHttp.ts"
import * as SessionCaches from "../../src/Driver/SessionCaches.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"
import { tempHome } from "./support.ts"

let w: WeaviateTestInstance
beforeAll(async () => {
  w = await startTestWeaviate()
})
afterAll(async () => {
  await w.close()
})

const weaviate = (method: string, path: string, body?: unknown) =>
  Effect.promise(async () => {
    const response = await fetch(`${w.url}${path}`, { method, headers: { "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`)
  })

const TTL = 2_000
const TENANT_TTL = 10_000

/** A driver in a fresh home, with one connection `local`. */
const withDriver = <A, E>(effect: Effect.Effect<A, E, Driver>) => Effect.provide(effect, 
  Layer.effectDiscard(Effect.flatMap(ConnectionStore, (s) => s.add({ name: "local", host: "127.0.0.1", port: w.port }))).pipe(
    Layer.provideMerge(driverLayer(Option.some(tempHome()))),
    Layer.provide(Layer.merge(Layer.succeed(CollectionSchema.CacheTtl, TTL), Layer.succeed(SessionCaches.TenantCacheTtl, TENANT_TTL)))
  ))

/** Lets the background read (real HTTP) finish: bounded in turns of the event loop, not a sleep. */
const untilFresh = <A>(read: Effect.Effect<{ readonly stale: boolean; readonly value: A }, unknown, Driver>) =>
  Effect.gen(function*() {
    for (let turn = 0; turn < 5_000; turn++) {
      const r = yield* read
      if (!r.stale) return r
      yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))
    }
    return yield* Effect.dieMessage("the background read never finished")
  })

const names = (collections: ReadonlyArray<{ readonly name: string }>) => collections.map((c) => c.name)

describe("the session caches", () => {
  it.effect("a collection dropped elsewhere: the listing past its time to live says stale while it is read again, then leaves it out; tools on it are not found", () =>
    Effect.gen(function*() {
      yield* weaviate("POST", "/v1/schema", { class: "Elsewhere", vectorizer: "none", multiTenancyConfig: { enabled: true } })
      yield* weaviate("POST", "/v1/schema/Elsewhere/tenants", [{ name: "a" }])
      const driver = yield* Driver
      expect(names((yield* driver.catalog("local")).value.collections)).toContain("Elsewhere")
      expect((yield* driver.tenantIndex("local", "Elsewhere")).read.value.size).toBe(1)
      yield* weaviate("DELETE", "/v1/schema/Elsewhere")
      yield* TestClock.adjust(TTL + 1)
      const stale = yield* driver.catalog("local")
      expect(stale.stale).toBe(true)
      expect(stale.ageMs).toBeGreaterThan(TTL)
      const fresh = yield* untilFresh(driver.catalog("local"))
      expect(names(fresh.value.collections)).not.toContain("Elsewhere")
      // The tenant list is younger than its own time to live, but the collection is read again first.
      const gone = yield* Effect.flip(driver.tenantIndex("local", "Elsewhere"))
      expect(gone._tag).toBe("CollectionNotFound")
      expect((yield* Effect.flip(driver.describe("local", "Elsewhere")))._tag).toBe("CollectionNotFound")
    }).pipe((e) => withDriver(e)))

  it.effect("tenants added elsewhere show once the tenant list is older than its time to live; our own tenant writes show at once", () =>
    Effect.gen(function*() {
      yield* weaviate("POST", "/v1/schema", { class: "Tenanted", vectorizer: "none", multiTenancyConfig: { enabled: true } })
      yield* weaviate("POST", "/v1/schema/Tenanted/tenants", [{ name: "a" }])
      const driver = yield* Driver
      const size = Effect.map(driver.tenantIndex("local", "Tenanted"), ({ read }) => ({ stale: read.stale, value: read.value.size }))
      expect(yield* size).toEqual({ stale: false, value: 1 })
      yield* weaviate("POST", "/v1/schema/Tenanted/tenants", [{ name: "b" }])
      expect(yield* size).toEqual({ stale: false, value: 1 })
      yield* TestClock.adjust(TENANT_TTL + 1)
      expect(yield* size).toEqual({ stale: true, value: 1 })
      expect((yield* untilFresh(size)).value).toBe(2)
      // Our own write, through the driver's session: the cache is cleared, the next read has it.
      const http = yield* driver.http("local")
      yield* http.requestOk({ method: "POST", path: "/v1/schema/Tenanted/tenants", body: { json: [{ name: "c" }] } })
      expect(yield* size).toEqual({ stale: false, value: 3 })
      yield* http.requestOk({ method: "DELETE", path: "/v1/schema/Tenanted/tenants", body: { json: ["a"] } })
      expect(yield* size).toEqual({ stale: false, value: 2 })
    }).pipe((e) => withDriver(e)))

  it.effect("our own schema writes clear the schema cache at once: a collection we create or drop shows in the next listing", () =>
    Effect.gen(function*() {
      const driver = yield* Driver
      yield* driver.catalog("local")
      const http = yield* driver.http("local")
      yield* http.requestOk({ method: "POST", path: "/v1/schema", body: { json: { class: "Ours", vectorizer: "none" } } })
      const after = yield* driver.catalog("local")
      expect(after.stale).toBe(false)
      expect(names(after.value.collections)).toContain("Ours")
      yield* http.requestOk({ method: "DELETE", path: "/v1/schema/Ours" })
      expect(names((yield* driver.catalog("local")).value.collections)).not.toContain("Ours")
    }).pipe((e) => withDriver(e)))

  it.effect("a request the database did not answer clears the caches: the next listing is read again, not served from before", () =>
    Effect.gen(function*() {
      const driver = yield* Driver
      yield* driver.catalog("local")
      const schemaReads = () => w.requests.filter((r) => r.method === "GET" && r.path === "/v1/schema").length
      const before = schemaReads()
      w.setFault({ kind: "drop" }, { pathPrefix: "/v1/meta" })
      const failed = yield* Effect.flip(driver.health("local"))
      w.setFault({ kind: "none" })
      expect(failed._tag).toBe("ConnectionFailed")
      const read = yield* driver.catalog("local")
      expect(read.stale).toBe(false)
      expect(schemaReads()).toBe(before + 1)
    }).pipe((e) => withDriver(e)))

  it.scoped("a key that may not read /v1/nodes leaves the shard readiness unknown, without failing the listing", () =>
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      // Weaviate with RBAC answers 403 to a key without the nodes permission; the driver's HTTP turns that into PermissionDenied.
      const http = {
        request: (request: WeaviateHttp.Request) =>
          request.path === "/v1/nodes"
            ? Effect.fail(PermissionDenied.fromWeaviate("rbac: authorization, forbidden action: user 'alice' has insufficient permissions to read_nodes [[Domain: nodes, Verbosity: verbose]]"))
            : Effect.dieMessage(`unexpected ${request.path}`)
      } as unknown as WeaviateHttp.WeaviateHttp
      const caches = SessionCaches.make(http, { ttlMs: TTL, shardTtlMs: TTL, tenantTtlMs: TENANT_TTL, scope })
      expect((yield* caches.unreadyShards).value).toBeUndefined()
    }))

  it.scoped("the permissions of the connection's user are read once, again after their time to live, and at once after Weaviate's 403", () =>
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      let reads = 0
      let roles = ["reader"]
      const http = {
        request: (request: WeaviateHttp.Request) =>
          request.path === "/v1/users/own-info"
            ? Effect.sync(() => {
              reads++
              const json = { username: "alice", roles: roles.map((name) => ({ name, permissions: [{ action: "read_data", data: { collection: "*" } }] })) }
              return { status: 200, contentType: "application/json", text: JSON.stringify(json), json }
            })
            : Effect.dieMessage(`unexpected ${request.path}`)
      } as unknown as WeaviateHttp.WeaviateHttp
      const PERMISSIONS_TTL = 60_000
      const caches = SessionCaches.make(http, { ttlMs: TTL, shardTtlMs: TTL, tenantTtlMs: TENANT_TTL, permissionsTtlMs: PERMISSIONS_TTL, scope })
      const rolesNow = Effect.map(caches.permissions, (read) => (read.value._tag === "Rbac" ? read.value.roles.map((r) => r.name) : []))
      expect(yield* rolesNow).toEqual(["reader"])
      roles = ["reader", "writer"]
      yield* TestClock.adjust(PERMISSIONS_TTL - 1)
      expect(yield* rolesNow).toEqual(["reader"])
      expect(reads).toBe(1)
      // Past the time to live: served stale while read again in the background.
      yield* TestClock.adjust(2)
      expect(yield* rolesNow).toEqual(["reader"])
      for (let i = 0; i < 10 && reads < 2; i++) yield* Effect.yieldNow()
      expect(reads).toBe(2)
      expect(yield* rolesNow).toEqual(["reader", "writer"])
      // Weaviate's 403: the next caller waits for a fresh read.
      roles = ["writer"]
      caches.clearPermissions()
      expect(yield* rolesNow).toEqual(["writer"])
      expect(reads).toBe(3)
    }))
})
