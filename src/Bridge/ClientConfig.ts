/**
 * The configuration of the AI clients `weaviate-mcp setup` knows: where each keeps its MCP servers
 * (per platform), under which key, and the entry for the HTTP endpoint or for the stdio bridge.
 * Editing an existing file keeps every other entry, its comments (JSONC and YAML clients), key order
 * and indentation; the file is written atomically after a backup of the original; see `update`.
 * Where each client's path and format come from is cited in docs/clients.md.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import type * as NodeFsSync from "node:fs"
import * as NodeFs from "node:fs/promises"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import type * as ConfigDocument from "./ConfigDocument.ts"
import { ConfigFileError } from "./ConfigFileError.ts"

/**
 * The parsers and editors of config files, loaded when a file is first read or written: only
 * `setup` and `doctor` do, and `jsonc-parser`'s start-up (its tables of indentation strings) cost
 * every other command, the daemon's start included, about 2–4 ms (its commit message).
 */
const document = () => import("./ConfigDocument.ts")

/** The clients `setup` knows. @category models */
export const CLIENTS = ["claude-desktop", "claude-code", "cursor", "vscode", "cline", "continue", "windsurf", "zed"] as const
/** @category models */
export type Client = (typeof CLIENTS)[number]

/** How the client reaches the daemon. @category models */
export type Target =
  | { readonly kind: "http"; readonly url: string; readonly token: string }
  | { readonly kind: "bridge"; readonly command: string; readonly args: ReadonlyArray<string> }

interface ClientInfo {
  /** The member of the file that holds the servers: a map of name to entry, or (YAML) a list of named items. */
  readonly key: "mcpServers" | "servers" | "context_servers"
  /** Whether the client connects to Streamable HTTP with custom headers. */
  readonly http: boolean
  /** How the client reads its file: strict JSON, JSONC (comments, trailing commas) or YAML; its own docs say which. */
  readonly format: ConfigDocument.Format
  readonly path: (platform: NodeJS.Platform, env: NodeJS.ProcessEnv, home: string) => string
  readonly entry: (target: Target) => Record<string, unknown>
  /** The top of a new (or empty) file, where the client requires more than the servers. */
  readonly skeleton?: Record<string, unknown>
  /** Why a new file must not be created at `target` (the client would then read it instead of another one). */
  readonly refuseNew?: (target: string) => Promise<string | undefined>
  /** The client's own lock (a directory `<file>.lock`) that its writers hold while changing the file. */
  readonly lockDir?: boolean
  /** Where an older release of the client kept the file, and which release moved it. */
  readonly older?: (platform: NodeJS.Platform, env: NodeJS.ProcessEnv, home: string) => { readonly path: string; readonly note: string }
}

const appData = (env: NodeJS.ProcessEnv, home: string) => env["APPDATA"] ?? NodePath.join(home, "AppData", "Roaming")
const xdgConfig = (env: NodeJS.ProcessEnv, home: string) => env["XDG_CONFIG_HOME"] ?? NodePath.join(home, ".config")
const set = (env: NodeJS.ProcessEnv, name: string) => {
  const value = env[name]?.trim()
  return value === undefined || value === "" ? undefined : value
}

