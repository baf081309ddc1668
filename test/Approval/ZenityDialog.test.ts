/**
 * The real zenity dialog as a person meets it: Xvfb at 1024×700 with a window manager (openbox), the
 * write tools over the Weaviate test instance, and answers given with the mouse. The buttons are found
 * the way a person finds them, by reading the screen: a screenshot, read by OCR (tesseract), gives the
 * coordinates xdotool clicks. Each case keeps its screenshot under `.tmp/approval-dialog/` (ignored
 * by git).
 *
 * Skipped, with the reason in the test names, only where a program is missing (Debian:
 * `apt-get install -y xvfb openbox zenity xdotool x11-utils imagemagick tesseract-ocr`).
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as NodeChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { currentEnvironment, Dialog, ZENITY_CHECKBOX } from "../../src/Approval/Dialog.js"
import { type Harness, makeHarness, toolError, writesTo } from "../Catalogue/Tools/support.ts"
import { sampleRequest } from "./support.js"
import { progress } from "../support/Progress.ts"

const SCREEN = { width: 1024, height: 700 }
const programs = ["Xvfb", "openbox", "zenity", "xdotool", "xwininfo", "xprop", "import", "convert", "tesseract"]
const missing = programs.filter((program) => !currentEnvironment().hasCommand(program))
const available = process.platform === "linux" && missing.length === 0
const skipReason = available ? "" : ` (skipped: not installed here: ${missing.join(", ") || "not Linux"})`
if (!available) console.warn(`ZenityDialog.test${skipReason}`)

const artefacts = NodePath.join(process.cwd(), ".tmp", "approval-dialog")

// ===== The X session =====

interface Run {
  readonly code: number
  readonly stdout: string
}

const run = (display: string, command: string, args: ReadonlyArray<string>): Promise<Run> =>
  new Promise((resolve) => {
    NodeChildProcess.execFile(command, [...args], { env: { ...process.env, DISPLAY: display }, maxBuffer: 8 << 20 }, (error, stdout) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout }))
  })

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Calls `probe` until it yields a value, at most `attempts` times `ms` apart. */
const poll = async <A>(what: string, probe: () => Promise<A | undefined>, attempts = 100, ms = 100): Promise<A> => {
  for (let i = 0; i < attempts; i++) {
    const value = await probe()
    if (value !== undefined) return value
    await pause(ms)
  }
  throw new Error(`timed out waiting for ${what}`)
}

interface Session {
  readonly display: string
  readonly close: () => Promise<void>
}

const stop = (child: NodeChildProcess.ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })

/** Xvfb on a free display (`-displayfd`) with openbox managing its windows. */
const startSession = async (): Promise<Session> => {
  const server = NodeChildProcess.spawn(
    "Xvfb",
    ["-displayfd", "3", "-noreset", "-screen", "0", `${SCREEN.width}x${SCREEN.height}x24`, "-nolisten", "tcp"],
    { stdio: ["ignore", "ignore", "ignore", "pipe"] }
  )
  const display = await new Promise<string>((resolve, reject) => {
    let buffer = ""
    ;(server.stdio[3] as NodeJS.ReadableStream).on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8")
      const line = /^(\d+)\n/.exec(buffer)
      if (line !== null) resolve(`:${line[1]}`)
    })
    server.once("error", reject)
    server.once("exit", (code) => reject(new Error(`Xvfb exited with ${code}`)))
  })
  const wm = NodeChildProcess.spawn("openbox", ["--sm-disable"], { env: { ...process.env, DISPLAY: display }, stdio: "ignore" })
  // The window manager is up once it has announced itself on the root window.
  await poll("openbox to manage the screen", async () => {
    const check = await run(display, "xprop", ["-root", "_NET_SUPPORTING_WM_CHECK"])
    return /window id # 0x[0-9a-f]+/.test(check.stdout) ? true : undefined
  })
  return {
    display,
    close: async () => {
      await stop(wm)
      await stop(server)
    }
  }
}

// ===== Looking at the screen =====

interface Rect {
  readonly x: number
  readonly y: number
  readonly width: number
  readonly height: number
}

const waitForWindow = (display: string, title: string) =>
  poll(`a window titled ${title}`, async () => {
    const found = await run(display, "xdotool", ["search", "--onlyvisible", "--name", `^${title}$`])
    return found.code === 0 ? found.stdout.trim().split("\n")[0] : undefined
  })

