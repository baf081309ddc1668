import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { Home } from "../../src/Base/Home.ts"
import * as SecretFile from "../../src/Base/SecretFile.ts"
import { ensureDefaultToken, onRevocation, parseTokenId, statusAt, TokenStore } from "../../src/Auth/TokenStore.ts"
import { homeLayer, tempDir } from "./TokenStore.support.ts"

/** A store on a fresh temporary home; `dir` is the home. */
const withStore = <A, E>(
  f: (store: TokenStore["Type"], dir: string) => Effect.Effect<A, E, Home | Scope.Scope>,
  watch = false,
  fsEvents = true
) =>
  Effect.gen(function*() {
    const dir = yield* tempDir
    const home = homeLayer(dir)
    const store = yield* TokenStore.make({ watch, fsEvents }).pipe(Effect.provide(home))
    return yield* f(store, dir).pipe(Effect.provide(home))
  })

/** Another process's view of the same home: a one-shot store, as the CLI uses. */
const otherStore = (dir: string) => TokenStore.make({ watch: false }).pipe(Effect.provide(homeLayer(dir)))

describe("TokenStore", () => {
  it.scoped("the store never holds a plain token", () =>
    withStore((store, dir) =>
      Effect.gen(function*() {
        const { token, info } = yield* store.create({ name: "ci", access: "readWrite" })
        const text = yield* Effect.promise(() => NodeFs.readFile(NodePath.join(dir, "tokens.json"), "utf8"))
        const secret = token.slice(`wmcp_${info.id}_`.length)
        assert.strictEqual(secret.length, 43)
        assert.notInclude(text, token)
        assert.notInclude(text, secret)
        assert.notInclude(text, Buffer.from(secret, "base64url").toString("hex"))
        assert.notInclude(text, Buffer.from(secret, "base64url").toString("base64"))
        assert.include(text, info.id)
        assert.include(text, "\"algorithm\": \"hmac-sha256\"")
      })))

  it.scoped("tokens.json has mode 0600 and is replaced atomically (rename), leaving no temp file", () =>
    withStore((store, dir) =>
      Effect.gen(function*() {
        const path = NodePath.join(dir, "tokens.json")
        yield* store.create({ name: "a", access: "readOnly" })
        const first = yield* Effect.promise(() => NodeFs.stat(path))
        assert.strictEqual(first.mode & 0o777, 0o600)
        yield* store.create({ name: "b", access: "readOnly" })
        const second = yield* Effect.promise(() => NodeFs.stat(path))
        assert.strictEqual(second.mode & 0o777, 0o600)
        // A new inode: the file was renamed into place, never rewritten in place.
        assert.notStrictEqual(second.ino, first.ino)
        const entries = yield* Effect.promise(() => NodeFs.readdir(dir))
        assert.deepStrictEqual(entries.sort(), ["tokens.json"])
      })))

  it.scoped("create returns the token once; list shows every field but the secret", () =>
    withStore((store) =>
      Effect.gen(function*() {
        const created = yield* store.create({
          name: "limited",
          access: "fullAccess",
          scopes: ["tools:read", "admin"],
          connections: ["c1", "c2"],
          expiresAt: Date.now() + 86_400_000
        })
        assert.match(created.token, /^wmcp_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/)
        assert.deepStrictEqual(parseTokenId(created.token), Option.some(created.info.id))
        const listed = yield* store.list
        assert.strictEqual(listed.length, 1)
        assert.deepStrictEqual(listed[0], created.info)
        assert.deepStrictEqual(created.info.scopes, ["tools:read", "admin"])
        assert.deepStrictEqual(created.info.connections, Option.some(["c1", "c2"]))
        assert.notInclude(JSON.stringify(listed), created.token.slice(22))
        assert.notProperty(listed[0], "hash")
      })))

  it.scoped("default scopes come from the access level; scopes beyond it are refused", () =>
    withStore((store) =>
      Effect.gen(function*() {
        const { info } = yield* store.create({ name: "rw", access: "readWrite" })
        assert.deepStrictEqual(info.scopes, ["tools:read", "resources:read", "history:read", "tools:write"])
        assert.deepStrictEqual(info.connections, Option.none())
        const refused = yield* Effect.flip(store.create({ name: "ro", access: "readOnly", scopes: ["tools:write"] }))
        assert.strictEqual(refused._tag, "InvalidTokenRequest")
        const unnamed = yield* Effect.flip(store.create({ name: "  ", access: "readOnly" }))
        assert.strictEqual(unnamed._tag, "InvalidTokenRequest")
        yield* TestClock.adjust("10 seconds")
        const past = yield* Effect.flip(store.create({ name: "old", access: "readOnly", expiresAt: 10_000 }))
        assert.strictEqual(past._tag, "InvalidTokenRequest")
        assert.strictEqual((yield* store.list).length, 1)
      })))

  it.scoped("verify accepts the exact token only", () =>
    withStore((store) =>
      Effect.gen(function*() {
        const { token, info } = yield* store.create({ name: "ci", access: "readOnly" })
        assert.deepStrictEqual(yield* store.verify(token), Option.some(info))
        const last = token.at(-1) === "A" ? "B" : "A"
        assert.isTrue(Option.isNone(yield* store.verify(token.slice(0, -1) + last)))
        assert.isTrue(Option.isNone(yield* store.verify(`wmcp_0000000000000000_${token.slice(-43)}`)))
        assert.isTrue(Option.isNone(yield* store.verify("not-a-token")))
        assert.isTrue(Option.isNone(yield* store.verify("")))
      })))

  it("a token has exactly the shape wmcp_<16 lowercase hex>_<43 base64url>: anything around or inside it is no token", () => {
    const id = "0123456789abcdef"
    const secret = "A".repeat(40) + "_-9"
    assert.deepStrictEqual(parseTokenId(`wmcp_${id}_${secret}`), Option.some(id))
    for (const token of [
      `xwmcp_${id}_${secret}`,
      `wmcp_${id}_${secret}x`,
      `wmcp_${id}_${secret}\n`,
      `Bearer wmcp_${id}_${secret}`,
      `wmcp_${id.toUpperCase()}_${secret}`,
      `wmcp_${id.slice(1)}_${secret}`,
      `wmcp_${id}0_${secret}`,
      `wmcp_${id}_${secret.slice(1)}`,
      `wmcp_${id}_${secret}A`,
      `wmcp_${id}_${secret.slice(1)}=`,
      `wmcp_${id}_${secret.slice(1)}+`,
      `wmcp__${secret}`,
      ""
    ]) {
      assert.isTrue(Option.isNone(parseTokenId(token)), JSON.stringify(token))
    }
  })

  it.scoped("revoke marks the token revoked, keeps it listed, and is idempotent; an unknown id fails", () =>
    withStore((store) =>
      Effect.gen(function*() {
        const { token, info } = yield* store.create({ name: "ci", access: "readOnly" })
        const revoked = yield* store.revoke(info.id)
        assert.isTrue(Option.isSome(revoked.revokedAt))
        assert.strictEqual(statusAt(revoked, Date.now()), "revoked")
        const again = yield* store.revoke(info.id)
        assert.deepStrictEqual(again.revokedAt, revoked.revokedAt)
        const found = yield* store.verify(token)
        assert.isTrue(Option.isSome(found) && statusAt(found.value, Date.now()) === "revoked")
        assert.strictEqual((yield* store.list).length, 1)
        const missing = yield* Effect.flip(store.revoke("0123456789abcdef"))
        assert.strictEqual(missing._tag, "TokenNotFound")
        assert.strictEqual(missing.message, "Unknown token id: 0123456789abcdef")
      })))

  it.scoped("a token expires at expiresAt exactly", () =>
    withStore((store) =>
      Effect.gen(function*() {
        const expiresAt = Date.now() + 60_000
        const { info } = yield* store.create({ name: "short", access: "readOnly", expiresAt })
        assert.strictEqual(statusAt(info, expiresAt - 1), "active")
        assert.strictEqual(statusAt(info, expiresAt), "expired")
      })))

  it.scopedLive("a running store picks up a token created by another process within a second", () =>
    withStore((running, dir) =>
      Effect.gen(function*() {
        const other = yield* otherStore(dir)
        const { token, info } = yield* other.create({ name: "cli", access: "readOnly" })
        yield* running.tokens.pipe(
          Stream.filter((tokens) => tokens.some((t) => t.id === info.id)),
          Stream.runHead,
          Effect.timeoutFail({ duration: "1 second", onTimeout: () => "not picked up within a second" })
        )
        assert.deepStrictEqual(yield* running.verify(token), Option.some(info))
      }), true))

  it.scopedLive("a running store picks up a revocation by another process within a second and publishes it", () =>
    withStore((running, dir) =>
      Effect.gen(function*() {
        const { token, info } = yield* running.create({ name: "victim", access: "readWrite" })
        const revocations = yield* running.subscribeRevocations
        const other = yield* otherStore(dir)
        yield* other.revoke(info.id)
        const revokedId = yield* Queue.take(revocations).pipe(
          Effect.timeoutFail({ duration: "1 second", onTimeout: () => "revocation not seen within a second" })
        )
        assert.strictEqual(revokedId, info.id)
        const found = yield* running.verify(token)
        assert.isTrue(Option.isSome(found) && Option.isSome(found.value.revokedAt))
      }), true))

  it.scopedLive("without fs.watch events the stat poll still picks up a revocation within a second", () =>
    withStore((running, dir) =>
      Effect.gen(function*() {
        const { info } = yield* running.create({ name: "victim", access: "readWrite" })
        const revocations = yield* running.subscribeRevocations
        yield* Effect.flatMap(otherStore(dir), (other) => other.revoke(info.id))
        const revokedId = yield* Queue.take(revocations).pipe(Effect.timeoutFail({ duration: "1 second", onTimeout: () => "not seen" }))
        assert.strictEqual(revokedId, info.id)
      }), true, false))

  it.scoped("history:read is granted to tokens created before it existed that have tools:read, and only to them", () =>
    withStore((store, dir) =>
      Effect.gen(function*() {
        const older = yield* store.create({ name: "older", access: "readOnly" })
        const noTools = yield* store.create({ name: "resources only", access: "readOnly", scopes: ["resources:read"] })
        const narrowed = yield* store.create({ name: "narrowed now", access: "readOnly", scopes: ["tools:read"] })
        // The first two as an earlier version wrote them: no scopesRevision, no history:read.
        const path = NodePath.join(dir, "tokens.json")
        const file = (yield* SecretFile.readJsonIfExists(path)) as { version: 1; tokens: Array<{ id: string; scopes: Array<string>; scopesRevision?: number }> }
        const old = file.tokens.map((t) =>
          t.id === narrowed.info.id ? t : (({ scopesRevision: _, ...rest }) => ({ ...rest, scopes: rest.scopes.filter((s) => s !== "history:read") }))(t))
        yield* SecretFile.writeJsonAtomic(path, { ...file, tokens: old })
        const reread = yield* TokenStore.make({ watch: false }).pipe(Effect.provide(homeLayer(dir)))
        const scopes = (token: string) => Effect.map(reread.verify(token), (p) => Option.getOrThrow(p).scopes)
        assert.deepStrictEqual(yield* scopes(older.token), ["tools:read", "resources:read", "history:read"])
        assert.deepStrictEqual(yield* scopes(noTools.token), ["resources:read"])
        assert.deepStrictEqual(yield* scopes(narrowed.token), ["tools:read"])
      })))

  it.scopedLive("removing a token from the file (a hand edit) is a revocation too", () =>
    withStore((running, dir) =>
      Effect.gen(function*() {
        const keep = yield* running.create({ name: "keep", access: "readOnly" })
        const drop = yield* running.create({ name: "drop", access: "readOnly" })
        const revocations = yield* running.subscribeRevocations
        const path = NodePath.join(dir, "tokens.json")
        const file = (yield* SecretFile.readJsonIfExists(path)) as { version: 1; tokens: Array<{ id: string }> }
        yield* SecretFile.writeJsonAtomic(path, { ...file, tokens: file.tokens.filter((t) => t.id !== drop.info.id) })
        const revokedId = yield* Queue.take(revocations).pipe(Effect.timeoutFail({ duration: "1 second", onTimeout: () => "not seen" }))
        assert.strictEqual(revokedId, drop.info.id)
        assert.isTrue(Option.isNone(yield* running.verify(drop.token)))
        assert.isTrue(Option.isSome(yield* running.verify(keep.token)))
      }), true))

  it.scopedLive("an unreadable store fails closed: every token stops working and is published as revoked", () =>
    withStore((running, dir) =>
      Effect.gen(function*() {
        const { token, info } = yield* running.create({ name: "ci", access: "readOnly" })
        const revocations = yield* running.subscribeRevocations
        yield* SecretFile.writeAtomic(NodePath.join(dir, "tokens.json"), "{ not json")
        const revokedId = yield* Queue.take(revocations).pipe(Effect.timeoutFail({ duration: "1 second", onTimeout: () => "not seen" }))
        assert.strictEqual(revokedId, info.id)
        assert.isTrue(Option.isNone(yield* running.verify(token)))
        const listed = yield* Effect.either(running.list)
        assert.strictEqual(listed._tag, "Left")
      }).pipe(Logger.withMinimumLogLevel(LogLevel.None)), true))

  it.scopedLive("onRevocation runs its handler for each token revoked by another process", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const cancelled = yield* Queue.unbounded<string>()
      const live = Layer.provideMerge(onRevocation((id) => Queue.offer(cancelled, id)), TokenStore.layer()).pipe(
        Layer.provide(homeLayer(dir))
      )
      // Built in the test's scope, so the watcher and the handler live until the test ends.
      const running = Context.get(yield* Layer.build(live), TokenStore)
      const { info } = yield* running.create({ name: "victim", access: "readOnly" })
      yield* Effect.flatMap(otherStore(dir), (other) => other.revoke(info.id))
      const id = yield* Queue.take(cancelled).pipe(Effect.timeoutFail({ duration: "1 second", onTimeout: () => "handler not run" }))
      assert.strictEqual(id, info.id)
    }))

  it.scoped("first run: ensureDefaultToken creates one readWrite `default` token only when the store is empty", () =>
    withStore((store) =>
      Effect.gen(function*() {
        const first = yield* ensureDefaultToken.pipe(Effect.provideService(TokenStore, store))
        assert.isTrue(Option.isSome(first))
        const created = Option.getOrThrow(first)
        assert.strictEqual(created.info.name, "default")
        assert.strictEqual(created.info.access, "readWrite")
        assert.isTrue(Option.isSome(yield* store.verify(created.token)))
        yield* store.revoke(created.info.id)
        assert.isTrue(Option.isNone(yield* ensureDefaultToken.pipe(Effect.provideService(TokenStore, store))))
        assert.strictEqual((yield* store.list).length, 1)
      })))

  it.scoped("the service layer builds from Home", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const store = yield* TokenStore.pipe(Effect.provide(TokenStore.layerOneShot.pipe(Layer.provide(homeLayer(dir)))))
      assert.deepStrictEqual(yield* store.list, [])
    }))
})
