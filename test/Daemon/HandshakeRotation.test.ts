/**
 * The handshake file's bridge token: readWrite, rotated hourly with the file rewritten, the previous
 * token still accepted for its grace period so a running bridge never fails a call
 * (spec/README.md, "Handshake file"). Runs the daemon on the TestClock.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import * as TestServices from "effect/TestServices"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import * as Daemon from "../../src/Daemon/Daemon.ts"
import * as Settings from "../../src/Daemon/Settings.ts"
import { BoundAddress } from "../../src/Mcp/HttpTransport.ts"
import * as TestHome from "../support/TestHome.ts"

interface File {
  readonly token: string
  readonly tokenExpiresAt: string
}

const readFile = (dir: string) =>
  Effect.promise(async () => JSON.parse(await NodeFs.readFile(NodePath.join(dir, "mcp-handshake.json"), "utf8")) as File)

/** Waits (real time, bounded) until the handshake file names a token other than `previous`. */
const nextToken = (dir: string, previous: string) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200; i++) {
      const file = yield* readFile(dir)
      if (file.token !== previous) return file
      yield* TestServices.provideLive(Effect.sleep("10 millis"))
    }
    return yield* Effect.die(new Error("the handshake file was not rewritten"))
  })

/** A modern `tools/list` with a bearer token; returns the HTTP status. */
const call = (url: string, token: string) =>
  Effect.promise(() =>
    fetch(url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${token}`,
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/list"
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } }
      })
    }).then((r) => r.status)
  )

describe("bridge token in the handshake file", () => {
  it.scoped("is rotated hourly, the file rewritten, and the old token accepted for 5 minutes of grace", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir()
      const settings = yield* Effect.withConfigProvider(Settings.ServeSettings, ConfigProvider.fromJson({ auth: "tokens" }))
      const context = yield* Layer.build(
        Daemon.layer({ settings, port: 0, tokenStore: { watch: false } }).pipe(Layer.provide(TestHome.at(dir)))
      )
      const url = `${context.unsafeMap.get(BoundAddress.key).url}/mcp`
      const first = yield* readFile(dir)
      assert.strictEqual(yield* call(url, first.token), 200, "the bridge token is a working readWrite token")

      yield* TestClock.adjust("59 minutes")
      assert.strictEqual((yield* readFile(dir)).token, first.token, "not rotated before the hour")

      yield* TestClock.adjust("1 minute")
      const second = yield* nextToken(dir, first.token)
      assert.isTrue(Date.parse(second.tokenExpiresAt) > Date.parse(first.tokenExpiresAt))
      assert.strictEqual(yield* call(url, second.token), 200)
      assert.strictEqual(yield* call(url, first.token), 200, "the previous token still works during its grace")

      yield* TestClock.adjust("5 minutes")
      assert.strictEqual(yield* call(url, first.token), 401, "the previous token ends with its grace")
      assert.strictEqual(yield* call(url, second.token), 200)
      const mode = (yield* Effect.promise(() => NodeFs.stat(NodePath.join(dir, "mcp-handshake.json")))).mode & 0o777
      assert.strictEqual(mode, 0o600)
    }))
})
