/**
 * The confirmation dialog on the user's machine: the approval path for clients that cannot show a
 * form (no `elicitation`), the second confirmation of Safe Mode `confirm`, and the every-time question
 * of `confirm_destructive_operation`.
 *
 * Implementations:
 * - `native`: `osascript` (macOS), `zenity` or `kdialog` (Linux with `DISPLAY`/`WAYLAND_DISPLAY`),
 *   PowerShell (Windows): a fixed-size window that fits a 1024×700 screen, showing `DialogText`. The
 *   text goes into argv, stdin or the environment, never into a shell string.
 * - `terminal`: a y/N prompt in the terminal running `serve`, showing the same text within the
 *   terminal's width; concurrent prompts wait their turn.
 * - `deny`: no dialog exists; every question is refused (the flows report `user_cancelled`).
 * - `exec`: the user's `--approval-command`, run through the shell, with the request as JSON on
 *   stdin; exit code 0 approves, anything else denies. It is started by a small resident helper
 *   (`Spawner`), so the daemon does not fork itself per approval.
 *
 * A question that is not answered within the time-out (120 s by default) is a denial. Interrupting
 * `confirm` (client gone, call cancelled, daemon stopping) kills the dialog process.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as NodeReadline from "node:readline"
import * as Spawner from "./Spawner.js"
import { type DialogRequest, COLUMNS, contextLines, dialogParts, dialogText, oneLine, WINDOW, wrapProse } from "./DialogText.js"

// ===== Models =====

/** @category models */
export type DialogKind = "native" | "terminal" | "deny" | "exec"

/** The values of `serve --approvals`. @category models */
export type DialogMode = "auto" | "dialog" | "terminal" | "deny" | "exec"

/** @category models */
export type NativeTool = "osascript" | "zenity" | "kdialog" | "powershell"

/** @category models */
export interface DialogService {
  readonly kind: DialogKind
  /** `false` for `deny`: nobody can be asked, so a refusal means "user cancelled", not "user said no". */
  readonly interactive: boolean
  /** Asks the user; `true` only on an explicit approval. Never fails: errors and time-outs deny. */
  readonly confirm: (request: DialogRequest) => Effect.Effect<boolean>
}

/**
 * The dialog mode cannot be used here (no native dialog, no TTY, no command).
 *
 * @category errors
 */
export class DialogConfigError extends Schema.TaggedError<DialogConfigError>()("DialogConfigError", {
  message: Schema.String
}) {}

/**
 * What `auto` looks at; injectable so the choice is testable on any machine.
 *
 * @category models
 */
export interface Environment {
  readonly platform: NodeJS.Platform
  readonly env: Readonly<Record<string, string | undefined>>
  readonly stdinIsTTY: boolean
  readonly hasCommand: (name: string) => boolean
}

/** @category models */
export interface Options {
  /** Unanswered for this long counts as a denial. Default 120 seconds. */
  readonly timeout?: Duration.DurationInput
}

/** @category constants */
export const DEFAULT_TIMEOUT: Duration.Duration = Duration.seconds(120)

// ===== Service =====

/**
 * @category tags
 */
export class Dialog extends Context.Tag("weaviate-mcp/Approval/Dialog")<Dialog, DialogService>() {
  /** Always refuses, asks nobody. */
  static readonly deny: DialogService = {
    kind: "deny",
    interactive: false,
    confirm: () => Effect.succeed(false)
  }

  static readonly makeExec = (command: string, options: Options = {}): DialogService => {
    // One resident launcher per service: the daemon never forks itself per approval (see `Spawner`).
    const spawner = Spawner.make({ direct: (cmd, input) => runDirect(cmd, input) })
    return withTimeout({ kind: "exec", interactive: true, confirm: (request) => exec(spawner, command, request) }, options)
  }

  static readonly makeNative = (tool: NativeTool, options: Options = {}): DialogService =>
    withTimeout({ kind: "native", interactive: true, confirm: (request) => native(tool, request) }, options)

  static readonly makeTerminal = (
    io: { readonly input: NodeJS.ReadableStream; readonly output: NodeJS.WritableStream },
    options: Options = {}
  ): Effect.Effect<DialogService> =>
    Effect.map(Effect.makeSemaphore(1), (semaphore) => ({
      kind: "terminal",
      interactive: true,
      // One prompt at a time; the time-out runs per prompt, from when it is shown.
      confirm: (request) => semaphore.withPermits(1)(timed(terminal(io, request), options))
    }))

