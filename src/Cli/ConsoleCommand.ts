/**
 * `weaviate-mcp console [--no-open] [--sign-out-all]`: opens the running daemon's web console
 * (`http://127.0.0.1:<port>/console`) in the default browser, signed in with a one-time code (valid
 * 60 s, usable once) that the daemon hands out for the key in `console-key.json` (mode 0600, this
 * user's). `--no-open` prints the link instead; `--sign-out-all` ends every console session.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"
import { Home } from "../Base/Home.ts"
import * as SecretFile from "../Base/SecretFile.ts"
import { KEY_FILE, KEY_HEADER } from "../Daemon/ConsoleSessions.ts"
import * as CommonOptions from "./CommonOptions.ts"
import { probe } from "./StatusCommand.ts"

/** The console could not be reached or refused the command line. @category errors */
export class ConsoleUnavailable extends Schema.TaggedError<ConsoleUnavailable>()("ConsoleUnavailable", { reason: Schema.String }) {
  override get message() {
    return `The console is not available: ${this.reason}`
  }
}

const KeyFile = Schema.Struct({ version: Schema.Literal(1), instanceId: Schema.String, key: Schema.String })

/** The daemon's console key, trusted as the handshake file is: this user's, mode 0600, the same daemon. */
const readKey = (instanceId: string) =>
  Effect.gen(function*() {
    const home = yield* Home
    const path = NodePath.join(home.dir, KEY_FILE)
    const stat = yield* Effect.promise(() => NodeFs.stat(path).catch(() => undefined))
    if (stat === undefined) return yield* new ConsoleUnavailable({ reason: `no ${KEY_FILE} in ${home.dir} (is the daemon older than the console?)` })
    if (typeof process.getuid === "function" && stat.uid !== process.getuid()) {
      return yield* new ConsoleUnavailable({ reason: `${KEY_FILE} belongs to another user` })
    }
    if (process.platform !== "win32" && (stat.mode & 0o077) !== 0) {
      return yield* new ConsoleUnavailable({ reason: `${KEY_FILE} is readable by others (mode is not 0600)` })
    }
    const json = yield* SecretFile.readJsonIfExists(path).pipe(Effect.orElseSucceed(() => undefined))
    const file = Schema.decodeUnknownOption(KeyFile)(json)
    if (file._tag === "None" || file.value.instanceId !== instanceId) {
      return yield* new ConsoleUnavailable({ reason: `${KEY_FILE} does not belong to the running daemon` })
    }
    return file.value.key
  })

/** One of the two requests of the command line, with the key. */
const ask = (port: number, key: string, route: "code" | "sign-out-all") =>
  Effect.tryPromise({
    try: async () => {
      const response = await fetch(`http://127.0.0.1:${port}/console/api/${route}`, {
        method: "POST",
        headers: { [KEY_HEADER]: key, "content-type": "application/json" },
        body: "{}",
        signal: AbortSignal.timeout(5000)
      })
      return { status: response.status, json: (await response.json()) as Record<string, unknown> }
    },
    catch: () => new ConsoleUnavailable({ reason: `nothing answers on http://127.0.0.1:${port}/console` })
  }).pipe(Effect.flatMap((reply) =>
    reply.status === 200
      ? Effect.succeed(reply.json)
      : Effect.fail(new ConsoleUnavailable({ reason: `the daemon answered HTTP ${reply.status}: ${String(reply.json.error ?? "")}` }))
  ))

/** The platform's way to open a URL in the default browser. @category platform */
export const opener = (platform: NodeJS.Platform, url: string): { readonly command: string; readonly args: ReadonlyArray<string> } =>
  platform === "darwin"
    ? { command: "open", args: [url] }
    : platform === "win32"
    ? { command: "cmd", args: ["/c", "start", "", url.replace(/&/g, "^&")] }
    : { command: "xdg-open", args: [url] }

/** Opens the URL; false when no browser could be started. */
const openInBrowser = (url: string) =>
  Effect.async<boolean>((resume) => {
    const { args, command } = opener(process.platform, url)
    try {
      const child = NodeChild.spawn(command, [...args], { detached: true, stdio: "ignore" })
      child.once("error", () => resume(Effect.succeed(false)))
      child.once("spawn", () => {
        child.unref()
        resume(Effect.succeed(true))
      })
    } catch {
      resume(Effect.succeed(false))
    }
  })

const noOpen = Options.boolean("no-open").pipe(Options.withDescription("Print the sign-in link instead of opening the browser"))
const signOutAll = Options.boolean("sign-out-all").pipe(Options.withDescription("End every console session (the browser tabs must sign in again)"))

/** @category commands */
export const consoleCommand = Command.make("console", { home: CommonOptions.home, noOpen, signOutAll }, (flags) =>
  Effect.gen(function*() {
    const { handshake } = yield* probe
    const key = yield* readKey(handshake.instanceId)
    if (flags.signOutAll) {
      const reply = yield* ask(handshake.port, key, "sign-out-all")
      yield* Console.log(`Signed out every console session (${String(reply.ended)} ended).`)
      return
    }
    const reply = yield* ask(handshake.port, key, "code")
    // The code is in the fragment: the browser never sends it in a request line, and the page
    // exchanges it at once and removes it from the address bar and the history.
    const link = `http://127.0.0.1:${handshake.port}/console#code=${String(reply.code)}`
    if (!flags.noOpen && (yield* openInBrowser(link))) {
      yield* Console.log(`Opened the console in your browser: http://127.0.0.1:${handshake.port}/console`)
      return
    }
    if (!flags.noOpen) yield* Console.log("No browser could be started; open this link yourself.")
    yield* Console.log(`Open the console (the link signs you in once, within 60 s):\n  ${link}`)
  }).pipe(
    Effect.provide(CommonOptions.homeLayer(flags.home))
  )).pipe(Command.withDescription("Open the web console of the running daemon (live activity, tokens, connections, pause); --no-open prints the link"))
