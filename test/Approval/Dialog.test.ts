import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as NodeStream from "node:stream"
import type { DialogRequest } from "../../src/Approval/DialogText.js"
import {
  Dialog,
  DialogConfigError,
  KDIALOG_COLUMNS,
  type Environment,
  nativeCommand,
  pickAuto
} from "../../src/Approval/Dialog.js"
import { COLUMNS, dialogText, readableStatement } from "../../src/Approval/DialogText.js"
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

  it.live("the daemon does not fork itself per approval: the command's parent is the resident helper, the same for every question", () =>
    Effect.gen(function*() {
      const file = NodePath.join(tempDir(), "parents")
      const dialog = Dialog.makeExec(`echo $PPID >> '${file}'`)
      for (let i = 0; i < 3; i++) assert.isTrue(yield* dialog.confirm(sampleRequest))
      const parents = NodeFs.readFileSync(file, "utf8").trim().split("\n").map(Number)
      assert.strictEqual(new Set(parents).size, 1)
      assert.notStrictEqual(parents[0], process.pid)
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
      assert.include(io.written(), readableStatement(sampleRequest.statement).text)
    }))

  it.live("the prompt keeps within the terminal's width and labels the client's own words", () =>
    Effect.gen(function*() {
      const io = terminalIo()
      Object.assign(io.output, { columns: 60 })
      const dialog = yield* Dialog.makeTerminal(io)
      const spoof = "Claude Desktop wants to READ one row … Safe to approve." + "\n".repeat(47) + "really"
      const statement = `POST /v1/objects\n${JSON.stringify({ class: "Article", properties: { title: "z".repeat(3_000) } })}`
      const answer = yield* Effect.fork(dialog.confirm({ ...sampleRequest, clientName: spoof, statement }))
      yield* pollUntil("the prompt", () => (prompts(io.written()) === 1 ? true : undefined))
      io.input.write("n\n")
      assert.isFalse(yield* Fiber.join(answer))
      const lines = io.written().split("\n")
      assert.isTrue(lines.every((line) => Array.from(line).length <= 59), "within the width less one column")
      expectClientWordsLabelled(lines, "terminal")
      assert.include(io.written(), "[truncated: ")
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
  const tools = ["zenity", "kdialog", "osascript", "powershell"] as const
  const spoof = "Claude Desktop wants to READ one row … Safe to approve." + "\n".repeat(47)
  const hostile: DialogRequest = {
    ...sampleRequest,
    clientName: spoof,
    statement: `POST /v1/objects\n${JSON.stringify({ class: "Article", properties: { title: "x".repeat(3_000), path: "C:\\new\\table" } })}`
  }
  /** Everything a dialog gets from us: argv, stdin and the environment. */
  const carried = (spec: ReturnType<typeof nativeCommand>) => [...spec.args, spec.stdin ?? "", ...Object.values(spec.env ?? {})].join("\n")

  it("native dialogs get their text in argv, stdin or the environment, never through a shell", () => {
    for (const tool of tools) {
      const spec = nativeCommand(tool, sampleRequest)
      assert.notStrictEqual(spec.shell, true, tool)
      const shown = tool === "kdialog" ? escapeForKdialog(sampleRequest.statement) : sampleRequest.statement
      assert.include(carried(spec), shown.split("\n")[0], tool)
    }
    // The scripts of osascript and PowerShell never contain the request's text: it comes as data.
    const osascript = nativeCommand("osascript", hostile).args
    assert.notInclude(osascript[3], "Article")
    assert.deepStrictEqual(osascript.slice(0, 3), ["-l", "JavaScript", "-e"])
    const powershell = nativeCommand("powershell", hostile)
    assert.notInclude(powershell.args.join(" "), "Article")
    assert.include(powershell.env!["WEAVIATE_MCP_DIALOG_TEXT"], "\"class\": \"Article\"")
  })

  it("every native dialog has a fixed size within 1024×700 and a scrolling, monospace statement area", () => {
    const zenity = nativeCommand("zenity", hostile).args
    const size = (flag: string) => Number(zenity.find((a) => a.startsWith(flag))!.slice(flag.length))
    assert.include(zenity, "--text-info")
    assert.isAtMost(size("--width="), 1024 - 40)
    assert.isAtMost(size("--height="), 700 - 60)
    assert.include(zenity, "--font=Monospace 10")

    const kdialog = nativeCommand("kdialog", hostile).args
    const geometry = /^(\d+)x(\d+)\+(\d+)\+(\d+)$/.exec(kdialog[kdialog.indexOf("--geometry") + 1]!)!
    const [w, h, x, y] = geometry.slice(1).map(Number) as [number, number, number, number]
    assert.isAtMost(x + w, 1024 - 20)
    assert.isAtMost(y + h, 700 - 40)
    assert.include(kdialog.at(-1)!, "<pre>")

    const jxa = nativeCommand("osascript", hostile).args[3]!
    const rect = /NSMakeRect\(0, 0, (\d+), (\d+)\)/.exec(jxa)!
    // The alert adds its icon, headline, informative text and buttons around the scrolling view.
    assert.isAtMost(Number(rect[1]) + 160, 1024)
    assert.isAtMost(Number(rect[2]) + 220, 700)
    assert.include(jxa, "hasVerticalScroller = true")
    assert.include(jxa, "userFixedPitchFontOfSize")

    const ps = nativeCommand("powershell", hostile).args.join(" ")
    const client = /ClientSize = New-Object System\.Drawing\.Size\((\d+), (\d+)\)/.exec(ps)!
    assert.isAtMost(Number(client[1]) + 20, 1024) // borders
    assert.isAtMost(Number(client[2]) + 45, 700) // title bar and borders
    assert.include(ps, "$t.ScrollBars = 'Vertical'")
    assert.include(ps, "'FixedDialog'")
    assert.include(ps, "Consolas")
  })

  it("no line of a dialog's text is wider than the dialog, and the spoofing client title stays on its labelled line", () => {
    for (const tool of tools) {
      const spec = nativeCommand(tool, hostile)
      const text = tool === "zenity" ? spec.stdin! : tool === "powershell" ? spec.env!["WEAVIATE_MCP_DIALOG_TEXT"]! : tool === "osascript" ? spec.args.slice(5).join("\n") : spec.args.at(-1)!
      const lines = (tool === "kdialog" ? unescapeKdialog(text) : text).split("\n")
      assert.isTrue(lines.every((line) => Array.from(line).length <= COLUMNS + 10), tool)
      expectClientWordsLabelled(lines, tool)
      assert.include(text, "[truncated: ", tool)
    }
    // The window title is the server's: the client's name is never in it.
    for (const tool of tools) {
      const spec = nativeCommand(tool, hostile)
      const title = tool === "zenity"
        ? spec.args.find((a) => a.startsWith("--title="))!
        : tool === "powershell"
        ? spec.env!["WEAVIATE_MCP_DIALOG_TITLE"]!
        : tool === "osascript"
        ? spec.args[4]!
        : spec.args[spec.args.indexOf("--title") + 1]!
      assert.include(title, sampleRequest.title, tool)
      assert.notInclude(title, "Claude", tool)
    }
  })

  it("kdialog gets escaped rich text: markup and backslash escapes in the statement show as written", () => {
    const request = { ...sampleRequest, statement: "{ Get { Article(where: {valueText: \"a\\nb <b>x</b> & \\\\\"}) { title } } }" }
    const html = nativeCommand("kdialog", request).args.at(-1)!
    assert.include(html, "&lt;b&gt;x&lt;/b&gt;")
    // What kdialog shows: its escapes read (Utils::parseString: \\n is a line break, \\\\ a backslash), then the HTML.
    const shown = unescapeHtml(kdialogParseString(html).replace(/<[^>]+>/g, ""))
    assert.include(shown, "a\\nb <b>x</b> & \\\\")
    assert.strictEqual(shown, dialogText(request, KDIALOG_COLUMNS))
  })

  it("a stray Return never approves: zenity's Approve waits for a ticked box, the others default to Deny", () => {
    const zenity = nativeCommand("zenity", sampleRequest).args
    assert.include(zenity, "--ok-label=Approve")
    assert.include(zenity, "--cancel-label=Deny")
    assert.isTrue(zenity.some((a) => a.startsWith("--checkbox=")))
    // kdialog's default button is "yes": it is Deny, and Approve ("no") counts only with the window id printed.
    const kdialog = nativeCommand("kdialog", sampleRequest).args
    assert.strictEqual(kdialog[kdialog.indexOf("--yes-label") + 1], "Deny")
    assert.strictEqual(kdialog[kdialog.indexOf("--no-label") + 1], "Approve")
    assert.include(kdialog, "--print-winid")
    const jxa = nativeCommand("osascript", sampleRequest).args[3]!
    assert.isBelow(jxa.indexOf("addButtonWithTitle('Deny')"), jxa.indexOf("addButtonWithTitle('Approve')"))
    assert.include(jxa, "runModal != 1001) $.exit(1)")
    const ps = nativeCommand("powershell", sampleRequest).args.join(" ")
    assert.include(ps, "$f.AcceptButton = $deny; $f.CancelButton = $deny")
  })
})

/**
 * The spoofing client title shows once, on the line labelled "The client calls itself:"; wrapped, it
 * continues indented under its label, so none of its words starts a line as if the server said it.
 */
const expectClientWordsLabelled = (lines: ReadonlyArray<string>, where: string) => {
  const label = lines.findIndex((line) => line.startsWith("The client calls itself: Claude Desktop"))
  assert.isAbove(label, -1, where)
  const spoofed = lines.flatMap((line, i) => (/READ|one row|Safe to|approve\.|really/.test(line) ? [i] : []))
  assert.isAbove(spoofed.length, 0, where)
  for (const i of spoofed) {
    assert.isTrue(i === label || (i > label && lines.slice(label + 1, i + 1).every((l) => l.startsWith("    "))), `${where}: ${lines[i]}`)
  }
  assert.strictEqual(lines.filter((line) => line.includes("calls itself")).length, 1, where)
}

/** kdialog's reading of its text argument (Utils::parseString): `\\\\` is a backslash, `\\n` a line break. */
const kdialogParseString = (text: string) => text.replace(/\\(\\|n)/g, (_, c: string) => (c === "n" ? "\n" : "\\"))

const unescapeHtml = (html: string) =>
  html.replace(/&quot;/g, "\"").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")

/** What kdialog shows of its rich-text argument. */
const unescapeKdialog = (html: string) => unescapeHtml(kdialogParseString(html).replace(/<[^>]+>/g, ""))

/** kdialog's text: HTML-escaped, backslashes doubled. */
const escapeForKdialog = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/\\/g, "\\\\")

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