  static readonly layerDeny: Layer.Layer<Dialog> = Layer.succeed(Dialog, Dialog.deny)

  static readonly layerExec = (command: string, options: Options = {}): Layer.Layer<Dialog> =>
    Layer.succeed(Dialog, Dialog.makeExec(command, options))

  /**
   * The service for `serve --approvals MODE [--approval-command CMD]`. `auto` picks the first
   * available of native dialog, terminal prompt, deny. The explicit modes fail when they cannot work
   * here, so `serve` can stop with a usage error instead of refusing every write later.
   */
  static readonly layerFromMode = (
    mode: DialogMode,
    options: Options & { readonly command?: string | undefined; readonly environment?: Environment } = {}
  ): Layer.Layer<Dialog, DialogConfigError> =>
    Layer.effect(
      Dialog,
      Effect.gen(function*() {
        const environment = options.environment ?? currentEnvironment()
        const timeout = options.timeout === undefined ? {} : { timeout: options.timeout }
        const terminalService = Dialog.makeTerminal({ input: process.stdin, output: process.stderr }, timeout)
        switch (mode) {
          case "deny":
            return Dialog.deny
          case "exec": {
            if (options.command === undefined || options.command.trim() === "") {
              return yield* new DialogConfigError({ message: "--approvals exec needs --approval-command CMD" })
            }
            return Dialog.makeExec(options.command, timeout)
          }
          case "dialog": {
            const tool = detectNative(environment)
            if (tool === undefined) {
              return yield* new DialogConfigError({
                message: "--approvals dialog: no native dialog here (osascript, zenity or kdialog with a display, or PowerShell)"
              })
            }
            return Dialog.makeNative(tool, timeout)
          }
          case "terminal": {
            if (!environment.stdinIsTTY) {
              return yield* new DialogConfigError({ message: "--approvals terminal: standard input is not a terminal" })
            }
            return yield* terminalService
          }
          case "auto": {
            const choice = pickAuto(environment)
            if (choice === "deny") return Dialog.deny
            if (choice === "terminal") return yield* terminalService
            return Dialog.makeNative(choice, timeout)
          }
        }
      })
    )
}

// ===== Selection =====

/**
 * The native dialog program for this environment, if any.
 *
 * @category selection
 */
export const detectNative = (environment: Environment): NativeTool | undefined => {
  switch (environment.platform) {
    case "darwin":
      return environment.hasCommand("osascript") ? "osascript" : undefined
    case "win32":
      return environment.hasCommand("powershell.exe") || environment.hasCommand("powershell") ? "powershell" : undefined
    default: {
      const display = nonEmpty(environment.env["DISPLAY"]) || nonEmpty(environment.env["WAYLAND_DISPLAY"])
      if (!display) return undefined
      if (environment.hasCommand("zenity")) return "zenity"
      if (environment.hasCommand("kdialog")) return "kdialog"
      return undefined
    }
  }
}

/**
 * What `--approvals auto` uses: a native dialog, else the terminal when stdin is a TTY, else deny.
 *
 * @category selection
 */
export const pickAuto = (environment: Environment): NativeTool | "terminal" | "deny" =>
  detectNative(environment) ?? (environment.stdinIsTTY ? "terminal" : "deny")

const nonEmpty = (value: string | undefined) => value !== undefined && value !== ""

/**
 * The real environment of this process.
 *
 * @category selection
 */
export const currentEnvironment = (): Environment => ({
  platform: process.platform,
  env: process.env,
  stdinIsTTY: process.stdin.isTTY === true,
  hasCommand: (name) => onPath(name, process.env)
})

const onPath = (name: string, env: Readonly<Record<string, string | undefined>>): boolean => {
  const dirs = (env["PATH"] ?? "").split(NodePath.delimiter).filter((dir) => dir !== "")
  const extensions = process.platform === "win32" ? ["", ...(env["PATHEXT"] ?? ".EXE;.CMD;.BAT").split(";")] : [""]
  return dirs.some((dir) =>
    extensions.some((ext) => {
      try {
        NodeFs.accessSync(NodePath.join(dir, name + ext), NodeFs.constants.X_OK)
        return true
      } catch {
        return false
      }
    })
  )
}

