/**
 * The history store on a real `history.db` (better-sqlite3, FTS5, WAL) in a temporary home: what it
 * keeps, how it searches and pages, retention by age and count (the file stops growing), and the
 * faults that must lose entries, never fail a caller: a locked database, a full one, a damaged one.
 */
import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as HistoryEntry from "../../src/History/HistoryEntry.ts"
import * as HistoryQuery from "../../src/History/HistoryQuery.ts"
import { DEFAULTS, HistoryStore, type Options } from "../../src/History/HistoryStore.ts"
import * as TestHome from "../support/TestHome.ts"

const entry = (i: number, overrides: Partial<HistoryEntry.NewEntry> = {}): HistoryEntry.NewEntry => ({
  time: Date.now(),
  connection: "c1",
  collection: "Article",
  tenant: null,
  consistencyLevel: null,
  source: "mcp",
  client: "claude-code",
  principal: "tok1",
  principalName: "laptop",
  tool: "execute_query",
  statement: `{ Get { Article(where: {path: ["n"], operator: Equal, valueInt: ${i}}) { title } } }`,
  digest: null,
  durationMs: 1.5,
  rows: 1,
  outcome: "ok",
  errorCode: null,
  errorMessage: null,
  approval: null,
  ...overrides
})

/** The store of a fresh temporary home, with the log lines it wrote. */
const withStore = <A, E>(options: Partial<Options>, f: (store: HistoryStore["Type"], dir: string, logs: Array<string>) => Effect.Effect<A, E>, dir?: string) =>
  Effect.gen(function*() {
    const home = dir ?? (yield* TestHome.tempDir())
    const logs: Array<string> = []
    const logger = Logger.make(({ message }) => void logs.push(String(Array.isArray(message) ? message.join(" ") : message)))
    const store = yield* HistoryStore.make({ ...DEFAULTS, ...options }).pipe(
      Effect.provide(TestHome.at(home)),
      Effect.provide(Logger.replace(Logger.defaultLogger, logger))
    )
    return yield* f(store, home, logs)
  })

