/**
 * The per-user support directory: `--home DIR`, else `WEAVIATE_MCP_HOME`, else the platform's
 * data directory (macOS `~/Library/Application Support/weaviate-mcp`, Linux
 * `$XDG_DATA_HOME/weaviate-mcp`, Windows `%APPDATA%\weaviate-mcp`).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { type FileName, FileNames, resolveDir } from "./HomeDir.ts"

export { defaultHomeDir, type FileName, FileNames } from "./HomeDir.ts"

/**
 * Resolves the home: an explicit directory wins, then `WEAVIATE_MCP_HOME`, then the platform default.
 *
 * @category constructors
 */
export const resolveHomeDir = (explicit: Option.Option<string>, env: NodeJS.ProcessEnv = process.env): string =>
  resolveDir(Option.getOrUndefined(explicit), env)

/**
 * The resolved support directory, created (mode 0700) when the layer is built.
 *
 * @category models
 */
export class Home extends Context.Tag("weaviate-mcp/Home")<Home, {
  readonly dir: string
  readonly path: (file: FileName) => string
}>() {
  static readonly make = (dir: string) =>
    Effect.tryPromise({
      try: () => NodeFs.mkdir(dir, { recursive: true, mode: 0o700 }),
      catch: (cause) => new Error(`Cannot create the home directory ${dir}: ${String(cause)}`)
    }).pipe(
      Effect.orDie,
      Effect.as(Home.of({ dir, path: (file) => NodePath.join(dir, FileNames[file]) }))
    )

  /** A home at an explicit directory (or the resolved default when `none`). */
  static readonly layer = (explicit: Option.Option<string> = Option.none()) =>
    Layer.effect(Home, Home.make(resolveHomeDir(explicit)))
}