// ===== Native dialogs =====

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/** kdialog sizes its scrolling area itself (about 680 px wide at 1024×700); its lines are narrower. @category constants */
export const KDIALOG_COLUMNS = 70

/** The box zenity's Approve waits for: a stray Return can never approve. @category constants */
export const ZENITY_CHECKBOX = "I have read this and want to approve it"

/**
 * The program, argv, input and environment of a native dialog. Every one has a fixed size that fits
 * a 1024×700 screen (`WINDOW`), shows the statement in a scrolling area in a monospace font, and takes
 * the text from argv, stdin or the environment, never through a shell. A stray Return never approves.
 *
 * - zenity: `--text-info` (the text on stdin); Approve is enabled only once the box is ticked.
 * - kdialog: a warning box whose long text scrolls (kdialog sizes it, within the screen; `--geometry`
 *   places it on X11); its default button is its "yes" button, so "yes" is
 *   Deny and "no" is Approve, and an approval counts only when kdialog printed the id of the window it
 *   showed (`--print-winid`), so an error exit can never pass for Approve. kdialog reads `\n` and `\\`
 *   escapes in its text, so backslashes are doubled.
 * - osascript: an `NSAlert` (JavaScript for Automation) with a fixed-size scrolling text view; Deny is
 *   the first, default button.
 * - PowerShell: a fixed-size Windows Forms window with a read-only scrolling text box; Deny answers
 *   Return and Escape.
 *
 * @category rendering
 */
export const nativeCommand = (tool: NativeTool, request: DialogRequest): SpawnSpec => {
  const title = oneLine(request.title)
  switch (tool) {
    case "zenity":
      return {
        command: "zenity",
        args: [
          "--text-info",
          `--title=${title}`,
          `--width=${WINDOW.width}`,
          `--height=${WINDOW.height}`,
          "--font=Monospace 10",
          "--ok-label=Approve",
          "--cancel-label=Deny",
          `--checkbox=${ZENITY_CHECKBOX}`
        ],
        stdin: dialogText(request)
      }
    case "kdialog": {
      const html = `<pre>${escapeHtml(dialogText(request, KDIALOG_COLUMNS))}</pre>`
      return {
        command: "kdialog",
        args: [
          "--title",
          title,
          "--geometry",
          `${WINDOW.width}x${WINDOW.height}+40+30`,
          "--print-winid",
          "--yes-label",
          "Deny",
          "--no-label",
          "Approve",
          "--warningyesno",
          html.replace(/\\/g, "\\\\")
        ],
        approval: "kdialog"
      }
    }
    case "osascript": {
      const parts = dialogParts(request)
      return {
        command: "osascript",
        args: [
          "-l",
          "JavaScript",
          "-e",
          OSASCRIPT,
          title,
          parts.headline,
          [...contextLines(parts), "", ...wrapProse(parts.label)].join("\n"),
          parts.statement.text
        ]
      }
    }
    case "powershell":
      return {
        command: "powershell.exe",
        args: ["-NoProfile", "-NonInteractive", "-STA", "-Command", POWERSHELL],
        env: { WEAVIATE_MCP_DIALOG_TEXT: dialogText(request), WEAVIATE_MCP_DIALOG_TITLE: title }
      }
  }
}

/** JavaScript for Automation: argv is title, headline, context, statement. Exit 0 only for Approve. */
const OSASCRIPT = [
  "ObjC.import('Cocoa'); ObjC.import('stdlib');",
  "function run(argv) {",
  "  var app = $.NSApplication.sharedApplication;",
  "  var alert = $.NSAlert.alloc.init;",
  "  alert.alertStyle = $.NSAlertStyleWarning;",
  "  alert.messageText = argv[1];",
  "  alert.informativeText = argv[2];",
  "  alert.addButtonWithTitle('Deny');",
  "  alert.addButtonWithTitle('Approve');",
  `  var scroll = $.NSScrollView.alloc.initWithFrame($.NSMakeRect(0, 0, ${WINDOW.width - 120}, ${WINDOW.height - 200}));`,
  "  scroll.hasVerticalScroller = true;",
  "  scroll.borderType = $.NSBezelBorder;",
  "  var view = $.NSTextView.alloc.initWithFrame(scroll.contentView.bounds);",
  "  view.editable = false;",
  "  view.verticallyResizable = true;",
  "  view.autoresizingMask = $.NSViewWidthSizable;",
  "  view.font = $.NSFont.userFixedPitchFontOfSize(12);",
  "  view.string = argv[3];",
  "  scroll.documentView = view;",
  "  alert.accessoryView = scroll;",
  "  alert.window.title = argv[0];",
  "  app.activateIgnoringOtherApps(true);",
  // NSAlertSecondButtonReturn: the second button added, Approve.
  "  if (alert.runModal != 1001) $.exit(1);",
  "  return 'approved';",
  "}"
].join("\n")

