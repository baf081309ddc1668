#!/usr/bin/env node
// Runs the bundle built by `npm run build` (also run by `npm install`), else the TypeScript
// sources through tsx.
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"

const bundle = new URL("../dist/weaviate-mcp.mjs", import.meta.url)
if (existsSync(fileURLToPath(bundle))) {
  await import(bundle.href)
} else {
  const { register } = await import("tsx/esm/api")
  register()
  const { runCli } = await import(new URL("../src/Main.ts", import.meta.url).href)
  runCli()
}