/** VS Code's user directory (`Code/User`), where its own files and its extensions' global storage live. */
const vscodeUser = (platform: NodeJS.Platform, env: NodeJS.ProcessEnv, home: string) =>
  platform === "darwin"
    ? NodePath.join(home, "Library", "Application Support", "Code", "User")
    : platform === "win32"
    ? NodePath.join(appData(env, home), "Code", "User")
    : NodePath.join(xdgConfig(env, home), "Code", "User")

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` })
const stdio = (target: Target) => (target.kind === "bridge" ? { command: target.command, args: [...target.args] } : {})

const exists = (path: string) => NodeFs.access(path).then(() => true, () => false)

/** @category models */
export const clients: Record<Client, ClientInfo> = {
  // Claude Desktop launches local processes only: always the bridge.
  "claude-desktop": {
    key: "mcpServers",
    http: false,
    format: "json",
    path: (platform, env, home) =>
      platform === "darwin"
        ? NodePath.join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json")
        : platform === "win32"
        ? NodePath.join(appData(env, home), "Claude", "claude_desktop_config.json")
        : NodePath.join(xdgConfig(env, home), "Claude", "claude_desktop_config.json"),
    entry: stdio
  },
  // Claude Code's user scope lives in ~/.claude.json on every platform.
  "claude-code": {
    key: "mcpServers",
    http: true,
    format: "json",
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
    format: "json",
    path: (_platform, _env, home) => NodePath.join(home, ".cursor", "mcp.json"),
    entry: (target) => (target.kind === "http" ? { url: target.url, headers: bearer(target.token) } : stdio(target))
  },
  // VS Code's user-profile mcp.json (top-level `servers`), read as JSONC.
  vscode: {
    key: "servers",
    http: true,
    format: "jsonc",
    path: (platform, env, home) => NodePath.join(vscodeUser(platform, env, home), "mcp.json"),
    entry: (target) =>
      target.kind === "http"
        ? { type: "http", url: target.url, headers: bearer(target.token) }
        : { type: "stdio", command: target.command, args: [...target.args] }
  },
  // Cline 4 (VS Code extension saoudrizwan.claude-dev, its CLI and SDK) share one file, read with
  // JSON.parse and written under a `<file>.lock` directory: sdk/packages/shared/src/storage/paths.ts
  // (resolveMcpSettingsPath) and sdk/packages/core/src/extensions/mcp/config-loader.ts in cline/cline.
  cline: {
    key: "mcpServers",
    http: true,
    format: "json",
    path: (_platform, env, home) =>
      set(env, "CLINE_MCP_SETTINGS_PATH") ??
        NodePath.join(set(env, "CLINE_DATA_DIR") ?? NodePath.join(set(env, "CLINE_DIR") ?? NodePath.join(home, ".cline"), "data"), "settings", "cline_mcp_settings.json"),
    entry: (target) => (target.kind === "http" ? { type: "streamableHttp", url: target.url, headers: bearer(target.token) } : stdio(target)),
    lockDir: true,
    older: (platform, env, home) => ({
      path: NodePath.join(vscodeUser(platform, env, home), "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"),
      note: "Cline before 4.0 read its servers from VS Code's global storage; Cline 4 reads the shared file and imports the older one once"
    })
  },
  // Continue's global config.yaml (core/util/paths.ts in continuedev/continue): a list of named
  // servers; a config.yaml needs a name and a version (packages/config-yaml/src/schemas/index.ts).
  continue: {
    key: "mcpServers",
    http: true,
    format: "yaml",
    path: (_platform, env, home) => {
      const dir = set(env, "CONTINUE_GLOBAL_DIR")
      return NodePath.join(dir === undefined ? NodePath.join(home, ".continue") : NodePath.resolve(dir), "config.yaml")
    },
    entry: (target) =>
      target.kind === "http"
        ? { type: "streamable-http", url: target.url, requestOptions: { headers: bearer(target.token) } }
        : stdio(target),
    skeleton: { name: "Local Config", version: "1.0.0", schema: "v1" },
    refuseNew: async (target) => {
      const json = NodePath.join(NodePath.dirname(target), "config.json")
      if (NodePath.basename(target) !== "config.yaml" || !(await exists(json))) return undefined
      return `${json} exists and ${target} does not: this Continue reads config.json, the older format, and a new config.yaml would replace it ` +
        `(Continue loads config.yaml instead when there is one). Move its settings to config.yaml first (https://docs.continue.dev/reference/yaml-migration), then run again`
    }
  },
  // Windsurf's Cascade: ~/.codeium/windsurf/mcp_config.json on every platform; remote servers take `serverUrl`.
  windsurf: {
    key: "mcpServers",
    http: true,
    format: "json",
    path: (_platform, _env, home) => NodePath.join(home, ".codeium", "windsurf", "mcp_config.json"),
    entry: (target) => (target.kind === "http" ? { serverUrl: target.url, headers: bearer(target.token) } : stdio(target))
  },
  // Zed's settings.json (crates/paths/src/paths.rs in zed-industries/zed), read as JSONC.
  zed: {
    key: "context_servers",
    http: true,
    format: "jsonc",
    path: (platform, env, home) =>
      platform === "win32"
        ? NodePath.join(appData(env, home), "Zed", "settings.json")
        : NodePath.join(platform === "darwin" ? NodePath.join(home, ".config") : xdgConfig(env, home), "zed", "settings.json"),
    entry: (target) => (target.kind === "http" ? { url: target.url, headers: bearer(target.token) } : stdio(target))
  }
}

