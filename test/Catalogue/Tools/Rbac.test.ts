/**
 * RBAC awareness against the real Weaviate 1.39 with RBAC on (`AUTHORIZATION_RBAC_ENABLED`, DB users
 * `AUTHENTICATION_DB_USERS_ENABLED`, a root user that creates roles and users): the built
 * `weaviate-mcp serve`, spoken to by the official SDK v1 client, one connection per DB user. Every
 * approval goes through `--approvals exec` with a command that appends the question to a file, so a
 * test sees whether the user was asked.
 *
 * - alice holds `reader` (read every collection);
 * - bob holds `reader` and `ticket-writer` (create, update and delete rows of Ticket);
 * - carol holds the same as bob until the root user revokes `ticket-writer` while the daemon runs;
 * - dave may update one row of Ticket (a permission on one object), which the check before approval
 *   cannot tell from the others: Weaviate refuses the second row of a call with 403;
 * - the `plain` connection is a second Weaviate with API keys and no RBAC.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as Cli from "../../support/Cli.ts"
import * as TestHome from "../../support/TestHome.ts"
import { type RealWeaviate, startRealWeaviate } from "../../weaviate/RealWeaviate.ts"
import { realUnavailable } from "../../Reliability/RealDaemon.ts"

const unavailable = realUnavailable()
const ROOT_KEY = "rbac-root-key"
const TICKET_1 = "00000000-0000-4000-8000-000000000001"
const TICKET_2 = "00000000-0000-4000-8000-000000000002"
const PLAIN_KEY = "rbac-plain-key"

let w: RealWeaviate | undefined
let plain: RealWeaviate | undefined
let running: Cli.Running | undefined
let client: Client
let token: string
let home: string
let approvals: string
const ids: Record<string, string> = {}
const keys: Record<string, string> = {}

const cli = (...args: ReadonlyArray<string>) => Cli.run([...args, "--home", home], { timeoutMs: 30_000 })

/** A request of the root user; fails the test on an unexpected status. */
const root = async (method: string, path: string, body?: unknown, expected: ReadonlyArray<number> = [200, 201]) => {
  const response = await fetch(`${w!.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ROOT_KEY}`, "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {})
  })
  const text = await response.text()
  assert.include(expected, response.status, `${method} ${path}: ${text}`)
  return text.length === 0 ? undefined : JSON.parse(text)
}

const rows = async (collection: string) =>
  (await root("POST", "/v1/graphql", { query: `{ Aggregate { ${collection} { meta { count } } } }` })).data.Aggregate[collection][0].meta.count as number

/** How many times the user was asked to approve (the approval command's file). */
const asked = () => (NodeFs.existsSync(approvals) ? NodeFs.readFileSync(approvals, "utf8").split("\n").filter((l) => l.trim() !== "").length : 0)

type ToolResult = { isError?: boolean; content: Array<{ type: string; text?: string }>; structuredContent?: any }

const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolResult
const text = (result: ToolResult) => result.content.map((c) => c.text ?? "").join("\n")
const insert = (connection: string, table: string, title: string) =>
  call("insert_rows", { connection_id: ids[connection], table, rows: [{ properties: { title } }] })

const permission = (action: string, collection: string) => ({ action, data: { collection, tenant: "*", object: "*" } })