const isVisible = async (display: string, window: string) =>
  (await run(display, "xwininfo", ["-id", window])).stdout.includes("Map State: IsViewable")

/**
 * The window's frame on the screen: its size from xdotool, its position from xwininfo (xdotool adds
 * the frame's offset twice under a reparenting window manager), and the decorations the window manager
 * added (`_NET_FRAME_EXTENTS`).
 */
const frameOf = async (display: string, window: string): Promise<Rect> => {
  const shell = (await run(display, "xdotool", ["getwindowgeometry", "--shell", window])).stdout
  const size = (key: string) => Number(new RegExp(`^${key}=(\\d+)$`, "m").exec(shell)![1])
  const info = (await run(display, "xwininfo", ["-id", window])).stdout
  const absolute = (axis: string) => Number(new RegExp(`Absolute upper-left ${axis}:\\s+(-?\\d+)`).exec(info)![1])
  const extents = (await run(display, "xprop", ["-id", window, "_NET_FRAME_EXTENTS"])).stdout
  const [left, right, top, bottom] = (/= (\d+), (\d+), (\d+), (\d+)/.exec(extents)?.slice(1) ?? ["0", "0", "0", "0"]).map(Number) as [
    number,
    number,
    number,
    number
  ]
  return {
    x: absolute("X") - left,
    y: absolute("Y") - top,
    width: size("WIDTH") + left + right,
    height: size("HEIGHT") + top + bottom
  }
}

const screenshot = async (display: string, file: string) => {
  NodeFs.mkdirSync(NodePath.dirname(file), { recursive: true })
  const shot = await run(display, "import", ["-window", "root", file])
  expect(shot.code, `screenshot ${file}`).toBe(0)
}

interface Word extends Rect {
  readonly text: string
}

const OCR_SCALE = 3

/** The words tesseract reads in a region of a screenshot, with their boxes in screen coordinates. */
const readWords = async (file: string, region: Rect): Promise<ReadonlyArray<Word>> => {
  const crop = `${file}.crop.png`
  const prepared = await run("", "convert", [
    file,
    "-crop",
    `${region.width}x${region.height}+${region.x}+${region.y}`,
    "+repage",
    "-resize",
    `${OCR_SCALE * 100}%`,
    "-colorspace",
    "Gray",
    "-threshold",
    "75%",
    crop
  ])
  expect(prepared.code).toBe(0)
  const tsv = (await run("", "tesseract", [crop, "-", "--psm", "11", "tsv"])).stdout
  NodeFs.rmSync(crop, { force: true })
  return tsv.split("\n").slice(1).flatMap((line) => {
    const cells = line.split("\t")
    const text = cells[11]?.trim() ?? ""
    if (cells.length < 12 || text === "" || Number(cells[10]) < 30) return []
    const [left, top, width, height] = cells.slice(6, 10).map((cell) => Number(cell) / OCR_SCALE) as [number, number, number, number]
    return [{ text, x: region.x + left, y: region.y + top, width, height }]
  })
}

const within = (inner: Rect, outer: Rect) =>
  inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.width <= outer.x + outer.width &&
  inner.y + inner.height <= outer.y + outer.height

const screen: Rect = { x: 0, y: 0, ...SCREEN }

/** The lowest word that reads `text` exactly: the buttons and the box sit at the bottom of the window. */
const lowest = (words: ReadonlyArray<Word>, text: string) =>
  words.filter((word) => word.text === text).sort((a, b) => b.y - a.y)[0]

const click = async (display: string, at: { readonly x: number; readonly y: number }) => {
  const clicked = await run(display, "xdotool", ["mousemove", "--sync", String(Math.round(at.x)), String(Math.round(at.y)), "click", "1"])
  expect(clicked.code).toBe(0)
}

const centre = (rect: Rect) => ({ x: rect.x + rect.width / 2, y: rect.y + rect.height / 2 })

interface Seen {
  readonly window: string
  readonly frame: Rect
  readonly bottom: ReadonlyArray<Word>
  readonly top: ReadonlyArray<Word>
}

/**
 * Waits for the dialog, checks that its frame fits the screen, and reads its bottom strip (the box and
 * the buttons) and its first lines until both can be read. Keeps the screenshot.
 */