/** The client's own config file on this machine. @category paths */
export const configPath = (client: Client, platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env) =>
  clients[client].path(platform, env, NodeOs.homedir())

/** The snippet `setup` prints: the servers member with this one entry, in the client's format. @category snippets */
export const snippet = async (client: Client, name: string, target: Target): Promise<string> =>
  (await document()).render(clients[client].format, [clients[client].key], name, clients[client].entry(target))

// ===== Reading =====

/** The config file cannot be changed as asked; nothing was changed. @category errors */
export { ConfigFileError }

/**
 * Someone else changed the file between our read and our rename: it was not overwritten.
 *
 * @category errors
 */
export class ConfigChanged extends Schema.TaggedError<ConfigChanged>()("ConfigChanged", {
  path: Schema.String
}) {
  override get message() {
    return `${this.path} was changed by someone else while setup was writing it; it was not overwritten. Run the command again.`
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const errno = (error: unknown) => (error as NodeJS.ErrnoException).code

/** Where a config file's content really lives: the file itself, or the end of its chain of symlinks. @category models */
export interface Resolved {
  /** The path the user named (or the client's default path). */
  readonly file: string
  /** The regular file (or the path where it is created) that is read and replaced. */
  readonly target: string
  /** Whether `file` is a symbolic link (the link stays, its target is written). */
  readonly linked: boolean
}

/**
 * Follows symbolic links from `file` to the file they name. A link whose target does not exist
 * (dangling) is an error: setup does not create a file in a place the user may not expect.
 *
 * @category reading
 */
export const resolve = async (file: string): Promise<Resolved> => {
  let current = NodePath.resolve(file)
  let linked = false
  for (let hops = 0; hops < 40; hops++) {
    let stat
    try {
      stat = await NodeFs.lstat(current)
    } catch (error) {
      if (errno(error) !== "ENOENT") throw new ConfigFileError({ message: `cannot read ${file}: ${(error as Error).message}` })
      if (linked) {
        throw new ConfigFileError({
          message: `${file} is a symbolic link to ${current}, which does not exist (a dangling link); not changing anything. ` +
            `Create the target first (touch ${JSON.stringify(current)}) or remove the link, then run again.`
        })
      }
      return { file, target: current, linked }
    }
    if (!stat.isSymbolicLink()) return { file, target: current, linked }
    linked = true
    current = NodePath.resolve(NodePath.dirname(current), await NodeFs.readlink(current))
  }
  throw new ConfigFileError({ message: `${file}: too many levels of symbolic links` })
}

/** Where the map of servers sits in the file: VS Code's settings.json nests it under `mcp`. @category models */
export const serversPath = (client: Client, file: string): ReadonlyArray<string> =>
  client === "vscode" && NodePath.basename(file) === "settings.json" ? ["mcp", "servers"] : [clients[client].key]

/**
 * Parses a config file's text in the client's format (strict JSON, JSONC or YAML). The empty text is
 * the empty object.
 *
 * @category reading
 */
export const parse = async (text: string, client: Client, file: string): Promise<Record<string, unknown>> =>
  (await (await document()).parse(text, clients[client].format, file, client)).value

/**
 * The servers a client's config file names, by name (Continue's list by each item's `name`); empty
 * when it names none. Rejects with `ConfigFileError` when the text cannot be parsed.
 *
 * @category reading
 */
export const entries = async (client: Client, file: string, text: string): Promise<Record<string, unknown>> =>
  (await document()).servers(await parse(text, client, file), serversPath(client, file), clients[client].format)

/** An HTTP entry's endpoint and headers, whatever the client calls them. @category reading */
export const endpoint = (entry: unknown): { readonly url: string; readonly headers: Record<string, string> } | undefined => {
  if (!isRecord(entry)) return undefined
  const url = typeof entry["url"] === "string" ? entry["url"] : typeof entry["serverUrl"] === "string" ? entry["serverUrl"] : undefined
  if (url === undefined) return undefined
  const options = entry["requestOptions"]
  const headers = isRecord(entry["headers"]) ? entry["headers"] : isRecord(options) && isRecord(options["headers"]) ? options["headers"] : {}
  return { url, headers: Object.fromEntries(Object.entries(headers).filter((h): h is [string, string] => typeof h[1] === "string")) }
}

/**
 * Whether an entry is weaviate-mcp's own: the stdio bridge of a `weaviate-mcp` (its `bridge`
 * command), or the daemon's HTTP endpoint on the loopback address. `--remove` and `doctor` touch
 * nothing else, whatever its name.
 *
 * @category reading
 */
export const isOurs = (entry: unknown): boolean => {
  if (!isRecord(entry)) return false
  const args = Array.isArray(entry["args"]) ? entry["args"].filter((a): a is string => typeof a === "string") : []
  const command = typeof entry["command"] === "string" ? entry["command"] : ""
  if (args.includes("bridge") && [command, ...args].some((part) => /weaviate-mcp(\.m?js)?$/.test(part))) return true
  const url = endpoint(entry)?.url
  return url !== undefined && /^http:\/\/(127\.0\.0\.1|localhost|\[::1\]):\d+\/mcp$/.test(url)
}

const readText = async (target: string) => {
  try {
    return { text: await NodeFs.readFile(target, "utf8"), stat: await NodeFs.stat(target) }
  } catch (error) {
    if (errno(error) === "ENOENT") return { text: undefined, stat: undefined }
    throw new ConfigFileError({ message: `cannot read ${target}: ${(error as Error).message}` })
  }
}

/**
 * The entry named `name` in a client's config file (following links), without changing anything.
 * An entry of that name that is not ours is an error, as for `update`'s `remove`.
 *
 * @category reading
 */
export const lookup = async (file: string, client: Client, name: string): Promise<Resolved & { readonly entry: unknown }> => {
  const resolved = await resolve(file)
  const { text } = await readText(resolved.target)
  const entry = (await entries(client, resolved.target, text ?? ""))[name]
  if (entry !== undefined && !isOurs(entry)) throw notOurs(name, resolved.target)
  return { ...resolved, entry }
}

const notOurs = (name: string, target: string) =>
  new ConfigFileError({ message: `the entry "${name}" in ${target} is not weaviate-mcp's; not removing it (name ours with --name)` })

/** Where an older release of the client kept its file, when that file exists and `file` does not. @category reading */
export const olderFile = async (client: Client, file: string, platform: NodeJS.Platform = process.platform, env: NodeJS.ProcessEnv = process.env) => {
  const older = clients[client].older?.(platform, env, NodeOs.homedir())
  if (older === undefined || (await exists(file)) || !(await exists(older.path))) return undefined
  return older
}

// ===== Writing =====

/** What `update` does to the file. @category models */
export type Change =
  | { readonly kind: "set"; readonly name: string; readonly target: Target }
  | { readonly kind: "remove"; readonly name: string }

/** Test hooks: `beforeRename` runs after the new content is in its temp file, before the final check. @category models */
export interface Hooks {
  readonly beforeRename?: (target: string) => Promise<void>
}

/** What `update` did. @category models */
export interface Outcome extends Resolved {
  /** `false` when there was nothing to change (`remove` of an entry the file does not have). */
  readonly changed: boolean
  /** The copy of the original, beside the target (none for a new file). */
  readonly backup: string | undefined
  /** The target's mode before (none for a new file) and after. */
  readonly mode: number
  readonly modeBefore: number | undefined
  /** The entry removed (`remove`). */
  readonly removed: unknown
  /** The YAML was written again by the `yaml` library rather than spliced (see `ConfigDocument.Edited`). */
  readonly reformatted: boolean
}

/**
 * Takes a client's lock directory `<file>.lock` the way the client does (Cline: a populated staging
 * directory renamed into place, which fails while another holder's directory is there). Returns its
 * release. A lock held by someone else is an error: the client is writing the file right now.
 */
const takeLock = async (file: string): Promise<() => Promise<void>> => {
  const lock = `${NodePath.resolve(file)}.lock`
  const token = `${process.pid}.${Date.now()}.${randomUUID()}`
  const staging = `${lock}.tmp.${token}`
  const owner = NodePath.join(lock, `owner.${token}`)
  await NodeFs.mkdir(staging, { recursive: true })
  await NodeFs.writeFile(NodePath.join(staging, `owner.${token}`), token, { flag: "wx" })
  try {
    await NodeFs.rename(staging, lock)
  } catch (error) {
    await NodeFs.rm(staging, { recursive: true, force: true })
    if (!(await exists(lock))) throw error
    throw new ConfigFileError({
      message: `${file} is being changed by its client right now (its lock ${lock} is held); not changing it. Run again in a moment; ` +
        `if no client runs and the lock stays, remove it: rm -r ${JSON.stringify(lock)}`
    })
  }
  return async () => {
    await NodeFs.rm(owner, { force: true })
    await NodeFs.rmdir(lock).catch(() => undefined)
  }
}

/** The new text of the file, or `undefined` when there is nothing to change. */
const plan = async (client: Client, target: string, original: string | undefined, change: Change) => {
  const info = clients[client]
  const ConfigDocument = await document()
  let text = original ?? ""
  if (text.trim().length === 0 && change.kind === "set") {
    const refused = original === undefined ? await info.refuseNew?.(target) : undefined
    if (refused !== undefined) throw new ConfigFileError({ message: refused })
    // A client that needs more than the servers at the top of its file (Continue's name and version) gets it.
    if (info.skeleton !== undefined) text = await ConfigDocument.fresh(info.format, info.skeleton)
  }
  const parsed = await ConfigDocument.parse(text, info.format, target, client)
  const path = serversPath(client, target)
  ConfigDocument.checkServers(parsed, path, target)
  const existing = ConfigDocument.servers(parsed.value, path, info.format)
  if (change.kind === "remove") {
    if (!(change.name in existing)) return undefined
    if (!isOurs(existing[change.name])) throw notOurs(change.name, target)
  }
  const value = change.kind === "set" ? info.entry(change.target) : undefined
  return { ...ConfigDocument.edit(parsed, path, change.name, value, target), removed: existing[change.name] }
}

/**
 * Replaces `target` with `next` through a temporary file beside it, after a backup of `original`,
 * unless the target changed since it was read (`ConfigChanged`). Returns the backup's path.
 */
const replace = async (target: string, original: string | undefined, stat: NodeFsSync.Stats | undefined, next: string, mode: number, hooks: Hooks) => {
  await NodeFs.mkdir(NodePath.dirname(target), { recursive: true, mode: 0o700 })
  const temp = NodePath.join(NodePath.dirname(target), `.${NodePath.basename(target)}.${process.pid}.${Date.now()}.tmp`)
  try {
    const handle = await NodeFs.open(temp, "wx", mode)
    try {
      await handle.writeFile(next, "utf8")
      await handle.chmod(mode)
      // The owner stays: a root-run setup must not hand the user's file to root.
      if (stat !== undefined && (stat.uid !== process.getuid?.() || stat.gid !== process.getgid?.())) await handle.chown(stat.uid, stat.gid)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await hooks.beforeRename?.(target)
    const now = await NodeFs.readFile(target, "utf8").catch((error) => (errno(error) === "ENOENT" ? undefined : Promise.reject(error)))
    if (now !== original) throw new ConfigChanged({ path: target })
    if (original === undefined) {
      // No file to replace: link(2) fails if one appeared since the check, where rename would overwrite it.
      await NodeFs.link(temp, target).catch((error) => Promise.reject(errno(error) === "EEXIST" ? new ConfigChanged({ path: target }) : error))
      await NodeFs.rm(temp, { force: true })
      return undefined
    }
    const backup = `${target}.weaviate-mcp.bak`
    await NodeFs.writeFile(backup, original, { mode: 0o600 })
    await NodeFs.chmod(backup, 0o600)
    await NodeFs.rename(temp, target)
    return backup
  } catch (error) {
    await NodeFs.rm(temp, { force: true })
    if (error instanceof ConfigChanged || error instanceof ConfigFileError) throw error
    throw new ConfigFileError({ message: `cannot write ${target}: ${(error as Error).message}` })
  }
}

/**
 * Edits the client's config file: sets or removes one server entry and keeps everything else.
 *
 * - A symbolic link is followed: its target is written (temp file in the target's directory, then a
 *   rename), the link stays a link, the backup `<target>.weaviate-mcp.bak` (0600) sits beside the target.
 * - JSONC files (VS Code, Zed) are edited in place with `jsonc-parser`: comments, trailing commas, key
 *   order and indentation stay; strict-JSON files stay strict JSON (and keep their order and
 *   indentation); YAML files (Continue) get the lines of the one list item changed (`ConfigDocument`).
 * - The target's mode and owner stay; a file that holds a token becomes 0600. A read-only file
 *   (no owner write bit) is not changed.
 * - If the target changed after it was read (another program wrote it), nothing is overwritten:
 *   `ConfigChanged`. A target that did not exist is created with `link(2)`, which fails if one appeared.
 *   A client with a lock of its own (Cline) has it taken for the whole edit.
 *
 * @category writing
 */
export const update = async (file: string, client: Client, change: Change, hooks: Hooks = {}): Promise<Outcome> => {
  const resolved = await resolve(file)
  const release = clients[client].lockDir === true ? await takeLock(file) : undefined
  try {
    const { target } = resolved
    const { text: original, stat } = await readText(target)
    const modeBefore = stat === undefined ? undefined : stat.mode & 0o7777
    const next = await plan(client, target, original, change)
    if (next === undefined) return { ...resolved, changed: false, backup: undefined, modeBefore, mode: modeBefore ?? 0, removed: undefined, reformatted: false }
    if (modeBefore !== undefined && (modeBefore & 0o200) === 0) {
      throw new ConfigFileError({
        message: `${target} is read-only (mode ${modeBefore.toString(8).padStart(4, "0")}); not changing it. Make it writable (chmod u+w ${JSON.stringify(target)}) and run again, or edit it by hand`
      })
    }
    const holdsToken = change.kind === "set" && change.target.kind === "http"
    const mode = holdsToken ? 0o600 : modeBefore ?? 0o644
    const backup = await replace(target, original, stat, next.text, mode, hooks)
    return { ...resolved, changed: true, backup, modeBefore, mode, removed: change.kind === "remove" ? next.removed : undefined, reformatted: next.reformatted }
  } finally {
    await release?.()
  }
}

/**
 * Merges the entry into the client's config file (`update` with a `set`).
 *
 * @category writing
 */
export const merge = (file: string, client: Client, name: string, target: Target, hooks: Hooks = {}): Promise<Outcome> =>
  update(file, client, { kind: "set", name, target }, hooks)
