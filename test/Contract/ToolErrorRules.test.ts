/**
 * "Tool errors" of `local-mcp-endpoint.md`: a tool that fails answers a successful result with
 * `isError: true` and a text `code: message`, the code one of the contract's nine, the text redacted.
 * The audit in `docs/contract-coverage.md` found `internal_failure` and the driver-error mapping
 * without a test; these check them at the seam every tool goes through (ToolDefinition / ToolError).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Redaction from "../../src/Base/Redaction.ts"
import type { CallToolResult, Outcome } from "../../src/Mcp/Catalogue.ts"
import * as ToolDefinition from "../../src/Catalogue/Tools/ToolDefinition.ts"
import * as ToolError from "../../src/Catalogue/Tools/ToolError.ts"
import { validateDef } from "../Mcp/support/EndpointHarness.ts"

const CODES = ["invalid_argument", "not_connected", "not_found", "denied", "timeout", "unsupported", "query_failed", "user_cancelled", "internal_failure"]

const expectToolError = (result: CallToolResult, code: string) => {
  validateDef("2026-07-28", "CallToolResult", { ...result, resultType: "complete" })
  assert.isTrue(result.isError)
  const text = (result.content[0] as { text: string }).text
  assert.match(text, new RegExp(`^${code}: \\S`))
  assert.include(CODES, text.slice(0, text.indexOf(":")))
  return text
}

describe("Contract: tool errors", () => {
  it("Tool errors: a database failure maps to the contract's codes (not_connected, not_found, timeout, unsupported, query_failed, invalid_argument, denied, internal_failure)", () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ _tag: "ConnectionFailed", message: "Connection failed: refused" }, "not_connected"],
      [{ _tag: "AuthenticationFailed", message: "Authentication failed: key rejected", status: 401 }, "not_connected"],
      [{ _tag: "AuthenticationFailed", message: "Authentication failed: forbidden", status: 403 }, "denied"],
      [{ _tag: "DatabaseRefused", message: "refused", status: 404 }, "not_found"],
      [{ _tag: "DatabaseRefused", message: "refused", status: 504 }, "timeout"],
      [{ _tag: "DatabaseRefused", message: "refused", status: 500, detail: "context deadline exceeded" }, "timeout"],
      [{ _tag: "DatabaseRefused", message: "refused", status: 501 }, "unsupported"],
      [{ _tag: "DatabaseRefused", message: "refused", status: 422 }, "query_failed"],
      [{ _tag: "FilterRefused", message: "REGEX is not supported", reason: "REGEX is not supported" }, "unsupported"],
      [{ _tag: "FilterRefused", message: "bad value", reason: "a date needs a complete RFC 3339 timestamp" }, "invalid_argument"],
      [{ _tag: "StatementRefused", message: "a mutation" }, "invalid_argument"],
      [{ _tag: "CollectionNotFound", message: "no such collection" }, "not_found"],
      [{ _tag: "ConnectionNotFound", message: "no such connection" }, "not_found"],
      [{ _tag: "UnexpectedResponse", message: "not JSON" }, "query_failed"],
      [{ _tag: "SecretFileError", message: "cannot read connections.json" }, "internal_failure"]
    ]
    for (const [error, code] of cases) {
      const failure = ToolError.fromDriverError(error as never)
      assert.strictEqual(failure.code, code, JSON.stringify(error))
      expectToolError(ToolError.toResult(failure), code)
    }
  })

  it("Tool errors: a defect in a tool is internal_failure, a complete result with isError, never a protocol error, and its message does not leave the process", async () => {
    const tool = ToolDefinition.make({
      name: "breaks",
      title: "Breaks",
      description: "Dies",
      input: Schema.Struct({}),
      output: Schema.Struct({}),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
      run: () => Effect.die(new Error("defect text with wmcp_0123456789abcdef_secret"))
    })
    const outcome = await Effect.runPromise(tool.call({}) as unknown as Effect.Effect<Outcome<CallToolResult>>)
    assert.strictEqual(outcome._tag, "Complete")
    const result = (outcome as { value: CallToolResult }).value
    const text = expectToolError(result, "internal_failure")
    assert.notInclude(text, "defect text")
    assert.notInclude(JSON.stringify(result), "wmcp_0123456789abcdef_secret")
  })

  it("Tool errors: the text is redacted before leaving the process (a registered secret echoed by a driver message is removed)", () => {
    const secret = "contract-echoed-api-key-7f3a9c"
    Redaction.global.register(secret)
    const result = ToolError.toResult(ToolError.fail("query_failed", `the database said: bad key ${secret} (Authorization: Bearer ${secret})`))
    const text = expectToolError(result, "query_failed")
    assert.notInclude(text, secret)
    assert.notInclude(JSON.stringify(result), secret)
  })
})
