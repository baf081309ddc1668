/**
 * Issue 31: the tests that run the CLI as `nobody` (the read-only home in Faults.test.ts) must work
 * from a checkout inside a private (0700) directory, as `mktemp -d` and most home directories are.
 * The checkout's runnable parts are put in such a directory here, as a clone would have them.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { assert, describe, it } from "vitest"
import * as AsNobody from "../support/AsNobody.ts"
import * as TestHome from "../support/TestHome.ts"

const cannot = AsNobody.cannotSwitch()

describe.skipIf(cannot !== undefined)(`a checkout in a 0700 directory, run as nobody${cannot === undefined ? "" : ` (skipped: ${cannot})`}`, () => {
  it("nobody cannot run the checkout's own bin there, but runs the helper's copy of it (--version, exit 0)", () => {
    const parent = TestHome.tempDirSync("weaviate-mcp-private-")
    assert.strictEqual(NodeFs.statSync(parent).mode & 0o777, 0o700)
    const clone = NodePath.join(parent, "c")
    for (const part of AsNobody.RUNNABLE) NodeFs.cpSync(NodePath.join(AsNobody.CHECKOUT, part), NodePath.join(clone, part), { recursive: true })

    // The failure of issue 31, reproduced: the entry point inside the private directory is out of nobody's reach.
    const direct = AsNobody.runAsNobody([process.execPath, NodePath.join(clone, "bin", "weaviate-mcp.js"), "--version"])
    assert.notStrictEqual(direct.status, 0)
    assert.match(direct.stderr, /EACCES|permission denied|Cannot find module/i)

    const runnable = AsNobody.runnableCopy(clone)
    assert.strictEqual(runnable._tag, "Ready", runnable._tag === "Skip" ? runnable.reason : "")
    if (runnable._tag !== "Ready") return
    assert.isFalse(runnable.bin.startsWith(parent), "the copy is outside the private directory")
    const version = AsNobody.runAsNobody([process.execPath, runnable.bin, "--version"])
    assert.strictEqual(version.status, 0, version.stderr)
    assert.match(version.stdout, /\d+\.\d+\.\d+/)
  })

  it("a checkout without a build gives a visible skip reason, not a silent pass", () => {
    const parent = TestHome.tempDirSync("weaviate-mcp-private-")
    const runnable = AsNobody.runnableCopy(NodePath.join(parent, "unbuilt"))
    assert.strictEqual(runnable._tag, "Skip")
    if (runnable._tag === "Skip") assert.match(runnable.reason, /missing .*npm run build/)
  })
})
