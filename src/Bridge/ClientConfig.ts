/**
 * The configuration of the AI clients `weaviate-mcp setup` knows: where each keeps its MCP servers
 * (per platform), under which key, and the entry for the HTTP endpoint or for the stdio bridge.
 * Merging into an existing file keeps every other entry; the file is written atomically after a
 * backup of the original, and a file that holds a token is made 0600.
 *
 * @since 0.1.0
 */
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

/** The clients `setup` knows. @category models */
export const CLIENTS = ["claude-desktop", "claude-code", "cursor", "vscode"] as const
/** @category models */
export type Client = (typeof CLIENTS)[number]

/** How the client reaches the daemon. @category models */
export type Target =
  | { readonly kind: "http"; readonly url: string; readonly token: string }
  | { readonly kind: "bridge"; readonly command: string; readonly args: ReadonlyArray<string> }

interface ClientInfo {
  /** The member of the file that maps server names to entries. */
  readonly key: "mcpServers" | "servers"
  /** Whether the client connects to Streamable HTTP with custom headers. */
  readonly http: boolean
  readonly path: (platform: NodeJS.Platform, env: NodeJS.ProcessEnv, home: string) => string
  readonly entry: (target: Target) => Record<string, unknown>
}

const appData = (env: NodeJS.ProcessEnv, home: string) => env["APPDATA"] ?? NodePath.join(home, "AppData", "Roaming")
const xdgConfig = (env: NodeJS.ProcessEnv, home: string) => env["XDG_CONFIG_HOME"] ?? NodePath.join(home, ".config")

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` })

/** @category models */
export const clients: Record<Client, ClientInfo> = {
  // Claude Desktop launches local processes only: always the bridge.
  "claude-desktop": {
    key: "mcpServers",
    http: false,
    path: (platform, env, home) =>
      platform === "darwin"
        ? NodePath.join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json")
        : platform === "win32"
        ? NodePath.join(appData(env, home), "Claude", "claude_desktop_config.json")
        : NodePath.join(xdgConfig(env, home), "Claude", "claude_desktop_config.json"),
    entry: (target) => target.kind === "bridge" ? { command: target.command, args: [...target.args] } : {}
  },
  // Claude Code's user scope lives in ~/.claude.json on every platform.
  "claude-code": {
    key: "mcpServers",
    http: true,
    path: (_platform, _env, home) => NodePath.join(home, ".claude.json"),
    entry: (target) =>
      target.kind === "http"
        ? { type: "http", url: target.url, headers: bearer(target.token) }
        : { type: "stdio", command: target.command, args: [...target.args] }
  },
  // Cursor's global configuration: ~/.cursor/mcp.json on every platform.
  cursor: {
    key: "mcpServers",
    http: true,
    path: (_platform, _env, home) => NodePath.join(home, ".cursor", "mcp.json"),
    entry: (target) =>
      target.kind === "http" ? { url: target.url, headers: bearer(target.token) } : { command: target.command, args: [...target.args] }
  },
  // VS Code's user-profile mcp.json (top-level `servers`).
  vscode: {
    key: "servers",
    http: true,
    path: (platform, env, home) =>
      platform === "darwin"
        ? NodePath.join(home, "Library", "Application Support", "Code", "User", "mcp.json")
        : platform === "win32"
        ? NodePath.join(appData(env, home), "Code", "User", "mcp.json")
        : NodePath.join(xdgConfig(env, home), "Code", "User", "mcp.json"),
    entry: (target) =>
      target.kind === "http"
        ? { type: "http", url: target.url, headers: bearer(target.token) }
        : { type: "stdio", command: target.command, args: [...target.args] }
  }
}

/** The client's own config file on this machine. @category paths */
export const configPath = (client: Client, platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env) =>
  clients[client].path(platform, env, NodeOs.homedir())

/** The snippet `setup` prints: the servers member with this one entry. @category snippets */
export const snippet = (client: Client, name: string, target: Target) => ({
  [clients[client].key]: { [name]: clients[client].entry(target) }
})

/** The config file cannot be merged into; nothing was changed. @category errors */
export class ConfigFileError extends Error {}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Merges the entry into the client's config file. Returns the backup's path (none when the file did
 * not exist). The original is copied to `<file>.weaviate-mcp.bak` (mode 0600) before the new content
 * replaces it by rename; with a token in the entry the file ends up 0600.
 *
 * @category writing
 */
export const merge = async (file: string, client: Client, name: string, target: Target): Promise<{ readonly backup: string | undefined }> => {
  let original: string | undefined
  let mode = 0o644
  try {
    original = await NodeFs.readFile(file, "utf8")
    mode = (await NodeFs.stat(file)).mode & 0o777
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw new ConfigFileError(`cannot read ${file}: ${(error as Error).message}`)
  }
  let config: Record<string, unknown> = {}
  if (original !== undefined && original.trim().length > 0) {
    let parsed: unknown
    try {
      parsed = JSON.parse(original)
    } catch (error) {
      throw new ConfigFileError(`${file} is not plain JSON (${(error as Error).message}); not changing it — add the printed snippet by hand`)
    }
    if (!isRecord(parsed)) throw new ConfigFileError(`${file} does not hold a JSON object; not changing it`)
    config = parsed
  }
  const key = clients[client].key
  const servers = config[key] ?? {}
  if (!isRecord(servers)) throw new ConfigFileError(`${file}: "${key}" is not an object; not changing it`)
  const merged = { ...config, [key]: { ...servers, [name]: clients[client].entry(target) } }
  if (target.kind === "http") mode = 0o600
  await NodeFs.mkdir(NodePath.dirname(file), { recursive: true, mode: 0o700 })
  let backup: string | undefined
  if (original !== undefined) {
    backup = `${file}.weaviate-mcp.bak`
    await NodeFs.writeFile(backup, original, { mode: 0o600 })
    await NodeFs.chmod(backup, 0o600)
  }
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`
  try {
    await NodeFs.writeFile(temp, JSON.stringify(merged, null, 2) + "\n", { mode, flag: "wx" })
    await NodeFs.chmod(temp, mode)
    await NodeFs.rename(temp, file)
  } catch (error) {
    await NodeFs.rm(temp, { force: true })
    throw new ConfigFileError(`cannot write ${file}: ${(error as Error).message}`)
  }
  return { backup }
}
