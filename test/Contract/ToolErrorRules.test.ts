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
import { SecretFileError } from "../../src/Base/SecretFile.ts"
import * as DriverError from "../../src/Driver/DriverError.ts"
import { ConnectionNotFound } from "../../src/Driver/ConnectionStore.ts"
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
  it("Tool errors: a database failure maps to the contract's codes (not_connected, not_found, timeout, unsupported, query_failed, invalid_argument, denied, internal_failure); a Weaviate permission refused is denied", () => {
    const cases: Array<[{ readonly _tag: string; readonly message: string }, string]> = [
      [new DriverError.ConnectionFailed({ reason: "refused" }), "not_connected"],
      [new DriverError.ConnectionFailed({ reason: "no answer in 10 s", code: "TIMEOUT" }), "timeout"],
      [new DriverError.AuthenticationFailed({ reason: "key rejected", status: 401 }), "not_connected"],
      [new DriverError.AuthenticationFailed({ reason: "forbidden", status: 403 }), "denied"],
      [new DriverError.PermissionDenied({ user: "alice", action: "create_data", collection: "Article" }), "denied"],
      [new DriverError.DatabaseRefused({ status: 404, detail: "no object" }), "not_found"],
      [new DriverError.DatabaseRefused({ status: 504, detail: "gateway" }), "timeout"],
      [new DriverError.DatabaseRefused({ status: 500, detail: "context deadline exceeded" }), "timeout"],
      [new DriverError.DatabaseRefused({ status: 501, detail: "not implemented" }), "unsupported"],
      [new DriverError.DatabaseRefused({ status: 422, detail: "bad where" }), "query_failed"],
      [new DriverError.FilterRefused({ filter: "title", reason: "REGEX is not supported" }), "unsupported"],
      [new DriverError.FilterRefused({ filter: "when", reason: "a date needs a complete RFC 3339 timestamp" }), "invalid_argument"],
      [new DriverError.StatementRefused({ reason: "a mutation" }), "invalid_argument"],
      [new DriverError.CollectionNotFound({ collection: "Nope" }), "not_found"],
      [new ConnectionNotFound({ connection: "nope" }), "not_found"],
      [new DriverError.UnexpectedResponse({ detail: "not JSON" }), "query_failed"],
      [new SecretFileError({ path: "connections.json", operation: "read", reason: "EACCES" }), "internal_failure"]
    ]
    for (const [error, code] of cases) {
      const failure = ToolError.fromDriverError(error)
      assert.strictEqual(failure.code, code, error.message)
      assert.include(expectToolError(ToolError.toResult(failure), code), error.message)
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
