/**
 * The permissions of a connection's Weaviate user, as own-info gives them, matched as Weaviate
 * matches them. The answers here are the real Weaviate 1.39's (recorded from a server with RBAC on);
 * test/Catalogue/Tools/Rbac.test.ts runs the same rules against the real server.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { describe, expect, it } from "vitest"
import { AuthenticationFailed, PermissionDenied } from "../../src/Driver/DriverError.ts"
import type * as WeaviateHttp from "../../src/Driver/WeaviateHttp.ts"
import * as Permissions from "../../src/Driver/Permissions.ts"

/** own-info of a user with a read-everything role and a role that writes Ticket (as Weaviate 1.39 answers it). */
const ALICE = {
  groups: null,
  roles: [
    {
      name: "reader",
      permissions: [
        { action: "read_data", data: { collection: "*", object: "*", tenant: "*" } },
        { action: "read_collections", collections: { collection: "*" } }
      ]
    },
    {
      name: "tw",
      permissions: [
        { action: "create_data", data: { collection: "Ticket", object: "*", tenant: "*" } },
        { action: "update_data", data: { collection: "Tick*", object: "*", tenant: "t1" } },
        { action: "create_tenants", tenants: { collection: "Ticket", tenant: "*" } }
      ]
    }
  ],
  username: "alice"
}

const alice = (): Permissions.Access => ({ _tag: "Rbac", ...Permissions.parseOwnInfo(ALICE) })

describe("reading own-info", () => {
  it("keeps the user, the roles by name, and each permission's action with its collection, tenant and object", () => {
    const info = Permissions.parseOwnInfo(ALICE)
    expect(info.user).toBe("alice")
    expect(info.groups).toEqual([])
    expect(info.roles.map((r) => r.name)).toEqual(["reader", "tw"])
    expect(info.roles[1]!.permissions[1]).toEqual({ action: "update_data", collection: "Tick*", tenant: "t1", object: "*" })
    expect(info.roles[0]!.permissions[1]).toEqual({ action: "read_collections", collection: "*" })
  })

  it("a user without roles (roles: null) has none", () => {
    expect(Permissions.parseOwnInfo({ groups: null, roles: null, username: "nobody" }).roles).toEqual([])
  })
})

/** An HTTP whose answers are Weaviate 1.39's, by path (an error value fails the request as the driver's HTTP does). */
const answering = (answers: Record<string, { status: number; json?: unknown } | AuthenticationFailed | PermissionDenied>) => {
  const asked: Array<string> = []
  const http = {
    request: (request: WeaviateHttp.Request) => {
      asked.push(request.path)
      const answer = answers[request.path]
      if (answer === undefined) return Effect.dieMessage(`unexpected ${request.path}`)
      if (answer instanceof AuthenticationFailed || answer instanceof PermissionDenied) return Effect.fail(answer)
      return Effect.succeed({ status: answer.status, contentType: "application/json", text: JSON.stringify(answer.json ?? ""), json: answer.json })
    }
  } as unknown as WeaviateHttp.WeaviateHttp
  return { http, asked }
}

const PROBE = "/v1/authz/roles/weaviate-mcp-rbac-probe"

