/**
 * The package's name and version (inlined from package.json when bundled).
 *
 * @since 0.1.0
 */
import pkg from "../../package.json" with { type: "json" }

/** @category constants */
export const NAME: string = pkg.name
/** @category constants */
export const VERSION: string = pkg.version