/** Windows Forms: the title and text come from the environment. Exit 0 only for Approve. */
const POWERSHELL = [
  "Add-Type -AssemblyName System.Windows.Forms; Add-Type -AssemblyName System.Drawing;",
  "[System.Windows.Forms.Application]::EnableVisualStyles();",
  "$f = New-Object System.Windows.Forms.Form;",
  "$f.Text = $env:WEAVIATE_MCP_DIALOG_TITLE;",
  `$f.ClientSize = New-Object System.Drawing.Size(${WINDOW.width - 20}, ${WINDOW.height - 40});`,
  "$f.FormBorderStyle = 'FixedDialog'; $f.MaximizeBox = $false; $f.MinimizeBox = $false;",
  "$f.StartPosition = 'CenterScreen'; $f.TopMost = $true;",
  "$t = New-Object System.Windows.Forms.TextBox;",
  "$t.Multiline = $true; $t.ReadOnly = $true; $t.ScrollBars = 'Vertical'; $t.WordWrap = $true;",
  "$t.Font = New-Object System.Drawing.Font('Consolas', 10);",
  "$t.Text = $env:WEAVIATE_MCP_DIALOG_TEXT -replace \"`r?`n\", \"`r`n\";",
  `$t.SetBounds(12, 12, ${WINDOW.width - 44}, ${WINDOW.height - 104});`,
  "$deny = New-Object System.Windows.Forms.Button; $deny.Text = 'Deny';",
  "$deny.DialogResult = [System.Windows.Forms.DialogResult]::No;",
  `$deny.SetBounds(${WINDOW.width - 240}, ${WINDOW.height - 82}, 100, 30);`,
  "$ok = New-Object System.Windows.Forms.Button; $ok.Text = 'Approve';",
  "$ok.DialogResult = [System.Windows.Forms.DialogResult]::Yes;",
  `$ok.SetBounds(${WINDOW.width - 132}, ${WINDOW.height - 82}, 100, 30);`,
  "$f.Controls.AddRange(@($t, $deny, $ok)); $f.AcceptButton = $deny; $f.CancelButton = $deny; $f.ActiveControl = $deny;",
  "$r = $f.ShowDialog();",
  "if ($r -eq [System.Windows.Forms.DialogResult]::Yes) { exit 0 } else { exit 1 }"
].join(" ")

const native = (tool: NativeTool, request: DialogRequest) => {
  const spec = nativeCommand(tool, request)
  return Effect.map(runChild(spec), ({ code, stdout }) =>
    spec.approval === "kdialog"
      // kdialog's "no" button is Approve (exit 1); it counts only if the dialog was really shown.
      ? code === 1 && /^winId: \d+/m.test(stdout)
      : code === 0).pipe(
    Effect.withSpan("Dialog.native", { captureStackTrace: false, attributes: { tool } })
  )
}

/** The command started by the daemon itself (where the helper cannot run). */
const runDirect = (command: string, input: string): Effect.Effect<Spawner.Outcome> =>
  Effect.map(runChild({ command, args: [], shell: true, stdin: input }), ({ code }) => ({ code }))

const exec = (spawner: Spawner.Spawner, command: string, request: DialogRequest) =>
  Effect.flatMap(spawner.run(command, JSON.stringify(request)), ({ code, error }) =>
    error === undefined
      ? Effect.succeed(code === 0)
      : Effect.as(Effect.logWarning(`Approval dialog ${command} could not run: ${error}`), false)).pipe(Effect.withSpan("Dialog.exec", { captureStackTrace: false }))

/** An unanswered question is a denial; the timed-out question is interrupted (its process killed). */
const timed = (question: Effect.Effect<boolean>, options: Options) =>
  Effect.timeoutTo(question, {
    duration: options.timeout ?? DEFAULT_TIMEOUT,
    onSuccess: (approved) => approved,
    onTimeout: () => false
  })

