/**
 * `weaviate-mcp console`: the real binary against a real `serve`. `--no-open` prints a link to
 * `/console` that carries a one-time code in its fragment (never in the path or query: a browser does
 * not send it, and the page drops it from the history); the code signs in once; `--sign-out-all`
 * ends every session; without a running daemon the command says so and exits 1. Opening the browser
 * is the platform's opener (`xdg-open`, `open`, `start`), checked by name only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { opener } from "../../src/Cli/ConsoleCommand.ts"
import * as Cli from "../support/Cli.ts"
import * as ConsoleDaemon from "../support/ConsoleDaemon.ts"
import * as TestHome from "../support/TestHome.ts"

describe("weaviate-mcp console", () => {
  let daemon: Cli.Running
  let home: string

  beforeAll(async () => {
    home = TestHome.tempDirSync("weaviate-mcp-console-cli-")
    daemon = await Cli.serve(["--home", home, "--port", "0", "--approvals", "deny"])
  }, 30_000)

  afterAll(async () => {
    daemon?.child.kill("SIGTERM")
    await daemon?.exited
  })

  const link = async () => {
    const run = await Cli.run(["console", "--no-open", "--home", home])
    expect(run.code, run.stderr).toBe(0)
    const match = /(http:\/\/127\.0\.0\.1:(\d+)\/console)#code=([A-Za-z0-9_-]+)/.exec(run.stdout)
    expect(match, run.stdout).not.toBeNull()
    return { url: match![1]!, port: Number(match![2]), code: match![3]! }
  }

  it("--no-open prints the link: /console on the daemon's port, the one-time code in the fragment", async () => {
    const { code, port, url } = await link()
    expect(port).toBe(daemon.port)
    expect(url).toBe(`http://127.0.0.1:${daemon.port}/console`)
    const session = await ConsoleDaemon.exchange(`http://127.0.0.1:${port}`, code)
    expect(session.status).toBe(200)
    expect((await ConsoleDaemon.exchange(`http://127.0.0.1:${port}`, code)).status).toBe(401)
  }, 30_000)

  it("--sign-out-all ends every session", async () => {
    const base = `http://127.0.0.1:${daemon.port}`
    const one = await ConsoleDaemon.exchange(base, (await link()).code)
    const two = await ConsoleDaemon.exchange(base, (await link()).code)
    for (const session of [one, two]) expect((await fetch(`${base}/console/api/overview`, { headers: { cookie: session.cookie } })).status).toBe(200)
    const out = await Cli.run(["console", "--sign-out-all", "--home", home])
    expect(out.code, out.stderr).toBe(0)
    expect(out.stdout).toContain("Signed out every console session")
    for (const session of [one, two]) expect((await fetch(`${base}/console/api/overview`, { headers: { cookie: session.cookie } })).status).toBe(401)
  }, 30_000)

  it("without a running daemon it says so and exits 1", async () => {
    const empty = TestHome.tempDirSync("weaviate-mcp-console-none-")
    const run = await Cli.run(["console", "--no-open", "--home", empty])
    expect(run.code).toBe(1)
    expect(run.stderr + run.stdout).toContain("not running")
    expect(run.stdout).not.toContain("#code=")
  }, 30_000)

  it("opens the link with the platform's opener", () => {
    const url = "http://127.0.0.1:1/console#code=abc"
    expect(opener("linux", url)).toEqual({ command: "xdg-open", args: [url] })
    expect(opener("darwin", url)).toEqual({ command: "open", args: [url] })
    expect(opener("win32", url).command).toBe("cmd")
  })
})
