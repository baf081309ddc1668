/**
 * The tenant tools against the real Weaviate: `create_tenants`, `set_tenant_status`, `delete_tenants`
 * with their approvals; tenants moved ACTIVE → INACTIVE → ACTIVE with their rows kept; a read of an
 * inactive tenant refused with an error naming the tool that activates it; offloading refused on a
 * server without the offload module; the tenant list seen fresh right after our own writes.
 */
import { layer } from "@effect/vitest"
import { describe, expect } from "vitest"
import { dialogText } from "../../../src/Approval/DialogText.ts"
import {
  approved,
  type Harness,
  harnessLayer,
  inputRequired,
  protocolError,
  success,
  toolError,
  withHarness,
  token,
  writesTo
} from "./support.ts"
import { fresh } from "./StructureSupport.ts"

const test = withHarness((h) => {
  h.dialog.answer = true
  h.dialog.asked.length = 0
  h.w.clearRequests()
})

/** A multi-tenant collection made through create_table. */
const multiTenant = async (h: Harness, table: string) => {
  const principal = await fresh(h, "fullAccess")
  success(h, "create_table", await h.call("create_table", {
    connection_id: h.ids.local,
    table,
    properties: [{ name: "title", dataType: "text" }],
    vectorizer: "text2vec-bigram",
    multi_tenancy: { enabled: true }
  }, { principal }))
  return principal
}

const tenantsOf = async (h: Harness, table: string) => {
  const principal = await fresh(h, "readOnly")
  const { structured } = success(h, "list_tenants", await h.call("list_tenants", { connection_id: h.ids.local, table }, { principal }))
  return Object.fromEntries(structured.tenants.map((t: any) => [t.name, t.activityStatus]))
}

