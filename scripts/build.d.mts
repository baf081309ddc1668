/** Bundles the command line into dist/weaviate-mcp.cjs and the stdio bridge into dist/bridge.cjs. */
export declare const buildCli: () => Promise<unknown>
