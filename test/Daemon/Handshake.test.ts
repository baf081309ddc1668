/**
 * The handshake file and the one-daemon-per-home rule (spec/README.md, "Handshake file").
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import * as Handshake from "../../src/Daemon/Handshake.ts"
import { Home } from "../../src/Base/Home.ts"
import * as SecretFile from "../../src/Base/SecretFile.ts"
import * as TestDaemon from "../support/TestDaemon.ts"
import * as TestHome from "../support/TestHome.ts"

const readHandshake = (dir: string) =>
  Effect.promise(async () => JSON.parse(await NodeFs.readFile(NodePath.join(dir, "mcp-handshake.json"), "utf8")) as Record<string, unknown>)

const exists = (path: string) => Effect.promise(() => NodeFs.stat(path).then(() => true, () => false))

/**
 * Starts the daemon in `dir` inside its own scope, so the test can close it. The test's scope closes
 * it too (a second close does nothing), before the directory is removed: a daemon left running would
 * still write its activity log and head there while the directory is being deleted (ENOTEMPTY).
 */
const startIn = (dir: string) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
    const context = yield* Layer.buildWithScope(TestDaemon.layerIn({ auth: "off" }).pipe(Layer.provide(TestHome.at(dir))), scope)
    return { scope, daemon: context.unsafeMap.get(TestDaemon.TestDaemon.key) as TestDaemon.TestDaemon["Type"] }
  })

/** A pid that certainly belongs to no running process: a child that has exited. */
const deadPid = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const child = NodeChild.spawn(process.execPath, ["-e", ""], { stdio: "ignore" })
    child.once("exit", () => resolve(child.pid!))
  })
)

