/**
 * The approval command's launcher: a small resident Node process that starts `--approval-command`
 * for the daemon, so the daemon never forks itself per approval.
 *
 * Why: on Linux, `child_process.spawn` forks the calling process and blocks its event loop until the
 * child has called `exec`. For the daemon (100–200 MB resident) that is about 2 ms of blocked event
 * loop and 1.5 ms of kernel time per approval; measured under `bench:peers`, spawning was 35% of the
 * daemon's CPU for `insert_rows` with exec approvals. The helper is small, so its forks are cheap,
 * and they block only the helper.
 *
 * What the command sees is unchanged: it runs through the shell (`shell: true`), in its own process
 * group on POSIX, with the request as JSON on stdin, the daemon's environment as it was when the helper
 * started (`NODE_OPTIONS` included, which the helper itself does not run under), and its exit code
 * decides (0 approves). Interrupting a run sends `SIGTERM` to the command's process group, then
 * `SIGKILL` after the grace period, and completes once it has exited. The helper starts on the first
 * approval and is restarted after it dies (a run in progress then reports no exit code: a denial); it
 * ends with the daemon (end of its input), killing what it still runs.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as NodeChildProcess from "node:child_process"
import * as NodeReadline from "node:readline"

/** What a run left: the exit code (`null`: killed by a signal, or could not start), and why it could not start. */
export interface Outcome {
  readonly code: number | null
  readonly error?: string
}

/** @category models */
export interface Spawner {
  /** Runs `command` through the shell with `input` on stdin; interruption kills it (see the module). */
  readonly run: (command: string, input: string) => Effect.Effect<Outcome>
  /** The helper's process id, while it runs. */
  readonly helperPid: () => number | undefined
}

/** The helper, run with `node -e`: JSON lines in (`run`, `kill`), JSON lines out (`id`, `code`, `error`). */
const HELPER = String.raw`
"use strict";
process.title = "weaviate-mcp approval helper";
const { spawn } = require("node:child_process");
const readline = require("node:readline");
const posix = process.platform !== "win32";
const env = { ...process.env };
if (env.WEAVIATE_MCP_SPAWNER_NODE_OPTIONS !== undefined) env.NODE_OPTIONS = env.WEAVIATE_MCP_SPAWNER_NODE_OPTIONS;
delete env.WEAVIATE_MCP_SPAWNER_NODE_OPTIONS;
const children = new Map();
const send = (message) => process.stdout.write(JSON.stringify(message) + "\n");
const killGroup = (child, signal) => { try { if (posix) process.kill(-child.pid, signal); else child.kill(signal); } catch {} };
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  let message;
  try { message = JSON.parse(line); } catch { return; }
  if (typeof message.run === "number") {
    const id = message.run;
    let reported = false;
    const report = (code, error) => {
      if (reported) return;
      reported = true;
      children.delete(id);
      send(error === undefined ? { id, code } : { id, code: null, error });
    };
    let child;
    try {
      child = spawn(message.command, [], { shell: true, detached: posix, stdio: ["pipe", "ignore", "ignore"], env, windowsHide: false });
    } catch (error) { return report(null, String(error && error.message)); }
    child.once("error", (error) => report(null, error.message));
    child.once("close", (code) => report(code));
    if (child.pid !== undefined) children.set(id, child);
    child.stdin.on("error", () => {});
    child.stdin.end(message.input);
  } else if (typeof message.kill === "number") {
    const child = children.get(message.kill);
    if (child === undefined) return send({ id: message.kill, code: null });
    const escalate = setTimeout(() => killGroup(child, "SIGKILL"), message.graceMs);
    child.once("exit", () => clearTimeout(escalate));
    killGroup(child, "SIGTERM");
  }
});
process.stdin.on("end", () => {
  for (const child of children.values()) killGroup(child, "SIGKILL");
  process.exit(0);
});
`

/** How long a killed command has after `SIGTERM` before `SIGKILL`. */
const KILL_GRACE_MS = 2_000

type Settle = (outcome: Outcome) => void

