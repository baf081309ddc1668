/**
 * The stdio bridge's entry point (`dist/bridge.cjs`), bundled apart from the CLI: `handled` tells
 * `bin/weaviate-mcp.js` whether it started the bridge or the full CLI must handle the command line.
 *
 * @since 0.1.0
 */
import * as BridgeMain from "./Bridge/BridgeMain.ts"

export const handled: boolean = BridgeMain.start(process.argv)
