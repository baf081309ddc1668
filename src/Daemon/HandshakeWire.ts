/**
 * What a reader of the handshake file needs, without Effect: the protocol revision it names, the pid
 * check, and a check of its content equivalent to the `HandshakeFile` schema of `Handshake.ts`. The
 * stdio bridge starts from this module alone; `effect/Schema` costs it ~40 ms of CPU at start.
 *
 * @since 0.1.0
 */

/** The modern protocol revision, named in the file. @category constants */
export const PROTOCOL_VERSION = "2026-07-28"

/** The content of the handshake file (the fields of `Handshake.HandshakeFile`). @category models */
export interface HandshakeData {
  readonly version: 1
  readonly port: number
  readonly pid: number
  readonly instanceId: string
  readonly protocolVersion: string
  readonly startedAt: string
  readonly token: string
  readonly tokenExpiresAt: string
}

const STRINGS = ["instanceId", "protocolVersion", "startedAt", "token", "tokenExpiresAt"] as const

/**
 * The handshake file's content when `json` has its shape (what `Schema.decodeUnknown(HandshakeFile)`
 * accepts, extra members dropped), else `undefined`.
 *
 * @category decoding
 */
export const decode = (json: unknown): HandshakeData | undefined => {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined
  const record = json as Record<string, unknown>
  if (record["version"] !== 1 || !Number.isSafeInteger(record["port"]) || !Number.isSafeInteger(record["pid"])) return undefined
  if (!STRINGS.every((key) => typeof record[key] === "string")) return undefined
  return {
    version: 1,
    port: record["port"] as number,
    pid: record["pid"] as number,
    instanceId: record["instanceId"] as string,
    protocolVersion: record["protocolVersion"] as string,
    startedAt: record["startedAt"] as string,
    token: record["token"] as string,
    tokenExpiresAt: record["tokenExpiresAt"] as string
  }
}

/**
 * Whether a process with this pid exists (EPERM means it exists but belongs to someone else).
 *
 * @category utils
 */
export const isPidAlive = (pid: number): boolean => {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}
