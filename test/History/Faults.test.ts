/**
 * The query history's faults on the real binary: a damaged `history.db`, a native module that cannot
 * load, a database locked by another writer, and `kill -9` of the daemon. In each the daemon starts
 * and answers every tool call; only history entries may be lost, and the CLI says why and how to
 * reset. `serve --history off` never loads the module.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import Database from "better-sqlite3"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { RUNNABLE } from "../support/AsNobody.ts"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"

let w: WeaviateTestInstance

beforeAll(async () => {
  w = await startTestWeaviate()
  const created = await fetch(`${w.url}/v1/schema`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ class: "Harbour", vectorizer: "none", properties: [{ name: "name", dataType: ["text"] }] })
  })
  assert.isTrue(created.ok, await created.text())
}, 120_000)

afterAll(async () => {
  await w?.close()
})

/** A home with one connection, `w`, to the Weaviate under test. */
const homeWithConnection = async () => {
  const home = TestHome.tempDirSync()
  const added = await Cli.run(["connections", "add", "--name", "w", "--host", "127.0.0.1", "--port", String(w.port), "--home", home])
  assert.strictEqual(added.code, 0, added.stderr)
  return home
}

const serve = (home: string, extra: ReadonlyArray<string> = []) =>
  Cli.serve(["--port", "0", "--home", home, "--auth", "off", "--approvals", "exec", "--approval-command", "true", "--rate-limit", "0", ...extra])

const stop = async (running: Cli.Running) => {
  running.child.kill("SIGTERM")
  await running.exited
}

const client = async (endpoint: string) => {
  const c = new Client({ name: "faults", version: "1.0.0" })
  await c.connect(new StreamableHTTPClientTransport(new URL(endpoint)))
  return c
}

/** Counts a table's rows through the tool; the call must be answered, and answered well. */
const countRows = async (c: Client) => {
  const result = await c.callTool({ name: "count_rows", arguments: { connection_id: "w", table: "Harbour" } })
  assert.notStrictEqual(result.isError, true, JSON.stringify(result.content))
  return result
}

/** The daemon's "history is off" lines, once there is one (bounded: 100 looks, 20 ms apart). */
const offLines = async (running: Cli.Running) => {
  const lines = () => running.stderr().split("\n").filter((l) => l.includes("query history is off"))
  for (let i = 0; i < 100 && lines().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20))
  return lines()
}

const historyEntries = async (home: string) => {
  const listed = await Cli.run(["history", "--json", "--limit", "500", "--home", home])
  assert.strictEqual(listed.code, 0, listed.stderr)
  return JSON.parse(listed.stdout) as Array<{ id: number; tool: string }>
}

const doctorHistory = async (home: string) => {
  const doctor = await Cli.run(["doctor", "--json", "--home", home], { timeoutMs: 60_000 })
  return (JSON.parse(doctor.stdout) as { checks: Array<{ id: string; status: string; detail: string; fix: string | null }> }).checks.find((c) => c.id === "history")!
}

