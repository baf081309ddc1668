/**
 * The request context a handler runs in, for tests that call a tool or a handler directly (no HTTP):
 * a modern-era `tools/call` from a client named `clientName`, without progress.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { RequestContext } from "../../src/Mcp/Catalogue.ts"

export const toolCall = (clientName: string | undefined, overrides: Partial<RequestContext["Type"]> = {}) =>
  RequestContext.of({
    era: "modern",
    protocolVersion: "2026-07-28",
    method: "tools/call",
    requestId: 1,
    clientCapabilities: {},
    clientInfo: clientName === undefined ? Option.none() : Option.some({ name: clientName }),
    requestState: Option.none(),
    inputResponses: Option.none(),
    progress: () => Effect.void,
    ...overrides
  })
