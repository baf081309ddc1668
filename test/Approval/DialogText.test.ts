import { assert, describe, it } from "@effect/vitest"
import { describeStatement } from "../../src/Approval/ApprovalPayload.js"
import {
  CLIENT_NAME_MAX,
  clientLine,
  clientText,
  COLUMNS,
  CONTINUATION,
  dialogText,
  readableStatement
} from "../../src/Approval/DialogText.js"
import { sampleRequest } from "./support.js"

const chars = (text: string) => Array.from(text).length
const spoof = "Claude Desktop wants to READ one row … Safe to approve." + "\n".repeat(47) + "x"

describe("DialogText: client-supplied text", () => {
  it("the client's name is stripped of control and invisible characters, kept to one line and capped at 64 characters", () => {
    assert.strictEqual(clientText("Claude\u0000\u001b[31m\u202e Desktop\u200b\r\n\tv1"), "Claude[31m Desktop v1")
    const long = clientText("A".repeat(500))
    assert.strictEqual(chars(long), CLIENT_NAME_MAX)
    assert.isTrue(long.endsWith("…"))
    assert.notInclude(clientText(spoof), "\n")
    assert.strictEqual(clientText("Z\u0301\u0302\u0303\u0304\u0305"), "Z\u0301\u0302")
  })

  it("the client's words are labelled as such and come after the server's first line, never inside it", () => {
    const text = dialogText({ ...sampleRequest, clientName: spoof })
    const lines = text.split("\n")
    assert.strictEqual(lines[0], sampleRequest.message)
    const labelled = lines.filter((line) => line.includes("Safe to approve"))
    assert.deepStrictEqual(labelled, [clientLine(spoof)])
    assert.isTrue(labelled[0]!.startsWith("The client calls itself: Claude Desktop"))
    assert.strictEqual(clientLine(""), "The client gave no name.")
  })
})

describe("DialogText: the statement laid out for reading", () => {
  it("one-line JSON rows are indented; the same tokens, so numbers and escapes show exactly as sent", () => {
    const row = "{\"class\":\"Article\",\"properties\":{\"n\":1.50,\"big\":12345678901234567890,\"s\":\"a\\\"b\\n\",\"e\":[],\"o\":{}}}"
    const shown = readableStatement(`POST /v1/objects\n${row}`)
    assert.isTrue(shown.laidOut)
    assert.strictEqual(
      shown.text,
      [
        "POST /v1/objects",
        "{",
        "  \"class\": \"Article\",",
        "  \"properties\": {",
        "    \"n\": 1.50,",
        "    \"big\": 12345678901234567890,",
        "    \"s\": \"a\\\"b\\n\",",
        "    \"e\": [],",
        "    \"o\": {}",
        "  }",
        "}"
      ].join("\n")
    )
    // Only whitespace between tokens changed.
    assert.strictEqual(shown.text.replace(/^POST \/v1\/objects\n/, "").replace(/\n\s*/g, "").replace(/": /g, "\":"), row)
  })

  it("a REST line with its body on the same line puts the body under it, indented", () => {
    const shown = readableStatement("PATCH /v1/objects/Article/1 {\"properties\":{\"a\":1}}")
    assert.strictEqual(shown.text, "PATCH /v1/objects/Article/1\n{\n  \"properties\": {\n    \"a\": 1\n  }\n}")
  })

  it("real line breaks are kept and text that is not JSON is left as it is", () => {
    const graphql = "{\n  Get {\n    Article { title }\n  }\n}"
    assert.strictEqual(readableStatement(graphql).text, graphql)
    assert.strictEqual(readableStatement("POST /v1/objects\n{ not json").text, "POST /v1/objects\n{ not json")
  })

  it("characters that would not show, or would reorder the text, are shown by their code point", () => {
    assert.strictEqual(readableStatement("POST /v1/x\nab\u202ecd\u200b\u0007").text, "POST /v1/x\nab⟨U+202E⟩cd⟨U+200B⟩⟨U+0007⟩")
  })

  it("no line is wider than the dialog: a 3,000-character row wraps, each continuation marked with ↪", () => {
    const row = JSON.stringify({ class: "Article", properties: { title: "x".repeat(2_950) } })
    const shown = readableStatement(`POST /v1/objects\n${row}`)
    const lines = shown.text.split("\n")
    assert.isTrue(lines.every((line) => chars(line) <= COLUMNS), "every line within the width")
    assert.isTrue(shown.wrapped)
    assert.isAbove(lines.filter((line) => line.trimStart().startsWith(CONTINUATION)).length, 10)
  })

  it("a statement over 2,000 characters is cut where the form's description cuts it, and the marker is shown", () => {
    const row = JSON.stringify({ class: "Article", properties: { title: "y".repeat(2_950) } })
    const statement = `POST /v1/objects\n${row}`
    const shown = readableStatement(statement)
    const marker = /… \[truncated: [\d,]+ more characters\]$/.exec(describeStatement(statement))![0]
    assert.isTrue(shown.text.endsWith(`\n${marker}`))
    assert.deepStrictEqual(shown.cut, { shown: chars(statement) - Number(marker.replace(/\D/g, "")), total: chars(statement), marker })
    // The cut row is still laid out as far as it goes.
    assert.isTrue(shown.text.startsWith("POST /v1/objects\n{\n  \"class\": \"Article\",\n"))
    // The cut is announced above the statement, before any scrolling.
    const text = dialogText({ ...sampleRequest, statement })
    assert.isBelow(text.indexOf("Only the first 1,9"), text.indexOf("POST /v1/objects"))
  })

  it("the dialog text keeps every line within the width, headline first", () => {
    const body = Array.from({ length: 64 }, (_, i) => `  "p${i}": "${"v".repeat(i * 3)}",`).join("\n")
    const text = dialogText({ ...sampleRequest, statement: `POST /v1/objects\n{\n${body}\n  "end": 1\n}` })
    assert.isTrue(text.split("\n").every((line) => chars(line) <= COLUMNS))
    assert.isTrue(text.startsWith(sampleRequest.message))
  })
})
