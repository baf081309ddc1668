#!/usr/bin/env node
// Runs the bundle that `npm run build` writes (also run by `prepare`, `prepack` and `npm start`).
// `weaviate-mcp bridge` first tries the bridge's own small entry (dist/bridge.mjs): MCP clients start
// the bridge at every session, and the CLI bundle would add ~200 ms to each start. The entry handles a
// plain bridge invocation and leaves anything else (`bridge --help`, …) to the CLI.
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"

const bridge = new URL("../dist/bridge.mjs", import.meta.url)
const bundle = new URL("../dist/weaviate-mcp.mjs", import.meta.url)
const handled = process.argv[2] === "bridge" && existsSync(fileURLToPath(bridge)) && (await import(bridge.href)).handled === true
if (!handled) {
  if (!existsSync(fileURLToPath(bundle))) {
    process.stderr.write("weaviate-mcp: dist/weaviate-mcp.mjs is missing; run `npm run build` in the package first\n")
    process.exit(1)
  }
  await import(bundle.href)
}
