/**
 * How the stdio bridge finds and talks to the daemon: the trusted handshake file, `server/discover`,
 * and one modern request over HTTP (JSON or an SSE stream of frames).
 *
 * The handshake file is trusted only if it is a regular file owned by the current user with mode
 * 0600, its pid is alive, and `server/discover` on its port names the same `instanceId`.
 *
 * @since 0.1.0
 */
import * as NodeFs from "node:fs/promises"
import * as NodeHttp from "node:http"
import { decode as decodeFile, type HandshakeData, isPidAlive, PROTOCOL_VERSION } from "../Daemon/HandshakeWire.ts"

/**
 * Why the bridge cannot use the daemon. `notRunning` means starting the daemon would help. A plain
 * `Error` with a `_tag` (the CLI reports it like any tagged failure): the bridge loads no Effect.
 *
 * @category errors
 */
export class BridgeRefused extends Error {
  readonly _tag = "BridgeRefused" as const
  readonly notRunning: boolean
  constructor(fields: { readonly message: string; readonly notRunning: boolean }) {
    super(fields.message)
    this.name = "BridgeRefused"
    this.notRunning = fields.notRunning
  }
}

/** The daemon as the bridge knows it: a trusted handshake and its discovery result. @category models */
export interface Daemon {
  readonly file: HandshakeData
  readonly mtimeMs: number
  readonly discovery: Discovery
}

/** The members of `server/discover` the bridge uses. @category models */
export interface Discovery {
  readonly supportedVersions: ReadonlyArray<string>
  readonly capabilities: Record<string, unknown>
  readonly instructions: string
  readonly serverInfo: { readonly name: string; readonly version: string; readonly [key: string]: unknown }
}

/** The header value as the endpoint expects it: printable ASCII as is, else `=?base64?…?=`. @category encoding */
export const headerValue = (value: string): string =>
  /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(value) ? value : `=?base64?${Buffer.from(value, "utf8").toString("base64")}?=`

const nameOf = (method: string, params: Record<string, unknown>): string | undefined => {
  if ((method === "tools/call" || method === "prompts/get") && typeof params["name"] === "string") return params["name"]
  if (method === "resources/read" && typeof params["uri"] === "string") return params["uri"]
  return undefined
}

/** A JSON-RPC message as the bridge handles it. @category models */
export type Message = { readonly jsonrpc: "2.0"; readonly id?: string | number; readonly method?: string; readonly [key: string]: unknown }

/** The transport failed before any answer arrived (daemon gone, restarted, refused). @category errors */
export class Unreachable extends Error {
  constructor(readonly refused: boolean, cause: unknown) {
    super(`the daemon is unreachable: ${cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause)}`)
  }
}

/**
 * POSTs one modern message and returns the final JSON-RPC response, passing every other frame of an
 * event stream to `onFrame`. Returns `undefined` for a notification (202). `status` is the HTTP status.
 *
 * @category requests
 */
export const post = async (
  port: number,
  token: string,
  message: Message & { readonly method: string; readonly params: Record<string, unknown> },
  options: { readonly signal?: AbortSignal | undefined; readonly onFrame?: ((frame: Message) => void) | undefined } = {}
): Promise<{ readonly status: number; readonly body: Message | undefined }> => {
  const name = nameOf(message.method, message.params)
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": PROTOCOL_VERSION,
    "mcp-method": message.method,
    authorization: `Bearer ${token}`
  }
  if (name !== undefined) headers["mcp-name"] = headerValue(name)
  let response: NodeHttp.IncomingMessage
  try {
    response = await send(port, headers, JSON.stringify(message), options.signal)
  } catch (error) {
    if (options.signal?.aborted === true) throw error
    throw new Unreachable((error as NodeJS.ErrnoException).code === "ECONNREFUSED", error)
  }
  const status = response.statusCode ?? 0
  if (status === 202) {
    response.resume()
    return { status: 202, body: undefined }
  }
  const type = response.headers["content-type"] ?? ""
  try {
    response.setEncoding("utf8")
    if (!type.startsWith("text/event-stream")) {
      let text = ""
      for await (const chunk of response) text += chunk as string
      return { status, body: text.length === 0 ? undefined : JSON.parse(text) as Message }
    }
    let final: Message | undefined
    let buffer = ""
    const onData = (chunk: string) => {
      buffer += chunk.replace(/\r\n/g, "\n")
      let end = buffer.indexOf("\n\n")
      while (end !== -1) {
        const frame = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const data = frame.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).replace(/^ /, "")).join("\n")
        if (data.length > 0) {
          const parsed = JSON.parse(data) as Message
          if (parsed.method === undefined && parsed.id !== undefined) final = parsed
          else options.onFrame?.(parsed)
        }
        end = buffer.indexOf("\n\n")
      }
    }
    for await (const chunk of response) onData(chunk as string)
    return { status, body: final }
  } catch (error) {
    if (options.signal?.aborted === true) throw error
    throw new Unreachable(false, error)
  }
}

/**
 * One POST to the daemon's endpoint through node:http (keep-alive by its global agent): `fetch`
 * would load undici at the bridge's first request, +50 ms of CPU at every start against +20 for
 * node:http (measured; docs/bridge.md).
 */
