/**
 * `weaviate-mcp tenants CONN TABLE [--json]` and `browse --tenant` through the real binary, against
 * the real Weaviate server.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"
import { currentTarget } from "../weaviate/Target.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"

const real = currentTarget().kind !== "compatible"
let w: WeaviateTestInstance
const home = TestHome.tempDirSync()

const post = async (path: string, body: unknown) => {
  const response = await fetch(`${w.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`)
}

beforeAll(async () => {
  w = await startTestWeaviate()
  if (!real) return
  await post("/v1/schema", { class: "Doc", vectorizer: "none", multiTenancyConfig: { enabled: true }, properties: [{ name: "title", dataType: ["text"] }] })
  await post("/v1/schema/Doc/tenants", [{ name: "globex" }, { name: "acme" }, { name: "cold1", activityStatus: "INACTIVE" }])
  await post("/v1/objects", { class: "Doc", tenant: "acme", properties: { title: "acme one" }, vector: [1, 0] })
  const added = await Cli.run(["connections", "add", "--home", home, "--name", "w", "--host", "127.0.0.1", "--port", String(w.port)])
  if (added.code !== 0) throw new Error(added.stderr)
}, 60_000)
afterAll(() => w.close())

describe.skipIf(!real)(`weaviate-mcp tenants (real Weaviate${real ? "" : "; skipped: needs the real server (tenant activity states, named vectors)"})`, () => {
  it("lists the tenants in name order with their activity status; --json gives the same", async () => {
    const text = await Cli.run(["tenants", "w", "Doc", "--home", home])
    expect(text.code, text.stderr).toBe(0)
    const lines = text.stdout.trim().split("\n")
    expect(lines.slice(2, 5).map((l) => l.split(/\s+/).slice(0, 2))).toEqual([["acme", "HOT"], ["cold1", "COLD"], ["globex", "HOT"]])
    expect(lines.at(-1)).toBe("(3 tenants; 2 active)")
    const json = await Cli.run(["tenants", "w", "Doc", "--home", home, "--json"])
    expect(JSON.parse(json.stdout)).toEqual({
      collection: "Doc",
      tenants: [
        { name: "acme", activityStatus: "HOT", active: true },
        { name: "cold1", activityStatus: "COLD", active: false },
        { name: "globex", activityStatus: "HOT", active: true }
      ]
    })
  })

  it("browse --tenant reads one tenant; without it the refusal names the tenants (exit 1)", async () => {
    const page = await Cli.run(["browse", "w", "Doc", "--tenant", "acme", "--home", home, "--json"])
    expect(page.code, page.stderr).toBe(0)
    expect(JSON.parse(page.stdout).rows.map((r: { title: string }) => r.title)).toEqual(["acme one"])
    const refused = await Cli.run(["browse", "w", "Doc", "--home", home])
    expect(refused.code).toBe(1)
    expect(refused.stderr.trim()).toBe("Doc is multi-tenant; pass tenant (tenants: acme, cold1, globex)")
  })

  it("a collection without tenants is an error naming it", async () => {
    await post("/v1/schema", { class: "Plain", vectorizer: "none", properties: [{ name: "title", dataType: ["text"] }] })
    const plain = await Cli.run(["tenants", "w", "Plain", "--home", home])
    expect(plain.code).toBe(1)
    expect(plain.stderr.trim()).toBe("Plain is not multi-tenant: it has no tenants")
  })
})
