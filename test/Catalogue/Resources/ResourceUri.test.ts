import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import * as ResourceUri from "../../../src/Catalogue/Resources/ResourceUri.ts"
import { ResourceRef } from "../../../src/Catalogue/Resources/ResourceUri.ts"

const uuid = "0a1b2c3d-0000-4000-8000-00000000abcd"

describe("ResourceUri", () => {
  it("each URI shape parses to its kind and formats back", () => {
    const refs = [
      ResourceRef.Connections(),
      ResourceRef.Meta({ connectionId: "c1" }),
      ResourceRef.Schema({ connectionId: "c1" }),
      ResourceRef.Table({ connectionId: "c1", table: "Article" }),
      ResourceRef.Row({ connectionId: "c1", table: "Article", uuid })
    ]
    for (const ref of refs) assert.deepStrictEqual(ResourceUri.parse(ResourceUri.format(ref)), Either.right(ref))
    assert.strictEqual(ResourceUri.format(refs[4]!), `weaviate://connections/c1/tables/Article/rows/${uuid}`)
  })
  it("the TTLs of the contract", () => {
    assert.deepStrictEqual(ResourceUri.ttlMs, { Connections: 30_000, Meta: 300_000, Schema: 300_000, Table: 60_000, Row: 5_000 })
  })
  it("variables with special characters are percent-encoded and decoded (/, %, space, non-ASCII)", () => {
    const ref = ResourceRef.Row({ connectionId: "id with/slash", table: "Tä ble%/x", uuid })
    const uri = ResourceUri.format(ref)
    assert.strictEqual(uri, `weaviate://connections/id%20with%2Fslash/tables/T%C3%A4%20ble%25%2Fx/rows/${uuid}`)
    assert.deepStrictEqual(ResourceUri.parse(uri), Either.right(ref))
  })
  it("the scheme and authority are case-insensitive; uuids are normalised to lower case", () => {
    assert.deepStrictEqual(
      ResourceUri.parse(`WEAVIATE://Connections/c1/tables/A/rows/${uuid.toUpperCase()}`),
      Either.right(ResourceRef.Row({ connectionId: "c1", table: "A", uuid }))
    )
  })
  it("what is not a resource of this server is InvalidParams (-32602)", () => {
    for (
      const uri of [
        "",
        "weaviate://",
        "weaviate://connectionsX",
        "weaviate://connections/",
        "weaviate://connections/c1",
        "weaviate://connections/c1/meta/x",
        "weaviate://connections//meta",
        "weaviate://connections/c1/tables",
        "weaviate://connections/c1/tables/A/rows",
        "weaviate://connections/c1/tables/A/rows/123",
        "weaviate://connections/c1/tables/A/cols/" + uuid,
        "weaviate://connections/c1/tables/%E0%A4%A",
        "weaviate://connections/c1/schema#top",
        "file:///etc/passwd"
      ]
    ) {
      const result = ResourceUri.parse(uri)
      assert.isTrue(Either.isLeft(result), uri)
      if (Either.isLeft(result)) assert.strictEqual(result.left.code, -32602)
    }
  })
  it("template variables per template (what completion may be asked about)", () => {
    assert.deepStrictEqual(ResourceUri.templateVariables[ResourceUri.templateUris.Row], ["connection_id", "table", "uuid"])
    assert.deepStrictEqual(ResourceUri.templateVariables[ResourceUri.templateUris.TenantRow], ["connection_id", "table", "tenant", "uuid"])
    assert.strictEqual(ResourceUri.templates.length, 5)
  })
})
