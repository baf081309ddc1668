/**
 * The official reference data beside the repository (`../shared/reference`): MCP JSON Schemas and
 * examples, Weaviate's OpenAPI file and behaviour notes.
 */
import * as NodePath from "node:path"

/** `<repo>/../shared/reference`, wherever the repository is cloned. */
export const referenceDir = NodePath.resolve(import.meta.dirname, "../../../shared/reference")

/** A path inside the reference directory, e.g. `mcp/schema-2026-07-28.json`. */
export const referencePath = (...parts: ReadonlyArray<string>) => NodePath.join(referenceDir, ...parts)
