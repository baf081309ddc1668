/**
 * The query history's batch holds each entry for up to 100 ms. What it holds must be the entry only:
 * holding anything that reaches the call's result (its rows, its text) keeps the result alive long
 * enough to be copied out of V8's young generation, which is what made recording cost CPU per call.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as NodeV8 from "node:v8"
import * as NodeVm from "node:vm"
import { CurrentPrincipal } from "../../../src/Auth/Principal.ts"
import { recorded } from "../../../src/Catalogue/Tools/HistoryRecording.ts"
import type { HistoryStore } from "../../../src/History/HistoryStore.ts"
import { type CallToolResult, complete, RequestContext, type Tool } from "../../../src/Mcp/Catalogue.ts"
import * as RequestContexts from "../../support/RequestContexts.ts"
import { token } from "./support.ts"

NodeV8.setFlagsFromString("--expose-gc")
const gc = NodeVm.runInNewContext("gc") as () => void

const context = RequestContexts.toolCall("test-client")

describe("query history recording", () => {
  it("a queued history entry does not keep the call's result alive", async () => {
    const queued: Array<unknown> = []
    const history = { record: (item: unknown) => void queued.push(item) } as unknown as HistoryStore["Type"]
    let result: WeakRef<object> | undefined
    const tool: Tool = {
      descriptor: { name: "execute_query", description: "", inputSchema: {} },
      scopes: [],
      call: () =>
        Effect.sync(() => {
          const rows = Array.from({ length: 1000 }, (_, i) => ({ id: i, title: `row ${i}` }))
          const answer: CallToolResult = { content: [{ type: "text", text: JSON.stringify(rows) }], structuredContent: { rows } }
          result = new WeakRef(answer)
          return complete(answer)
        })
    }
    const call = recorded(tool, history, (id) => Effect.succeed(id)).call({ connection_id: "local", query: "{ Get { Article { title } } }" })
    const tag = await Effect.runPromise(call.pipe(
      Effect.map((outcome) => outcome._tag),
      Effect.provideService(RequestContext, context),
      Effect.provideService(CurrentPrincipal, token("fullAccess"))
    ))
    expect(tag).toBe("Complete")
    // The batch still holds what was recorded; the call and its answer are done with.
    expect(queued).toHaveLength(1)
    const entry = typeof queued[0] === "function" ? (queued[0] as () => unknown)() : queued[0]
    expect(entry).toMatchObject({ tool: "execute_query", connection: "local", outcome: "ok", statement: "{ Get { Article { title } } }" })
    // Bounded: a handful of collections (the WeakRef is cleared by the first one that finds the answer unreachable).
    for (let i = 0; i < 5 && result?.deref() !== undefined; i++) {
      await new Promise((resolve) => setImmediate(resolve))
      gc()
    }
    expect(result?.deref()).toBeUndefined()
  })
})
