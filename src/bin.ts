/**
 * The process entry point of the bundle (`dist/weaviate-mcp.mjs`).
 *
 * @since 0.1.0
 */
import { runCli } from "./Main.ts"

runCli()
