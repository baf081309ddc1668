/**
 * The package's name and version, read from package.json once.
 *
 * @since 0.1.0
 */
import { createRequire } from "node:module"

const pkg = createRequire(import.meta.url)("../../package.json") as { readonly name: string; readonly version: string }

/** @category constants */
export const NAME: string = pkg.name
/** @category constants */
export const VERSION: string = pkg.version
