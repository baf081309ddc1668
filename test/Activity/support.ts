/** A call as the activity log records it, for the activity tests: a modern `tools/call` by one client and token. */
import type * as Line from "../../src/Activity/ActivityLine.ts"

export const sampleCall = (overrides: Partial<Line.Call> = {}): Line.Call => ({
  time: Date.UTC(2026, 0, 1),
  client: "claude-code",
  clientVersion: "1.0.0",
  principal: "tok_1",
  principalName: "laptop",
  era: "modern",
  method: "tools/call",
  tool: "execute_query",
  connection: "c1",
  outcome: "ok",
  code: null,
  durationMs: 1,
  statements: [],
  ...overrides
})
