import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as NodeStream from "node:stream"
import {
  Dialog,
  DialogConfigError,
  type Environment,
  nativeCommand,
  pickAuto
} from "../../src/Approval/Dialog.js"
import { isAlive, pollUntil, readIfExists, sampleRequest, tempDir } from "./support.js"

const environment = (overrides: Partial<Environment> & { readonly commands?: ReadonlyArray<string> }): Environment => ({
  platform: overrides.platform ?? "linux",
  env: overrides.env ?? {},
  stdinIsTTY: overrides.stdinIsTTY ?? false,
  hasCommand: (name) => (overrides.commands ?? []).includes(name)
})

const kindFor = (mode: Parameters<typeof Dialog.layerFromMode>[0], options: Parameters<typeof Dialog.layerFromMode>[1]) =>
  Effect.either(Effect.map(Dialog, (dialog) => dialog.kind).pipe(Effect.provide(Dialog.layerFromMode(mode, options))))

describe("Dialog exec (--approval-command)", () => {
  it.live("exit code 0 approves", () =>
    Effect.map(Dialog.makeExec("exit 0").confirm(sampleRequest), (approved) => assert.isTrue(approved)))

  it.live("any other exit code denies", () =>
    Effect.gen(function*() {
      assert.isFalse(yield* Dialog.makeExec("exit 1").confirm(sampleRequest))
      assert.isFalse(yield* Dialog.makeExec("exit 42").confirm(sampleRequest))
      assert.isFalse(yield* Dialog.makeExec("kill -TERM $$").confirm(sampleRequest))
    }))

  it.live("a command that cannot run denies", () =>
    Effect.map(Dialog.makeExec("/nonexistent/approval-program").confirm(sampleRequest), (approved) => assert.isFalse(approved)))

  it.live("the command receives the request as JSON on stdin, and the statement is never interpolated", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const out = NodePath.join(dir, "request.json")
      const approved = yield* Dialog.makeExec(`cat > '${out}'`).confirm(sampleRequest)
      assert.isTrue(approved)
      assert.deepStrictEqual(JSON.parse(NodeFs.readFileSync(out, "utf8")), sampleRequest)
      assert.isFalse(NodeFs.existsSync("/tmp/wmcp-approval-pwned"), "the statement's $(...) must not run")
    }))

  it.live("interrupting the question kills the dialog process and its children", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const pidFile = NodePath.join(dir, "pids")
      const fiber = yield* Effect.fork(
        Dialog.makeExec(`sleep 60 & echo "$$ $!" > '${pidFile}'; wait`).confirm(sampleRequest)
      )
      const pids = (yield* pollUntil("the dialog to start", () => readIfExists(pidFile))).trim().split(" ").map(Number)
      assert.strictEqual(pids.length, 2)
      assert.isTrue(pids.every(isAlive))
      yield* Fiber.interrupt(fiber)
      // The shell is our child: gone as soon as the interruption completes.
      assert.isFalse(isAlive(pids[0]!))
      // Its child was in the same process group; it may still be reaped by init.
      yield* pollUntil("the dialog's child to die", () => (isAlive(pids[1]!) ? undefined : true))
    }))

  it.effect("an unanswered dialog times out as a denial (120 s default, TestClock) and is killed", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const pidFile = NodePath.join(dir, "pid")
      const fiber = yield* Effect.fork(Dialog.makeExec(`echo $$ > '${pidFile}'; exec sleep 600`).confirm(sampleRequest))
      const pid = Number(yield* pollUntil("the dialog to start", () => readIfExists(pidFile)))
      yield* TestClock.adjust("119 seconds")
      assert.isTrue(Option.isNone(yield* Fiber.poll(fiber)))
      yield* TestClock.adjust("1 second")
      assert.isFalse(yield* Fiber.join(fiber))
      assert.isFalse(isAlive(pid))
    }))

  it.effect("the time-out is configurable", () =>
    Effect.gen(function*() {
      const fiber = yield* Effect.fork(Dialog.makeExec("exec sleep 600", { timeout: "5 seconds" }).confirm(sampleRequest))
      yield* TestClock.adjust("5 seconds")
      assert.isFalse(yield* Fiber.join(fiber))
    }))
})

describe("Dialog deny", () => {
  it.effect("deny refuses every question without asking and is not interactive", () =>
    Effect.gen(function*() {
      const dialog = yield* Dialog
      assert.isFalse(yield* dialog.confirm(sampleRequest))
      assert.isFalse(dialog.interactive)
      assert.strictEqual(dialog.kind, "deny")
    }).pipe(Effect.provide(Dialog.layerDeny)))
})

