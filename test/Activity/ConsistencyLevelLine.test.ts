/** The activity line shows a write's consistency level (docs/clusters.md). */
import { assert, describe, it } from "@effect/vitest"
import * as Line from "../../src/Activity/ActivityLine.ts"
import { writeLevelOf } from "../../src/Activity/ActivityObserver.ts"
import { sampleCall } from "./support.ts"

const call = (consistencyLevel?: string): Line.Call =>
  sampleCall({ tool: "insert_rows", ...(consistencyLevel !== undefined ? { consistencyLevel } : {}) })

describe("the activity line and consistency levels", () => {
  it("the activity line shows a write's level, after the connection, and the chain still verifies", () => {
    const line = Line.formatCall(call("ALL"), Line.GENESIS)
    assert.include(line.text, `"connection":"c1","consistencyLevel":"ALL","outcome":"ok"`)
    assert.deepStrictEqual(Line.verify(`${line.text}\n`), { _tag: "Valid", lines: 1 })
  })
  it("a line without a level is byte for byte what it was before", () => {
    assert.include(Line.formatCall(call(), Line.GENESIS).text, `"connection":"c1","outcome":"ok"`)
  })
  it("the level comes from a write tool's consistency_level, and only a write's", () => {
    assert.deepStrictEqual(writeLevelOf("insert_rows", { arguments: { consistency_level: "QUORUM" } }), { consistencyLevel: "QUORUM" })
    assert.deepStrictEqual(writeLevelOf("delete_rows", { arguments: { consistency_level: "ALL" } }), { consistencyLevel: "ALL" })
    assert.deepStrictEqual(writeLevelOf("browse_table", { arguments: { consistency_level: "ALL" } }), {})
    assert.deepStrictEqual(writeLevelOf("update_rows", { arguments: {} }), {})
    assert.deepStrictEqual(writeLevelOf("update_rows", { arguments: { consistency_level: "bogus" } }), {})
  })
})
