/**
 * SecretFile: whole files, mode 0600, flushed to the disk before they replace the old one, except
 * the files that describe the running daemon (its handshake and state files), which a crash leaves
 * stale whatever they hold.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterEach, vi } from "vitest"
import * as SecretFile from "../../src/Base/SecretFile.ts"

afterEach(() => {
  vi.restoreAllMocks()
})

const tempDir = Effect.acquireRelease(
  Effect.promise(() => NodeFs.mkdtemp(NodePath.join(NodeOs.tmpdir(), "secret-file-"))),
  (dir) => Effect.promise(() => NodeFs.rm(dir, { recursive: true, force: true }))
)

/** Counts fsyncs through any FileHandle. */
const countSyncs = Effect.promise(async () => {
  const probe = await NodeFs.open(NodeOs.tmpdir(), "r")
  const prototype = Object.getPrototypeOf(probe) as { sync: () => Promise<void> }
  await probe.close()
  return vi.spyOn(prototype, "sync")
})

describe("SecretFile.writeAtomic", () => {
  it.scopedLive("a secret file is written whole with mode 0600 and flushed to the disk before it replaces the old one", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = NodePath.join(dir, "tokens.json")
      yield* Effect.promise(() => NodeFs.writeFile(path, "old", { mode: 0o644 }))
      const syncs = yield* countSyncs
      yield* SecretFile.writeJsonAtomic(path, { a: 1 })
      assert.strictEqual(syncs.mock.calls.length, 1)
      assert.strictEqual(yield* Effect.promise(() => NodeFs.readFile(path, "utf8")), "{\n  \"a\": 1\n}\n")
      assert.strictEqual((yield* Effect.promise(() => NodeFs.stat(path))).mode & 0o777, 0o600)
      assert.deepStrictEqual(yield* Effect.promise(() => NodeFs.readdir(dir)), ["tokens.json"], "no temporary file is left")
    }))

  it.scopedLive("a file that describes the running daemon is replaced atomically without a flush (sync: false)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const path = NodePath.join(dir, "mcp-handshake.json")
      const syncs = yield* countSyncs
      yield* SecretFile.writeJsonAtomic(path, { port: 1 }, { sync: false })
      assert.strictEqual(syncs.mock.calls.length, 0)
      assert.deepStrictEqual(JSON.parse(yield* Effect.promise(() => NodeFs.readFile(path, "utf8"))), { port: 1 })
      assert.strictEqual((yield* Effect.promise(() => NodeFs.stat(path))).mode & 0o777, 0o600)
    }))
})
