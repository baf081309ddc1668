/**
 * The zenity dialog in a real X server: Xvfb picks a free display (`-displayfd`), the dialog is
 * answered with xdotool. Skipped, with the reason in the test name, only where Xvfb, zenity or
 * xdotool is not installed (Debian: `apt-get install -y xvfb zenity xdotool`).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as NodeChildProcess from "node:child_process"
import * as NodeCrypto from "node:crypto"
import { currentEnvironment, Dialog } from "../../src/Approval/Dialog.js"
import { realPause, sampleRequest } from "./support.js"

const missing = ["Xvfb", "zenity", "xdotool"].filter((program) => !currentEnvironment().hasCommand(program))
const available = process.platform === "linux" && missing.length === 0
const skipReason = available ? "" : ` (skipped: not installed here: ${missing.join(", ") || "not Linux"})`
if (!available) console.warn(`ZenityDialog.test${skipReason}`)

/**
 * Starts Xvfb on a free display; yields ":N" once the server accepts connections. `-noreset`: by
 * default the server resets when its last client leaves and refuses connections meanwhile, which
 * races with the next dialog.
 */
const xvfb = Effect.acquireRelease(
  Effect.async<{ readonly display: string; readonly server: NodeChildProcess.ChildProcess }, Error>((resume) => {
    const server = NodeChildProcess.spawn("Xvfb", ["-displayfd", "3", "-noreset", "-screen", "0", "1024x768x24", "-nolisten", "tcp"], {
      stdio: ["ignore", "ignore", "ignore", "pipe"]
    })
    let buffer = ""
    const fd3 = server.stdio[3] as NodeJS.ReadableStream
    fd3.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8")
      const line = /^(\d+)\n/.exec(buffer)
      if (line !== null) resume(Effect.succeed({ display: `:${line[1]}`, server }))
    })
    server.once("error", (error) => resume(Effect.fail(error)))
    server.once("exit", (code) => resume(Effect.fail(new Error(`Xvfb exited with ${code}`))))
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      if (server.exitCode !== null || server.signalCode !== null) return resume(Effect.void)
      server.once("exit", () => resume(Effect.void))
      server.kill("SIGTERM")
    })
)

const xdotool = (display: string, args: ReadonlyArray<string>) =>
  Effect.promise(() =>
    new Promise<{ readonly code: number | null; readonly stdout: string }>((resolve) => {
      NodeChildProcess.execFile("xdotool", [...args], { env: { ...process.env, DISPLAY: display } }, (error, stdout) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout }))
    })
  )

/** Waits (bounded) for a visible window with this exact title, then types `keys` into it. */
const answer = (display: string, title: string, keys: string) =>
  Effect.gen(function*() {
    let window: string | undefined
    for (let attempt = 0; attempt < 250 && window === undefined; attempt++) {
      const found = yield* xdotool(display, ["search", "--onlyvisible", "--name", `^${title}$`])
      window = found.code === 0 ? found.stdout.trim().split("\n")[0] : undefined
      if (window === undefined) yield* realPause(20)
    }
    if (window === undefined) return yield* Effect.dieMessage(`no window titled ${title} appeared`)
    // No window manager under Xvfb: focus the dialog directly, then type.
    yield* xdotool(display, ["windowfocus", "--sync", window])
    yield* xdotool(display, ["key", "--clearmodifiers", keys])
  })

describe("Dialog native zenity (Xvfb + xdotool)", () => {
  it.scopedLive.skipIf(!available)(`zenity: Approve (Alt+A) approves, Return denies because Deny is the default${skipReason}`, () =>
    Effect.gen(function*() {
      const { display } = yield* xvfb
      // The dialog inherits the daemon's environment, as `serve` would.
      process.env["DISPLAY"] = display
      delete process.env["WAYLAND_DISPLAY"]
      const dialog = yield* Effect.provide(Dialog, Dialog.layerFromMode("dialog"))
      assert.strictEqual(dialog.kind, "native")

      const approveTitle = `wmcp-approve-${NodeCrypto.randomBytes(4).toString("hex")}`
      const approving = yield* Effect.fork(dialog.confirm({ ...sampleRequest, title: approveTitle }))
      yield* answer(display, approveTitle, "alt+a")
      assert.isTrue(yield* Fiber.join(approving))

      const denyTitle = `wmcp-deny-${NodeCrypto.randomBytes(4).toString("hex")}`
      const denying = yield* Effect.fork(dialog.confirm({ ...sampleRequest, title: denyTitle }))
      yield* answer(display, denyTitle, "Return")
      assert.isFalse(yield* Fiber.join(denying))

      const explicitTitle = `wmcp-deny-button-${NodeCrypto.randomBytes(4).toString("hex")}`
      const explicit = yield* Effect.fork(dialog.confirm({ ...sampleRequest, title: explicitTitle }))
      yield* answer(display, explicitTitle, "alt+d")
      assert.isFalse(yield* Fiber.join(explicit))
    }))

  it.scopedLive.skipIf(!available)(`zenity: interrupting the question closes the dialog window${skipReason}`, () =>
    Effect.gen(function*() {
      const { display } = yield* xvfb
      process.env["DISPLAY"] = display
      const title = `wmcp-interrupt-${NodeCrypto.randomBytes(4).toString("hex")}`
      const asking = yield* Effect.fork(Dialog.makeNative("zenity").confirm({ ...sampleRequest, title }))
      let visible = false
      for (let attempt = 0; attempt < 250 && !visible; attempt++) {
        visible = (yield* xdotool(display, ["search", "--onlyvisible", "--name", `^${title}$`])).code === 0
        if (!visible) yield* realPause(20)
      }
      assert.isTrue(visible)
      yield* Fiber.interrupt(asking)
      const after = yield* xdotool(display, ["search", "--onlyvisible", "--name", `^${title}$`])
      assert.notStrictEqual(after.code, 0, "the dialog window is gone once the interruption completes")
    }))
})
