/**
 * The README and every page of docs/ speak of the product to its users: no issue numbers, and no
 * "session" in the sense of a stretch of work (test/support/ProductVoice.ts says which uses of
 * `issue` and `session` stay). The checker is proved on pages written to break the rule, and on the
 * protocol's terms it must let through.
 */
import { describe, expect, it } from "vitest"
import { pages } from "../support/Markdown.ts"
import { check } from "../support/ProductVoice.ts"

const texts = (page: string) => check("page.md", page).map((f) => f.text)

describe("docs speak of the product: no issue numbers, no sessions of work", () => {
  it("README.md and every page of docs/ name no issue number and no session of work", () => {
    const found = pages().flatMap((p) => check(p.file, p.source)).map((f) => `${f.file}:${f.line}: ${f.text} (${f.why})`)
    expect(found).toEqual([])
  })

  it("a page that says \"Issue 27, ninth session\" fails, for the issue number and for the session", () => {
    expect(texts("### Issue 27, ninth session\n\nSome figures.")).toEqual(["Issue 27", "ninth session"])
  })

  it("an issue number fails in any case and form; `issue` meaning a problem does not", () => {
    expect(texts("fixed in issue 33; see ISSUE #21 and issues 14")).toEqual(["issue 33", "ISSUE #21", "issues 14"])
    expect(texts("A known issue: the client's transport leaves a listener per request. No issue there.")).toEqual([])
  })

  it("a session of work fails on every line, a legacy one included", () => {
    expect(texts("Measured in this session.")).toEqual(["this session"])
    expect(texts("The legacy figures of the thirteenth session")).toEqual(["thirteenth session"])
    expect(texts("Each session's findings, session-by-session")).toEqual(["Each session", "session-by-session"])
    expect(texts("the work of a session")).toEqual(["session"])
  })

  it("the protocol's session terms pass: Mcp-Session-Id, legacy sessions, MCP sessions, session ids, the console's session cookie", () => {
    expect(
      texts(
        [
          "Legacy clients get an `Mcp-Session-Id`; a revoked token's legacy sessions end.",
          "The client's MCP session lives in the bridge, under a session id of its own.",
          "The REST console keeps a session cookie.",
          "| 16 legacy sessions, LRU evicted | Mcp/Legacy › \"at most 16 sessions…\" |"
        ].join("\n")
      )
    ).toEqual([])
  })
})