describe("the history store", () => {
  it.scoped("history.db is created with mode 0600, in WAL mode, and an entry reads back as recorded, its secrets redacted", () =>
    withStore({}, (store, dir) =>
      Effect.gen(function*() {
        store.record(entry(1, { statement: "GET /v1/objects?api_key=supersecretvalue", tool: "execute_query", approval: "dialog" }))
        yield* store.flush
        const path = NodePath.join(dir, "history.db")
        assert.strictEqual(NodeFs.statSync(path).mode & 0o777, 0o600)
        assert.isTrue(NodeFs.existsSync(`${path}-wal`))
        const page = yield* store.search({})
        assert.lengthOf(page.entries, 1)
        assert.deepInclude(page.entries[0], { connection: "c1", collection: "Article", source: "mcp", client: "claude-code", principalName: "laptop", approval: "dialog", cutFrom: null })
        assert.strictEqual(page.entries[0]!.statement, "GET /v1/objects?api_key=[redacted]")
      })))

  it.scoped("a 10 MB statement is stored cut to 64 KB and marked as cut", () =>
    withStore({}, (store) =>
      Effect.gen(function*() {
        const huge = `{ Get { Article(where: ${"é".repeat(5 * 1024 * 1024)}) { title } } }`
        store.record(entry(1, { statement: huge }))
        yield* store.flush
        const [kept] = (yield* store.search({})).entries
        assert.strictEqual(kept!.cutFrom, Buffer.byteLength(huge))
        assert.isAtMost(Buffer.byteLength(kept!.statement!), HistoryEntry.MAX_STATEMENT_BYTES)
        assert.isAbove(Buffer.byteLength(kept!.statement!), HistoryEntry.MAX_STATEMENT_BYTES - 4)
        assert.isTrue(huge.startsWith(kept!.statement!), "cut on a character boundary")
      })))

  it.scoped("history.recordText false keeps the digest and the metadata, never the statement", () =>
    withStore({ recordText: false }, (store) =>
      Effect.gen(function*() {
        store.record(entry(1, { digest: HistoryEntry.digest("{ Get { Article { title } } }") }))
        yield* store.flush
        const [kept] = (yield* store.search({})).entries
        assert.isNull(kept!.statement)
        assert.strictEqual(kept!.digest, HistoryEntry.digest("{ Get { Article { title } } }"))
        assert.strictEqual(kept!.tool, "execute_query")
      })))

  it.scoped("a full-text search finds the newest matches first, pages by cursor without overlap, and filters by visibility", () =>
    withStore({}, (store) =>
      Effect.gen(function*() {
        for (let i = 0; i < 30; i++) store.record(entry(i, { connection: i % 2 === 0 ? "c1" : "c2", statement: `hybrid search ${i % 3 === 0 ? "harbour" : "meadow"} ${i}` }))
        yield* store.flush
        const first = yield* store.search({ search: "harbour", limit: 4 })
        assert.deepStrictEqual(first.entries.map((e) => e.statement), ["hybrid search harbour 27", "hybrid search harbour 24", "hybrid search harbour 21", "hybrid search harbour 18"])
        const second = yield* store.search({ search: "harbour", limit: 4, before: HistoryQuery.parseCursor(first.nextCursor!) })
        assert.deepStrictEqual(second.entries.map((e) => e.statement), ["hybrid search harbour 15", "hybrid search harbour 12", "hybrid search harbour 9", "hybrid search harbour 6"])
        const onlyC1 = yield* store.search({ search: "harbour", limit: 100, visibility: { connections: ["c1"] } })
        assert.isTrue(onlyC1.entries.every((e) => e.connection === "c1"))
        assert.lengthOf(onlyC1.entries, 5)
        const none = yield* store.search({ limit: 100, visibility: { connections: [] } })
        assert.lengthOf(none.entries, 0)
      })))

  it.scoped("a tenant-scoped visibility shows only entries naming one of its tenants on that connection", () =>
    withStore({}, (store) =>
      Effect.gen(function*() {
        store.record(entry(1, { collection: "Ticket", tenant: "acme" }))
        store.record(entry(2, { collection: "Ticket", tenant: "globex" }))
        store.record(entry(3, { collection: "Article", tenant: null }))
        store.record(entry(4, { connection: "c2", collection: "Ticket", tenant: "globex" }))
        yield* store.flush
        const seen = yield* store.search({ visibility: { tenants: { c1: { Ticket: ["acme"] } } } })
        assert.deepStrictEqual(seen.entries.map((e) => [e.connection, e.tenant]), [["c2", "globex"], ["c1", "acme"]])
      })))

  it.scoped("an FTS5 search with broken syntax is invalid_search with SQLite's reason", () =>
    withStore({}, (store) =>
      Effect.gen(function*() {
        for (const [search, reason] of [['"harbour', "unterminated string"], ["NEAR(", "fts5: syntax error"]] as const) {
          const error = yield* Effect.flip(store.search({ search }))
          assert.strictEqual(error.reason, "invalid_search")
          assert.include(error.message, reason)
        }
      })))

  it.scoped("entries older than retentionDays, and the oldest beyond maxEntries, are deleted; the file stops growing at maxEntries", () =>
    withStore({ maxEntries: 500, retentionDays: 1 }, (store, dir) =>
      Effect.gen(function*() {
        store.record(entry(0, { time: Date.now() - 2 * 86_400_000, statement: "old statement" }))
        yield* store.flush
        assert.strictEqual(yield* store.prune, 1)
        const path = NodePath.join(dir, "history.db")
        const sizes: Array<number> = []
        for (let round = 0; round < 8; round++) {
          for (let i = 0; i < 500; i++) store.record(entry(round * 500 + i))
          yield* store.flush
          yield* store.prune
          const db = new Database(path)
          db.pragma("wal_checkpoint(TRUNCATE)")
          db.close()
          sizes.push(NodeFs.statSync(path).size)
        }
        const stats = yield* store.stats
        assert.strictEqual(stats.entries, 500)
        assert.strictEqual(stats.quickCheck, "ok")
        // Once the file holds what 1,000 entries need (500 kept, 500 new before the prune), the deleted
        // pages are reused: four more rounds of 500 entries and it has not grown.
        for (const size of sizes.slice(5)) assert.isAtMost(size, sizes[4]!, sizes.join(", "))
        const newest = yield* store.search({ limit: 1 })
        assert.include(newest.entries[0]!.statement, "valueInt: 3999")
      })))

  it.scoped("a database locked by another writer loses the batch's entries, says so once, and records again once it is free", () =>
    withStore({ busyTimeoutMs: 10 }, (store, dir, logs) =>
      Effect.gen(function*() {
        const other = new Database(NodePath.join(dir, "history.db"))
        other.exec("BEGIN IMMEDIATE")
        for (let i = 0; i < 5; i++) store.record(entry(i))
        yield* store.flush
        yield* Effect.yieldNow()
        assert.isTrue(logs.some((l) => /query history: 5 entries lost \(database is locked\)/.test(l)), logs.join("\n"))
        other.exec("ROLLBACK")
        other.close()
        store.record(entry(99, { statement: "after the lock" }))
        yield* store.flush
        const page = yield* store.search({})
        assert.deepStrictEqual(page.entries.map((e) => e.statement), ["after the lock"])
        assert.strictEqual(store.state()._tag, "On")
      })))

  it.scoped("a full database loses the batch's entries and stays on", () =>
    withStore({ maxPageCount: 40 }, (store, _dir, logs) =>
      Effect.gen(function*() {
        for (let i = 0; i < 2000; i++) store.record(entry(i, { statement: `statement ${i} ${"x".repeat(400)}` }))
        yield* store.flush
        yield* Effect.yieldNow()
        assert.isTrue(logs.some((l) => /entries lost \(database or disk is full\)/.test(l)), logs.join("\n"))
        assert.strictEqual(store.state()._tag, "On")
        store.record(entry(1, { statement: "small" }))
        yield* store.flush
      })))

  for (const [what, damage] of [
    ["not a database", (path: string) => NodeFs.writeFileSync(path, "this is not a database, only text ".repeat(300))],
    ["truncated", (path: string) => NodeFs.truncateSync(path, Math.floor(NodeFs.statSync(path).size / 2))]
  ] as const) {
    it.scoped(`a damaged history.db (${what}) leaves the history off with one error line; nothing fails`, () =>
      Effect.gen(function*() {
        const dir = yield* TestHome.tempDir()
        yield* withStore({}, (store) =>
          Effect.gen(function*() {
            for (let i = 0; i < 3000; i++) store.record(entry(i))
            yield* store.flush
          }), dir).pipe(Effect.scoped)
        const path = NodePath.join(dir, "history.db")
        NodeFs.rmSync(`${path}-wal`, { force: true })
        NodeFs.rmSync(`${path}-shm`, { force: true })
        damage(path)
        yield* withStore({}, (store, _dir, logs) =>
          Effect.gen(function*() {
            const state = store.state()
            assert.strictEqual(state._tag, "Off")
            assert.isTrue(state._tag === "Off" && state.damaged)
            assert.lengthOf(logs, 1)
            assert.match(logs[0]!, /^query history is off: history.db is damaged \(.+\); `weaviate-mcp history clear --yes` sets the damaged file aside/)
            store.record(entry(1))
            yield* store.flush
            const refused = yield* Effect.flip(store.search({}))
            assert.strictEqual(refused.reason, "unavailable")
          }), dir)
      }))
  }
})

