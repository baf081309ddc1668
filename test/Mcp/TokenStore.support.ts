/**
 * A temporary home for token tests, removed when the scope closes.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { Home } from "../../src/Daemon/Home.ts"

export const tempDir = Effect.acquireRelease(
  Effect.promise(() => NodeFs.mkdtemp(NodePath.join(NodeOs.tmpdir(), "wmcp-tokens-"))),
  (dir) => Effect.promise(() => NodeFs.rm(dir, { recursive: true, force: true }))
)

export const homeLayer = (dir: string) => Layer.effect(Home, Home.make(dir))

export const tempHomeLayer = Layer.unwrapScoped(Effect.map(tempDir, homeLayer))