describe.skipIf(unavailable !== undefined)(`RBAC on the real Weaviate${unavailable === undefined ? "" : ` (skipped: ${unavailable})`}`, () => {
  beforeAll(async () => {
    ;[w, plain] = await Promise.all([
      startRealWeaviate({
        apiKeys: [ROOT_KEY],
        env: { AUTHORIZATION_RBAC_ENABLED: "true", AUTHORIZATION_RBAC_ROOT_USERS: "user0", AUTHENTICATION_DB_USERS_ENABLED: "true" }
      }),
      startRealWeaviate({ apiKeys: [PLAIN_KEY] })
    ])
    for (const collection of ["Article", "Ticket"]) {
      await root("POST", "/v1/schema", { class: collection, vectorizer: "none", properties: [{ name: "title", dataType: ["text"] }] })
    }
    await root("POST", "/v1/objects", { class: "Article", properties: { title: "written by root" } })
    await root("POST", "/v1/authz/roles", { name: "reader", permissions: [permission("read_data", "*"), { action: "read_collections", collections: { collection: "*" } }] })
    await root("POST", "/v1/authz/roles", { name: "ticket-writer", permissions: ["create_data", "update_data", "delete_data"].map((a) => permission(a, "Ticket")) })
    for (const id of [TICKET_1, TICKET_2]) await root("POST", "/v1/objects", { class: "Ticket", id, properties: { title: "open" } })
    await root("POST", "/v1/authz/roles", { name: "one-ticket", permissions: [{ action: "update_data", data: { collection: "Ticket", tenant: "*", object: TICKET_1 } }] })
    await root("POST", "/v1/authz/roles", { name: "article-editor", permissions: [{ action: "update_collections", collections: { collection: "Article" } }] })
    for (const [user, roles] of [["alice", ["reader"]], ["bob", ["reader", "ticket-writer"]], ["carol", ["reader", "ticket-writer"]], ["dave", ["reader", "one-ticket"]], ["erin", ["reader", "article-editor"]]] as const) {
      keys[user] = (await root("POST", `/v1/users/db/${user}`)).apikey
      await root("POST", `/v1/authz/users/${user}/assign`, { roles, userType: "db" })
    }
    await fetch(`${plain!.url}/v1/schema`, {
      method: "POST",
      headers: { authorization: `Bearer ${PLAIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ class: "Article", vectorizer: "none", properties: [{ name: "title", dataType: ["text"] }] })
    })

    home = TestHome.tempDirSync("weaviate-mcp-rbac-")
    approvals = NodePath.join(home, "approvals.log")
    for (const [name, port, key] of [
      ["alice", w!.port, keys["alice"]!],
      ["bob", w!.port, keys["bob"]!],
      ["carol", w!.port, keys["carol"]!],
      ["dave", w!.port, keys["dave"]!],
      ["erin", w!.port, keys["erin"]!],
      ["plain", plain!.port, PLAIN_KEY]
    ] as const) {
      const added = await cli("connections", "add", "--name", name, "--host", "127.0.0.1", "--port", String(port), "--auth-method", "api-key", "--api-key", key, "--json")
      assert.strictEqual(added.code, 0, added.stderr)
      ids[name] = JSON.parse(added.stdout).id
    }
    // Naming the connections grants first access up front: every question the command sees is a write's.
    const created = await cli("tokens", "create", "--name", "rbac", "--access", "fullAccess", "--connections", Object.values(ids).join(","), "--json")
    assert.strictEqual(created.code, 0, created.stderr)
    token = JSON.parse(created.stdout).token as string
    running = await Cli.serve(
      ["--port", "0", "--home", home, "--approvals", "exec", "--approval-command", `(cat; echo) >> '${approvals}'`, "--rate-limit", "0"],
      { timeoutMs: 30_000 }
    )
    client = new Client({ name: "rbac-test", version: "1.0.0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(running.endpoint), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
    // The tools' output schemas: the client validates every structured answer against them.
    await client.listTools()
  }, 180_000)

  afterAll(async () => {
    await client?.close().catch(() => undefined)
    if (running !== undefined && running.child.exitCode === null) running.child.kill("SIGTERM")
    await running?.exited
    await Promise.all([w?.stop(), plain?.stop()])
  })

  it("get_connection_status names the Weaviate user, its roles and what they allow", async () => {
    const result = await call("get_connection_status", { connection_id: ids["alice"] })
    assert.notStrictEqual(result.isError, true, text(result))
    assert.deepStrictEqual(result.structuredContent.permissions, {
      rbac: true,
      user: "alice",
      roles: ["reader"],
      summary: "read: all collections; write: none; no schema changes"
    })
    assert.include(text(result), 'permissions: Weaviate user "alice" (roles: reader): read: all collections; write: none; no schema changes')
    const bob = await call("get_connection_status", { connection_id: ids["bob"] })
    assert.strictEqual(bob.structuredContent.permissions.summary, "read: all collections; write: Ticket; no schema changes")
    assert.deepStrictEqual(bob.structuredContent.permissions.roles, ["reader", "ticket-writer"])
  })

  it("a user that may not read the nodes still reaches its server: the cluster is unknown, saying why, in the status and the meta resource", async () => {
    const status = await call("get_connection_status", { connection_id: ids["alice"] })
    assert.strictEqual(status.structuredContent.cluster.health, "unavailable")
    assert.include(text(status), 'cluster unavailable: the Weaviate user "alice" has no permission to read nodes (read_nodes)')
    const meta = await client.readResource({ uri: `weaviate://connections/${ids["alice"]}/meta` })
    const body = JSON.parse((meta.contents[0] as { text: string }).text)
    assert.strictEqual(body.reachable, true, JSON.stringify(body))
    assert.strictEqual(body.cluster.health, "unavailable")
    assert.include(body.cluster.error, 'the Weaviate user "alice"')
  })

  it("list_tables and describe_table say per collection what the connection may do", async () => {
    const alice = await call("list_tables", { connection_id: ids["alice"] })
    assert.deepStrictEqual(alice.structuredContent.tables.map((t: any) => [t.name, t.permissions]), [["Article", "read"], ["Ticket", "read"]])
    assert.include(text(alice), 'permissions of the Weaviate user "alice" (RBAC) on these collections: read')
    const bob = await call("list_tables", { connection_id: ids["bob"] })
    assert.deepStrictEqual(bob.structuredContent.tables.map((t: any) => [t.name, t.permissions]), [["Article", "read"], ["Ticket", "read, create, update, delete"]])
    assert.include(text(bob), "| name | vectorizer | multiTenancy | properties | permissions | description |")
    const ticket = await call("describe_table", { connection_id: ids["bob"], table: "Ticket" })
    assert.deepStrictEqual(ticket.structuredContent.permissions, {
      user: "bob",
      data: ["read", "create", "update", "delete"],
      actions: ["read_data", "create_data", "update_data", "delete_data", "read_collections"]
    })
    assert.include(text(ticket), 'permissions of the Weaviate user "bob" (RBAC): rows: read, create, update, delete; no schema changes')
  })

  it("a read-only user reads, and its writes are refused before approval: nobody is asked, nothing is written", async () => {
    const browsed = await call("browse_table", { connection_id: ids["alice"], table: "Article" })
    assert.notStrictEqual(browsed.isError, true, text(browsed))
    assert.include(text(browsed), "written by root")
    const before = { asked: asked(), rows: await rows("Article") }

    const inserted = await insert("alice", "Article", "from alice")
    assert.strictEqual(inserted.isError, true)
    assert.strictEqual(text(inserted), 'denied: the Weaviate user "alice" has no permission to create data in "Article"')

    const rest = await call("execute_query", { connection_id: ids["alice"], query: 'POST /v1/objects {"class":"Article","properties":{"title":"rest"}}' })
    assert.strictEqual(rest.isError, true)
    assert.strictEqual(text(rest), 'denied: the Weaviate user "alice" has no permission to create data in "Article"')

    const emptied = await call("confirm_destructive_operation", { connection_id: ids["alice"], operation: "delete_all_rows", table: "Article", confirm: "Article" })
    assert.strictEqual(emptied.isError, true)
    assert.strictEqual(text(emptied), 'denied: the Weaviate user "alice" has no permission to delete data in "Article"')

    assert.strictEqual(asked(), before.asked, "the user was asked to approve a write Weaviate would refuse")
    assert.strictEqual(await rows("Article"), before.rows)
  })

  it("structure and tenant changes the user may not make are refused before approval: nobody is asked, nothing changes", async () => {
    const before = asked()
    const created = await call("create_table", { connection_id: ids["alice"], table: "AliceNotes", properties: [{ name: "title", dataType: "text" }], vectorizer: "none" })
    assert.strictEqual(created.isError, true)
    assert.strictEqual(text(created), 'denied: the Weaviate user "alice" has no permission to create the collection "AliceNotes"')
    const added = await call("add_column", { connection_id: ids["alice"], table: "Article", property: { name: "mood", dataType: "text" } })
    assert.strictEqual(added.isError, true)
    assert.strictEqual(text(added), 'denied: the Weaviate user "alice" has no permission to change the collection "Article"')
    const dropped = await call("drop_table", { connection_id: ids["alice"], table: "Article", confirm: "Article" })
    assert.strictEqual(dropped.isError, true)
    assert.strictEqual(text(dropped), 'denied: the Weaviate user "alice" has no permission to delete the collection "Article"')
    assert.strictEqual(asked(), before, "the user was asked to approve a structure change Weaviate would refuse")
    const schema = (await root("GET", "/v1/schema")) as { classes: Array<{ class: string; properties: Array<{ name: string }> }> }
    assert.isUndefined(schema.classes.find((c) => c.class === "AliceNotes"))
    assert.isUndefined(schema.classes.find((c) => c.class === "Article")!.properties.find((p) => p.name === "mood"))
  })

  it("the SDK v2 client (modern era) gets the same refusal before approval, and the same permissions", async () => {
    const v2 = new ClientV2({ name: "rbac-test-v2", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } })
    await v2.connect(new TransportV2(new URL(running!.endpoint), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
    try {
      await v2.listTools()
      const before = asked()
      const refused = (await v2.callTool({ name: "insert_rows", arguments: { connection_id: ids["alice"], table: "Article", rows: [{ properties: { title: "v2" } }] } })) as ToolResult
      assert.strictEqual(refused.isError, true)
      assert.strictEqual(text(refused), 'denied: the Weaviate user "alice" has no permission to create data in "Article"')
      assert.strictEqual(asked(), before)
      const status = (await v2.callTool({ name: "get_connection_status", arguments: { connection_id: ids["bob"] } })) as ToolResult
      assert.strictEqual(status.structuredContent.permissions.summary, "read: all collections; write: Ticket; no schema changes")
    } finally {
      await v2.close().catch(() => undefined)
    }
  })

  it("a user with write permission on one collection writes there and nowhere else", async () => {
    const before = { asked: asked(), tickets: await rows("Ticket"), articles: await rows("Article") }
    const written = await insert("bob", "Ticket", "from bob")
    assert.notStrictEqual(written.isError, true, text(written))
    assert.strictEqual(written.structuredContent.applied, 1)
    assert.strictEqual(asked(), before.asked + 1)
    assert.strictEqual(await rows("Ticket"), before.tickets + 1)

    const refused = await insert("bob", "Article", "from bob")
    assert.strictEqual(refused.isError, true)
    assert.strictEqual(text(refused), 'denied: the Weaviate user "bob" has no permission to create data in "Article"')
    assert.strictEqual(asked(), before.asked + 1)
    assert.strictEqual(await rows("Article"), before.articles)
  })

  it("permissions revoked while the daemon runs are noticed on the next 403: an error in the same words, then refused before approval", async () => {
    const first = await insert("carol", "Ticket", "before the revocation")
    assert.notStrictEqual(first.isError, true, text(first))
    await root("POST", "/v1/authz/users/carol/revoke", { roles: ["ticket-writer"], userType: "db" })
    const before = { asked: asked(), tickets: await rows("Ticket") }

    // The permissions read before still allow it: the user is asked, and Weaviate refuses with 403.
    const refused = await insert("carol", "Ticket", "after the revocation")
    assert.strictEqual(refused.isError, true, text(refused))
    assert.strictEqual(text(refused), 'denied: the Weaviate user "carol" has no permission to create data in "Ticket" (Weaviate refused it: nothing was written)')
    assert.notInclude(text(refused), "Authentication failed")
    assert.strictEqual(asked(), before.asked + 1)

    // The 403 had the permissions read again: the next write is refused before anyone is asked.
    const again = await insert("carol", "Ticket", "once more")
    assert.strictEqual(text(again), 'denied: the Weaviate user "carol" has no permission to create data in "Ticket"')
    assert.strictEqual(asked(), before.asked + 1)
    assert.strictEqual(await rows("Ticket"), before.tickets)
    const status = await call("get_connection_status", { connection_id: ids["carol"] })
    assert.deepStrictEqual(status.structuredContent.permissions.roles, ["reader"])
  })

  it("a structure change whose permission was revoked while the daemon runs: the 403 reads the permissions again, and the next change is refused before approval", async () => {
    const column = (name: string) => call("add_column", { connection_id: ids["erin"], table: "Article", property: { name, dataType: "text" } })
    const properties = async () =>
      ((await root("GET", "/v1/schema/Article")) as { properties: Array<{ name: string }> }).properties.map((p) => p.name)
    const first = await column("mood")
    assert.notStrictEqual(first.isError, true, text(first))
    // A structure change forgets what the session cached: read the permissions again, still allowing it.
    const status = await call("get_connection_status", { connection_id: ids["erin"] })
    assert.include(status.structuredContent.permissions.roles, "article-editor")
    await root("POST", "/v1/authz/users/erin/revoke", { roles: ["article-editor"], userType: "db" })
    const before = asked()

    // The permissions read before still allow it: the user is asked, and Weaviate refuses with 403.
    const refused = await column("colour")
    assert.strictEqual(refused.isError, true, text(refused))
    assert.strictEqual(text(refused), 'denied: the Weaviate user "erin" has no permission to change the collection "Article" (Weaviate refused it: nothing was changed)')
    assert.strictEqual(asked(), before + 1)

    // The 403 had the permissions read again: the next change is refused before anyone is asked.
    const again = await column("shade")
    assert.strictEqual(text(again), 'denied: the Weaviate user "erin" has no permission to change the collection "Article"')
    assert.strictEqual(asked(), before + 1)
    const names = await properties()
    assert.include(names, "mood")
    assert.notInclude(names, "colour")
    assert.notInclude(names, "shade")
  })

  it("a 403 midway through a call stops it: an error that names the rows written before it, the rest not attempted", async () => {
    const before = asked()
    const result = await call("update_rows", {
      connection_id: ids["dave"],
      table: "Ticket",
      rows: [{ uuid: TICKET_1, values: { title: "closed" } }, { uuid: TICKET_2, values: { title: "closed" } }]
    })
    assert.strictEqual(result.isError, true, text(result))
    assert.strictEqual(
      text(result),
      `denied: the Weaviate user "dave" has no permission to update data in "Ticket" (Weaviate refused it after 1 row of Ticket was updated: row 1 (${TICKET_1}); the rest was not attempted)`
    )
    assert.strictEqual(asked(), before + 1)
    const titles = await Promise.all([TICKET_1, TICKET_2].map(async (id) => (await root("GET", `/v1/objects/Ticket/${id}`)).properties.title))
    assert.deepStrictEqual(titles, ["closed", "open"])
  })

  it("a REST write whose needs cannot be told beforehand is asked, and Weaviate's 403 is an isError denied naming the user", async () => {
    const before = asked()
    const result = await call("execute_query", { connection_id: ids["alice"], query: 'POST /v1/aliases {"class":"Article","alias":"Story"}' })
    assert.strictEqual(result.isError, true, text(result))
    assert.strictEqual(asked(), before + 1)
    assert.strictEqual(text(result), 'denied: the Weaviate user "alice" has no permission to create aliases of "Article"')
    assert.notInclude(text(result), "Authentication failed")
  })

  it("a new key is a new user: its permissions are read again", async () => {
    const updated = await cli("connections", "update", "alice", "--api-key", keys["bob"]!)
    assert.strictEqual(updated.code, 0, updated.stderr)
    let user: string | undefined
    // The daemon follows connections.json (bounded: 50 tries of 100 ms).
    for (let i = 0; i < 50 && user !== "bob"; i++) {
      user = (await call("get_connection_status", { connection_id: ids["alice"] })).structuredContent.permissions.user
      if (user !== "bob") await new Promise((resolve) => setTimeout(resolve, 100))
    }
    assert.strictEqual(user, "bob")
    const restored = await cli("connections", "update", "alice", "--api-key", keys["alice"]!)
    assert.strictEqual(restored.code, 0, restored.stderr)
  })

  it("status and doctor show each connection's Weaviate user, its roles and what they allow", async () => {
    const status = await cli("status", "--json")
    assert.strictEqual(status.code, 0, status.stderr)
    const connections = JSON.parse(status.stdout).connections as Array<{ id: string; ok: boolean; permissions?: unknown }>
    const alice = connections.find((c) => c.id === ids["alice"])!
    assert.strictEqual(alice.ok, true, JSON.stringify(alice))
    assert.deepStrictEqual(alice.permissions, { rbac: true, user: "alice", roles: ["reader"], summary: "read: all collections; write: none; no schema changes" })
    assert.deepInclude(connections.find((c) => c.id === ids["plain"])!.permissions as object, { rbac: false, user: "user0" })
    const text = await cli("status")
    assert.include(text.stdout, 'Weaviate user "bob" (roles: reader, ticket-writer): read: all collections; write: Ticket; no schema changes')

    const doctor = JSON.parse((await cli("doctor", "--json")).stdout) as { checks: Array<{ id: string; status: string; detail: string }> }
    const of = (name: string) => doctor.checks.find((c) => c.id === `permissions:${ids[name]}`)!
    assert.deepInclude(of("alice"), { status: "ok", detail: 'Weaviate user "alice" (roles: reader): read: all collections; write: none; no schema changes' })
    assert.strictEqual(of("plain").status, "ok")
    assert.include(of("plain").detail, "writes are not checked against Weaviate permissions before approval")
    // alice may not read the nodes: the cluster's health is unknown, a warning, not a failure.
    assert.strictEqual(doctor.checks.find((c) => c.id === `cluster:${ids["alice"]}`)!.status, "warn")
  })

  it("a server without RBAC behaves as before and says so once", async () => {
    const status = await call("get_connection_status", { connection_id: ids["plain"] })
    assert.deepStrictEqual(status.structuredContent.permissions, {
      rbac: false,
      user: "user0",
      roles: [],
      summary: "not restricted by role: RBAC is not enabled on this Weaviate: its users are not restricted by role"
    })
    const listed = await call("list_tables", { connection_id: ids["plain"] })
    assert.strictEqual(listed.structuredContent.tables[0].permissions, undefined)
    assert.notInclude(text(listed), "permissions")
    const before = asked()
    const written = await insert("plain", "Article", "no RBAC here")
    assert.notStrictEqual(written.isError, true, text(written))
    assert.strictEqual(asked(), before + 1)
    await call("get_connection_status", { connection_id: ids["plain"] })
    const said = running!.stderr().split("\n").filter((l) => l.includes("writes are not checked against Weaviate permissions before approval"))
    assert.strictEqual(said.length, 1, said.join("\n"))
    assert.include(said[0]!, "RBAC is not enabled on this Weaviate")
    for (const key of [...Object.values(keys), ROOT_KEY, PLAIN_KEY]) assert.notInclude(running!.stderr(), key)
  })
})
