#!/usr/bin/env node
// Runs the bundle that `npm run build` writes (also run by `prepare`, `prepack` and `npm start`).
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"

const bundle = new URL("../dist/weaviate-mcp.mjs", import.meta.url)
if (!existsSync(fileURLToPath(bundle))) {
  process.stderr.write("weaviate-mcp: dist/weaviate-mcp.mjs is missing; run `npm run build` in the package first\n")
  process.exit(1)
}
await import(bundle.href)
