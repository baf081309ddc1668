/**
 * A Secret Service of its own for the keychain tests: `gnome-keyring-daemon` in a private D-Bus
 * session (`dbus-run-session`), its keyring unlocked with a throw-away password and kept in a
 * temporary HOME. Processes given `env` store and read secrets there, as on a Linux desktop. The
 * session ends when `stop` closes the pipe that keeps it alive.
 */
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs"
import * as TestHome from "./TestHome.ts"

export interface SecretService {
  /** The environment that points a process at this session's bus. */
  readonly env: { readonly DBUS_SESSION_BUS_ADDRESS: string }
  readonly stop: () => Promise<void>
}

const SCRIPT = [
  "printf 'test-keyring-password' | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1",
  'echo "$DBUS_SESSION_BUS_ADDRESS"',
  // Alive until the test closes standard input.
  "exec cat >/dev/null"
].join("\n")

export const startSecretService = (timeoutMs = 20_000): Promise<SecretService> =>
  new Promise((resolve, reject) => {
    const home = TestHome.tempDirSync("weaviate-mcp-keyring-")
    const child = NodeChild.spawn("dbus-run-session", ["--", "sh", "-c", SCRIPT], {
      env: { PATH: process.env["PATH"] ?? "", HOME: home, XDG_DATA_HOME: `${home}/.local/share`, XDG_RUNTIME_DIR: home },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    const exited = new Promise<void>((done) => child.once("exit", () => done()))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`the Secret Service did not start within ${timeoutMs} ms: ${err}`))
    }, timeoutMs)
    child.once("error", (error) => {
      clearTimeout(timer)
      reject(new Error(`dbus-run-session cannot run (install dbus and gnome-keyring: .ci/run does): ${error.message}`))
    })
    child.stderr.on("data", (d) => (err += d))
    child.stdout.on("data", (d) => {
      out += d
      const line = out.split("\n")[0]
      if (!out.includes("\n") || line === undefined) return
      clearTimeout(timer)
      resolve({
        env: { DBUS_SESSION_BUS_ADDRESS: line.trim() },
        stop: async () => {
          child.stdin.end()
          const killer = setTimeout(() => child.kill("SIGKILL"), 5_000)
          await exited
          clearTimeout(killer)
          NodeFs.rmSync(home, { recursive: true, force: true })
        }
      })
    })
  })
