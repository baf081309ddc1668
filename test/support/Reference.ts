/**
 * The official reference data the tests read, kept in the repository under `test/fixtures/reference`
 * (its README names each file's source, version and licence): MCP JSON Schemas and examples,
 * Weaviate's OpenAPI file and behaviour notes.
 */
import * as NodePath from "node:path"

/** `<repo>/test/fixtures/reference`. */
export const referenceDir = NodePath.resolve(import.meta.dirname, "../fixtures/reference")

/** A path inside the reference directory, e.g. `mcp/schema-2026-07-28.json`. */
export const referencePath = (...parts: ReadonlyArray<string>) => NodePath.join(referenceDir, ...parts)
