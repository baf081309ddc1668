/**
 * The real daemon, in this process, on a free port of 127.0.0.1, for the console's tests: its
 * console's clock is a manual one (`advance`), so the 60 s of a sign-in code pass in virtual time,
 * and the default token of the first run is kept for the MCP calls. Plus the requests the command
 * line makes (`code`, `sign-out-all`) and the page's sign-in.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Daemon from "../../src/Daemon/Daemon.ts"
import { KEY_FILE, KEY_HEADER } from "../../src/Daemon/ConsoleSessions.ts"
import type { ServeSettings } from "../../src/Daemon/Settings.ts"
import { BoundAddress } from "../../src/Mcp/HttpTransport.ts"
import * as TestDaemon from "./TestDaemon.ts"
import * as TestHome from "./TestHome.ts"

export interface ConsoleDaemon {
  readonly url: string
  readonly port: number
  readonly home: string
  /** The first run's `default` token (readWrite). */
  readonly token: string
  /** Moves the console's clock on. */
  readonly advance: (ms: number) => void
  readonly dispose: () => Promise<void>
}

/** Starts a daemon in `home` (a fresh one by default). */
export const start = async (options: { readonly home?: string; readonly settings?: Partial<ServeSettings> } = {}): Promise<ConsoleDaemon> => {
  const home = options.home ?? TestHome.tempDirSync("weaviate-mcp-console-")
  // A manual clock: it moves only when told (`advance`), so expiries are exact.
  const base = Date.now()
  let offset = 0
  let token = ""
  const settings = await Effect.runPromise(TestDaemon.settings({ rateLimit: 0, approvals: "deny", ...options.settings }))
  const daemon = Daemon.layer({
    settings,
    port: 0,
    console: { now: () => base + offset },
    onDefaultToken: (created) => Effect.sync(() => void (token = created.token))
  }).pipe(Layer.provide(TestHome.at(home)))
  const runtime = ManagedRuntime.make(daemon)
  const address = await runtime.runPromise(BoundAddress)
  return {
    url: address.url,
    port: address.port,
    home,
    get token() {
      return token
    },
    advance: (ms) => void (offset += ms),
    dispose: () => runtime.dispose()
  }
}

/** The key of the daemon's console-key.json (what `weaviate-mcp console` sends). */
export const keyOf = (home: string): string => JSON.parse(NodeFs.readFileSync(NodePath.join(home, KEY_FILE), "utf8")).key

/** Asks for a sign-in code as the command line does. */
export const code = async (daemon: Pick<ConsoleDaemon, "url" | "home">): Promise<string> => {
  const response = await fetch(`${daemon.url}/console/api/code`, { method: "POST", headers: { [KEY_HEADER]: keyOf(daemon.home), "content-type": "application/json" }, body: "{}" })
  if (response.status !== 200) throw new Error(`code: HTTP ${response.status} ${await response.text()}`)
  return ((await response.json()) as { code: string }).code
}

/** Exchanges a code as the page does: the cookie and the CSRF token (or the refusal). */
export const exchange = async (url: string, theCode: string) => {
  const response = await fetch(`${url}/console/api/session`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: url },
    body: JSON.stringify({ code: theCode })
  })
  const setCookie = response.headers.get("set-cookie") ?? ""
  const body = (await response.json()) as { csrf?: string; error?: string }
  return { status: response.status, setCookie, cookie: setCookie.split(";")[0] ?? "", csrf: body.csrf ?? "", body }
}

/** Signs in: a new code, exchanged. */
export const signIn = async (daemon: Pick<ConsoleDaemon, "url" | "home">) => {
  const session = await exchange(daemon.url, await code(daemon))
  if (session.status !== 200) throw new Error(`sign-in: HTTP ${session.status}`)
  return session
}
