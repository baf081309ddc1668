/**
 * The real server's build step (scripts/weaviate.mjs) with a stand-in `go` on PATH: the version is
 * pinned in one place and WEAVIATE_VERSION overrides it, the binary lands in the per-user cache and is
 * reused, progress is printed, and a failed build leaves nothing behind.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { buildWeaviate, PINNED_WEAVIATE_VERSION, weaviateBinary, weaviateVersion } from "../../scripts/weaviate.mjs"
import { tempDirSync } from "../support/TestHome.ts"

const saved = { PATH: process.env["PATH"], XDG_CACHE_HOME: process.env["XDG_CACHE_HOME"], WEAVIATE_VERSION: process.env["WEAVIATE_VERSION"] }
let dir: string
let calls: string

/** A `go` that records its arguments and environment, prints like `go install -v`, and makes the binary. */
const fakeGo = (exitCode: number) => {
  const bin = path.join(dir, "bin")
  fs.mkdirSync(bin, { recursive: true })
  fs.writeFileSync(
    path.join(bin, "go"),
    [
      "#!/bin/sh",
      `if [ "$1" = version ]; then echo "go version go1.26.8 linux/amd64"; exit 0; fi`,
      `echo "$* CGO_ENABLED=$CGO_ENABLED" >> "${calls}"`,
      `echo "go: downloading github.com/weaviate/weaviate v1.39.0" >&2`,
      "i=0; while [ $i -lt 250 ]; do echo \"example.com/pkg$i\" >&2; i=$((i+1)); done",
      exitCode === 0 ? `printf 'built' > "$GOBIN/weaviate-server"` : `echo "main.go:1: undefined: x" >&2`,
      `exit ${exitCode}`
    ].join("\n"),
    { mode: 0o755 }
  )
  process.env["PATH"] = `${bin}:${saved.PATH ?? ""}`
}

beforeEach(() => {
  dir = tempDirSync("weaviate-mcp-build-")
  calls = path.join(dir, "calls.txt")
  process.env["XDG_CACHE_HOME"] = path.join(dir, "cache")
  delete process.env["WEAVIATE_VERSION"]
})
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
})

describe("the real Weaviate's build step", () => {
  it("the version is pinned in one place and WEAVIATE_VERSION overrides it", () => {
    expect(weaviateVersion()).toBe(PINNED_WEAVIATE_VERSION)
    process.env["WEAVIATE_VERSION"] = "v1.40.2"
    expect(weaviateVersion()).toBe("1.40.2")
    expect(weaviateBinary()).toBe(path.join(dir, "cache", "weaviate-mcp", "weaviate-1.40.2", "weaviate-server"))
    process.env["WEAVIATE_VERSION"] = "latest; rm -rf /"
    expect(() => weaviateVersion()).toThrow(/must look like 1\.39\.0/)
  })

  it("builds once into the per-user cache with cgo and the Dockerfile's flags, printing progress, then reuses it", async () => {
    fakeGo(0)
    const lines: Array<string> = []
    const binary = await buildWeaviate("1.39.0", (l) => lines.push(l))
    expect(binary).toBe(path.join(dir, "cache", "weaviate-mcp", "weaviate-1.39.0", "weaviate-server"))
    expect(fs.readFileSync(binary, "utf8")).toBe("built")
    expect(fs.readFileSync(calls, "utf8")).toBe(
      "install -v -trimpath -ldflags -s -w github.com/weaviate/weaviate/cmd/weaviate-server@v1.39.0 CGO_ENABLED=1\n"
    )
    expect(lines[0]).toMatch(/^building Weaviate 1\.39\.0 .* minutes/)
    expect(lines).toContain("  go: downloading github.com/weaviate/weaviate v1.39.0")
    expect(lines.filter((l) => /^ {2}\.\.\. \d+ steps, \d+ s$/.test(l)).length).toBe(2)
    expect(lines.at(-1)).toMatch(/^built Weaviate 1\.39\.0 in \d+ s: /)
    // the staging directory is gone; a second call does not run go again
    expect(fs.readdirSync(path.join(dir, "cache", "weaviate-mcp"))).toEqual(["weaviate-1.39.0"])
    await buildWeaviate("1.39.0", () => undefined)
    expect(fs.readFileSync(calls, "utf8").split("\n").filter(Boolean)).toHaveLength(1)
  })

  it("a failed build says so, shows the compiler's error and leaves no binary or staging directory", async () => {
    fakeGo(1)
    const lines: Array<string> = []
    await expect(buildWeaviate("1.39.0", (l) => lines.push(l))).rejects.toThrow(/go install of Weaviate 1\.39\.0 failed \(exit 1\)/)
    expect(lines).toContain("  main.go:1: undefined: x")
    const root = path.join(dir, "cache", "weaviate-mcp")
    expect(fs.existsSync(root) ? fs.readdirSync(root) : []).toEqual([])
  })
})
