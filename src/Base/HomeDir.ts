/**
 * Where the per-user support directory is, without Effect (the stdio bridge starts from this):
 * `--home DIR`, else `WEAVIATE_MCP_HOME`, else the platform's data directory. `Home.ts` builds the
 * `Home` service on it.
 *
 * @since 0.1.0
 */
import envPaths from "env-paths"
import * as NodePath from "node:path"

/** The file names the home holds (a contract: scripts rely on them). */
export const FileNames = {
  handshake: "mcp-handshake.json",
  connections: "connections.json",
  tokens: "tokens.json",
  activity: "activity.log",
  settings: "settings.json",
  history: "history.db"
} as const

export type FileName = keyof typeof FileNames

/**
 * Resolves the default home for a platform, without overrides.
 *
 * @category constructors
 */
export const defaultHomeDir = (
  platform: NodeJS.Platform = process.platform,
  env: NodeJS.ProcessEnv = process.env
): string => {
  if (platform === "win32") {
    const appData = env.APPDATA ?? NodePath.join(env.USERPROFILE ?? "", "AppData", "Roaming")
    return NodePath.win32.join(appData, "weaviate-mcp")
  }
  return envPaths("weaviate-mcp", { suffix: "" }).data
}

/**
 * Resolves the home: an explicit directory wins, then `WEAVIATE_MCP_HOME`, then the platform default.
 *
 * @category constructors
 */
export const resolveDir = (explicit: string | undefined, env: NodeJS.ProcessEnv = process.env): string =>
  NodePath.resolve(explicit ?? (env.WEAVIATE_MCP_HOME && env.WEAVIATE_MCP_HOME.length > 0 ? env.WEAVIATE_MCP_HOME : defaultHomeDir()))
