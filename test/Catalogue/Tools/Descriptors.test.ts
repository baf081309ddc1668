/**
 * The tool descriptors: exact names of the contract's Tools table, valid `Tool` objects in every era's
 * official schema, input schemas generated from Effect Schema that validators of both drafts compile,
 * `x-mcp-header` on scalar top-level parameters (decision 3), annotations and scopes.
 */
import { Ajv } from "ajv"
import { Ajv2020 } from "ajv/dist/2020.js"
import { describe, expect, it } from "vitest"
import type { ToolEnv } from "../../../src/Catalogue/Tools/ConnectionGate.ts"
import { all } from "../../../src/Catalogue/Tools/ToolsLive.ts"
import { validateDef } from "../../Mcp/support/EndpointHarness.ts"

// Building descriptors touches no service.
const tools = all({} as ToolEnv)
const byName = Object.fromEntries(tools.map((t) => [t.descriptor.name, t]))

const WRITE_TOOLS = ["insert_rows", "update_rows", "delete_rows", "confirm_destructive_operation", "create_table", "add_column", "update_table", "drop_table", "create_tenants", "set_tenant_status", "delete_tenants"]
/** The destructive tools only a fullAccess token may call: they need `admin` too. */
const ADMIN_TOOLS = ["confirm_destructive_operation", "drop_table", "delete_tenants"]

