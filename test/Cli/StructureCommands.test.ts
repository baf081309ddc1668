/**
 * `collections create|add-property|update|drop` and `tenants create|activate|deactivate|offload|delete`
 * through the real binary against the real Weaviate with text2vec-bigram: each change reaches Weaviate
 * once; what Weaviate would refuse is refused first (exit 1, the reason, nothing sent); destructive
 * commands are confirmed on a terminal (the name typed again) and need --yes elsewhere (exit 2);
 * Safe Mode readOnly refuses every write (exit 1).
 */
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"

let w: WeaviateTestInstance
const home = TestHome.tempDirSync()

const schemaOf = async (name: string) => {
  const response = await fetch(`${w.url}/v1/schema/${name}`)
  return response.status === 200 ? await response.json() as any : undefined
}

const tenantsOf = async (name: string) =>
  Object.fromEntries(((await (await fetch(`${w.url}/v1/schema/${name}/tenants`)).json()) as Array<any>).map((t) => [t.name, t.activityStatus]))

const cli = (...args: ReadonlyArray<string>) => Cli.run([...args, "--home", home], { timeoutMs: 30_000 })

/** Runs the binary under a pseudo-terminal (`script`), typing `input`; answers what it printed and its exit code. */
const onTerminal = (args: ReadonlyArray<string>, input: string) =>
  new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const command = [process.execPath, Cli.BIN, ...args, "--home", home].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ")
    const child = NodeChild.spawn("script", ["-qefc", command, "/dev/null"], { stdio: "pipe" })
    let output = ""
    child.stdout.on("data", (d) => {
      output += d
      // Type the answer once the question is on the screen.
      if (output.includes("to confirm: ") && !child.stdin.writableEnded) child.stdin.end(input)
    })
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`timed out under a terminal: ${output}`))
    }, 30_000)
    child.once("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })

beforeAll(async () => {
  w = await startTestWeaviate({ modules: ["text2vec-bigram"] })
  for (const [name, mode] of [["w", "confirm"], ["ro", "readOnly"]] as const) {
    const added = await Cli.run(["connections", "add", "--home", home, "--name", name, "--host", "127.0.0.1", "--port", String(w.port), "--safe-mode", mode])
    if (added.code !== 0) throw new Error(added.stderr)
  }
}, 60_000)
afterAll(() => w.close())

describe("weaviate-mcp collections", () => {
  it("the tests run against the real Weaviate", () => {
    expect(w.kind).not.toBe("compatible")
  })

  it("create from flags: the collection reaches Weaviate with its properties and vectorizer; the summary lists one property a line", async () => {
    const r = await cli("collections", "create", "w", "Note", "--property", "title:text", "--property", "stars:int", "--vectorizer", "text2vec-bigram", "--description", "Notes")
    expect(r.code, r.stderr).toBe(0)
    const lines = r.stdout.trim().split("\n")
    expect(lines[0]).toBe("Create the collection Note")
    expect(lines).toContain("  title: text")
    expect(lines).toContain("  stars: int")
    expect(lines.at(-1)).toBe("Created the collection Note.")
    const raw = await schemaOf("Note")
    expect(raw.vectorizer).toBe("text2vec-bigram")
    expect(raw.properties.map((p: any) => [p.name, p.dataType[0]])).toEqual([["title", "text"], ["stars", "int"]])
  })

  it("create from a JSON file of create_table's arguments (multi-tenancy, nested properties), --json", async () => {
    const file = NodePath.join(TestHome.tempDirSync(), "ticket.json")
    NodeFs.writeFileSync(file, JSON.stringify({
      description: "Tickets",
      vectorizer: "none",
      multi_tenancy: { enabled: true, autoTenantCreation: true },
      properties: [{ name: "title", dataType: "text" }, { name: "place", dataType: "object", nestedProperties: [{ name: "city", dataType: "text" }] }]
    }))
    const r = await cli("collections", "create", "w", "Ticket", "--file", file, "--json")
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual({ table: "Ticket", created: true, properties: 2 })
    const raw = await schemaOf("Ticket")
    expect(raw.multiTenancyConfig).toMatchObject({ enabled: true, autoTenantCreation: true })
    expect(raw.properties[1].nestedProperties[0].name).toBe("city")
  })

  it("what Weaviate would refuse is refused first with the reason (exit 1), and nothing is created", async () => {
    const reserved = await cli("collections", "create", "w", "Bad", "--property", "id:text")
    expect(reserved.code).toBe(1)
    expect(reserved.stderr.trim()).toContain("Refused: property \"id\": a name Weaviate reserves")
    const module = await cli("collections", "create", "w", "Bad", "--property", "title:text", "--vectorizer", "text2vec-ollama")
    expect(module.code).toBe(1)
    expect(module.stderr).toContain("vectorizer: this server has no module text2vec-ollama")
    const usage = await cli("collections", "create", "w", "Bad", "--property", "title")
    expect(usage.code).toBe(2)
    expect(usage.stderr.trim()).toBe("--property title: expected NAME:TYPE (e.g. title:text)")
    expect(await schemaOf("Bad")).toBeUndefined()
  })

  it("add-property adds one property; a name already used is refused (exit 1)", async () => {
    const r = await cli("collections", "add-property", "w", "Note", "--property", "due:date", "--description", "When it is due")
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain("  due: date — When it is due")
    expect(r.stdout).toContain("Weaviate cannot rename or drop a property once added.")
    expect((await schemaOf("Note")).properties.map((p: any) => p.name)).toContain("due")
    const again = await cli("collections", "add-property", "w", "Note", "--property", "Due:text")
    expect(again.code).toBe(1)
    expect(again.stderr).toContain("property \"Due\": the name is already used in Note")
  })

  it("update changes mutable settings (old → new) and refuses immutable ones by name (exit 1)", async () => {
    const r = await cli("collections", "update", "w", "Note", "--set", "vectorIndexConfig.ef=96", "--set", "invertedIndexConfig.bm25.k1=1.5")
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain("  vectorIndexConfig.ef: -1 → 96")
    const raw = await schemaOf("Note")
    expect(raw.vectorIndexConfig.ef).toBe(96)
    expect(raw.invertedIndexConfig.bm25.k1).toBe(1.5)
    const refused = await cli("collections", "update", "w", "Note", "--set", "vectorizer=none")
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("immutable settings cannot be changed: vectorizer: the vectorizer and its module settings are fixed at creation")
  })

  it("drop without a terminal and without --yes is a usage error (exit 2) and drops nothing; with --yes it drops, counting the rows", async () => {
    await fetch(`${w.url}/v1/objects`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ class: "Note", properties: { title: "hello" } }) })
    const refused = await cli("collections", "drop", "w", "Note")
    expect(refused.code).toBe(2)
    expect(refused.stderr.trim()).toBe("collections drop Note cannot be undone: confirm it on a terminal, or pass --yes")
    expect(await schemaOf("Note")).toBeDefined()
    const dropped = await cli("collections", "drop", "w", "Note", "--yes", "--json")
    expect(dropped.code, dropped.stderr).toBe(0)
    expect(JSON.parse(dropped.stdout)).toEqual({ table: "Note", dropped: true, rowsLost: 1 })
    expect(await schemaOf("Note")).toBeUndefined()
  })

  it("drop on a terminal shows the rows that will be lost and drops only when the name is typed", async () => {
    expect((await cli("collections", "create", "w", "Scratch", "--property", "title:text", "--vectorizer", "none")).code).toBe(0)
    const declined = await onTerminal(["collections", "drop", "w", "Scratch"], "no\n")
    expect(declined.output).toContain("Scratch holds 0 rows: all will be lost.")
    expect(declined.output).toContain("Cancelled: nothing was changed")
    expect(declined.code).toBe(1)
    expect(await schemaOf("Scratch")).toBeDefined()
    const confirmed = await onTerminal(["collections", "drop", "w", "Scratch"], "Scratch\n")
    expect(confirmed.code, confirmed.output).toBe(0)
    expect(confirmed.output).toContain("Dropped the collection Scratch (0 rows).")
    expect(await schemaOf("Scratch")).toBeUndefined()
  })

  it("Safe Mode readOnly refuses every write (exit 1) and sends nothing", async () => {
    const r = await cli("collections", "create", "ro", "Guarded", "--property", "title:text")
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toBe("Refused: the connection ro is in Safe Mode readOnly: writes are refused")
    expect((await cli("collections", "drop", "ro", "Ticket", "--yes")).code).toBe(1)
    expect((await cli("tenants", "create", "ro", "Ticket", "zeta")).code).toBe(1)
    expect(await schemaOf("Guarded")).toBeUndefined()
    expect(await schemaOf("Ticket")).toBeDefined()
  })
})