describe("telling RBAC from no RBAC", () => {
  it("a user with roles is RBAC, without asking anything more", () => {
    const { asked, http } = answering({ "/v1/users/own-info": { status: 200, json: ALICE } })
    expect(Effect.runSync(Permissions.read(http))._tag).toBe("Rbac")
    expect(asked).toEqual(["/v1/users/own-info"])
  })

  it("a user without roles on a server without RBAC: the probe role is 404, so not restricted by role", () => {
    const { http } = answering({ "/v1/users/own-info": { status: 200, json: { username: "user0", roles: null } }, [PROBE]: { status: 404 } })
    expect(Effect.runSync(Permissions.read(http))).toEqual({ _tag: "NoRbac", user: "user0", reason: "RBAC is not enabled on this Weaviate: its users are not restricted by role" })
  })

  it("a user without roles on an RBAC server: the probe role is refused naming rbac, so it may do nothing", () => {
    const refused = PermissionDenied.fromWeaviate(
      "can only create roles with less or equal permissions as the current user: rbac: authorization, forbidden action: user 'nobody' has insufficient permissions to read_roles [[Domain: roles, Role: weaviate-mcp-rbac-probe]]"
    )
    const { http } = answering({ "/v1/users/own-info": { status: 200, json: { username: "nobody", roles: null } }, [PROBE]: refused })
    expect(Effect.runSync(Permissions.read(http))).toEqual({ _tag: "Rbac", user: "nobody", groups: [], roles: [] })
  })

  it("an adminlist server refuses the probe without naming rbac: not restricted by role", () => {
    const refused = PermissionDenied.fromWeaviate("adminlist: authorization, forbidden action: user 'user1' has insufficient permissions to R_MATCH [roles/weaviate-mcp-rbac-probe]")
    const { http } = answering({ "/v1/users/own-info": { status: 200, json: { username: "user1", roles: null } }, [PROBE]: refused })
    expect(Effect.runSync(Permissions.read(http))._tag).toBe("NoRbac")
  })

  it("no own-info (before 1.28) and anonymous access (401) do not say who the connection is", () => {
    expect(Effect.runSync(Permissions.read(answering({ "/v1/users/own-info": { status: 404 } }).http))._tag).toBe("NoRbac")
    const anonymous = Effect.runSync(Permissions.read(answering({ "/v1/users/own-info": new AuthenticationFailed({ reason: "401", status: 401 }) }).http))
    expect(anonymous).toEqual({ _tag: "NoRbac", reason: "this Weaviate does not say who the connection is (anonymous access: GET /v1/users/own-info answered 401)" })
  })
})

describe("matching as Weaviate matches", () => {
  it("* is any run of characters and the whole name must match", () => {
    expect(Permissions.matches("*", "Article")).toBe(true)
    expect(Permissions.matches("Tick*", "Ticket")).toBe(true)
    expect(Permissions.matches("Tick*", "MyTicket")).toBe(false)
    expect(Permissions.matches("Ticket", "TicketArchive")).toBe(false)
    expect(Permissions.matches("Ticket|Article", "Article")).toBe(true)
  })

  it("a request without a tenant is checked against the tenant *, which a tenant-scoped permission does not match", () => {
    expect(Permissions.allows(alice(), { action: "update_data", collection: "Ticket", tenant: "t1" })).toBe(true)
    expect(Permissions.allows(alice(), { action: "update_data", collection: "Ticket", tenant: "t2" })).toBe(false)
    expect(Permissions.allows(alice(), { action: "update_data", collection: "Ticket" })).toBe(false)
  })

  it("the first letter of a collection name is compared in upper case, as Weaviate stores it", () => {
    expect(Permissions.allows(alice(), { action: "create_data", collection: "ticket" })).toBe(true)
  })

  it("an action is allowed only by a permission with that action", () => {
    expect(Permissions.allows(alice(), { action: "create_data", collection: "Ticket" })).toBe(true)
    expect(Permissions.allows(alice(), { action: "create_data", collection: "Article" })).toBe(false)
    expect(Permissions.allows(alice(), { action: "delete_data", collection: "Ticket" })).toBe(false)
    expect(Permissions.allows(alice(), { action: "read_data", collection: "Anything", tenant: "x" })).toBe(true)
  })

  it("without RBAC every action is allowed (Weaviate decides when the request is sent)", () => {
    const none: Permissions.Access = { _tag: "NoRbac", user: "user0", reason: "RBAC is not enabled" }
    expect(Permissions.allows(none, { action: "delete_collections", collection: "Article" })).toBe(true)
    expect(Exit.isSuccess(Effect.runSyncExit(Permissions.check(none, { action: "create_data", collection: "Article" })))).toBe(true)
  })

  it("an RBAC user without roles may do nothing", () => {
    const nobody: Permissions.Access = { _tag: "Rbac", user: "nobody", groups: [], roles: [] }
    expect(Permissions.allows(nobody, { action: "read_data", collection: "Article" })).toBe(false)
    expect(Permissions.summary(nobody)).toBe("no roles: this user may do nothing")
  })
})