describe("the catalogue", () => {
  it("has exactly the tools of the contract's table, list_tenants and aggregate", () => {
    expect(tools.map((t) => t.descriptor.name)).toEqual([
      "list_connections",
      "get_connection_status",
      "list_tables",
      "describe_table",
      "list_tenants",
      "search_schema",
      "browse_table",
      "count_rows",
      "get_row",
      "vector_search",
      "execute_query",
      "aggregate",
      ...WRITE_TOOLS
    ])
  })

  it("a descriptor's JSON Schemas are made once, on first use, and serialize with the descriptor", () => {
    const fresh = all({} as ToolEnv)
    for (const tool of fresh) {
      const input = tool.descriptor.inputSchema
      expect(tool.descriptor.inputSchema).toBe(input)
      expect(tool.descriptor.outputSchema).toBe(tool.descriptor.outputSchema)
      const serialized = JSON.parse(JSON.stringify(tool.descriptor)) as Record<string, unknown>
      expect(Object.keys(serialized)).toEqual(["name", "title", "description", "inputSchema", "outputSchema", "annotations"])
      expect(serialized.inputSchema).toEqual(input)
    }
  })

  it("every descriptor is a valid Tool in 2026-07-28, 2025-11-25 and 2025-06-18", () => {
    for (const tool of tools) {
      validateDef("2026-07-28", "Tool", tool.descriptor)
      validateDef("2025-11-25", "Tool", tool.descriptor)
      validateDef("2025-06-18", "Tool", tool.descriptor)
    }
  })

  it("input and output schemas compile under JSON Schema 2020-12 and draft-07, without $ref or $id", () => {
    const a2020 = new Ajv2020({ strict: false })
    const a07 = new Ajv({ strict: false })
    for (const tool of tools) {
      for (const schema of [tool.descriptor.inputSchema, tool.descriptor.outputSchema!]) {
        expect(schema.type).toBe("object")
        a2020.compile(schema)
        a07.compile(schema)
        expect(JSON.stringify(schema)).not.toMatch(/"\$ref"|"\$id"|"\$schema"/)
      }
    }
  })

  it("every argument has a description a model can act on; every tool takes connection_id except list_connections", () => {
    for (const tool of tools) {
      const properties = (tool.descriptor.inputSchema.properties ?? {}) as Record<string, Record<string, unknown>>
      for (const [name, property] of Object.entries(properties)) {
        expect(typeof property.description, `${tool.descriptor.name}.${name}`).toBe("string")
      }
      expect(tool.descriptor.description.length).toBeGreaterThan(40)
      if (tool.descriptor.name === "list_connections") expect(properties).toEqual({})
      else expect(tool.descriptor.inputSchema.required).toContain("connection_id")
    }
  })

  it("x-mcp-header equals the parameter's own name on string, integer and boolean top-level parameters, never on numbers, arrays or long text", () => {
    for (const tool of tools) {
      const properties = (tool.descriptor.inputSchema.properties ?? {}) as Record<string, Record<string, unknown>>
      for (const [name, property] of Object.entries(properties)) {
        const scalar = ["string", "integer", "boolean"].includes(property.type as string)
        const longText = name === "query" || (tool.descriptor.name === "aggregate" && (name === "near_text" || name === "hybrid"))
        expect(property["x-mcp-header"], `${tool.descriptor.name}.${name}`).toBe(scalar && !longText ? name : undefined)
      }
    }
    expect((byName.browse_table!.descriptor.inputSchema.properties as any).limit).toMatchObject({
      type: "integer",
      minimum: 1,
      maximum: 1000,
      "x-mcp-header": "limit"
    })
  })

  it("annotations: reads are readOnly and idempotent; writes are not readOnly; deletes are destructive", () => {
    for (const tool of tools) {
      const a = tool.descriptor.annotations as Record<string, boolean>
      expect(typeof a.readOnlyHint).toBe("boolean")
      expect(typeof a.destructiveHint).toBe("boolean")
      expect(typeof a.idempotentHint).toBe("boolean")
      const write = WRITE_TOOLS.includes(tool.descriptor.name) || tool.descriptor.name === "execute_query"
      expect(a.readOnlyHint).toBe(!write)
    }
    expect(byName.delete_rows!.descriptor.annotations).toMatchObject({ destructiveHint: true })
    expect(byName.confirm_destructive_operation!.descriptor.annotations).toMatchObject({ destructiveHint: true })
    expect(byName.drop_table!.descriptor.annotations).toMatchObject({ destructiveHint: true })
    expect(byName.delete_tenants!.descriptor.annotations).toMatchObject({ destructiveHint: true })
    expect(byName.create_table!.descriptor.annotations).toMatchObject({ destructiveHint: false })
    expect(byName.insert_rows!.descriptor.annotations).toMatchObject({ destructiveHint: false })
  })

  it("the write tools need tools:write; the others only tools:read; confirm_destructive_operation and the other destructive structure tools also admin (fullAccess only)", () => {
    for (const tool of tools) {
      const expected = ADMIN_TOOLS.includes(tool.descriptor.name)
        ? ["tools:write", "admin"]
        : WRITE_TOOLS.includes(tool.descriptor.name)
        ? ["tools:write"]
        : []
      expect(tool.scopes, tool.descriptor.name).toEqual(expected)
    }
  })

  it("x-mcp-header sits only on top-level properties typed string, integer or boolean (the official rule; number is not allowed)", () => {
    const allowed = ["string", "integer", "boolean"]
    const walk = (node: unknown, path: string, topLevel: boolean, found: Array<string>) => {
      if (typeof node !== "object" || node === null) return
      const schema = node as Record<string, unknown>
      if ("x-mcp-header" in schema) {
        expect(topLevel, `${path} is not a top-level property`).toBe(true)
        expect(allowed, `${path} has type ${String(schema.type)}`).toContain(schema.type)
        found.push(path)
      }
      for (const [key, child] of Object.entries(schema)) {
        if (key === "properties" && typeof child === "object" && child !== null) {
          for (const [name, property] of Object.entries(child)) walk(property, `${path}.${name}`, path.split(".").length === 1, found)
        } else if (typeof child === "object" && child !== null && key !== "x-mcp-header") {
          walk(child, `${path}/${key}`, false, found)
        }
      }
    }
    const found: Array<string> = []
    for (const tool of tools) walk(tool.descriptor.inputSchema, tool.descriptor.name, false, found)
    expect(found).toContain("browse_table.limit")
    expect(found).not.toContain("vector_search.alpha")
    expect((byName.vector_search!.descriptor.inputSchema.properties as any).alpha.type).toBe("number")
  })

  it("insert_rows declares the 1,000-row cap in its schema", () => {
    expect((byName.insert_rows!.descriptor.inputSchema.properties as any).rows).toMatchObject({ minItems: 1, maxItems: 1000 })
  })
})
