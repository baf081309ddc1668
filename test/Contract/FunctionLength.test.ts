/**
 * No function in src/ runs past 120 lines (docs/development.md): a longer one is split into named steps.
 * Measured with the TypeScript parser on every function, arrow function and method.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const MAX_LINES = 120
const root = fileURLToPath(new URL("../..", import.meta.url))

const walk = (dir: string): Array<string> =>
  NodeFs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(NodePath.join(dir, entry.name)) : entry.name.endsWith(".ts") ? [NodePath.join(dir, entry.name)] : []
  )

/** Every function of a source text longer than `max` lines, as `file:first-last (n lines)`. */
export const longFunctions = (file: string, text: string, max: number): Array<string> => {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: Array<string> = []
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isArrowFunction(node) || ts.isMethodDeclaration(node)) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line + 1
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line + 1
      if (last - first + 1 > max) found.push(`${file}:${first}-${last} (${last - first + 1} lines)`)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

describe("function length", () => {
  it(`no function in src/ is longer than ${MAX_LINES} lines`, () => {
    const long = walk(NodePath.join(root, "src")).flatMap((file) =>
      longFunctions(NodePath.relative(root, file), NodeFs.readFileSync(file, "utf8"), MAX_LINES)
    )
    expect(long).toEqual([])
  })

  it("the measure catches a long function, an arrow function and a method, and lets one of 120 lines pass", () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `  const x${i} = ${i}`).join("\n")
    const text = [
      `function f() {\n${lines(120)}\n}`, // lines 1-122
      `const g = () => {\n${lines(120)}\n}`, // 123-244
      `class C {\n  m() {\n${lines(120)}\n  }\n}`, // 245-369, the method 246-368
      `const fits = () => {\n${lines(118)}\n}` // 370-489: 120 lines
    ].join("\n")
    expect(longFunctions("x.ts", text, MAX_LINES)).toEqual([
      "x.ts:1-122 (122 lines)",
      "x.ts:123-244 (122 lines)",
      "x.ts:246-367 (122 lines)"
    ])
  })
})
