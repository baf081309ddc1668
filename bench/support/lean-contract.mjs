// The per-request work the contract asks of every call, as both lean-node programs do it
// (lean-tools.mjs, tools-list-servers.mjs), without any framework:
// - `leanIntake`: the Host and protocol-version headers checked, the bearer token checked by HMAC
//   against a salted digest, the JSON body parsed (400 when it is not JSON);
// - `openLeanLines`: one SHA-256-chained activity line (`prev` is the hash of the line before) and one
//   log line per call, appended to two files through descriptors held open, the lines of one tick of
//   the event loop in one write.
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

const MODERN = "2026-07-28"
const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/

/**
 * The token lean-node accepts, from its environment (`LEAN_TOKEN`): on the command line any local
 * user could read it from the process list.
 */
export const leanToken = () => {
  const token = process.env.LEAN_TOKEN
  if (token === undefined || token === "") throw new Error("lean-node: LEAN_TOKEN is not set")
  return token
}

/** The checks of a request that holds `token`: its message, or the status to refuse it with. */
export const leanIntake = (token) => {
  const salt = NodeCrypto.randomBytes(16)
  const digest = NodeCrypto.createHmac("sha256", salt).update(token).digest()
  return (request, chunks) => {
    if (request.headers.host === undefined || request.headers["mcp-protocol-version"] !== MODERN) return 400
    const bearer = BEARER.exec(request.headers.authorization ?? "")
    if (bearer === null) return 401
    const presented = NodeCrypto.createHmac("sha256", salt).update(bearer[1]).digest()
    if (!NodeCrypto.timingSafeEqual(presented, digest)) return 401
    try {
      return JSON.parse(Buffer.concat(chunks).toString("utf8"))
    } catch {
      return 400
    }
  }
}

export const openLeanLines = (dir) => {
  const activity = NodeFs.openSync(NodePath.join(dir, "lean-activity.log"), "a", 0o600)
  const log = NodeFs.openSync(NodePath.join(dir, "lean-serve.log"), "a", 0o600)
  let previous = "0".repeat(64)
  let activityLines = ""
  let logLines = ""
  const flush = () => {
    NodeFs.write(activity, activityLines, () => {})
    NodeFs.write(log, logLines, () => {})
    activityLines = ""
    logLines = ""
  }
  return {
    /** The hash of the last activity line (64 zeros before the first): the next line's `prev`. */
    get previous() {
      return previous
    },
    /** Appends a call's activity line (its members, `prev` among them) and its log line. */
    append: (members, logLine) => {
      const line = JSON.stringify(members)
      previous = NodeCrypto.createHash("sha256").update(line).digest("hex")
      if (activityLines.length === 0) setImmediate(flush)
      activityLines += `${line}\n`
      logLines += `${logLine}\n`
    }
  }
}
