/**
 * The package's name and version. Generated from package.json by scripts/version.mjs: do not edit.
 *
 * @since 0.1.0
 */

/** @category constants */
export const NAME: string = "weaviate-mcp"
/** @category constants */
export const VERSION: string = "0.1.0"
