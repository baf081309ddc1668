/**
 * Files in the home that may hold secrets: written atomically (temp file in the same directory,
 * fsync, rename) and always with mode 0600.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as NodeCrypto from "node:crypto"
import * as NodeFsSync from "node:fs"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"

/**
 * A file of the home could not be read or written.
 *
 * @category errors
 */
export class SecretFileError extends Schema.TaggedError<SecretFileError>()("SecretFileError", {
  path: Schema.String,
  operation: Schema.Literal("read", "write", "remove"),
  reason: Schema.String
}) {
  override get message() {
    return `Cannot ${this.operation} ${this.path}: ${this.reason}`
  }
}

const reasonOf = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

/**
 * Writes `content` to `path` atomically with mode 0600: readers see the old file or the new one,
 * never a half-written one. The new file is flushed to the disk before it replaces the old one, so a
 * crash keeps one of the two; `sync: false` skips the flush for files that describe the running
 * daemon (its handshake and state files): a crash leaves them stale whatever they hold, their readers
 * check the daemon's pid, and the flush was 1–2 ms of the daemon's start each.
 *
 * @category writing
 */
export const writeAtomic = (path: string, content: string | Uint8Array, options?: { readonly sync?: boolean }) =>
  Effect.tryPromise({
    try: async () => {
      const tmp = NodePath.join(NodePath.dirname(path), `.${NodePath.basename(path)}.${NodeCrypto.randomBytes(6).toString("hex")}.tmp`)
      const handle = await NodeFs.open(tmp, "wx", 0o600)
      try {
        await handle.writeFile(content)
        if (options?.sync !== false) await handle.sync()
      } finally {
        await handle.close()
      }
      try {
        // The mode given to open() is filtered by the umask; set it explicitly.
        await NodeFs.chmod(tmp, 0o600)
        await NodeFs.rename(tmp, path)
      } catch (error) {
        await NodeFs.rm(tmp, { force: true })
        throw error
      }
    },
    catch: (cause) => new SecretFileError({ path, operation: "write", reason: reasonOf(cause) })
  })

/**
 * Writes a JSON document atomically with mode 0600.
 *
 * @category writing
 */
export const writeJsonAtomic = (path: string, value: unknown, options?: { readonly sync?: boolean }) =>
  writeAtomic(path, JSON.stringify(value, null, 2) + "\n", options)

/**
 * Reads a file as text; `undefined` when it does not exist.
 *
 * @category reading
 */
export const readTextIfExists = (path: string) =>
  Effect.tryPromise({
    try: async () => {
      try {
        return await NodeFs.readFile(path, "utf8")
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
        throw error
      }
    },
    catch: (cause) => new SecretFileError({ path, operation: "read", reason: reasonOf(cause) })
  })

/**
 * Reads and parses a JSON file; `undefined` when it does not exist.
 *
 * @category reading
 */
export const readJsonIfExists = (path: string) =>
  Effect.flatMap(readTextIfExists(path), (text) =>
    text === undefined
      ? Effect.succeed(undefined)
      : Effect.try({
        try: () => JSON.parse(text) as unknown,
        catch: (cause) => new SecretFileError({ path, operation: "read", reason: `not valid JSON (${reasonOf(cause)})` })
      }))

/**
 * Removes a file; a missing file is not an error.
 *
 * @category writing
 */
export const remove = (path: string) =>
  Effect.tryPromise({
    try: () => NodeFs.rm(path, { force: true }),
    catch: (cause) => new SecretFileError({ path, operation: "remove", reason: reasonOf(cause) })
  })

/**
 * What tells a file's versions apart without reading it: inode, size and change times (`missing`
 * when it does not exist). An atomic rewrite changes the inode; an edit in place the size or times.
 *
 * @category reading
 */
export const signature = (path: string): string => {
  try {
    const stat = NodeFsSync.statSync(path, { bigint: true })
    return `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`
  } catch {
    return "missing"
  }
}
