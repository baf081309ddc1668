import { assert, describe, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import {
  APPROVE_STATEMENT,
  describeStatement,
  inputRequired,
  MAX_DESCRIPTION_LENGTH,
  parseAnswer
} from "../../src/Approval/ApprovalPayload.js"
import { referencePath } from "../support/Reference.ts"
import { validateDef } from "../support/McpSchemas.ts"

const examplesDir = referencePath("mcp", "examples-2026-07-28")

const statement = "POST /v1/batch/objects\n{\"objects\":[{\"class\":\"Article\",\"properties\":{\"title\":\"Hello\"}}]}"

describe("ApprovalPayload", () => {
  it("the input_required payload validates against the official InputRequiredResult schema", () => {
    const payload = inputRequired({ message: "Approve?", title: "Approve this write", statement, requestState: "abc.def" })
    // As the endpoint sends it: the model's fields under `resultType` instead of its tag.
    validateDef("2026-07-28", "InputRequiredResult", { resultType: "input_required", inputRequests: payload.inputRequests, requestState: payload.requestState })
    // Each part against its own definition, so a lax `additionalProperties` cannot hide a mistake.
    validateDef("2026-07-28", "ElicitRequest", payload.inputRequests[APPROVE_STATEMENT])
    validateDef("2026-07-28", "ElicitRequestFormParams", payload.inputRequests[APPROVE_STATEMENT].params)
    validateDef("2026-07-28", "BooleanSchema", payload.inputRequests[APPROVE_STATEMENT].params.requestedSchema.properties.approved)
  })

  it("the payload has the contract's shape: approve_statement, form mode, one required boolean approved", () => {
    const payload = inputRequired({ message: "Approve?", title: "Approve this write", statement, requestState: "s" })
    assert.deepStrictEqual(payload, {
      _tag: "InputRequired",
      inputRequests: {
        approve_statement: {
          method: "elicitation/create",
          params: {
            mode: "form",
            message: "Approve?",
            requestedSchema: {
              type: "object",
              properties: { approved: { type: "boolean", title: "Approve this write", description: statement } },
              required: ["approved"]
            }
          }
        }
      },
      requestState: "s"
    })
  })

  it("the description carries the statement verbatim with its line breaks up to 2,000 characters", () => {
    const exact = "line one\nline two\r\n\tindented\n" + "x".repeat(MAX_DESCRIPTION_LENGTH - 29)
    assert.strictEqual(Array.from(exact).length, MAX_DESCRIPTION_LENGTH)
    assert.strictEqual(describeStatement(exact), exact)
  })

  it("a longer statement is cut with a marker naming how much was cut, never silently", () => {
    const long = "a\n".repeat(2_706) // 5,412 characters
    const described = describeStatement(long)
    assert.isAtMost(Array.from(described).length, MAX_DESCRIPTION_LENGTH)
    const match = /\n… \[truncated: ([\d,]+) more characters\]$/.exec(described)
    assert.isNotNull(match)
    const more = Number(match![1]!.replace(/,/g, ""))
    const kept = described.slice(0, described.length - match![0].length)
    assert.isTrue(long.startsWith(kept))
    assert.strictEqual(kept.length + more, long.length)
    assert.include(match![1]!, ",") // thousands separator: "3,4xx"
  })

  it("the cut never splits a character outside the BMP", () => {
    const long = "😀".repeat(3_000)
    const described = describeStatement(long)
    assert.isFalse(described.includes("\uFFFD"))
    const kept = described.slice(0, described.indexOf("\n…"))
    assert.strictEqual(Array.from(kept).every((c) => c === "😀"), true)
  })

  it("an official ElicitResult example is read: accept with approved true approves", () => {
    const example = JSON.parse(NodeFs.readFileSync(`${examplesDir}/ElicitResult/input-single-field.json`, "utf8"))
    assert.strictEqual(parseAnswer({ approve_statement: example }), "denied") // no `approved` field
    assert.strictEqual(parseAnswer({ approve_statement: { action: "accept", content: { approved: true } } }), "approved")
  })

  it("any other answer denies: decline, cancel, approved false, approved \"true\", malformed", () => {
    for (
      const answer of [
        { action: "decline" },
        { action: "cancel" },
        { action: "accept", content: { approved: false } },
        { action: "accept", content: { approved: "true" } },
        { action: "accept" },
        { action: "yes", content: { approved: true } },
        "accept",
        null
      ]
    ) {
      assert.strictEqual(parseAnswer({ approve_statement: answer }), "denied", JSON.stringify(answer))
    }
    assert.strictEqual(parseAnswer("not an object"), "denied")
  })

  it("a missing answer asks again", () => {
    assert.strictEqual(parseAnswer(undefined), "missing")
    assert.strictEqual(parseAnswer({}), "missing")
    assert.strictEqual(parseAnswer({ other_key: { action: "accept", content: { approved: true } } }), "missing")
  })
})