layer(harnessLayer({ weaviate: { modules: ["text2vec-bigram"] }, sample: false }), { excludeTestServices: true, timeout: "3 minutes" })("tenant tools", (it) => {
  describe("create_tenants", () => {
    it.effect("the form lists the tenants one a line; accepted, they exist at once, even right after a cached listing", () =>
      test(async (h) => {
        await multiTenant(h, "Ticket")
        expect(await tenantsOf(h, "Ticket")).toEqual({})
        const principal = await fresh(h, "fullAccess")
        const args = { connection_id: h.ids.local, table: "Ticket", tenants: ["acme", "globex"] }
        const asked = inputRequired(await h.call("create_tenants", args, { principal, elicitation: true }))
        const description: string = (asked.inputRequests.approve_statement as any).params.requestedSchema.properties.approved.description
        expect(description.split("\n").slice(0, 3)).toEqual(["Create 2 tenants in Ticket, ACTIVE (HOT):", "  acme", "  globex"])
        expect(writesTo(h.w)).toEqual([])
        const { structured, text } = success(
          h,
          "create_tenants",
          await h.call("create_tenants", args, { principal, elicitation: true, requestState: asked.requestState, inputResponses: approved })
        )
        expect(structured).toEqual({ table: "Ticket", created: ["acme", "globex"], status: "HOT", approvedBy: "form" })
        expect(text).toBe("Created 2 tenants in Ticket (ACTIVE (HOT)): acme, globex.")
        expect(writesTo(h.w).map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/schema/Ticket/tenants"])
        expect(await tenantsOf(h, "Ticket")).toEqual({ acme: "HOT", globex: "HOT" })
      }))

    it.effect("an invalid name, a name given twice, a tenant that exists and a collection without tenants are refused with the reason; nothing is sent", () =>
      test(async (h) => {
        await multiTenant(h, "Refusing")
        const principal = await fresh(h, "fullAccess")
        success(h, "create_tenants", await h.call("create_tenants", { connection_id: h.ids.local, table: "Refusing", tenants: ["acme"] }, { principal }))
        h.w.clearRequests()
        h.dialog.asked.length = 0
        const create = async (table: string, tenants: ReadonlyArray<string>) =>
          toolError(await h.call("create_tenants", { connection_id: h.ids.local, table, tenants }, { principal }), "invalid_argument")
        expect(await create("Refusing", ["bad name!"])).toContain("tenant \"bad name!\": not a valid tenant name (1 to 64 letters, digits, - or _)")
        expect(await create("Refusing", ["twice", "twice"])).toContain("tenant \"twice\": named twice")
        expect(await create("Refusing", ["acme"])).toContain("tenant \"acme\": Refusing has it already")
        success(h, "create_table", await h.call("create_table", { connection_id: h.ids.local, table: "Single", properties: [{ name: "title", dataType: "text" }], vectorizer: "none" }, { principal }))
        h.w.clearRequests()
        h.dialog.asked.length = 0
        expect(await create("Single", ["acme"])).toContain("Single is not multi-tenant: it has no tenants")
        expect(h.dialog.asked).toEqual([])
        expect(writesTo(h.w)).toEqual([])
      }))
  })

  describe("set_tenant_status", () => {
    it.effect("ACTIVE → INACTIVE → ACTIVE keeps the rows; a read of the inactive tenant names set_tenant_status; each change shown old → new", () =>
      test(async (h) => {
        const principal = await multiTenant(h, "Cycled")
        success(h, "create_tenants", await h.call("create_tenants", { connection_id: h.ids.local, table: "Cycled", tenants: ["acme", "globex"] }, { principal }))
        success(h, "insert_rows", await h.call("insert_rows", {
          connection_id: h.ids.local,
          table: "Cycled",
          tenant: "acme",
          rows: [{ properties: { title: "one" } }, { properties: { title: "two" } }]
        }, { principal }))
        expect(await tenantsOf(h, "Cycled")).toEqual({ acme: "HOT", globex: "HOT" })
        h.dialog.asked.length = 0
        const deactivated = success(h, "set_tenant_status", await h.call("set_tenant_status", { connection_id: h.ids.local, table: "Cycled", tenants: ["acme"], status: "INACTIVE" }, { principal }))
        expect(deactivated.structured).toEqual({ table: "Cycled", status: "COLD", tenants: [{ name: "acme", from: "HOT", to: "COLD" }], approvedBy: "exec" })
        const lines = dialogText(h.dialog.asked[0]!).split("\n")
        expect(lines).toContain("Set 1 tenant of Cycled to INACTIVE (COLD):")
        expect(lines).toContain("  acme: ACTIVE (HOT) → INACTIVE (COLD)")
        expect(lines).toContain("Rows are kept; an inactive tenant cannot be read or written until it is activated again.")
        expect(await tenantsOf(h, "Cycled")).toEqual({ acme: "COLD", globex: "HOT" })
        const refused = toolError(await h.call("browse_table", { connection_id: h.ids.local, table: "Cycled", tenant: "acme" }, { principal }), "invalid_argument")
        expect(refused).toBe(
          "invalid_argument: tenant \"acme\" of Cycled is COLD, not active: activate it with set_tenant_status (status ACTIVE) or weaviate-mcp tenants activate before reading or writing its rows"
        )
        // A statement that reaches Weaviate itself: its refusal names the activating tool too.
        const statement = toolError(await h.call("execute_query", { connection_id: h.ids.local, query: "{ Get { Cycled(tenant: \"acme\") { title } } }" }, { principal }), "query_failed")
        expect(statement).toContain("tenant not active: 'acme' (activate it with set_tenant_status, status ACTIVE)")
        success(h, "set_tenant_status", await h.call("set_tenant_status", { connection_id: h.ids.local, table: "Cycled", tenants: ["acme"], status: "HOT" }, { principal }))
        const rows = success(h, "browse_table", await h.call("browse_table", { connection_id: h.ids.local, table: "Cycled", tenant: "acme" }, { principal }))
        expect(rows.structured.rows.map((r: any) => r.title).sort()).toEqual(["one", "two"])
      }))

    it.effect("offloading is refused on a server without the offload-s3 module, saying so; an unknown tenant is not_found; nothing is sent", () =>
      test(async (h) => {
        const principal = await multiTenant(h, "Offload")
        success(h, "create_tenants", await h.call("create_tenants", { connection_id: h.ids.local, table: "Offload", tenants: ["acme"] }, { principal }))
        h.w.clearRequests()
        h.dialog.asked.length = 0
        for (const status of ["OFFLOADED", "FROZEN"]) {
          expect(toolError(await h.call("set_tenant_status", { connection_id: h.ids.local, table: "Offload", tenants: ["acme"], status }, { principal }), "unsupported"))
            .toBe("unsupported: offloading tenants needs the offload-s3 module, which this server does not have (GET /v1/meta lists its modules)")
        }
        expect(toolError(await h.call("set_tenant_status", { connection_id: h.ids.local, table: "Offload", tenants: ["acme", "nobody"], status: "COLD" }, { principal }), "not_found"))
          .toContain("Offload has no tenant \"nobody\"")
        expect(h.dialog.asked).toEqual([])
        expect(writesTo(h.w)).toEqual([])
      }))

    it.effect("Safe Mode readOnly refuses it with denied", () =>
      test(async (h) => {
        const owner = await multiTenant(h, "GuardedTenants")
        success(h, "create_tenants", await h.call("create_tenants", { connection_id: h.ids.local, table: "GuardedTenants", tenants: ["acme"] }, { principal: owner }))
        const principal = await fresh(h, "fullAccess", "guarded")
        toolError(await h.call("set_tenant_status", { connection_id: h.ids.guarded, table: "GuardedTenants", tenants: ["acme"], status: "COLD" }, { principal }), "denied")
        expect(writesTo(h.w)).toEqual([])
      }))
  })

  describe("delete_tenants", () => {
    it.effect("the approval counts each tenant's rows (an inactive one's not counted, said so); the user is asked every time; the tenants are gone at once", () =>
      test(async (h) => {
        const principal = await multiTenant(h, "Pruned")
        success(h, "create_tenants", await h.call("create_tenants", { connection_id: h.ids.local, table: "Pruned", tenants: ["acme", "cold1", "kept"] }, { principal }))
        success(h, "insert_rows", await h.call("insert_rows", {
          connection_id: h.ids.local,
          table: "Pruned",
          tenant: "acme",
          rows: [{ properties: { title: "one" } }, { properties: { title: "two" } }, { properties: { title: "three" } }]
        }, { principal }))
        success(h, "set_tenant_status", await h.call("set_tenant_status", { connection_id: h.ids.local, table: "Pruned", tenants: ["cold1"], status: "COLD" }, { principal }))
        expect(await tenantsOf(h, "Pruned")).toEqual({ acme: "HOT", cold1: "COLD", kept: "HOT" })
        const args = { connection_id: h.ids.local, table: "Pruned", tenants: ["acme", "cold1"], confirm: "Pruned" }
        const asked = inputRequired(await h.call("delete_tenants", args, { principal, elicitation: true }))
        const description: string = (asked.inputRequests.approve_statement as any).params.requestedSchema.properties.approved.description
        expect(description.split("\n").slice(0, 5)).toEqual([
          "Delete 2 tenants of Pruned with all their rows",
          "3 rows will be lost in 2 tenants:",
          "  acme: 3 rows",
          "  cold1: INACTIVE (COLD), rows not counted (only an active tenant's rows can be counted)",
          "This cannot be undone."
        ])
        h.dialog.asked.length = 0
        h.w.clearRequests()
        const { structured } = success(
          h,
          "delete_tenants",
          await h.call("delete_tenants", args, { principal, elicitation: true, requestState: asked.requestState, inputResponses: approved })
        )
        expect(h.dialog.asked).toHaveLength(1)
        expect(h.dialog.asked[0]!.title).toBe("weaviate-mcp: approve a destructive operation")
        expect(structured).toEqual({ table: "Pruned", deleted: ["acme", "cold1"], rowsLost: 3, tenantsNotCounted: ["cold1"], approvedBy: "exec" })
        expect(writesTo(h.w).map((r) => `${r.method} ${r.path}`)).toEqual(["DELETE /v1/schema/Pruned/tenants"])
        expect(await tenantsOf(h, "Pruned")).toEqual({ kept: "HOT" })
      }))

    it.effect("needs a fullAccess token (-33007) and confirm repeating the name; the user's refusal deletes nothing", () =>
      test(async (h) => {
        const owner = await multiTenant(h, "Protected")
        success(h, "create_tenants", await h.call("create_tenants", { connection_id: h.ids.local, table: "Protected", tenants: ["acme"] }, { principal: owner }))
        const writer = await fresh(h, "readWrite")
        protocolError(await h.call("delete_tenants", { connection_id: h.ids.local, table: "Protected", tenants: ["acme"], confirm: "Protected" }, { principal: writer }), -33007)
        const principal = await fresh(h, "fullAccess")
        expect(toolError(await h.call("delete_tenants", { connection_id: h.ids.local, table: "Protected", tenants: ["acme"], confirm: "protected" }, { principal }), "invalid_argument"))
          .toContain("confirm must repeat the table name exactly")
        h.dialog.answer = false
        toolError(await h.call("delete_tenants", { connection_id: h.ids.local, table: "Protected", tenants: ["acme"], confirm: "Protected" }, { principal }), "denied")
        expect(writesTo(h.w)).toEqual([])
        expect(await tenantsOf(h, "Protected")).toEqual({ acme: "HOT" })
      }))
  })

  describe("a token scoped to some tenants", () => {
    it.effect("changes only its own tenants' status; other tenants, deleting them and the structure are refused with -33007 before anyone is asked", () =>
      test(async (h) => {
        const owner = await multiTenant(h, "Scoped")
        success(h, "create_tenants", await h.call("create_tenants", { connection_id: h.ids.local, table: "Scoped", tenants: ["acme", "globex"] }, { principal: owner }))
        const principal = token("fullAccess", { id: "tok-scoped-acme", tenants: { [h.ids.local!]: { Scoped: ["acme"] } } })
        success(h, "list_tables", await h.call("list_tables", { connection_id: h.ids.local }, { principal }))
        h.dialog.asked.length = 0
        h.w.clearRequests()
        protocolError(await h.call("set_tenant_status", { connection_id: h.ids.local, table: "Scoped", tenants: ["globex"], status: "COLD" }, { principal }), -33007)
        protocolError(await h.call("create_tenants", { connection_id: h.ids.local, table: "Scoped", tenants: ["initech"] }, { principal }), -33007)
        protocolError(await h.call("delete_tenants", { connection_id: h.ids.local, table: "Scoped", tenants: ["globex"], confirm: "Scoped" }, { principal }), -33007)
        protocolError(await h.call("add_column", { connection_id: h.ids.local, table: "Scoped", property: { name: "extra", dataType: "text" } }, { principal }), -33007)
        protocolError(await h.call("drop_table", { connection_id: h.ids.local, table: "Scoped", confirm: "Scoped" }, { principal }), -33007)
        expect(h.dialog.asked).toEqual([])
        expect(writesTo(h.w)).toEqual([])
        success(h, "set_tenant_status", await h.call("set_tenant_status", { connection_id: h.ids.local, table: "Scoped", tenants: ["acme"], status: "COLD" }, { principal }))
        expect(await tenantsOf(h, "Scoped")).toEqual({ acme: "COLD", globex: "HOT" })
      }))
  })
})
