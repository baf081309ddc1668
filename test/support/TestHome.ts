/**
 * A temporary home directory for one test (or one `layer` block), removed afterwards.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Home } from "../../src/Base/Home.ts"
import * as NodeFsSync from "node:fs"
import { afterAll } from "vitest"

const created = new Set<string>()
// Directories made outside a scope are removed after the test file that made them (each test file
// loads this module afresh; vitest ends its workers without an `exit` event).
afterAll(() => {
  for (const dir of created) NodeFsSync.rmSync(dir, { recursive: true, force: true })
  created.clear()
})

/** A fresh directory for tests that are not Effects; removed after the test file. */
export const tempDirSync = (prefix = "weaviate-mcp-test-"): string => {
  const dir = NodeFsSync.mkdtempSync(NodePath.join(NodeOs.tmpdir(), prefix))
  created.add(dir)
  return dir
}

/** Creates a fresh directory for the life of the scope. */
export const tempDir = (prefix = "weaviate-mcp-test-") =>
  Effect.acquireRelease(
    Effect.promise(() => NodeFs.mkdtemp(NodePath.join(NodeOs.tmpdir(), prefix))),
    (dir) => Effect.promise(() => NodeFs.rm(dir, { recursive: true, force: true }))
  )

/** A `Home` in a fresh temporary directory. */
export const layer: Layer.Layer<Home> = Layer.scoped(
  Home,
  Effect.flatMap(tempDir(), (dir) => Home.make(dir))
)

/** A `Home` at a given directory. */
export const at = (dir: string): Layer.Layer<Home> => Home.layer(Option.some(dir))