const send = (port: number, headers: Record<string, string>, body: string, signal: AbortSignal | undefined) =>
  new Promise<NodeHttp.IncomingMessage>((resolve, reject) => {
    const request = NodeHttp.request(
      {
        host: "127.0.0.1",
        port,
        path: "/mcp",
        method: "POST",
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        ...(signal === undefined ? {} : { signal })
      },
      resolve
    )
    request.on("error", reject)
    request.end(body)
  })

/** `_meta` of a request the bridge makes on its own behalf. @category requests */
export const bridgeMeta = (clientCapabilities: Record<string, unknown> = {}) => ({
  "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
  "io.modelcontextprotocol/clientCapabilities": clientCapabilities,
  "io.modelcontextprotocol/clientInfo": { name: "weaviate-mcp-bridge", version: "1" }
})

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

/** Calls `server/discover`. @category requests */
export const discover = async (port: number, token: string): Promise<Discovery & { readonly instanceId: unknown }> => {
  const reply = await post(port, token, { jsonrpc: "2.0", id: "discover", method: "server/discover", params: { _meta: bridgeMeta() } })
  const result = reply.body?.["result"]
  if (!isRecord(result) || !Array.isArray(result["supportedVersions"])) {
    const error = reply.body?.["error"]
    const detail = isRecord(error) && typeof error["message"] === "string" ? `: ${error["message"]}` : ` (HTTP ${reply.status})`
    throw new BridgeRefused({ message: `server/discover on port ${port} failed${detail}`, notRunning: false })
  }
  const meta = isRecord(result["_meta"]) ? result["_meta"] : {}
  const info = isRecord(result["serverInfo"]) ? result["serverInfo"] : isRecord(meta["io.modelcontextprotocol/serverInfo"]) ? meta["io.modelcontextprotocol/serverInfo"] : {}
  return {
    supportedVersions: result["supportedVersions"].filter((v): v is string => typeof v === "string"),
    capabilities: isRecord(result["capabilities"]) ? result["capabilities"] : {},
    instructions: typeof result["instructions"] === "string" ? result["instructions"] : "",
    serverInfo: { name: String(info["name"] ?? "weaviate-mcp"), version: String(info["version"] ?? "0") },
    instanceId: info["instanceId"]
  }
}

const refuse = (message: string, notRunning = false) => new BridgeRefused({ message, notRunning })

/**
 * Reads the handshake file and checks it: owner, mode, pid, then `server/discover` (same
 * `instanceId`, `2026-07-28` supported). Throws `BridgeRefused`.
 *
 * @category finding
 */
export const locate = async (path: string): Promise<Daemon> => {
  let stat: import("node:fs").Stats
  try {
    stat = await NodeFs.lstat(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw refuse(`the daemon is not running (no ${path})`, true)
    throw refuse(`cannot read ${path}: ${(error as Error).message}`)
  }
  if (!stat.isFile()) throw refuse(`${path} is not a regular file; not trusting it`)
  if (typeof process.getuid === "function" && stat.uid !== process.getuid()) {
    throw refuse(`${path} is owned by uid ${stat.uid}, not by the current user; not trusting it`)
  }
  const mode = stat.mode & 0o777
  if (mode !== 0o600) throw refuse(`${path} has mode ${mode.toString(8).padStart(4, "0")}, expected 0600; not trusting it`)
  let json: unknown
  try {
    json = JSON.parse(await NodeFs.readFile(path, "utf8"))
  } catch (error) {
    throw refuse(`${path} is not valid JSON: ${(error as Error).message}`)
  }
  const file = decodeFile(json)
  if (file === undefined) throw refuse(`${path} is not a handshake file`)
  if (!isPidAlive(file.pid)) throw refuse(`the daemon is not running (pid ${file.pid} of ${path} is gone)`, true)
  let discovery: Awaited<ReturnType<typeof discover>>
  try {
    discovery = await discover(file.port, file.token)
  } catch (error) {
    if (error instanceof BridgeRefused) throw error
    throw refuse(`the daemon of pid ${file.pid} does not answer on port ${file.port}: ${(error as Error).message}`, true)
  }
  if (discovery.instanceId !== file.instanceId) {
    throw refuse(`the server on port ${file.port} is not the daemon named in ${path} (instanceId differs); not trusting it`)
  }
  if (!discovery.supportedVersions.includes(PROTOCOL_VERSION)) {
    throw refuse(
      `the server on port ${file.port} does not support MCP ${PROTOCOL_VERSION} (it offers ${discovery.supportedVersions.join(", ") || "none"}); ` +
        "upgrade weaviate-mcp"
    )
  }
  const { instanceId: _, ...rest } = discovery
  return { file, mtimeMs: stat.mtimeMs, discovery: rest }
}

/** The handshake file's modification time, or undefined when it is gone. @category finding */
export const mtimeOf = async (path: string): Promise<number | undefined> => {
  try {
    return (await NodeFs.stat(path)).mtimeMs
  } catch {
    return undefined
  }
}
