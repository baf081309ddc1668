#!/usr/bin/env node
// Runs the TypeScript sources through tsx, so the package works without a build step.
import { register } from "tsx/esm/api"
import { fileURLToPath } from "node:url"

register()
const main = fileURLToPath(new URL("../src/Main.ts", import.meta.url))
process.argv[1] = main
await import(main)