/** @category models */
export interface Options {
  /**
   * Runs the command directly when no helper can run: the runtime is not Node itself (`node -e`
   * would not work with its `execPath`), or the helper failed to start.
   */
  readonly direct: (command: string, input: string) => Effect.Effect<Outcome>
  /** Whether this runtime can run the helper; default: plain Node (not Electron, not Bun). */
  readonly helperAvailable?: boolean
  /** The Node executable of the helper; default `process.execPath`. */
  readonly nodePath?: string
}

/** Whether `process.execPath` is a plain Node that runs `node -e`. */
const plainNode = (): boolean => {
  const versions = process.versions as Record<string, string | undefined>
  return process.release?.name === "node" && versions.electron === undefined && versions.bun === undefined
}

/**
 * A spawner with its own helper (started on first use).
 *
 * @category constructors
 */
export const make = (options: Options): Spawner => {
  // Once the helper could not start, every run goes direct: an approval never waits on a broken helper.
  let direct = options.helperAvailable === undefined ? !plainNode() : !options.helperAvailable
  let helper: NodeChildProcess.ChildProcessByStdio<import("node:stream").Writable, import("node:stream").Readable, null> | undefined
  const pending = new Map<number, Settle>()
  let nextId = 0

  const stopped = (child: NodeChildProcess.ChildProcess, why: string) => {
    if (helper !== child) return
    helper = undefined
    const settles = Array.from(pending.values())
    pending.clear()
    for (const settle of settles) settle({ code: null, error: why })
  }

  const start = () => {
    const env: NodeJS.ProcessEnv = { ...process.env }
    if (env.NODE_OPTIONS !== undefined) env.WEAVIATE_MCP_SPAWNER_NODE_OPTIONS = env.NODE_OPTIONS
    delete env.NODE_OPTIONS
    const child = NodeChildProcess.spawn(options.nodePath ?? process.execPath, ["-e", HELPER], { stdio: ["pipe", "pipe", "ignore"], env, windowsHide: true })
    helper = child
    // The helper never keeps the daemon alive: it ends when the daemon's side of its input closes.
    child.unref()
    ;(child.stdin as unknown as { unref?: () => void }).unref?.()
    ;(child.stdout as unknown as { unref?: () => void }).unref?.()
    child.stdin.on("error", () => {})
    NodeReadline.createInterface({ input: child.stdout }).on("line", (line) => {
      let message: { readonly id?: unknown; readonly code?: unknown; readonly error?: unknown }
      try {
        message = JSON.parse(line)
      } catch {
        return
      }
      if (typeof message.id !== "number") return
      const settle = pending.get(message.id)
      if (settle === undefined) return
      pending.delete(message.id)
      settle({
        code: typeof message.code === "number" ? message.code : null,
        ...(typeof message.error === "string" ? { error: message.error } : {})
      })
    })
    child.once("error", (error) => {
      direct = true
      stopped(child, `the approval helper could not run: ${error.message}`)
    })
    child.once("exit", () => stopped(child, "the approval helper stopped"))
    return child
  }

  const send = (message: unknown) => {
    const child = helper ?? start()
    child.stdin.write(`${JSON.stringify(message)}\n`)
  }

  const viaHelper = (command: string, input: string) =>
    Effect.async<Outcome>((resume) => {
      const id = nextId++
      pending.set(id, (outcome) => resume(Effect.succeed(outcome)))
      send({ run: id, command, input })
      // Interrupted: kill the command's group and complete once it has exited.
      return Effect.async<void>((done) => {
        if (!pending.has(id)) return done(Effect.void)
        pending.set(id, () => done(Effect.void))
        send({ kill: id, graceMs: KILL_GRACE_MS })
      })
    })

  const run = (command: string, input: string): Effect.Effect<Outcome> =>
    Effect.suspend(() =>
      direct
        ? options.direct(command, input)
        : Effect.flatMap(viaHelper(command, input), (outcome) =>
          // The helper failed to start under this run (only that sets `direct`): run it directly instead of denying.
          direct && outcome.error !== undefined
            ? options.direct(command, input)
            : Effect.succeed(outcome))
    )

  return { run, helperPid: () => helper?.pid }
}
