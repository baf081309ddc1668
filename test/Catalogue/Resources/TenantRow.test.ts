/**
 * The row resource of a tenant and tenant completion, against the real Weaviate server: a
 * multi-tenant row is read through …/tenants/{tenant}/rows/{uuid}; the plain row URI of such a
 * collection is refused with the tenants named; a tenant-scoped token reads and completes only its
 * own tenants.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Completions, Resources } from "../../../src/Mcp/Catalogue.ts"
import type { Principal } from "../../../src/Auth/Principal.ts"
import { currentTarget } from "../../weaviate/Target.ts"
import { as, type Catalogue, codeOf, requestContext, startCatalogue, token } from "./support.ts"

const real = currentTarget().kind !== "compatible"
const ROW = "00000000-0000-4000-8000-0000000000a1"
let cat: Catalogue

beforeAll(async () => {
  cat = await startCatalogue()
  if (!real) return
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${cat.w.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
    if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`)
  }
  await post("/v1/schema", { class: "Doc", vectorizer: "none", multiTenancyConfig: { enabled: true }, properties: [{ name: "title", dataType: ["text"] }] })
  await post("/v1/schema/Doc/tenants", [{ name: "acme" }, { name: "globex" }])
  await post("/v1/objects", { class: "Doc", id: ROW, tenant: "acme", properties: { title: "acme one" }, vector: [1, 0] })
}, 60_000)
afterAll(() => cat.dispose())

const run = <A, E>(principal: Principal, effect: Effect.Effect<A, E, any>, method = "resources/read") =>
  cat.runtime.runPromise(effect.pipe(as(principal, requestContext({ method }))) as Effect.Effect<A, E, never>)
const rowUri = (tenant?: string) =>
  `weaviate://connections/${cat.ids.local}/tables/Doc${tenant === undefined ? "" : `/tenants/${tenant}`}/rows/${ROW}`
const read = (principal: Principal, uri: string) => run(principal, Effect.flatMap(Resources, (r) => r.read(uri)))
const failure = (principal: Principal, uri: string) =>
  run(principal, Effect.flip(Effect.flatMap(Resources, (r) => r.read(uri)))) as Promise<{ code: number; message: string }>
const completeTenant = (principal: Principal) =>
  run(
    principal,
    Effect.flatMap(Completions, (c) =>
      c.complete({
        ref: { type: "ref/resource", uri: "weaviate://connections/{connection_id}/tables/{table}/tenants/{tenant}/rows/{uuid}" },
        argument: { name: "tenant", value: "" },
        context: { connection_id: cat.ids.local, table: "Doc" }
      })),
    "completion/complete"
  )

describe.skipIf(!real)(`the row resource of a tenant (real Weaviate${real ? "" : "; skipped: needs the real server (tenant activity states, named vectors)"})`, () => {
  it("…/tenants/{tenant}/rows/{uuid} reads the row of that tenant", async () => {
    const outcome = await read(token(), rowUri("acme"))
    assert.strictEqual(outcome._tag, "Complete")
    if (outcome._tag !== "Complete") return
    const json = JSON.parse(outcome.value.contents[0]!.text as string)
    assert.strictEqual(json.tenant, "acme")
    assert.strictEqual(json.row.title, "acme one")
    assert.strictEqual(outcome.value.ttlMs, 5_000)
  })

  it("the plain row URI of a multi-tenant collection is -32602 naming the tenants; another tenant has no such row", async () => {
    const plain = await failure(token(), rowUri())
    assert.strictEqual(plain.code, -32602)
    assert.strictEqual(plain.message, "Doc is multi-tenant; pass tenant (tenants: acme, globex)")
    assert.strictEqual(await codeOf(run(token(), Effect.either(Effect.flatMap(Resources, (r) => r.read(rowUri("globex")))))), -32602)
  })

  it("a tenant-scoped token reads only its tenants (-33007 otherwise) and completes only them", async () => {
    const scoped = () => token({ tenants: { [cat.ids.local]: { Doc: ["acme"] } } })
    assert.strictEqual((await read(scoped(), rowUri("acme")))._tag, "Complete")
    assert.strictEqual((await failure(scoped(), rowUri("globex"))).code, -33007)
    assert.deepStrictEqual((await completeTenant(token())).values, ["acme", "globex"])
    assert.deepStrictEqual((await completeTenant(scoped())).values, ["acme"])
  })
})
