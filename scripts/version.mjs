// Writes src/Base/Version.ts from package.json, so the sources (and the compiled dist/) never import
// a file outside src/. Run by `build`, `prepare`, `pretest` and `pretypecheck`; the output is
// committed, so a fresh clone typechecks before anything ran, and rewritten only when it changes.
import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const root = new URL("..", import.meta.url)
const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8"))
const target = fileURLToPath(new URL("src/Base/Version.ts", root))

const text = `/**
 * The package's name and version. Generated from package.json by scripts/version.mjs: do not edit.
 *
 * @since 0.1.0
 */

/** @category constants */
export const NAME: string = ${JSON.stringify(pkg.name)}
/** @category constants */
export const VERSION: string = ${JSON.stringify(pkg.version)}
`

let current = ""
try {
  current = readFileSync(target, "utf8")
} catch {
  // First generation.
}
if (current !== text) writeFileSync(target, text)
