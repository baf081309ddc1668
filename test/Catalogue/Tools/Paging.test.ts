/**
 * The cursor of the listings and the cap of every text answer, on their own: a cursor belongs to its
 * tool, connection, collection and filter; a text over `MAX_TEXT_CHARS` is cut at a line end and ends
 * saying how much was left out and how to narrow or page.
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import * as Paging from "../../../src/Catalogue/Tools/Paging.ts"
import { capError, capText, MAX_TEXT_CHARS } from "../../../src/Catalogue/Tools/TextCap.ts"
import * as ToolError from "../../../src/Catalogue/Tools/ToolError.ts"

const after = (tool: string, scope: Record<string, string | undefined>, cursor: string | undefined) =>
  Effect.runSync(Effect.either(Paging.after(tool, scope, cursor)))

describe("Paging", () => {
  it("a cursor gives back the last item of its page, with the same scope in any key order", () => {
    const cursor = Paging.encode({ connection: "c1", table: "T", prefix: undefined }, "t041")
    expect(after("list_tenants", { prefix: undefined, table: "T", connection: "c1" }, cursor)).toEqual(Either.right("t041"))
    expect(after("list_tenants", {}, undefined)).toEqual(Either.right(undefined))
  })

  it("a cursor of another collection, connection or filter, or not a cursor at all, is invalid_argument", () => {
    const cursor = Paging.encode({ connection: "c1", table: "T", prefix: undefined }, "t041")
    for (const scope of [{ connection: "c1", table: "U", prefix: undefined }, { connection: "c2", table: "T", prefix: undefined }, { connection: "c1", table: "T", prefix: "t" }]) {
      const refused = after("list_tenants", scope, cursor)
      expect(Either.isLeft(refused) && refused.left.code, JSON.stringify(scope)).toBe("invalid_argument")
    }
    for (const bad of ["x", Buffer.from("{\"a\":1}").toString("base64url"), Buffer.from("[]").toString("base64url")]) {
      const refused = after("list_tenants", {}, bad)
      expect(Either.isLeft(refused) && refused.left.reason).toBe("cursor is not a nextCursor of list_tenants")
    }
  })
})

describe("the text cap", () => {
  it(`a text within ${MAX_TEXT_CHARS} characters is left as it is`, () => {
    const text = "x".repeat(MAX_TEXT_CHARS)
    expect(capText(text, "whatever")).toBe(text)
  })

  it("a longer text is cut at a line end, within the cap, and says how much it held and how to narrow or page", () => {
    const lines = Array.from({ length: 2_000 }, (_, i) => `line ${i} ${"y".repeat(40)}`)
    const text = lines.join("\n")
    const cut = capText(text, "a smaller limit")
    expect(cut.length).toBeLessThanOrEqual(MAX_TEXT_CHARS)
    const [kept, note] = [cut.slice(0, cut.lastIndexOf("\n")), cut.slice(cut.lastIndexOf("\n") + 1)]
    expect(lines.slice(0, kept.split("\n").length)).toEqual(kept.split("\n"))
    expect(note).toBe(
      `[cut: this text is capped at 32,000 characters and held ${text.length.toLocaleString("en-US")}; structuredContent has all of it. ` +
        "To see the rest, narrow or page: a smaller limit]"
    )
  })

  it("an error's text is capped too: a database's very long message is cut and says so", () => {
    const message = Array.from({ length: 3_000 }, (_, i) => `init shard tenant-${i}: too many open files`).join("\n")
    const result = ToolError.toResult(ToolError.fail("query_failed", message))
    const text = (result.content[0] as { text: string }).text
    expect(text.length).toBeLessThanOrEqual(MAX_TEXT_CHARS)
    expect(text.startsWith("query_failed: init shard tenant-0: too many open files\n")).toBe(true)
    expect(text.slice(text.lastIndexOf("\n") + 1)).toBe(
      `[cut: this error message is capped at 32,000 characters and held ${("query_failed: " + message).length.toLocaleString("en-US")}]`
    )
    expect(capError("short")).toBe("short")
  })
})
