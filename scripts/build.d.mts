/** Bundles the command line into dist/weaviate-mcp.mjs and the stdio bridge into dist/bridge.mjs. */
export declare const buildCli: () => Promise<unknown>
