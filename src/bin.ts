/**
 * The process entry point of the bundle (`dist/weaviate-mcp.cjs`).
 *
 * @since 0.1.0
 */
import { runCli } from "./Main.ts"

runCli()
