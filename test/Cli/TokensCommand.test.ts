import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { main } from "../../src/Main.ts"
import { statusAt, TokenStore } from "../../src/Auth/TokenStore.ts"
import { homeLayer, tempDir } from "../Auth/TokenStore.support.ts"
import { captureOutput } from "../support/CapturedOutput.ts"

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const output = captureOutput()

/** Runs `weaviate-mcp tokens ...` in-process, the way `src/Main.ts` does, and captures its output. */
const cli = (...args: ReadonlyArray<string>) =>
  Effect.map(output.run(main(["node", "weaviate-mcp", "tokens", ...args])), ({ value, stdout, stderr }): Run => ({ code: value, stdout, stderr }))

const store = (dir: string) => TokenStore.make({ watch: false }).pipe(Effect.provide(homeLayer(dir)))

describe("weaviate-mcp tokens", () => {
  it.scopedLive("create --json prints only {id, token}; the token works and is not in tokens.json", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const run = yield* cli("create", "--home", dir, "--name", "ci", "--access", "readWrite", "--json")
      assert.strictEqual(run.code, 0, run.stderr)
      const printed = JSON.parse(run.stdout) as { id: string; token: string }
      assert.deepStrictEqual(Object.keys(printed).sort(), ["id", "token"])
      const found = yield* Effect.flatMap(store(dir), (s) => s.verify(printed.token))
      assert.isTrue(Option.isSome(found))
      assert.strictEqual(Option.getOrThrow(found).id, printed.id)
      const file = yield* Effect.promise(() => NodeFs.readFile(NodePath.join(dir, "tokens.json"), "utf8"))
      assert.notInclude(file, printed.token)
      assert.strictEqual((yield* Effect.promise(() => NodeFs.stat(NodePath.join(dir, "tokens.json")))).mode & 0o777, 0o600)
    }))

  it.scopedLive("create takes scopes, connections and a lifetime; list shows them and never the secret", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const before = Date.now()
      const created = yield* cli(
        "create", "--home", dir, "--name", "reader", "--access", "readOnly",
        "--scopes", "tools:read", "--connections", "c1,c2", "--expires", "30d"
      )
      assert.strictEqual(created.code, 0, created.stderr)
      const token = /wmcp_[0-9a-f]{16}_[A-Za-z0-9_-]{43}/.exec(created.stdout)?.[0]
      assert.isDefined(token)
      assert.strictEqual(created.stdout.split(token!).length, 2, "the token is printed exactly once")
      const config = JSON.parse(created.stdout.slice(created.stdout.indexOf("{")))
      assert.deepStrictEqual(config, {
        mcpServers: { weaviate: { type: "http", url: "http://127.0.0.1:23518/mcp", headers: { Authorization: `Bearer ${token}` } } }
      }, "tokens create prints the ready-to-paste client configuration, like the first run")

      const listed = yield* cli("list", "--home", dir, "--json")
      assert.strictEqual(listed.code, 0, listed.stderr)
      assert.notInclude(listed.stdout, token!.slice(22))
      const [entry] = JSON.parse(listed.stdout) as Array<Record<string, unknown>>
      assert.deepStrictEqual(Object.keys(entry!).sort(), [
        "access", "connections", "createdAt", "expiresAt", "id", "name", "revokedAt", "scopes", "status", "tenants"
      ])
      assert.strictEqual(entry!.name, "reader")
      assert.deepStrictEqual(entry!.scopes, ["tools:read"])
      assert.deepStrictEqual(entry!.connections, ["c1", "c2"])
      assert.strictEqual(entry!.status, "active")
      const expires = Date.parse(entry!.expiresAt as string)
      assert.isAtLeast(expires, before + 30 * 86_400_000)
      assert.isAtMost(expires, Date.now() + 30 * 86_400_000)

      const table = yield* cli("list", "--home", dir)
      assert.strictEqual(table.code, 0)
      assert.match(table.stdout, /^ID\s+NAME\s+ACCESS\s+SCOPES\s+CONNECTIONS\s+TENANTS\s+EXPIRES\s+STATUS/)
      assert.include(table.stdout, "reader")
      assert.notInclude(table.stdout, token!.slice(22))
    }))

  it.scopedLive("create --connections takes names of saved connections and stores their ids; an unknown one is kept with a warning", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const saved = yield* Effect.flatMap(ConnectionStore, (connections) => connections.add({ name: "prod", host: "127.0.0.1", port: 8080 })).pipe(
        Effect.provide(ConnectionStore.layer.pipe(Layer.provide(homeLayer(dir))))
      )
      const created = yield* cli("create", "--home", dir, "--name", "scoped", "--access", "readWrite", "--connections", "prod,ghost")
      assert.strictEqual(created.code, 0, created.stderr)
      assert.include(created.stdout, "First access to the listed connections is granted")
      assert.strictEqual(created.stderr, 'warning: no saved connection has the id or name "ghost"; kept in the allowlist as given')
      const [entry] = JSON.parse((yield* cli("list", "--home", dir, "--json")).stdout) as Array<Record<string, unknown>>
      assert.deepStrictEqual(entry!.connections, [saved.id, "ghost"])
    }))

  it.scopedLive("create --tenants restricts the token to those tenants (connection names stored as ids); list shows the restriction", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const saved = yield* Effect.flatMap(ConnectionStore, (connections) => connections.add({ name: "c1", host: "127.0.0.1", port: 8080 })).pipe(
        Effect.provide(ConnectionStore.layer.pipe(Layer.provide(homeLayer(dir))))
      )
      const created = yield* cli(
        "create", "--home", dir, "--name", "acme-agent", "--access", "readWrite",
        "--connections", "c1", "--tenants", "c1:Article:acme,c1:Article:globex,c1:Invoice:acme"
      )
      assert.strictEqual(created.code, 0, created.stderr)
      assert.include(created.stdout, `Tenants: ${saved.id}/Article=acme+globex; ${saved.id}/Invoice=acme`)
      const [entry] = JSON.parse((yield* cli("list", "--home", dir, "--json")).stdout) as Array<Record<string, unknown>>
      assert.deepStrictEqual(entry!.tenants, { [saved.id]: { Article: ["acme", "globex"], Invoice: ["acme"] } })
      const table = yield* cli("list", "--home", dir)
      assert.include(table.stdout, `${saved.id}/Article=acme+globex; ${saved.id}/Invoice=acme`)
      const [info] = yield* Effect.flatMap(store(dir), (s) => s.list)
      assert.deepStrictEqual(Option.getOrNull(info!.tenants), { [saved.id]: { Article: ["acme", "globex"], Invoice: ["acme"] } })
    }))

  it.scopedLive("--tenants must be CONNECTION:COLLECTION:TENANT entries on the token's connections (exit 2)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const bad = yield* cli("create", "--home", dir, "--name", "x", "--access", "readOnly", "--tenants", "c1:Article")
      assert.strictEqual(bad.code, 2)
      assert.strictEqual(bad.stderr, '--tenants entry "c1:Article" is not CONNECTION:COLLECTION:TENANT')
      const outside = yield* cli("create", "--home", dir, "--name", "x", "--access", "readOnly", "--connections", "a", "--tenants", "b:Article:acme")
      assert.strictEqual(outside.code, 2)
      assert.include(outside.stderr, "--tenants names a connection outside --connections: b")
    }))

  it.scopedLive("revoke ID revokes (exit 0); an unknown id fails with exit 1 and one line on stderr", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const { info } = yield* Effect.flatMap(store(dir), (s) => s.create({ name: "ci", access: "readOnly" }))
      const revoked = yield* cli("revoke", "--home", dir, info.id)
      assert.strictEqual(revoked.code, 0, revoked.stderr)
      assert.include(revoked.stdout, `Revoked token ${info.id}`)
      const [after] = yield* Effect.flatMap(store(dir), (s) => s.list)
      assert.strictEqual(statusAt(after!, Date.now()), "revoked")
      const unknown = yield* cli("revoke", "--home", dir, "0000000000000000")
      assert.strictEqual(unknown.code, 1)
      assert.strictEqual(unknown.stderr, "Unknown token id: 0000000000000000")
    }))

  it.scopedLive("usage errors exit 2 with one line on stderr", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const cases: ReadonlyArray<ReadonlyArray<string>> = [
        ["create", "--home", dir, "--name", "x", "--access", "readOnly", "--scopes", "tools:everything"],
        ["create", "--home", dir, "--name", "x", "--access", "readOnly", "--scopes", "tools:write"],
        ["create", "--home", dir, "--name", "x", "--access", "readOnly", "--expires", "soon"],
        ["create", "--home", dir, "--name", "x", "--access", "readOnly", "--expires", "2001-01-01"],
        ["create", "--home", dir, "--name", " ", "--access", "readOnly"]
      ]
      for (const args of cases) {
        const run = yield* cli(...args)
        assert.strictEqual(run.code, 2, args.join(" "))
        assert.strictEqual(run.stderr.trim().split("\n").length, 1, run.stderr)
        assert.notInclude(run.stderr, "    at ")
      }
      const badAccess = yield* cli("create", "--home", dir, "--name", "x", "--access", "root")
      assert.strictEqual(badAccess.code, 2)
      assert.deepStrictEqual(yield* Effect.flatMap(store(dir), (s) => s.list), [])
    }))

  it.scopedLive("--home falls back to WEAVIATE_MCP_HOME", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const previous = process.env.WEAVIATE_MCP_HOME
      yield* Effect.acquireRelease(
        Effect.sync(() => void (process.env.WEAVIATE_MCP_HOME = dir)),
        () => Effect.sync(() => (previous === undefined ? delete process.env.WEAVIATE_MCP_HOME : void (process.env.WEAVIATE_MCP_HOME = previous)))
      )
      const run = yield* cli("create", "--name", "env", "--access", "readOnly", "--json")
      assert.strictEqual(run.code, 0, run.stderr)
      const [entry] = yield* Effect.flatMap(store(dir), (s) => s.list)
      assert.strictEqual(entry!.name, "env")
    }))

  it.scopedLive("a running daemon's store sees `tokens revoke` within a second", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const running = yield* TokenStore.make({ watch: true }).pipe(Effect.provide(homeLayer(dir)))
      const { info } = yield* running.create({ name: "victim", access: "readWrite" })
      const revocations = yield* running.subscribeRevocations
      const run = yield* cli("revoke", "--home", dir, info.id)
      assert.strictEqual(run.code, 0, run.stderr)
      const id = yield* Queue.take(revocations).pipe(Effect.timeoutFail({ duration: "1 second", onTimeout: () => "not seen within a second" }))
      assert.strictEqual(id, info.id)
    }))
})