describe("history queries", () => {
  it("a cursor round-trips its id; anything else is not a cursor", () => {
    assert.strictEqual(HistoryQuery.parseCursor(HistoryQuery.cursorAfter(123)), 123)
    for (const bad of ["", "123", "h1.", "h1.!!", `h1.${Buffer.from("0").toString("base64url")}`, `h1.${Buffer.from("1;DROP").toString("base64url")}`]) {
      assert.isUndefined(HistoryQuery.parseCursor(bad), bad)
    }
  })

  it("the date filters start today at midnight, this week on Monday and this month on its first day (UTC)", () => {
    const now = Date.parse("2026-11-26T15:30:00Z") // a Thursday
    assert.strictEqual(HistoryQuery.sinceOf("today", now), Date.parse("2026-11-26T00:00:00Z"))
    assert.strictEqual(HistoryQuery.sinceOf("thisWeek", now), Date.parse("2026-11-23T00:00:00Z"))
    assert.strictEqual(HistoryQuery.sinceOf("thisMonth", now), Date.parse("2026-11-01T00:00:00Z"))
    assert.isUndefined(HistoryQuery.sinceOf("all", now))
  })

  it("--since and since/until take a span back from now or an ISO date", () => {
    const now = Date.parse("2026-11-26T15:30:00Z")
    assert.strictEqual(HistoryQuery.parseTime("1h", now), now - 3_600_000)
    assert.strictEqual(HistoryQuery.parseTime("7d", now), now - 7 * 86_400_000)
    assert.strictEqual(HistoryQuery.parseTime("2026-11-01", now), Date.parse("2026-11-01"))
    assert.isUndefined(HistoryQuery.parseTime("yesterday", now))
  })

  it("the collection of a statement: GraphQL roots and REST paths", () => {
    assert.strictEqual(HistoryEntry.collectionOfStatement("{ Get { Article(limit: 2) { title } } }"), "Article")
    assert.strictEqual(HistoryEntry.collectionOfStatement("{ Aggregate { Ticket(tenant: \"acme\") { meta { count } } } }"), "Ticket")
    assert.strictEqual(HistoryEntry.collectionOfStatement("GET /v1/objects/Article/00000000-0000-4000-8000-000000000001"), "Article")
    assert.strictEqual(HistoryEntry.collectionOfStatement("GET /v1/objects?class=Article&limit=3"), "Article")
    assert.isNull(HistoryEntry.collectionOfStatement("GET /v1/nodes"))
  })
})