const look = async (display: string, title: string, file: string): Promise<Seen> => {
  const window = await waitForWindow(display, title)
  const frame = await frameOf(display, window)
  expect(within(frame, screen), `the window ${JSON.stringify(frame)} fits the ${SCREEN.width}×${SCREEN.height} screen`).toBe(true)
  const bottomStrip: Rect = { x: frame.x, y: frame.y + frame.height - 110, width: frame.width, height: 110 }
  const topStrip: Rect = { x: frame.x, y: frame.y + 20, width: frame.width, height: 100 }
  return poll(`${title} to be drawn, its text and its buttons`, async () => {
    await screenshot(display, file)
    const bottom = await readWords(file, bottomStrip)
    if (lowest(bottom, "Deny") === undefined || lowest(bottom, "Approve") === undefined) return undefined
    const top = await readWords(file, topStrip)
    // zenity reads its text from stdin after the window shows: wait for the first line.
    return top.length < 4 ? undefined : { window, frame, bottom, top }
  }, 20, 250)
}

/** Both buttons are on the screen and inside the window. */
const expectButtonsOnScreen = (seen: Seen) => {
  for (const label of ["Deny", "Approve"]) {
    const button = lowest(seen.bottom, label)!
    expect(within(button, screen), `${label} is on the screen`).toBe(true)
    expect(within(button, seen.frame), `${label} is inside the window`).toBe(true)
  }
}

/** Ticks "I have read this…" and clicks Approve, by coordinates. */
const approveByClicking = async (display: string, seen: Seen) => {
  const box = lowest(seen.bottom, ZENITY_CHECKBOX.split(" ")[1]!)!
  await click(display, centre(box))
  await click(display, centre(lowest(seen.bottom, "Approve")!))
}

const waitUntilGone = (display: string, window: string) =>
  poll("the dialog window to close", async () => ((await isVisible(display, window)) ? undefined : true))

// ===== The cases =====

const WRITE_TITLE = "weaviate-mcp: approve a write"
const ACCESS_TITLE = "weaviate-mcp: allow access to a connection"

const prose = (length: number) => {
  const words = "the quick brown fox jumps over the lazy dog while the approval dialog stays on screen".split(" ")
  let text = ""
  for (let i = 0; text.length < length; i++) text += (text === "" ? "" : " ") + words[i % words.length]
  return text.slice(0, length)
}

