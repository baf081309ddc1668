/**
 * `connections add` on a terminal asks for the secret its auth method needs when no flag gives it,
 * without showing what is typed: the binary runs under `script` (util-linux), which gives it a
 * pseudo-terminal, and the keys are typed once the question is shown.
 */
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { assert, describe, it } from "vitest"
import { BIN } from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"

/** Runs `weaviate-mcp args` on a pseudo-terminal; types `typed` when `question` appears. Bounded to 20 s. */
const onTerminal = (args: ReadonlyArray<string>, question: string, typed: string) =>
  new Promise<{ code: number | null; screen: string; asked: boolean }>((resolve, reject) => {
    const command = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ")
    const child = NodeChild.spawn("script", ["-qec", command, "/dev/null"], { stdio: ["pipe", "pipe", "pipe"] })
    let screen = ""
    let asked = false
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`no end within 20 s; the screen:\n${screen}`))
    }, 20_000)
    child.stdout.on("data", (d) => {
      screen += d
      if (!asked && screen.includes(question)) {
        asked = true
        child.stdin.write(`${typed}\r`)
      }
    })
    child.stderr.on("data", (d) => (screen += d))
    child.once("exit", (code) => {
      clearTimeout(timer)
      child.stdin.end()
      resolve({ code, screen, asked })
    })
  })

describe("the secret prompt", () => {
  it("connections add on a terminal asks for the missing API key without echo, and saves it", async () => {
    const home = TestHome.tempDirSync()
    const typed = "typed-on-the-terminal-7c1d"
    const r = await onTerminal(
      ["connections", "add", "--home", home, "--name", "asked", "--host", "127.0.0.1", "--auth", "api-key"],
      "API key (not shown)",
      typed
    )
    assert.isTrue(r.asked, r.screen)
    assert.strictEqual(r.code, 0, r.screen)
    assert.include(r.screen, "Saved connection asked")
    assert.notInclude(r.screen, typed)
    assert.notInclude(r.screen, "*".repeat(typed.length))
    const saved = JSON.parse(NodeFs.readFileSync(NodePath.join(home, "connections.json"), "utf8")).connections[0]
    assert.strictEqual(saved.apiKey, typed)
  })

  it("without a terminal nothing is asked: the command says which flag gives the secret", async () => {
    const home = TestHome.tempDirSync()
    const r = NodeChild.spawnSync(process.execPath, [BIN, "connections", "add", "--home", home, "--name", "n", "--host", "127.0.0.1", "--auth", "oidc-password", "--oidc-username", "alice"], {
      input: "",
      encoding: "utf8",
      timeout: 20_000
    })
    assert.strictEqual(r.status, 2)
    assert.include(r.stderr, "OIDC username and password needs a password (--oidc-password-stdin)")
  })
})