/** A live process that is not us, killed when the scope closes. */
const livePid = Effect.acquireRelease(
  Effect.sync(() => NodeChild.spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" })),
  (child) => Effect.sync(() => child.kill("SIGKILL"))
).pipe(Effect.map((child) => child.pid!))

const staleFile = (pid: number, port = 1) =>
  new Handshake.HandshakeFile({
    version: 1,
    port,
    pid,
    instanceId: "stale-instance",
    protocolVersion: "2026-07-28",
    startedAt: new Date(0).toISOString(),
    token: "wmcp_bridge_stale",
    tokenExpiresAt: new Date(0).toISOString()
  })

describe("handshake file", () => {
  it.scopedLive("is written once listening, mode 0600, naming the real port, the pid and the instance", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir()
      const { daemon } = yield* startIn(dir)
      const path = NodePath.join(dir, "mcp-handshake.json")
      const stat = yield* Effect.promise(() => NodeFs.stat(path))
      assert.strictEqual(stat.mode & 0o777, 0o600)
      assert.strictEqual(stat.uid, process.getuid!())
      const file = yield* readHandshake(dir)
      assert.deepStrictEqual(Object.keys(file).sort(), ["instanceId", "pid", "port", "protocolVersion", "startedAt", "token", "tokenExpiresAt", "version"])
      assert.strictEqual(file.version, 1)
      assert.strictEqual(file.port, daemon.port)
      assert.strictEqual(file.pid, process.pid)
      assert.strictEqual(file.protocolVersion, "2026-07-28")
      assert.isTrue(Date.parse(file.tokenExpiresAt as string) > Date.now())
      // Readers trust the file only when server/discover on the port names the same instance.
      const discover = yield* Effect.promise(() =>
        fetch(daemon.endpoint, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": "server/discover"
          },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "server/discover",
            params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } }
          })
        }).then((r) => r.json() as Promise<{ result: { serverInfo: { instanceId: string } } }>)
      )
      assert.strictEqual(discover.result.serverInfo.instanceId, file.instanceId)
    }))

  it.scopedLive("is written atomically: a rewrite replaces the file by rename and leaves no temporary file", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir()
      const path = NodePath.join(dir, "mcp-handshake.json")
      const home = Home.of({ dir, path: () => path })
      yield* Handshake.write(staleFile(1)).pipe(Effect.provideService(Home, home))
      // Hold the first version open: its inode cannot be reused while we hold it.
      const original = yield* Effect.acquireRelease(Effect.promise(() => NodeFs.open(path, "r")), (h) => Effect.promise(() => h.close()))
      const before = yield* Effect.promise(() => original.stat())
      // A reader racing 50 rewrites never sees a partial document.
      const reads = Effect.promise(async () => {
        let parsed = 0
        for (let i = 0; i < 200; i++) {
          JSON.parse(await NodeFs.readFile(path, "utf8"))
          parsed++
        }
        return parsed
      })
      const writes = Effect.forEach(Array.from({ length: 50 }, (_, i) => i), (i) =>
        Handshake.write(staleFile(1, 1000 + i)).pipe(Effect.provideService(Home, home)), { discard: true })
      const [parsed] = yield* Effect.all([reads, writes], { concurrency: 2 })
      assert.strictEqual(parsed, 200)
      const after = yield* Effect.promise(() => NodeFs.stat(path))
      assert.notStrictEqual(after.ino, before.ino, "a rewrite is a rename of a new file, not an in-place write")
      assert.strictEqual(JSON.parse(yield* Effect.promise(() => original.readFile("utf8"))).port, 1, "the old version was never modified in place")
      assert.strictEqual(after.mode & 0o777, 0o600)
      assert.deepStrictEqual(yield* Effect.promise(() => NodeFs.readdir(dir)), ["mcp-handshake.json"])
    }))

  it.scopedLive("is removed on shutdown, with the lock", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir()
      const { scope } = yield* startIn(dir)
      assert.isTrue(yield* exists(NodePath.join(dir, "mcp-handshake.json")))
      yield* Scope.close(scope, Exit.void)
      assert.isFalse(yield* exists(NodePath.join(dir, "mcp-handshake.json")))
      assert.isFalse(yield* exists(NodePath.join(dir, Handshake.LOCK_FILE)))
    }))

  it.scopedLive("a second instance on the same home refuses to start while the first is alive", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir()
      yield* startIn(dir)
      const second = yield* Effect.exit(startIn(dir))
      assert.isTrue(Exit.isFailure(second))
      const error = Exit.isFailure(second) ? second.cause : undefined
      assert.include(String(error), "already running")
    }))

  it.scopedLive("a handshake file naming another live process blocks the start", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir()
      const pid = yield* livePid
      yield* SecretFile.writeJsonAtomic(NodePath.join(dir, "mcp-handshake.json"), staleFile(pid, 4321))
      const result = yield* Effect.exit(startIn(dir))
      assert.isTrue(Exit.isFailure(result))
      assert.include(String(Exit.isFailure(result) ? result.cause : ""), `pid ${pid}`)
      // The file of the live daemon is left alone.
      assert.strictEqual((yield* readHandshake(dir)).pid, pid)
    }))

  it.scopedLive("a stale handshake file whose pid is dead is taken over", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir()
      const pid = yield* deadPid
      yield* SecretFile.writeJsonAtomic(NodePath.join(dir, "mcp-handshake.json"), staleFile(pid))
      const { daemon } = yield* startIn(dir)
      const file = yield* readHandshake(dir)
      assert.strictEqual(file.pid, process.pid)
      assert.strictEqual(file.port, daemon.port)
      assert.notStrictEqual(file.instanceId, "stale-instance")
    }))

  it.scopedLive("a stale lock whose pid is dead is taken over", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir()
      const pid = yield* deadPid
      yield* Effect.promise(() => NodeFs.writeFile(NodePath.join(dir, Handshake.LOCK_FILE), String(pid)))
      const { daemon } = yield* startIn(dir)
      assert.strictEqual((yield* readHandshake(dir)).port, daemon.port)
      assert.strictEqual(yield* Effect.promise(() => NodeFs.readFile(NodePath.join(dir, Handshake.LOCK_FILE), "utf8")), String(process.pid))
    }))
})