describe.skipIf(!available)(`the zenity approval dialog on a 1024×700 screen with a window manager${skipReason}`, () => {
  let session: Session
  let h: Harness
  const previousDisplay = process.env["DISPLAY"]

  beforeAll(async () => {
    progress("the zenity dialog tests: starting Xvfb and openbox, then clicking real dialogs read by OCR (about a minute)")
    session = await startSession()
    // The dialog inherits the daemon's environment, as `serve` would.
    process.env["DISPLAY"] = session.display
    delete process.env["WAYLAND_DISPLAY"]
    // Long enough that an answer by click is never mistaken for the time-out.
    const zenity = Dialog.makeNative("zenity", { timeout: "90 seconds" })
    h = await makeHarness({ dialog: Layer.succeed(Dialog, zenity) })
  }, 60_000)

  afterAll(async () => {
    await h?.close()
    await session?.close()
    if (previousDisplay === undefined) delete process.env["DISPLAY"]
    else process.env["DISPLAY"] = previousDisplay
  })

  /**
   * Makes a write call, answers first access by clicking (once per token), then clicks Deny on the
   * write's dialog; asserts the window fits, the buttons are on-screen, the call is denied promptly
   * and nothing reached the database.
   */
  const denyByClicking = async (
    name: string,
    tool: string,
    args: Record<string, unknown>,
    options: Parameters<Harness["call"]>[2] = {}
  ) => {
    h.w.clearRequests()
    const call = h.call(tool, { connection_id: h.ids["local"], ...args }, options)
    const first = await poll("the first dialog", async () => {
      for (const title of [ACCESS_TITLE, WRITE_TITLE]) {
        if ((await run(session.display, "xdotool", ["search", "--onlyvisible", "--name", `^${title}$`])).code === 0) return title
      }
      return undefined
    })
    if (first === ACCESS_TITLE) {
      const access = await look(session.display, ACCESS_TITLE, NodePath.join(artefacts, `${name}-first-access.png`))
      expectButtonsOnScreen(access)
      await approveByClicking(session.display, access)
      await waitUntilGone(session.display, access.window)
    }
    const seen = await look(session.display, WRITE_TITLE, NodePath.join(artefacts, `${name}.png`))
    expectButtonsOnScreen(seen)
    const clickedAt = Date.now()
    await click(session.display, centre(lowest(seen.bottom, "Deny")!))
    const text = toolError(await call, "denied")
    expect(Date.now() - clickedAt, "denied by the click, not by the 90 s time-out").toBeLessThan(30_000)
    expect(text).toContain("declined")
    expect(writesTo(h.w)).toEqual([])
    expect(await isVisible(session.display, seen.window)).toBe(false)
    return seen
  }

  it("a 3,000-character single-line row: the window fits, its buttons are on-screen, a click on Deny writes nothing", async () => {
    const title = prose(2_950)
    const row = JSON.stringify({ class: "Article", properties: { title } })
    expect(row.length).toBeGreaterThanOrEqual(2_990)
    const seen = await denyByClicking("long-row", "insert_rows", { table: "Article", rows: [{ properties: { title } }] })
    const firstLine = seen.top.map((word) => word.text).join(" ")
    expect(firstLine).toMatch(/Approve a write to the connection/)
  }, 120_000)

  it("a 66-line body: the window fits, its buttons are on-screen, a click on Deny writes nothing", async () => {
    const properties = Array.from({ length: 61 }, (_, i) => `    "field${i}": "value ${i}"${i < 60 ? "," : ""}`)
    const body = ["{", "  \"class\": \"Article\",", "  \"properties\": {", ...properties, "  }", "}"]
    expect(body).toHaveLength(66)
    const statement = `POST /v1/objects\n${body.join("\n")}`
    const seen = await denyByClicking("66-line-body", "execute_query", { query: statement })
    expect(seen.top.map((word) => word.text).join(" ")).toMatch(/Approve a write to the connection/)
  }, 120_000)

  it("a spoofing client title with newlines: the window fits, the server's line comes first, a click on Deny writes nothing", async () => {
    const spoof = "Claude Desktop wants to READ one row … Safe to approve." + "\n".repeat(47) + "(really)"
    const seen = await denyByClicking("spoofing-client", "insert_rows", {
      table: "Article",
      rows: [{ properties: { title: "a new article", wordCount: 3 } }]
    }, { clientInfo: { name: "claude-ai", title: spoof } })
    const firstLines = seen.top.map((word) => word.text).join(" ")
    expect(firstLines).toMatch(/Approve a write to the connection/)
    // The client's words appear only after their label, on the line below the server's.
    const label = seen.top.find((word) => word.text === "calls")
    const claim = seen.top.find((word) => word.text === "READ")
    expect(label, "the label 'The client calls itself:' is visible").toBeDefined()
    if (claim !== undefined) {
      expect(Math.abs(claim.y - label!.y)).toBeLessThan(6)
      expect(claim.x).toBeGreaterThan(label!.x)
    }
  }, 120_000)

  it("a stray Return never approves: with the box unticked it does nothing, and Escape denies", async () => {
    const title = "weaviate-mcp: return test"
    const asking = Effect.runPromise(Dialog.makeNative("zenity", { timeout: "90 seconds" }).confirm({ ...sampleRequest, title }))
    const seen = await look(session.display, title, NodePath.join(artefacts, "return.png"))
    await run(session.display, "xdotool", ["windowactivate", "--sync", seen.window])
    await run(session.display, "xdotool", ["key", "--clearmodifiers", "Return"])
    await run(session.display, "xdotool", ["key", "--clearmodifiers", "KP_Enter"])
    // Still asking: xwininfo round-trips to the server after the keys were handled.
    expect(await isVisible(session.display, seen.window)).toBe(true)
    await run(session.display, "xdotool", ["key", "--clearmodifiers", "Escape"])
    expect(await asking).toBe(false)
  }, 60_000)

  it("interrupting the question closes the dialog window", async () => {
    const title = "weaviate-mcp: interrupt test"
    const fiber = Effect.runFork(Dialog.makeNative("zenity").confirm({ ...sampleRequest, title }))
    const window = await waitForWindow(session.display, title)
    await Effect.runPromise(Fiber.interrupt(fiber))
    expect(await isVisible(session.display, window), "the dialog window is gone once the interruption completes").toBe(false)
  }, 60_000)
})
