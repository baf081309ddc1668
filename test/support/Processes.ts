/**
 * Other processes as /proc shows them (Linux): whether one lives, its state, its children.
 */
import * as NodeFs from "node:fs"

/** The one-letter state of /proc/PID/stat (`R`, `S`, `T` stopped, `Z` zombie); `undefined` once gone. */
export const stateOf = (pid: number): string | undefined => {
  try {
    const stat = NodeFs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3)
  } catch {
    return undefined
  }
}

/** True while `pid` names a live (non-zombie) process. */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  if (process.platform !== "linux") return true
  const state = stateOf(pid)
  return state !== undefined && state !== "Z"
}

/** The process's children. */
export const childrenOf = (pid: number): Array<number> =>
  NodeFs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter((p) => p.length > 0).map(Number)
