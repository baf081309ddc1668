/**
 * Running the built CLI as `nobody` (root only, with `setpriv`), so that file modes bind as they bind
 * any user. `nobody` cannot read a checkout that lives in a private directory (a clone under `/root`
 * or under a `mktemp -d` directory, both 0700), so it runs a copy of the runnable parts instead: the
 * copy sits in a fresh directory under the system temp directory (world-traversable), readable by
 * everyone, and is removed after the test file.
 *
 * What the copy needs at run time: `bin/weaviate-mcp.js` runs `dist/weaviate-mcp.cjs` (its compile cache
 * goes nowhere for `nobody`, whose home does not exist). The bundle carries every dependency (scripts/build.mjs
 * bundles with no externals), so node_modules is not needed; `--version` is run as `nobody` on the copy
 * to prove it, and a failure there is a visible skip reason, never a silent one.
 */
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll } from "vitest"

/** The checkout this test runs from. */
export const CHECKOUT = NodePath.resolve(import.meta.dirname, "../..")

/** The argv prefix that runs a command as `nobody`, without supplementary groups. */
export const SETPRIV = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"] as const

/** The files of a checkout that running the built CLI needs (relative paths). */
export const RUNNABLE = ["bin/weaviate-mcp.js", "bin/package.json", "dist/weaviate-mcp.cjs", "package.json"] as const

const copies = new Set<string>()
afterAll(() => {
  for (const dir of copies) NodeFs.rmSync(dir, { recursive: true, force: true })
  copies.clear()
})

/** Why this process cannot run a child as `nobody`, or `undefined` when it can. */
export const cannotSwitch = (): string | undefined => {
  if (process.getuid?.() !== 0) return "the test needs root to run the daemon as nobody (a non-root user cannot give its files away)"
  const probe = NodeChild.spawnSync(SETPRIV[0], [...SETPRIV.slice(1), "true"])
  return probe.status === 0 ? undefined : "setpriv cannot switch to nobody here"
}

/** Runs a program as `nobody` to completion. */
export const runAsNobody = (argv: ReadonlyArray<string>, options: { readonly timeoutMs?: number } = {}) =>
  NodeChild.spawnSync(SETPRIV[0], [...SETPRIV.slice(1), ...argv], { encoding: "utf8", timeout: options.timeoutMs ?? 30_000 })

/** The outcome: an entry point `nobody` runs, or why there is none. */
export type Runnable = { readonly _tag: "Ready"; readonly bin: string; readonly dir: string } | { readonly _tag: "Skip"; readonly reason: string }

/**
 * Copies the runnable parts of `checkout` into a fresh world-readable directory (removed after the
 * test file) and checks that `nobody` runs `--version` from it.
 */
export const runnableCopy = (checkout: string = CHECKOUT): Runnable => {
  const cannot = cannotSwitch()
  if (cannot !== undefined) return { _tag: "Skip", reason: cannot }
  for (const part of RUNNABLE) {
    if (!NodeFs.existsSync(NodePath.join(checkout, part))) return { _tag: "Skip", reason: `${part} is missing in ${checkout}; run \`npm run build\` first` }
  }
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-nobody-"))
  copies.add(dir)
  for (const part of RUNNABLE) NodeFs.cpSync(NodePath.join(checkout, part), NodePath.join(dir, part), { recursive: true })
  // mkdtemp makes 0700 and copies keep the checkout's modes: everything readable (directories searchable) by all.
  const open = (path: string) => {
    const stat = NodeFs.statSync(path)
    NodeFs.chmodSync(path, stat.isDirectory() ? 0o755 : 0o644)
    if (stat.isDirectory()) for (const name of NodeFs.readdirSync(path)) open(NodePath.join(path, name))
  }
  open(dir)
  const bin = NodePath.join(dir, "bin", "weaviate-mcp.js")
  const version = runAsNobody([process.execPath, bin, "--version"])
  if (version.status !== 0) {
    return { _tag: "Skip", reason: `nobody cannot run the copied CLI (${`${version.stderr ?? ""}`.trim().split("\n")[0] || `exit ${version.status}`})` }
  }
  return { _tag: "Ready", bin, dir }
}