const withTimeout = (service: DialogService, options: Options): DialogService => ({
  ...service,
  confirm: (request) => timed(service.confirm(request), options)
})

// ===== Terminal =====

/** The terminal's width less one (some terminals wrap a line that fills the last column), at most `COLUMNS`. */
const terminalColumns = (output: NodeJS.WritableStream) => {
  const width = (output as { readonly columns?: unknown }).columns
  return typeof width === "number" && width > 0 ? Math.max(40, Math.min(COLUMNS, width - 1)) : COLUMNS
}

const terminal = (
  io: { readonly input: NodeJS.ReadableStream; readonly output: NodeJS.WritableStream },
  request: DialogRequest
) =>
  Effect.async<boolean>((resume) => {
    const rl = NodeReadline.createInterface({ input: io.input, output: io.output, terminal: false })
    const controller = new AbortController()
    let settled = false
    const finish = (approved: boolean) => {
      if (settled) return
      settled = true
      rl.close()
      resume(Effect.succeed(approved))
    }
    // End of input (Ctrl-D, closed stdin) is a denial.
    rl.once("close", () => finish(false))
    const columns = terminalColumns(io.output)
    io.output.write(`\n=== ${oneLine(request.title)} ===\n${dialogText(request, columns)}\n`)
    rl.question("Approve? [y/N] ", { signal: controller.signal }, (answer) => finish(/^\s*y(es)?\s*$/i.test(answer)))
    return Effect.sync(() => {
      settled = true
      controller.abort()
      rl.close()
      io.output.write("\n(question withdrawn)\n")
    })
  })

// ===== Child processes =====

/** @category models */
export interface SpawnSpec {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly shell?: boolean
  readonly stdin?: string
  readonly env?: Readonly<Record<string, string>>
  /** How the answer is read: the exit code (0 approves) unless said otherwise. */
  readonly approval?: "kdialog"
}

const KILL_GRACE_MS = 2_000

/** What a dialog process left: its exit code and the first 4 KiB of its standard output. */
interface ChildResult {
  readonly code: number | null
  readonly stdout: string
}

const STDOUT_LIMIT = 4_096

/**
 * Runs a program to completion and yields its exit code (`null` when it could not start or died by a
 * signal). Interruption kills it, and its whole process group on POSIX (a shell's children too), and
 * completes only once it has exited.
 */
const runChild = (spec: SpawnSpec) =>
  Effect.async<ChildResult>((resume) => {
    const posix = process.platform !== "win32"
    const child = NodeChildProcess.spawn(spec.command, [...spec.args], {
      shell: spec.shell === true,
      detached: posix,
      stdio: [spec.stdin === undefined ? "ignore" : "pipe", spec.approval === undefined ? "ignore" : "pipe", "ignore"],
      env: spec.env === undefined ? process.env : { ...process.env, ...spec.env },
      windowsHide: false
    })
    let stdout = ""
    child.stdout?.on("data", (chunk: Buffer) => {
      if (stdout.length < STDOUT_LIMIT) stdout += chunk.toString("utf8")
    })
    let exited = false
    let resumed = false
    const done = (code: number | null) => {
      exited = true
      if (resumed) return
      resumed = true
      resume(Effect.succeed({ code, stdout }))
    }
    child.once("error", (error) => {
      if (resumed) return
      resumed = true
      exited = true
      resume(
        Effect.as(Effect.logWarning(`Approval dialog ${spec.command} could not run: ${error.message}`), { code: null, stdout })
      )
    })
    // "close", not "exit": the whole of stdout has been read by then.
    child.once("close", (code) => done(code))
    if (spec.stdin !== undefined && child.stdin !== null) {
      // The command may exit without reading its input.
      child.stdin.on("error", () => {})
      child.stdin.end(spec.stdin)
    }
    return Effect.async<void>((stopped) => {
      if (exited || child.pid === undefined) return stopped(Effect.void)
      const pid = child.pid
      const kill = (signal: NodeJS.Signals) => {
        try {
          if (posix) process.kill(-pid, signal)
          else child.kill(signal)
        } catch {
          // Already gone.
        }
      }
      const escalate = setTimeout(() => kill("SIGKILL"), KILL_GRACE_MS)
      child.once("exit", () => {
        clearTimeout(escalate)
        stopped(Effect.void)
      })
      kill("SIGTERM")
    })
  })