describe("the refusal", () => {
  it("names the user, the action and the collection: denied before anything is sent", () => {
    const exit = Effect.runSyncExit(Permissions.check(alice(), { action: "create_data", collection: "Article" }))
    expect(exit).toEqual(Exit.fail(new PermissionDenied({ user: "alice", action: "create_data", collection: "Article" })))
    expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error.message : "").toBe(
      'the Weaviate user "alice" has no permission to create data in "Article"'
    )
  })

  it("names the tenant when the request has one", () => {
    const refused = Permissions.denied(alice(), { action: "update_data", collection: "Ticket", tenant: "t2" })
    expect(refused.message).toBe('the Weaviate user "alice" has no permission to update data in "Ticket" (tenant "t2")')
  })

  it("Weaviate's own 403 is read into the same words", () => {
    const denied = PermissionDenied.fromWeaviate(
      "rbac: authorization, forbidden action: user 'alice' has insufficient permissions to create_data [[Domain: data, Collection: Article, Tenant: *, Object: *]]"
    )
    expect(denied.message).toBe('the Weaviate user "alice" has no permission to create data in "Article"')
    const schema = PermissionDenied.fromWeaviate(
      "rbac: authorization, forbidden action: user 'alice' has insufficient permissions to create_collections [[Domain: collections, Collection: Other]]"
    )
    expect(schema.message).toBe('the Weaviate user "alice" has no permission to create the collection "Other"')
  })

  it("a 403 for an action on no collection names the action, never 'Authentication failed'", () => {
    const denied = PermissionDenied.fromWeaviate(
      "rbac: authorization, forbidden action: user 'alice' has insufficient permissions to read_nodes [[Domain: nodes, Verbosity: minimal]]"
    )
    expect(denied.message).toBe('the Weaviate user "alice" has no permission to read nodes (read_nodes)')
  })

  it("a 403 whose action cannot be read keeps Weaviate's words", () => {
    const denied = PermissionDenied.fromWeaviate("adminlist: authorization, forbidden action: user 'user1' has insufficient permissions to C [schema/collections/Zed/shards/#]")
    expect(denied.message).toBe(
      'the Weaviate user "user1" is not allowed to do this (HTTP 403: adminlist: authorization, forbidden action: user \'user1\' has insufficient permissions to C [schema/collections/Zed/shards/#])'
    )
  })

  it("a 403 of a planned request is explained by the request's own target", () => {
    const bare = PermissionDenied.fromWeaviate("forbidden")
    const explained = Permissions.explain(bare, alice(), Permissions.targetsOf({ method: "POST", path: "/v1/objects", body: { class: "Memo", properties: {} } }))
    expect(explained.message).toBe('the Weaviate user "alice" has no permission to create data in "Memo"')
  })
})

describe("reading the permissions again after Weaviate's 403", () => {
  const weaviate403 = (action: string, resource: string) =>
    PermissionDenied.fromWeaviate(`rbac: authorization, forbidden action: user 'alice' has insufficient permissions to ${action} [[${resource}]]`)

  it("a 403 for what the permissions allowed means they changed: read them again", () => {
    expect(Permissions.contradicts(alice(), weaviate403("create_data", "Domain: data, Collection: Ticket, Tenant: *, Object: *"))).toBe(true)
  })

  it("a 403 for what no role allowed tells nothing new (a read of the nodes without read_nodes)", () => {
    expect(Permissions.contradicts(alice(), weaviate403("create_data", "Domain: data, Collection: Article, Tenant: *, Object: *"))).toBe(false)
    expect(Permissions.contradicts(alice(), weaviate403("read_nodes", "Domain: nodes, Verbosity: minimal"))).toBe(false)
  })

  it("without RBAC only a 403 in RBAC's words (RBAC turned on since) has them read again", () => {
    const none: Permissions.Access = { _tag: "NoRbac", user: "user1", reason: "RBAC is not enabled" }
    expect(Permissions.contradicts(none, PermissionDenied.fromWeaviate("adminlist: authorization, forbidden action: user 'user1' has insufficient permissions to C [schema/collections/Zed/shards/#]"))).toBe(false)
    expect(Permissions.contradicts(none, weaviate403("create_data", "Domain: data, Collection: Article, Tenant: *, Object: *"))).toBe(true)
  })
})

