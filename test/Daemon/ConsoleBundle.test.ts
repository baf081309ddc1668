/**
 * The web console's page is built with the package (scripts/build.mjs, at `npm run build` and at
 * `npm start`): it stays under 150 KB gzipped, all its files together, and holds nothing that loads
 * from elsewhere (only XML namespace names, which are identifiers, not requests) or evaluates strings.
 */
import { describe, expect, it, vi } from "vitest"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { gzipSync } from "node:zlib"
import { fileURLToPath } from "node:url"
// @ts-expect-error: the build script is plain JavaScript
import { buildConsole, CONSOLE_BUDGET_BYTES } from "../../scripts/build.mjs"
import { findAssets } from "../../src/Daemon/Console.ts"

const root = fileURLToPath(new URL("../..", import.meta.url))
const dir = NodePath.join(root, "dist", "console")

describe("the console's bundle", () => {
  it("stays under 150 KB gzipped, every file of the page together", async () => {
    const built = (await buildConsole({ quiet: true })) as { total: number; sizes: Array<{ name: string }> }
    expect(CONSOLE_BUDGET_BYTES).toBe(150 * 1024)
    const files = NodeFs.readdirSync(dir)
    expect(files.sort()).toEqual(["console.css", "console.js", "index.html"])
    const total = files.reduce((sum, name) => sum + gzipSync(NodeFs.readFileSync(NodePath.join(dir, name)), { level: 9 }).byteLength, 0)
    expect(total).toBe(built.total)
    expect(total).toBeLessThan(150 * 1024)
  }, 60_000)

  it("the build prints each file's size and the total, gzipped, against the budget", async () => {
    const printed: Array<string> = []
    const spy = vi.spyOn(console, "log").mockImplementation((line: unknown) => void printed.push(String(line)))
    try {
      await buildConsole()
    } finally {
      spy.mockRestore()
    }
    expect(printed.join("\n")).toMatch(/^console: console\.js [\d.]+ KB \([\d.]+ KB gzipped\), console\.css [\d.]+ KB \([\d.]+ KB gzipped\), index\.html [\d.]+ KB \([\d.]+ KB gzipped\); total [\d.]+ KB gzipped of 150\.0 KB$/)
  }, 60_000)

  it("loads nothing from elsewhere and evaluates no strings", () => {
    for (const name of ["console.js", "console.css", "index.html"]) {
      const text = NodeFs.readFileSync(NodePath.join(dir, name), "utf8")
      const urls = Array.from(text.matchAll(/(https?:)?\/\/[A-Za-z0-9.-]+\.[a-z]{2,}[^\s"'`)]*/g), (m) => m[0])
      expect(urls.filter((u) => !u.startsWith("http://www.w3.org/")), name).toEqual([])
      expect(text).not.toMatch(/\beval\(|new Function\(|@import/)
    }
  })

  it("the daemon finds the page from its own module, in src/ as in dist/", () => {
    expect(findAssets(NodePath.join(root, "src", "Daemon"))).toBe(dir)
    expect(findAssets(NodePath.join(root, "dist"))).toBe(dir)
    expect(NodeFs.readFileSync(NodePath.join(root, "dist", "weaviate-mcp.cjs"), "utf8")).not.toContain("import.meta")
  })
})
