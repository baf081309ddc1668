/**
 * The configuration of the AI clients `weaviate-mcp setup` knows: where each keeps its MCP servers
 * (per platform), under which key, and the entry for the HTTP endpoint or for the stdio bridge.
 * Editing an existing file keeps every other entry, its comments (JSONC clients), key order and
 * indentation; the file is written atomically after a backup of the original; see `update`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Jsonc from "jsonc-parser"
import type * as NodeFsSync from "node:fs"
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
  /** Whether the client reads its file as JSONC (comments, trailing commas): its own docs say so. */
  readonly jsonc: boolean
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
    jsonc: false,
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
    jsonc: false,
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
    jsonc: false,
    path: (_platform, _env, home) => NodePath.join(home, ".cursor", "mcp.json"),
    entry: (target) =>
      target.kind === "http" ? { url: target.url, headers: bearer(target.token) } : { command: target.command, args: [...target.args] }
  },
  // VS Code's user-profile mcp.json (top-level `servers`).
  vscode: {
    key: "servers",
    http: true,
    // VS Code reads mcp.json and settings.json as JSONC.
    jsonc: true,
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

// ===== Reading =====

/** The config file cannot be changed as asked; nothing was changed. @category errors */
export class ConfigFileError extends Schema.TaggedError<ConfigFileError>()("ConfigFileError", {
  message: Schema.String
}) {}

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
            `Create the target first (echo '{}' > ${JSON.stringify(current)}) or remove the link, then run again.`
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
 * Parses a config file's text: JSONC for clients that read JSONC, strict JSON otherwise. The empty
 * text is the empty object.
 *
 * @category reading
 */
export const parse = (text: string, client: Client, file: string): Record<string, unknown> => {
  if (text.trim().length === 0) return {}
  let value: unknown
  if (clients[client].jsonc) {
    const errors: Array<Jsonc.ParseError> = []
    value = Jsonc.parse(text, errors, { allowTrailingComma: true, disallowComments: false })
    if (errors.length > 0) {
      const first = errors[0]!
      throw new ConfigFileError({
        message: `${file} is not valid JSONC (${Jsonc.printParseErrorCode(first.error)} at offset ${first.offset}); not changing it — fix it or add the printed snippet by hand`
      })
    }
  } else {
    try {
      value = JSON.parse(text)
    } catch (error) {
      throw new ConfigFileError({
        message: `${file} is not plain JSON (${(error as Error).message}), which ${client} requires; not changing it — add the printed snippet by hand`
      })
    }
  }
  if (!isRecord(value)) throw new ConfigFileError({ message: `${file} does not hold a JSON object; not changing it` })
  return value
}

/** The servers the file names (empty when it names none). @category reading */
export const servers = (config: Record<string, unknown>, path: ReadonlyArray<string>): Record<string, unknown> => {
  let at: unknown = config
  for (const key of path) at = isRecord(at) ? at[key] : undefined
  return isRecord(at) ? at : {}
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
  return typeof entry["url"] === "string" && /^http:\/\/(127\.0\.0\.1|localhost|\[::1\]):\d+\/mcp$/.test(entry["url"])
}

/**
 * The entry named `name` in a client's config file (following links), without changing anything.
 * An entry of that name that is not ours is an error, as for `update`'s `remove`.
 *
 * @category reading
 */
export const lookup = async (file: string, client: Client, name: string): Promise<Resolved & { readonly entry: unknown }> => {
  const resolved = await resolve(file)
  const text = await NodeFs.readFile(resolved.target, "utf8").catch((error) => (errno(error) === "ENOENT" ? "" : Promise.reject(
    new ConfigFileError({ message: `cannot read ${resolved.target}: ${(error as Error).message}` })
  )))
  const entry = servers(parse(text, client, resolved.target), serversPath(client, resolved.target))[name]
  if (entry !== undefined && !isOurs(entry)) throw notOurs(name, resolved.target)
  return { ...resolved, entry }
}

const notOurs = (name: string, target: string) =>
  new ConfigFileError({ message: `the entry "${name}" in ${target} is not weaviate-mcp's; not removing it (name ours with --name)` })

/** How the file is indented and ends its lines, so an edit looks like the rest of it. */
const formatting = (text: string): Jsonc.FormattingOptions => {
  const indented = /^([ \t]+)\S/m.exec(text)?.[1]
  const eol = text.includes("\r\n") ? "\r\n" : "\n"
  if (indented === undefined) return { tabSize: 2, insertSpaces: true, eol }
  return indented.startsWith("\t") ? { tabSize: 1, insertSpaces: false, eol } : { tabSize: indented.length, insertSpaces: true, eol }
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
  readonly modeBefore: number | undefined
  readonly mode: number
  /** The entry removed (`remove`). */
  readonly removed: unknown
}

/**
 * Edits the client's config file: sets or removes one server entry and keeps everything else.
 *
 * - A symbolic link is followed: its target is written (temp file in the target's directory, then a
 *   rename), the link stays a link, the backup `<target>.weaviate-mcp.bak` (0600) sits beside the target.
 * - JSONC files (VS Code) are edited in place with `jsonc-parser`: comments, trailing commas, key order
 *   and indentation stay; strict-JSON files stay strict JSON (and keep their order and indentation).
 * - The target's mode and owner stay; a file that holds a token becomes 0600. A read-only file
 *   (no owner write bit) is not changed.
 * - If the target changed after it was read (another program wrote it), nothing is overwritten:
 *   `ConfigChanged`. A target that did not exist is created with `link(2)`, which fails if one appeared.
 *
 * @category writing
 */
export const update = async (file: string, client: Client, change: Change, hooks: Hooks = {}): Promise<Outcome> => {
  const resolved = await resolve(file)
  const { target } = resolved
  let original: string | undefined
  let stat: NodeFsSync.Stats | undefined
  try {
    original = await NodeFs.readFile(target, "utf8")
    stat = await NodeFs.stat(target)
  } catch (error) {
    if (errno(error) !== "ENOENT") throw new ConfigFileError({ message: `cannot read ${target}: ${(error as Error).message}` })
  }
  const text = original ?? ""
  const config = parse(text, client, target)
  const path = serversPath(client, target)
  const existing = servers(config, path)
  let at: unknown = config
  for (const key of path) {
    at = isRecord(at) ? at[key] : undefined
    if (at !== undefined && !isRecord(at)) break
  }
  if (at !== undefined && !isRecord(at)) throw new ConfigFileError({ message: `${target}: "${path.join(".")}" is not an object; not changing it` })
  const modeBefore = stat === undefined ? undefined : stat.mode & 0o7777
  const unchanged = { ...resolved, changed: false, backup: undefined, modeBefore, mode: modeBefore ?? 0, removed: undefined }
  if (change.kind === "remove") {
    if (!(change.name in existing)) return unchanged
    if (!isOurs(existing[change.name])) throw notOurs(change.name, target)
  }
  if (modeBefore !== undefined && (modeBefore & 0o200) === 0) {
    throw new ConfigFileError({
      message: `${target} is read-only (mode ${modeBefore.toString(8).padStart(4, "0")}); not changing it. Make it writable (chmod u+w ${JSON.stringify(target)}) and run again, or edit it by hand`
    })
  }
  const value = change.kind === "set" ? clients[client].entry(change.target) : undefined
  let next: string
  if (text.trim().length === 0) {
    if (change.kind === "remove") return unchanged
    let fresh: Record<string, unknown> = { [change.name]: value }
    for (const key of [...path].reverse()) fresh = { [key]: fresh }
    next = JSON.stringify(fresh, null, 2) + "\n"
  } else {
    const options = formatting(text)
    next = Jsonc.applyEdits(text, Jsonc.modify(text, [...path, change.name], value, { formattingOptions: options }))
  }
  const holdsToken = change.kind === "set" && change.target.kind === "http"
  const mode = holdsToken ? 0o600 : modeBefore ?? 0o644
  await NodeFs.mkdir(NodePath.dirname(target), { recursive: true, mode: 0o700 })
  const temp = NodePath.join(NodePath.dirname(target), `.${NodePath.basename(target)}.${process.pid}.${Date.now()}.tmp`)
  let backup: string | undefined
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
    } else {
      backup = `${target}.weaviate-mcp.bak`
      await NodeFs.writeFile(backup, original, { mode: 0o600 })
      await NodeFs.chmod(backup, 0o600)
      await NodeFs.rename(temp, target)
    }
  } catch (error) {
    await NodeFs.rm(temp, { force: true })
    if (error instanceof ConfigChanged || error instanceof ConfigFileError) throw error
    throw new ConfigFileError({ message: `cannot write ${target}: ${(error as Error).message}` })
  }
  return { ...resolved, changed: true, backup, modeBefore, mode, removed: change.kind === "remove" ? existing[change.name] : undefined }
}

/**
 * Merges the entry into the client's config file (`update` with a `set`).
 *
 * @category writing
 */
export const merge = (file: string, client: Client, name: string, target: Target, hooks: Hooks = {}): Promise<Outcome> =>
  update(file, client, { kind: "set", name, target }, hooks)
