import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as NodeFs from "node:fs"
import * as NodeNet from "node:net"
import * as NodePath from "node:path"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { Driver } from "../../src/Driver/Driver.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"
import { startWeaviate, type WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"
import { type DriverRuntime, failureOf, makeRuntime, tempHome } from "./support.ts"
import * as Redaction from "../../src/Base/Redaction.ts"

const add = (runtime: DriverRuntime, input: Record<string, unknown>) =>
  runtime.runPromise(Effect.flatMap(ConnectionStore, (s) => s.add(input as never)))

/** 127.0.0.1 written as an IPv4-mapped IPv6 address: same socket, a name the certificate does not hold. */
const MAPPED = "::ffff:127.0.0.1"

describe("SSL modes against the HTTPS instance", () => {
  let w: WeaviateTestInstance
  let runtime: DriverRuntime
  let caFile: string
  beforeAll(async () => {
    w = await startTestWeaviate({ tls: true })
    const home = tempHome()
    caFile = NodePath.join(home, "ca.pem")
    NodeFs.writeFileSync(caFile, w.caPem!)
    runtime = makeRuntime(home)
  })
  afterAll(async () => {
    await runtime.dispose()
    await w.close()
  })
  const health = (settings: Record<string, unknown>) =>
    Effect.flatMap(Driver, (d) => Effect.flatMap(ConnectionStore, (s) => Effect.flatMap(s.add({ name: `c${Math.random()}`, port: w.port, ...settings } as never), (c) => d.health(c.id))))

  it("Disabled is plain HTTP (an HTTPS server closes the connection)", async () => {
    const error = await failureOf(runtime, health({ host: "127.0.0.1", sslMode: "disabled" }))
    assert.match(error.message, /^Connection failed: /)
  })
  it("the TLS hint appears when the failure looks like TLS: plain HTTP sent to a port that speaks HTTPS", async () => {
    const error = await failureOf(runtime, health({ host: "127.0.0.1", sslMode: "disabled" }))
    assert.match(error.message, /choose an SSL Mode other than Disabled/)
  })
  it("Preferred accepts a self-signed certificate", async () => {
    const result = await runtime.runPromise(health({ host: "127.0.0.1", sslMode: "preferred" }))
    assert.isString(result.version)
  })
  it("Required (skip verify) accepts a self-signed certificate", async () => {
    const result = await runtime.runPromise(health({ host: "127.0.0.1", sslMode: "required-skip-verify" }))
    assert.isString(result.version)
  })
  it("Required verifies the certificate: self-signed is refused with advice", async () => {
    const error = await failureOf(runtime, health({ host: "127.0.0.1", sslMode: "required" }))
    assert.match(error.message, /^Connection failed: .*not trusted.*Required \(skip verify\).*Skip TLS Verification/)
  })
  it("Verify CA accepts the certificate signed by the CA file, without checking the host name", async () => {
    assert.isString((await runtime.runPromise(health({ host: "127.0.0.1", sslMode: "verify-ca", caFile }))).version)
    // The IPv4-mapped form reaches 127.0.0.1 but is not a name in the certificate.
    assert.isString((await runtime.runPromise(health({ host: MAPPED, sslMode: "verify-ca", caFile }))).version)
  })
  it("Verify CA without the CA refuses a self-signed chain", async () => {
    const error = await failureOf(runtime, health({ host: "127.0.0.1", sslMode: "verify-ca" }))
    assert.match(error.message, /^Connection failed: .*not trusted/)
  })
  it("Verify Identity also checks the host name", async () => {
    assert.isString((await runtime.runPromise(health({ host: "127.0.0.1", sslMode: "verify-identity", caFile }))).version)
    const error = await failureOf(runtime, health({ host: MAPPED, sslMode: "verify-identity", caFile }))
    assert.match(error.message, /^Connection failed: the server certificate does not match the host name ::ffff:127\.0\.0\.1/)
  })
  it("Skip TLS Verification trusts any certificate, including under Verify Identity", async () => {
    assert.isString((await runtime.runPromise(health({ host: MAPPED, sslMode: "verify-identity", skipTlsVerify: true }))).version)
    assert.isString((await runtime.runPromise(health({ host: "127.0.0.1", sslMode: "required", skipTlsVerify: true }))).version)
  })
})

describe("Authentication", () => {
  let w: WeaviateTestInstance
  let runtime: DriverRuntime
  beforeAll(async () => {
    // keys changed at run time and echoed into errors: only the compatible instance can
    w = await startWeaviate({ apiKeys: ["key-one"], echoApiKeyInErrors: true })
    runtime = makeRuntime(tempHome())
  })
  afterAll(async () => {
    await runtime.dispose()
    await w.close()
  })

  it("Auth Method None sends nothing; a node that needs a key reports Authentication failed", async () => {
    const c = await add(runtime, { name: "none", host: "127.0.0.1", port: w.port })
    w.clearRequests()
    const error = await failureOf(runtime, Effect.flatMap(Driver, (d) => d.health(c.id)))
    assert.match(error.message, /^Authentication failed: the node requires an API key but Auth Method is None/)
    assert.isUndefined(w.requests[0]!.headers["authorization"])
    assert.strictEqual(w.requests[0]!.path, "/v1/meta")
  })
  it("Auth Method API Key sends Authorization: Bearer on every request", async () => {
    const c = await add(runtime, { name: "key", host: "127.0.0.1", port: w.port, authMethod: "apiKey", apiKey: "key-one" })
    w.clearRequests()
    const health = await runtime.runPromise(Effect.flatMap(Driver, (d) => d.health(c.id)))
    assert.isString(health.version)
    await runtime.runPromise(Effect.flatMap(Driver, (d) => d.listCollections(c.id)))
    assert.deepStrictEqual(w.requests.map((r) => r.headers["authorization"]), ["Bearer key-one", "Bearer key-one"])
  })
  it("a changed key is sent from the next call on: the session of a connection whose settings changed is rebuilt", async () => {
    w.setApiKeys(["key-one", "key-two"])
    const c = await add(runtime, { name: "changing", host: "127.0.0.1", port: w.port, authMethod: "apiKey", apiKey: "key-one" })
    await runtime.runPromise(Effect.flatMap(Driver, (d) => d.health(c.id)))
    await runtime.runPromise(Effect.flatMap(ConnectionStore, (s) => s.update(c.id, { apiKey: "key-two" })))
    w.clearRequests()
    await runtime.runPromise(Effect.flatMap(Driver, (d) => d.health(c.id)))
    await runtime.runPromise(Effect.flatMap(Driver, (d) => d.health(c.id)))
    assert.deepStrictEqual(w.requests.map((r) => r.headers["authorization"]), ["Bearer key-two", "Bearer key-two"])
    w.setApiKeys(["key-one"])
  })
  it("a connection's key joins the process-wide redaction when the driver resolves it (every surface, logs included)", async () => {
    const key = "env-key-for-redaction-0123456789"
    process.env.WEAVIATE_MCP_TEST_REDACTION_KEY = key
    w.setApiKeys(["key-one", key])
    const c = await add(runtime, { name: "redacted", host: "127.0.0.1", port: w.port, authMethod: "apiKey", apiKeyEnv: "WEAVIATE_MCP_TEST_REDACTION_KEY" })
    assert.include(Redaction.global.redact(`quoted ${key}`), key, "not known before the driver used it")
    await runtime.runPromise(Effect.flatMap(Driver, (d) => d.health(c.id)))
    assert.notInclude(Redaction.global.redact(`quoted ${key} by a resource`), key)
  })
  it("a rejected key reports Authentication failed and never shows the key", async () => {
    const c = await add(runtime, { name: "wrong", host: "127.0.0.1", port: w.port, authMethod: "apiKey", apiKey: "wrong-key-xyz" })
    const error = await failureOf(runtime, Effect.flatMap(Driver, (d) => d.health(c.id)))
    assert.match(error.message, /^Authentication failed: the API key was rejected/)
    assert.notInclude(error.message, "wrong-key-xyz")
    assert.notInclude(JSON.stringify(error), "wrong-key-xyz")
  })
  it("the key may come from an environment variable", async () => {
    process.env.WEAVIATE_MCP_TEST_KEY = "key-one"
    const c = await add(runtime, { name: "env", host: "127.0.0.1", port: w.port, authMethod: "apiKey", apiKeyEnv: "WEAVIATE_MCP_TEST_KEY" })
    assert.isString((await runtime.runPromise(Effect.flatMap(Driver, (d) => d.health(c.id)))).version)
    delete process.env.WEAVIATE_MCP_TEST_KEY
  })
  it("a revoked key makes the next health check fail and the connection drop; a new key reconnects", async () => {
    const c = await add(runtime, { name: "rotate", host: "127.0.0.1", port: w.port, authMethod: "apiKey", apiKey: "key-one" })
    const isConnected = () => runtime.runPromise(Effect.flatMap(Driver, (d) => d.isConnected(c.id)))
    await runtime.runPromise(Effect.flatMap(Driver, (d) => d.connect(c.id)))
    assert.isTrue(await isConnected())
    w.setApiKeys(["key-two"])
    const error = await failureOf(runtime, Effect.flatMap(Driver, (d) => d.health(c.id)))
    assert.match(error.message, /^Authentication failed: /)
    assert.isFalse(await isConnected())
    await runtime.runPromise(Effect.flatMap(ConnectionStore, (s) => s.update(c.id, { apiKey: "key-two" })))
    assert.isString((await runtime.runPromise(Effect.flatMap(Driver, (d) => d.connect("rotate")))).version)
    assert.isTrue(await isConnected())
    w.setApiKeys(["key-one"])
  })
})

describe("Connections and calls", () => {
  let w: WeaviateTestInstance
  let runtime: DriverRuntime
  let home: string
  beforeAll(async () => {
    w = await startTestWeaviate()
    home = tempHome()
    runtime = makeRuntime(home)
  })
  afterAll(async () => {
    await runtime.dispose()
    await w.close()
  })

  it("a connection saved, changed or removed by another process is seen on the next call (the store's cache follows the file)", async () => {
    const other = makeRuntime(home)
    try {
      const added = await other.runPromise(Effect.flatMap(ConnectionStore, (s) => s.add({ name: "elsewhere", host: "127.0.0.1", port: 1 })))
      assert.strictEqual((await runtime.runPromise(Effect.flatMap(ConnectionStore, (s) => s.get("elsewhere")))).port, 1)
      await other.runPromise(Effect.flatMap(ConnectionStore, (s) => s.update(added.id, { port: 2 })))
      assert.strictEqual((await runtime.runPromise(Effect.flatMap(ConnectionStore, (s) => s.get("elsewhere")))).port, 2)
      await other.runPromise(Effect.flatMap(ConnectionStore, (s) => s.remove(added.id)))
      const gone = await failureOf(runtime, Effect.flatMap(ConnectionStore, (s) => s.get("elsewhere")))
      assert.strictEqual(gone._tag, "ConnectionNotFound")
    } finally {
      await other.dispose()
    }
  })

  it("saved connections live in connections.json with mode 0600; names are unique; changes are signalled", async () => {
    const seen = await runtime.runPromise(Effect.gen(function*() {
      const store = yield* ConnectionStore
      const fiber = yield* store.changes.pipe(Stream.take(3), Stream.runCollect, Effect.fork)
      yield* Effect.yieldNow()
      const a = yield* store.add({ name: "a", host: "127.0.0.1", port: w.port, apiKey: "secret-in-file", authMethod: "apiKey" })
      yield* store.remove(a.id)
      return Array.from(yield* Fiber.join(fiber)).map((list) => list.length)
    }))
    assert.deepStrictEqual(seen, [0, 1, 0])
    const path = NodePath.join(home, "connections.json")
    assert.strictEqual(NodeFs.statSync(path).mode & 0o777, 0o600)
    await add(runtime, { name: "dup", host: "127.0.0.1" })
    const error = await failureOf(runtime, Effect.flatMap(ConnectionStore, (s) => s.add({ name: "dup", host: "h" })))
    assert.match(error.message, /already exists/)
  })
  it("a health check reports version, modules and latency from /v1/meta", async () => {
    const c = await add(runtime, { name: "meta", host: "127.0.0.1", port: w.port })
    w.clearRequests()
    const health = await runtime.runPromise(Effect.flatMap(Driver, (d) => d.health(c.name)))
    assert.isString(health.version)
    assert.isArray(health.modules)
    assert.deepStrictEqual(w.requests.map((r) => r.path), ["/v1/meta"])
  })
  it("a health check's latency is the round trip of /v1/meta: at least the database's delay, at most the call", async () => {
    const c = await add(runtime, { name: "slow-meta", host: "127.0.0.1", port: w.port })
    w.setFault({ kind: "delay", ms: 120 }, { pathPrefix: "/v1/meta" })
    try {
      const started = performance.now()
      const health = await runtime.runPromise(Effect.flatMap(Driver, (d) => d.health(c.id)))
      const elapsed = performance.now() - started
      assert.isAtLeast(health.latencyMs, 120)
      assert.isAtMost(health.latencyMs, elapsed + 0.1)
    } finally {
      w.setFault({ kind: "none" })
    }
  })
  it("nothing listening is Connection failed", async () => {
    const closed = await startWeaviate()
    const port = closed.port
    await closed.close()
    const c = await add(runtime, { name: "gone", host: "127.0.0.1", port })
    const error = await failureOf(runtime, Effect.flatMap(Driver, (d) => d.health(c.id)))
    assert.match(error.message, /^Connection failed: nothing accepts connections on 127\.0\.0\.1:\d+/)
  })
  it("the TLS hint appears only when the failure looks like TLS: a plain port that closes the connection gets none", async () => {
    // What a node that dies mid-request looks like: the connection closes, and the port speaks no TLS.
    const server = NodeNet.createServer((socket) => socket.once("data", () => socket.destroy()))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const c = await add(runtime, { name: "closes", host: "127.0.0.1", port: (server.address() as NodeNet.AddressInfo).port })
      const error = await failureOf(runtime, Effect.flatMap(Driver, (d) => d.health(c.id)))
      assert.match(error.message, /^Connection failed: 127\.0\.0\.1:\d+ closed the connection/)
      assert.notMatch(error.message, /SSL Mode|HTTPS/)
    } finally {
      server.close()
    }
  })
  it("interrupting a call aborts its HTTP request", async () => {
    const c = await add(runtime, { name: "hang", host: "127.0.0.1", port: w.port })
    w.setFault({ kind: "hang" }, { pathPrefix: "/v1/meta" })
    try {
      w.clearRequests()
      const fiber = runtime.runFork(Effect.flatMap(Driver, (d) => d.health(c.id)))
      await w.waitForRequest((r) => r.path === "/v1/meta")
      await runtime.runPromise(Fiber.interrupt(fiber))
      const aborted = await w.waitForRequest((r) => r.path === "/v1/meta" && r.aborted)
      assert.isTrue(aborted.aborted)
      assert.isFalse(aborted.completed)
    } finally {
      w.setFault({ kind: "none" })
    }
  })
})
