/**
 * Pins the process under test and the load generator to different cores (`taskset`), so that a
 * saturated load generator cannot hide the server's cost: the servers run on core 0, the load on
 * core 1. On a machine with one core, or without `taskset`, nothing is pinned and the run says so.
 */
import * as NodeChildProcess from "node:child_process"
import * as NodeOs from "node:os"

const hasTaskset = (() => {
  try {
    NodeChildProcess.execFileSync("taskset", ["-V"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
})()

/** Whether pinning is in force: `taskset` is present and there are at least two cores. */
export const pinned = hasTaskset && NodeOs.availableParallelism() >= 2

/** The core of the servers under test. */
export const SERVER_CORE = 0
/** The core of the load generator. */
export const LOAD_CORE = 1

/** Pins a running process (the benchmark's own, which hosts the servers) to the server core. */
export const pinServer = (pid: number = process.pid) => {
  if (pinned) NodeChildProcess.execFileSync("taskset", ["-a", "-cp", String(SERVER_CORE), String(pid)], { stdio: "ignore" })
}

/** Pins a running process (the benchmark's own when it is the client, a database server) to the load core. */
export const pinToLoadCore = (pid: number = process.pid) => {
  if (pinned) NodeChildProcess.execFileSync("taskset", ["-a", "-cp", String(LOAD_CORE), String(pid)], { stdio: "ignore" })
}

/** A command line run on the servers' core: `[file, args]` for `spawn`. */
export const onServerCore = (file: string, args: ReadonlyArray<string>): [string, Array<string>] =>
  pinned ? ["taskset", ["-c", String(SERVER_CORE), file, ...args]] : [file, [...args]]

/** A command line run on the load core: `[file, args]` for `spawn`. */
export const onLoadCore = (file: string, args: ReadonlyArray<string>): [string, Array<string>] =>
  pinned ? ["taskset", ["-c", String(LOAD_CORE), file, ...args]] : [file, [...args]]

/** One line for the report: how the run was placed. */
export const placement = () =>
  pinned
    ? `servers pinned to core ${SERVER_CORE}, load generator to core ${LOAD_CORE} (taskset)`
    : `NOT pinned (${hasTaskset ? "one core" : "no taskset"}): the load generator shares the servers' cores`