describe("weaviate-mcp tenants create|activate|deactivate|offload|delete", () => {
  it("create, deactivate (rows kept, reads refused naming the activation), activate, offload refused, delete with --yes", async () => {
    const created = await cli("tenants", "create", "w", "Ticket", "acme", "globex")
    expect(created.code, created.stderr).toBe(0)
    expect(created.stdout.trim().split("\n")).toEqual(["Created in Ticket, ACTIVE (HOT):", "  acme", "  globex"])
    expect(await tenantsOf("Ticket")).toEqual({ acme: "HOT", globex: "HOT" })
    await fetch(`${w.url}/v1/objects`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ class: "Ticket", tenant: "acme", properties: { title: "kept" }, vector: [1, 0] }) })
    expect((await cli("tenants", "deactivate", "w", "Ticket", "acme")).code).toBe(0)
    expect(await tenantsOf("Ticket")).toEqual({ acme: "COLD", globex: "HOT" })
    const read = await cli("browse", "w", "Ticket", "--tenant", "acme")
    expect(read.code).toBe(1)
    expect(read.stderr).toContain("activate it with set_tenant_status (status ACTIVE) or weaviate-mcp tenants activate")
    expect((await cli("tenants", "activate", "w", "Ticket", "acme")).code).toBe(0)
    const rows = await cli("browse", "w", "Ticket", "--tenant", "acme", "--json")
    expect(JSON.parse(rows.stdout).rows.map((r: any) => r.title)).toEqual(["kept"])
    const offload = await cli("tenants", "offload", "w", "Ticket", "acme")
    expect(offload.code).toBe(1)
    expect(offload.stderr).toContain("offloading tenants needs the offload-s3 module, which this server does not have")
    const unknown = await cli("tenants", "activate", "w", "Ticket", "nobody")
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("Ticket has no tenant \"nobody\"")
    const unconfirmed = await cli("tenants", "delete", "w", "Ticket", "acme")
    expect(unconfirmed.code).toBe(2)
    expect(unconfirmed.stderr.trim()).toBe("tenants delete Ticket cannot be undone: confirm it on a terminal, or pass --yes")
    const deleted = await cli("tenants", "delete", "w", "Ticket", "acme", "--yes", "--json")
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(JSON.parse(deleted.stdout)).toEqual({ table: "Ticket", deleted: ["acme"], rowsLost: 1 })
    expect(await tenantsOf("Ticket")).toEqual({ globex: "HOT" })
    const listed = await cli("tenants", "w", "Ticket", "--json")
    expect(JSON.parse(listed.stdout).tenants.map((t: any) => t.name)).toEqual(["globex"])
  })
})