describe("Dialog terminal", () => {
  const terminalIo = () => {
    const input = new NodeStream.PassThrough()
    const output = new NodeStream.PassThrough()
    let written = ""
    output.on("data", (chunk: Buffer) => (written += chunk.toString("utf8")))
    return { input, output, written: () => written }
  }
  const prompts = (text: string) => text.split("Approve? [y/N] ").length - 1

  it.live("y approves, anything else denies; concurrent prompts are asked one at a time", () =>
    Effect.gen(function*() {
      const io = terminalIo()
      const dialog = yield* Dialog.makeTerminal(io)
      const first = yield* Effect.fork(dialog.confirm({ ...sampleRequest, title: "first" }))
      const second = yield* Effect.fork(dialog.confirm({ ...sampleRequest, title: "second" }))
      yield* pollUntil("the first prompt", () => (prompts(io.written()) === 1 ? true : undefined))
      assert.include(io.written(), "=== first ===")
      assert.notInclude(io.written(), "=== second ===")
      io.input.write("y\n")
      assert.isTrue(yield* Fiber.join(first))
      yield* pollUntil("the second prompt", () => (prompts(io.written()) === 2 ? true : undefined))
      io.input.write("sure\n")
      assert.isFalse(yield* Fiber.join(second))
      assert.include(io.written(), sampleRequest.statement)
    }))

  it.effect("an unanswered prompt times out as a denial, and the next prompt gets its own full time (TestClock)", () =>
    Effect.gen(function*() {
      const io = terminalIo()
      const dialog = yield* Dialog.makeTerminal(io, { timeout: "10 seconds" })
      const first = yield* Effect.fork(dialog.confirm({ ...sampleRequest, title: "first" }))
      const second = yield* Effect.fork(dialog.confirm({ ...sampleRequest, title: "second" }))
      yield* pollUntil("the first prompt", () => (prompts(io.written()) === 1 ? true : undefined))
      yield* TestClock.adjust("10 seconds")
      assert.isFalse(yield* Fiber.join(first))
      assert.include(io.written(), "(question withdrawn)")
      yield* pollUntil("the second prompt", () => (prompts(io.written()) === 2 ? true : undefined))
      yield* TestClock.adjust("9 seconds")
      assert.isTrue(Option.isNone(yield* Fiber.poll(second)))
      io.input.write("y\n")
      assert.isTrue(yield* Fiber.join(second))
    }))

  it.live("end of input denies", () =>
    Effect.gen(function*() {
      const io = terminalIo()
      const dialog = yield* Dialog.makeTerminal(io)
      const answer = yield* Effect.fork(dialog.confirm(sampleRequest))
      yield* pollUntil("the prompt", () => (prompts(io.written()) === 1 ? true : undefined))
      io.input.end()
      assert.isFalse(yield* Fiber.join(answer))
    }))
})

describe("Dialog native", () => {
  it("native dialogs get the statement in argv or the environment, never through a shell; Approve is not the default", () => {
    for (const tool of ["zenity", "kdialog", "osascript", "powershell"] as const) {
      const spec = nativeCommand(tool, sampleRequest)
      assert.notStrictEqual(spec.shell, true, tool)
      const carried = [...spec.args, ...Object.values(spec.env ?? {})].join("\n")
      const shown = tool === "kdialog"
        ? sampleRequest.statement.replace(/"/g, "&quot;") // kdialog gets escaped rich text
        : sampleRequest.statement
      assert.include(carried, shown, tool)
    }
    const zenity = nativeCommand("zenity", sampleRequest).args
    assert.include(zenity, "--no-markup")
    assert.include(zenity, "--default-cancel")
    assert.include(nativeCommand("osascript", sampleRequest).args.join(" "), "default button \"Deny\"")
    assert.include(nativeCommand("powershell", sampleRequest).args.join(" "), "'Button2'")
  })
})

describe("Dialog auto selection", () => {
  it("auto picks the native dialog first: osascript, PowerShell, zenity or kdialog with a display", () => {
    assert.strictEqual(pickAuto(environment({ platform: "darwin", commands: ["osascript"] })), "osascript")
    assert.strictEqual(pickAuto(environment({ platform: "win32", commands: ["powershell.exe"] })), "powershell")
    assert.strictEqual(pickAuto(environment({ env: { DISPLAY: ":0" }, commands: ["zenity", "kdialog"] })), "zenity")
    assert.strictEqual(pickAuto(environment({ env: { WAYLAND_DISPLAY: "wayland-0" }, commands: ["kdialog"] })), "kdialog")
  })

  it("auto falls back to the terminal when stdin is a TTY, else to deny", () => {
    assert.strictEqual(pickAuto(environment({ commands: ["zenity"], stdinIsTTY: true })), "terminal")
    assert.strictEqual(pickAuto(environment({ env: { DISPLAY: "" }, commands: ["zenity"] })), "deny")
    assert.strictEqual(pickAuto(environment({ env: { DISPLAY: ":0" }, commands: [] })), "deny")
  })

  it.effect("layerFromMode builds the chosen service, and explicit modes that cannot work here fail", () =>
    Effect.gen(function*() {
      const headless = environment({})
      assert.deepStrictEqual(yield* kindFor("auto", { environment: headless }), Either.right("deny"))
      assert.deepStrictEqual(
        yield* kindFor("auto", { environment: environment({ env: { DISPLAY: ":0" }, commands: ["zenity"] }) }),
        Either.right("native")
      )
      assert.deepStrictEqual(yield* kindFor("deny", { environment: headless }), Either.right("deny"))
      assert.deepStrictEqual(yield* kindFor("exec", { command: "true", environment: headless }), Either.right("exec"))
      for (const [mode, options] of [["exec", { environment: headless }], ["dialog", { environment: headless }], ["terminal", { environment: headless }]] as const) {
        const result = yield* kindFor(mode, options)
        assert.isTrue(Either.isLeft(result) && result.left instanceof DialogConfigError, mode)
      }
    }))
})