describe("query history faults", () => {
  for (const [what, damage] of [
    ["not a database", (path: string) => NodeFs.writeFileSync(path, "not a database at all ".repeat(500))],
    ["truncated", (path: string) => NodeFs.truncateSync(path, Math.floor(NodeFs.statSync(path).size / 2))]
  ] as const) {
    it(`a damaged history.db (${what}) does not stop the daemon: history off with one log line, a doctor finding, and history says how to reset`, async () => {
      const home = await homeWithConnection()
      // A history with some pages, written by the CLI's own commands, then damaged.
      for (let i = 0; i < 40; i++) await Cli.run(["rest", "w", `GET /v1/objects?class=Harbour&limit=${i + 1}`, "--home", home])
      const path = NodePath.join(home, "history.db")
      NodeFs.rmSync(`${path}-wal`, { force: true })
      NodeFs.rmSync(`${path}-shm`, { force: true })
      damage(path)

      const running = await serve(home)
      try {
        const c = await client(running.endpoint)
        await countRows(c)
        // The history opens at its first use (the first call's entry): the line follows the answer,
        // once; later calls are answered and say nothing more.
        const lines = await offLines(running)
        await countRows(c)
        await c.close()
        assert.lengthOf(await offLines(running), 1, running.stderr())
        assert.include(lines[0], "history.db is damaged")
        assert.include(lines[0], "history clear --yes")
      } finally {
        await stop(running)
      }

      const finding = await doctorHistory(home)
      assert.strictEqual(finding.status, "fail")
      assert.include(finding.detail, "damaged")
      assert.include(finding.fix, "weaviate-mcp history clear --yes")

      const history = await Cli.run(["history", "--home", home])
      assert.strictEqual(history.code, 1)
      assert.match(history.stderr, /^history: the query history is off: history.db is damaged \(.+\); `weaviate-mcp history clear --yes` sets the damaged file aside/)

      const reset = await Cli.run(["history", "clear", "--yes", "--home", home])
      assert.strictEqual(reset.code, 0, reset.stderr)
      assert.match(reset.stdout, /^Set the damaged history aside as .*history\.db\.damaged-/)
      assert.isTrue(NodeFs.readdirSync(home).some((name) => name.startsWith("history.db.damaged-")))
      assert.strictEqual((await doctorHistory(home)).status, "ok")
    }, 120_000)
  }

  it("a native module that cannot load leaves the history off with one log line and a doctor finding; the daemon answers", async () => {
    // The package's runnable files without node_modules: better-sqlite3 cannot be found.
    const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-nomodule-"))
    try {
      for (const part of RUNNABLE) NodeFs.cpSync(NodePath.join(import.meta.dirname, "../..", part), NodePath.join(dir, part), { recursive: true })
      const bin = NodePath.join(dir, "bin", "weaviate-mcp.js")
      const home = TestHome.tempDirSync()
      const cli = (...args: ReadonlyArray<string>) => Cli.run(args, { timeoutMs: 30_000, bin })
      assert.strictEqual((await cli("connections", "add", "--name", "w", "--host", "127.0.0.1", "--port", String(w.port), "--home", home)).code, 0)
      const running = await Cli.serve(["--port", "0", "--home", home, "--auth", "off", "--approvals", "exec", "--approval-command", "true"], { bin })
      try {
        const c = await client(running.endpoint)
        await countRows(c)
        await c.close()
        const lines = await offLines(running)
        assert.lengthOf(lines, 1, running.stderr())
        assert.include(lines[0], "better-sqlite3")
      } finally {
        await stop(running)
      }
      const doctor = await cli("doctor", "--json", "--home", home)
      const finding = (JSON.parse(doctor.stdout) as { checks: Array<{ id: string; status: string; fix: string | null }> }).checks.find((x) => x.id === "history")!
      assert.strictEqual(finding.status, "fail")
      assert.include(finding.fix, "npm rebuild better-sqlite3")
    } finally {
      NodeFs.rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  /** Whether the process has mapped the native module (Linux: /proc/PID/maps). */
  const loadsSqlite = (pid: number) => NodeFs.readFileSync(`/proc/${pid}/maps`, "utf8").includes("better_sqlite3.node")

  it("serve --history off records nothing, creates no history.db and never loads the native module", async () => {
    const home = await homeWithConnection()
    const running = await serve(home, ["--history", "off"])
    try {
      const c = await client(running.endpoint)
      await countRows(c)
      await c.close()
      assert.notInclude(running.stderr(), "query history is off")
      assert.isFalse(loadsSqlite(running.child.pid!))
    } finally {
      await stop(running)
    }
    assert.isFalse(NodeFs.existsSync(NodePath.join(home, "history.db")))
  }, 60_000)

  it("with the history on, the daemon starts without the native module and loads it at the first statement", async () => {
    const home = await homeWithConnection()
    const running = await serve(home)
    try {
      assert.isFalse(loadsSqlite(running.child.pid!))
      const c = await client(running.endpoint)
      await countRows(c)
      await c.close()
      await historyEntries(home)
      assert.isTrue(loadsSqlite(running.child.pid!))
    } finally {
      await stop(running)
    }
  }, 60_000)

  it("a database locked by another writer loses history entries, never a tool call", async () => {
    const home = await homeWithConnection()
    const running = await serve(home)
    try {
      const c = await client(running.endpoint)
      await countRows(c)
      const before = await historyEntries(home)
      const lock = new Database(NodePath.join(home, "history.db"))
      lock.exec("BEGIN IMMEDIATE")
      try {
        for (let i = 0; i < 5; i++) await countRows(c)
        for (let i = 0; i < 100 && !running.stderr().includes("entries lost (database is locked)"); i++) await new Promise((r) => setTimeout(r, 20))
        assert.include(running.stderr(), "entries lost (database is locked)")
      } finally {
        lock.exec("ROLLBACK")
        lock.close()
      }
      await countRows(c)
      await c.close()
      let after = await historyEntries(home)
      for (let i = 0; i < 50 && after.length < before.length + 1; i++) after = await historyEntries(home)
      // Of the six calls since, the ones whose batches met the lock are lost (the last of the five may
      // have been written after it was released): at least one, and every call was answered.
      assert.isAtLeast(after.length, before.length + 1)
      assert.isAtMost(after.length, before.length + 5)
    } finally {
      await stop(running)
    }
  }, 60_000)

  it("a clean shutdown (SIGTERM) writes every entry, the last batch's included", async () => {
    const home = await homeWithConnection()
    const running = await serve(home)
    const c = await client(running.endpoint)
    for (let i = 0; i < 5; i++) await countRows(c)
    await stop(running)
    assert.lengthOf(await historyEntries(home), 5)
  }, 60_000)

  it("kill -9 of the daemon loses at most the entries of its last batch, and the database opens cleanly afterwards", async () => {
    const home = await homeWithConnection()
    const running = await serve(home)
    const c = await client(running.endpoint)
    const written = 20
    for (let i = 0; i < written; i++) await countRows(c)
    let entries = await historyEntries(home)
    for (let i = 0; i < 50 && entries.length < written; i++) entries = await historyEntries(home)
    assert.lengthOf(entries, written)
    // Five more, answered within one batch's time (BATCH_MS), then the daemon is killed before it writes them.
    const last = 5
    for (let i = 0; i < last; i++) await countRows(c)
    running.child.kill("SIGKILL")
    await running.exited
    entries = await historyEntries(home)
    assert.isAtLeast(entries.length, written)
    assert.isAtMost(entries.length, written + last)
    const finding = await doctorHistory(home)
    assert.strictEqual(finding.status, "ok", finding.detail)
    assert.include(finding.detail, "quick_check ok")
  }, 60_000)
})
