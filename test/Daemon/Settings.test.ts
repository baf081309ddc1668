/**
 * Configuration precedence: flags, then WEAVIATE_MCP_* environment, then settings.json, then defaults.
 */
import { assert, describe, it } from "@effect/vitest"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import * as HomeModule from "../../src/Base/Home.ts"
import * as Settings from "../../src/Daemon/Settings.ts"
import * as TestHome from "../support/TestHome.ts"

const env = (entries: Record<string, string>) => ConfigProvider.fromMap(new Map(Object.entries(entries)), { pathDelim: "_" })

const resolve = (dir: string, environment: Record<string, string>) =>
  Effect.gen(function*() {
    const provider = yield* Settings.provider(env(environment))
    return yield* Effect.withConfigProvider(Settings.ServeSettings, provider)
  }).pipe(Effect.provide(TestHome.at(dir)))

describe("settings precedence", () => {
  it.scoped("defaults when nothing is configured", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir()
      const s = yield* resolve(dir, {})
      assert.deepStrictEqual(s.port, Option.none())
      assert.strictEqual(s.auth, "tokens")
      assert.strictEqual(s.approvals, "auto")
      assert.strictEqual(s.rateLimit, 50)
      assert.strictEqual(s.authLockout, 10)
      assert.deepStrictEqual(s.allowedOrigins, ["https://claude.ai", "https://app.cursor.com"])
    }))

  it.scoped("settings.json is read from the home", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir()
      yield* Effect.promise(() => NodeFs.writeFile(NodePath.join(dir, "settings.json"), JSON.stringify({ rateLimit: 7, port: 4000, allowedOrigins: ["https://x.example"] })))
      const s = yield* resolve(dir, {})
      assert.strictEqual(s.rateLimit, 7)
      assert.deepStrictEqual(s.port, Option.some(4000))
      assert.deepStrictEqual(s.allowedOrigins, ["https://x.example"])
    }))

  it.scoped("the environment wins over settings.json", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir()
      yield* Effect.promise(() => NodeFs.writeFile(NodePath.join(dir, "settings.json"), JSON.stringify({ rateLimit: 7, authLockout: 3 })))
      const s = yield* resolve(dir, { WEAVIATE_MCP_RATE_LIMIT: "9", WEAVIATE_MCP_AUTH: "off" })
      assert.strictEqual(s.rateLimit, 9)
      assert.strictEqual(s.auth, "off")
      assert.strictEqual(s.authLockout, 3, "what the environment does not set still comes from settings.json")
    }))

  it.scoped("flags win over the environment", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir()
      const s = yield* resolve(dir, { WEAVIATE_MCP_RATE_LIMIT: "9" })
      const merged = Settings.overrideWith(s, { rateLimit: Option.some(1), authLockout: Option.none() })
      assert.strictEqual(merged.rateLimit, 1)
      assert.strictEqual(merged.authLockout, 10)
    }))

  it.scoped("a bad value is refused with the setting's name", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir()
      const error = yield* Effect.flip(resolve(dir, { WEAVIATE_MCP_RATE_LIMIT: "-1" }))
      assert.include(String(error), "rateLimit")
    }))

  it.scoped("the history settings: defaults, the history object of settings.json, and WEAVIATE_MCP_HISTORY_* over it", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir()
      assert.deepStrictEqual((yield* resolve(dir, {})).history, { enabled: true, retentionDays: 90, maxEntries: 1_000_000, recordText: true })
      yield* Effect.promise(() =>
        NodeFs.writeFile(NodePath.join(dir, "settings.json"), JSON.stringify({ history: { enabled: false, retentionDays: 30, maxEntries: 500, recordText: false } }))
      )
      assert.deepStrictEqual((yield* resolve(dir, {})).history, { enabled: false, retentionDays: 30, maxEntries: 500, recordText: false })
      const fromEnv = yield* resolve(dir, {
        WEAVIATE_MCP_HISTORY_ENABLED: "true",
        WEAVIATE_MCP_HISTORY_RETENTION_DAYS: "7",
        WEAVIATE_MCP_HISTORY_MAX_ENTRIES: "1000",
        WEAVIATE_MCP_HISTORY_RECORD_TEXT: "true"
      })
      assert.deepStrictEqual(fromEnv.history, { enabled: true, retentionDays: 7, maxEntries: 1000, recordText: true })
      const refused = yield* Effect.flip(resolve(dir, { WEAVIATE_MCP_HISTORY_MAX_ENTRIES: "0" }))
      assert.include(String(refused), "maxEntries")
    }))

  it.scoped("settings.json that is not an object is refused", () =>
    Effect.gen(function*() {
      const dir = yield* TestHome.tempDir()
      yield* Effect.promise(() => NodeFs.writeFile(NodePath.join(dir, "settings.json"), "[1]"))
      const error = yield* Effect.flip(Settings.readSettingsFile().pipe(Effect.provide(TestHome.at(dir))))
      assert.include(error.message, "expected a JSON object")
    }))

  it("the home resolves --home, then WEAVIATE_MCP_HOME, then the platform directory", () => {
    const { resolveHomeDir, defaultHomeDir } = HomeModule
    assert.strictEqual(resolveHomeDir(Option.some("/tmp/a"), { WEAVIATE_MCP_HOME: "/tmp/b" }), "/tmp/a")
    assert.strictEqual(resolveHomeDir(Option.none(), { WEAVIATE_MCP_HOME: "/tmp/b" }), "/tmp/b")
    assert.match(defaultHomeDir("linux", {}), /weaviate-mcp$/)
    assert.strictEqual(defaultHomeDir("win32", { APPDATA: "C:\\Users\\u\\AppData\\Roaming" }), "C:\\Users\\u\\AppData\\Roaming\\weaviate-mcp")
  })
})

