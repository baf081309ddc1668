/**
 * undici is loaded when the first connection opens, not when the process starts (src/Driver/UndiciAgent.ts):
 * a daemon that has not reached Weaviate, and every command that never does, does not initialize it.
 * Checked in a fresh Node process, since a test worker may have loaded undici for another test.
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeChild from "node:child_process"
import * as NodePath from "node:path"

const root = NodePath.resolve(import.meta.dirname, "..", "..")

/** Runs `body` as an ES module in a fresh node (sources through tsx); its last stdout line, parsed. */
const inFreshNode = (body: string): unknown => {
  const out = NodeChild.execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", body], {
    cwd: root,
    encoding: "utf8",
    timeout: 60_000
  })
  return JSON.parse(out.trim().split("\n").pop() ?? "null")
}

describe("UndiciAgent", () => {
  it("undici is not loaded by importing the command line and the daemon, only by the first connection's load", () => {
    const seen = inFreshNode(`
      import { createRequire } from "node:module"
      const cache = createRequire(import.meta.url).cache
      const loaded = () => Object.keys(cache).filter((k) => /[\\\\/]undici[\\\\/]/.test(k)).length
      await import("./src/Main.ts")
      await import("./src/Driver/WeaviateHttp.ts")
      const atImport = loaded()
      const Undici = await import("./src/Driver/UndiciAgent.ts")
      const first = await Undici.load()
      const second = await Undici.load()
      console.log(JSON.stringify({ atImport, afterLoad: loaded(), shared: first === second, agent: typeof first.Agent, request: typeof first.request }))
    `)
    expect(seen).toMatchObject({ atImport: 0, shared: true, agent: "function", request: "function" })
    expect((seen as { afterLoad: number }).afterLoad).toBeGreaterThan(0)
  })
})
