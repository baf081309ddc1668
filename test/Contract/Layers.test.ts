/**
 * The layers of src/ (docs/design.md, "The layers"): lower folders never import higher ones, and there are no
 * import cycles. dependency-cruiser checks the rules of .dependency-cruiser.cjs; `npm run
 * typecheck` runs the same check, so a violation fails CI twice over.
 */
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../..", import.meta.url))
const depcruise = NodePath.join(root, "node_modules", ".bin", "depcruise")
const config = NodePath.join(root, ".dependency-cruiser.cjs")

const cruise = (cwd: string): { readonly status: number | null; readonly output: string } => {
  const result = NodeChild.spawnSync(depcruise, ["src", "--config", config, "--output-type", "err"], {
    cwd,
    encoding: "utf8",
    timeout: 60_000
  })
  return { status: result.status, output: `${result.stdout}${result.stderr}` }
}

const made: Array<string> = []
afterAll(() => {
  for (const dir of made) NodeFs.rmSync(dir, { recursive: true, force: true })
})

/** A throwaway tree laid out like src/, to show that each rule catches what it names. */
const tree = (files: Readonly<Record<string, string>>): string => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "layers-"))
  made.push(dir)
  NodeFs.writeFileSync(NodePath.join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { allowImportingTsExtensions: true, noEmit: true } }))
  for (const [path, text] of Object.entries(files)) {
    NodeFs.mkdirSync(NodePath.dirname(NodePath.join(dir, path)), { recursive: true })
    NodeFs.writeFileSync(NodePath.join(dir, path), text)
  }
  return dir
}

describe("layers", () => {
  it("src/ has no upward import and no import cycle", () => {
    const { output, status } = cruise(root)
    expect(output).toContain("no dependency violations found")
    expect(status).toBe(0)
  })

  it("an upward import fails: the driver may not import the MCP core", () => {
    const dir = tree({
      "src/Driver/Driver.ts": `import { x } from "../Mcp/Endpoint.ts"\nexport const y = x\n`,
      "src/Mcp/Endpoint.ts": `export const x = 1\n`
    })
    const { output, status } = cruise(dir)
    expect(output).toContain("layers-Driver")
    expect(status).not.toBe(0)
  })

  it("a sideways import fails: the MCP core may not import the catalogue", () => {
    const dir = tree({
      "src/Mcp/Endpoint.ts": `import { x } from "../Catalogue/Tools/ToolsLive.ts"\nexport const y = x\n`,
      "src/Catalogue/Tools/ToolsLive.ts": `export const x = 1\n`
    })
    expect(cruise(dir).output).toContain("layers-Mcp")
  })

  it("an import cycle fails, even inside one folder", () => {
    const dir = tree({
      "src/Approval/A.ts": `import { b } from "./B.ts"\nexport const a = () => b\n`,
      "src/Approval/B.ts": `import { a } from "./A.ts"\nexport const b = () => a\n`
    })
    const { output, status } = cruise(dir)
    expect(output).toContain("no-circular")
    expect(status).not.toBe(0)
  })

  it("no layer imports the package's entry points", () => {
    const dir = tree({
      "src/Daemon/Daemon.ts": `import { x } from "../index.ts"\nexport const y = x\n`,
      "src/index.ts": `export const x = 1\n`
    })
    expect(cruise(dir).output).toContain("entry-points-on-top")
  })
})
