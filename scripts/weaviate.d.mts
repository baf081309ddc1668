/** The pinned Weaviate version of the tests (`WEAVIATE_VERSION` overrides it). */
export declare const PINNED_WEAVIATE_VERSION: string
/** The version in use: `WEAVIATE_VERSION`, else the pinned one. */
export declare const weaviateVersion: () => string
/** Path of the cached server binary of `version`. */
export declare const weaviateBinary: (version?: string) => string
/** `go version` output, or undefined when Go is missing. */
export declare const goCommand: () => string | undefined
/** Builds the server unless cached; resolves to the binary's path. */
export declare const buildWeaviate: (version?: string, log?: (line: string) => void) => Promise<string>