describe("what a request needs", () => {
  it("object writes: create, update (PATCH, PUT, references) and delete, with the tenant of the query or body", () => {
    expect(Permissions.targetsOf({ method: "POST", path: "/v1/objects", body: { class: "Article", tenant: "t1" } })).toEqual([
      { action: "create_data", collection: "Article", tenant: "t1" }
    ])
    expect(Permissions.targetsOf({ method: "PATCH", path: "/v1/objects/Article/abc", query: { tenant: "t2" } })).toEqual([
      { action: "update_data", collection: "Article", tenant: "t2" }
    ])
    expect(Permissions.targetsOf({ method: "DELETE", path: "/v1/objects/Article/abc?tenant=t3" })).toEqual([
      { action: "delete_data", collection: "Article", tenant: "t3" }
    ])
    expect(Permissions.targetsOf({ method: "POST", path: "/v1/objects/Article/abc/references/author" })).toEqual([
      { action: "update_data", collection: "Article" }
    ])
  })

  it("a batch needs create and update on every collection it names, as Weaviate checks it", () => {
    const targets = Permissions.targetsOf({ method: "POST", path: "/v1/batch/objects", body: { objects: [{ class: "A" }, { class: "B", tenant: "t" }, { class: "A" }] } })
    expect(targets).toEqual([
      { action: "update_data", collection: "A" },
      { action: "create_data", collection: "A" },
      { action: "update_data", collection: "B", tenant: "t" },
      { action: "create_data", collection: "B", tenant: "t" }
    ])
  })

  it("schema and tenant writes", () => {
    expect(Permissions.targetsOf({ method: "POST", path: "/v1/schema", body: { class: "New" } })).toEqual([{ action: "create_collections", collection: "New" }])
    expect(Permissions.targetsOf({ method: "PUT", path: "/v1/schema/Article" })).toEqual([{ action: "update_collections", collection: "Article" }])
    expect(Permissions.targetsOf({ method: "POST", path: "/v1/schema/Article/properties", body: { name: "x" } })).toEqual([{ action: "update_collections", collection: "Article" }])
    expect(Permissions.targetsOf({ method: "DELETE", path: "/v1/schema/Article" })).toEqual([{ action: "delete_collections", collection: "Article" }])
    expect(Permissions.targetsOf({ method: "POST", path: "/v1/schema/Ticket/tenants", body: [{ name: "a" }, { name: "b" }] })).toEqual([
      { action: "create_tenants", collection: "Ticket", tenant: "a" },
      { action: "create_tenants", collection: "Ticket", tenant: "b" }
    ])
  })

  it("a path that is no valid escape does not throw: its needs are read as far as they can be", () => {
    expect(Permissions.targetsOf({ method: "DELETE", path: "/v1/objects/Art%ZZicle/abc" })).toEqual([{ action: "delete_data", collection: "Art%ZZicle" }])
  })

  it("a request whose needs cannot be told needs nothing beforehand", () => {
    expect(Permissions.targetsOf({ method: "POST", path: "/v1/backups/filesystem", body: {} })).toEqual([])
    expect(Permissions.targetsOf({ method: "GET", path: "/v1/objects" })).toEqual([])
  })
})

describe("the summary", () => {
  it("says what may be read, written and changed in one line", () => {
    expect(Permissions.summary(alice())).toBe(
      "read: all collections; write: Tick* (update; tenant t1), Ticket (create); no schema changes; tenant changes: Ticket (create)"
    )
  })

  it("all collections when a role grants every data action on *", () => {
    const writer: Permissions.Access = {
      _tag: "Rbac",
      ...Permissions.parseOwnInfo({
        username: "w",
        roles: [{
          name: "rw",
          permissions: ["read_data", "create_data", "update_data", "delete_data"].map((action) => ({ action, data: { collection: "*", tenant: "*", object: "*" } }))
        }, {
          name: "t",
          permissions: ["create_data", "update_data", "delete_data"].map((action) => ({ action, data: { collection: "Ticket" } }))
        }]
      })
    }
    expect(Permissions.summary(writer)).toBe("read: all collections; write: all collections; no schema changes")
  })

  it("the data verbs per collection mark those allowed for some tenants only", () => {
    expect(Permissions.dataVerbs(alice(), "Ticket")).toEqual(["read", "create", "update (some tenants)"])
    expect(Permissions.dataVerbs(alice(), "Article")).toEqual(["read"])
  })
})
