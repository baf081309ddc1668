/** Bundles the command line into dist/weaviate-mcp.mjs. */
export declare const buildCli: () => Promise<unknown>
