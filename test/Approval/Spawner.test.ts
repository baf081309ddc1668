/**
 * The approval command's launcher (`Spawner`): the daemon does not fork itself per approval; a small
 * resident helper starts the command, with the same stdin, environment and exit-code contract.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Spawner from "../../src/Approval/Spawner.js"
import { isAlive, pollUntil, readIfExists, tempDir } from "./support.js"

/** The helper must do the work in these tests: a direct run fails the test. */
const notDirect = () => Effect.dieMessage("the command was run directly, not by the helper")

/** A run of a command that sleeps for ten minutes, once it has started: its fiber and its process id. */
const sleeper = (spawner: Spawner.Spawner) =>
  Effect.gen(function*() {
    const pidFile = NodePath.join(tempDir(), "pid")
    const fiber = yield* Effect.fork(spawner.run(`echo $$ > '${pidFile}'; exec sleep 600`, ""))
    const pid = Number(yield* pollUntil("the command to start", () => readIfExists(pidFile)))
    return { fiber, pid }
  })

const parentsIn = (file: string) => NodeFs.readFileSync(file, "utf8").trim().split("\n").map(Number)

describe("Spawner", () => {
  it.live("the command is started by one resident helper, not by the daemon: every run has the same parent, which is not this process", () =>
    Effect.gen(function*() {
      const spawner = Spawner.make({ direct: notDirect })
      const file = NodePath.join(tempDir(), "parents")
      for (let i = 0; i < 5; i++) {
        const outcome = yield* spawner.run(`echo $PPID >> '${file}'`, "{}")
        assert.strictEqual(outcome.code, 0)
      }
      const parents = parentsIn(file)
      assert.strictEqual(parents.length, 5)
      assert.strictEqual(new Set(parents).size, 1)
      assert.notStrictEqual(parents[0], process.pid)
      assert.strictEqual(parents[0], spawner.helperPid())
    }))

  it.live("runs in parallel: eight commands that each wait for all the others finish together", () =>
    Effect.gen(function*() {
      const spawner = Spawner.make({ direct: notDirect })
      const dir = tempDir()
      // Each command marks itself, then waits (bounded) until eight marks exist: run one at a time, none could finish.
      const command = (i: number) =>
        `touch '${dir}/m${i}'; n=0; while [ "$(ls '${dir}' | wc -l)" -lt 8 ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n+1)); done; [ "$(ls '${dir}' | wc -l)" -ge 8 ]`
      const outcomes = yield* Effect.forEach(Array.from({ length: 8 }, (_, i) => i), (i) => spawner.run(command(i), ""), { concurrency: "unbounded" })
      assert.deepStrictEqual(outcomes.map((o) => o.code), [0, 0, 0, 0, 0, 0, 0, 0])
    }))

  it.live("the input reaches the command's stdin unchanged, and the exit code is reported", () =>
    Effect.gen(function*() {
      const spawner = Spawner.make({ direct: notDirect })
      const out = NodePath.join(tempDir(), "in")
      const input = JSON.stringify({ statement: "POST /v1/objects\n{\"title\":\"é $(touch /tmp/x) \\u0000\"}" })
      assert.strictEqual((yield* spawner.run(`cat > '${out}'`, input)).code, 0)
      assert.strictEqual(NodeFs.readFileSync(out, "utf8"), input)
      assert.strictEqual((yield* spawner.run("exit 3", "")).code, 3)
    }))

  it.live("NODE_OPTIONS reaches the command although the helper does not run under it", () =>
    Effect.gen(function*() {
      const before = process.env.NODE_OPTIONS
      process.env.NODE_OPTIONS = "--no-deprecation"
      try {
        const spawner = Spawner.make({ direct: notDirect })
        const out = NodePath.join(tempDir(), "env")
        assert.strictEqual((yield* spawner.run(`printf '%s' "$NODE_OPTIONS" > '${out}'`, "")).code, 0)
        assert.strictEqual(NodeFs.readFileSync(out, "utf8"), "--no-deprecation")
      } finally {
        if (before === undefined) delete process.env.NODE_OPTIONS
        else process.env.NODE_OPTIONS = before
      }
    }))

  it.live("a helper that dies denies what it was running (no exit code) and the next run starts a new helper", () =>
    Effect.gen(function*() {
      const spawner = Spawner.make({ direct: notDirect })
      const { fiber, pid: commandPid } = yield* sleeper(spawner)
      const first = spawner.helperPid()!
      process.kill(first, "SIGKILL")
      const outcome = yield* Fiber.join(fiber)
      assert.isNull(outcome.code)
      assert.isString(outcome.error)
      const again = yield* spawner.run("exit 0", "")
      assert.strictEqual(again.code, 0)
      assert.notStrictEqual(spawner.helperPid(), first)
      // The orphaned command is in its own group; clean it up.
      if (isAlive(commandPid)) process.kill(commandPid, "SIGKILL")
    }))

  it.live("interrupting a run kills the command and completes once it has exited", () =>
    Effect.gen(function*() {
      const { fiber, pid } = yield* sleeper(Spawner.make({ direct: notDirect }))
      assert.isTrue(isAlive(pid))
      yield* Fiber.interrupt(fiber)
      assert.isFalse(isAlive(pid))
    }))

  it.live("where no helper can run (not plain Node), the command runs directly, with the same contract", () =>
    Effect.gen(function*() {
      const direct: Array<string> = []
      const spawner = Spawner.make({ helperAvailable: false, direct: (command) => Effect.sync(() => (direct.push(command), { code: 0 })) })
      assert.strictEqual((yield* spawner.run("exit 5", "{}")).code, 0)
      assert.deepStrictEqual(direct, ["exit 5"])
      assert.isUndefined(spawner.helperPid())
    }))

  it.live("a helper that cannot start (no such Node) makes the run, and every later run, go direct instead of denying", () =>
    Effect.gen(function*() {
      const direct: Array<string> = []
      const spawner = Spawner.make({ nodePath: "/nonexistent/node", direct: (command) => Effect.sync(() => (direct.push(command), { code: 0 })) })
      assert.strictEqual((yield* spawner.run("first", "{}")).code, 0)
      assert.strictEqual((yield* spawner.run("second", "{}")).code, 0)
      assert.deepStrictEqual(direct, ["first", "second"])
    }))
})
