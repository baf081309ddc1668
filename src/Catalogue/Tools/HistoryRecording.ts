/**
 * Every tool call whose statement reaches Weaviate is recorded in the query history when it ends:
 * its statement, who sent it (the client's name and the principal), how long it took, the rows, and
 * how it ended (`ok`, or the tool error's code and message). A call answered with `input_required`
 * has run nothing yet and is recorded when it is repeated and runs.
 *
 * The entry is built when the call ends, and only the entry waits for the history's batch: a
 * deferred build kept each call's whole result (its rows, its text) alive until the batch ran 100 ms
 * later, long enough to be copied out of V8's young generation, and recording cost 1.24× the CPU of
 * an `execute_query` (bench:history); built at once, the result is garbage as soon as it is sent.
 * The entry is queued itself, not a closure returning it: a closure made inside the call keeps its
 * scope's context chain, and with it the call's `Exit` and result, alive just the same.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { CurrentPrincipal } from "../../Auth/Principal.ts"
import * as HistoryEntry from "../../History/HistoryEntry.ts"
import type { HistoryStore } from "../../History/HistoryStore.ts"
import { type CallToolResult, type Outcome, RequestContext, type Tool } from "../../Mcp/Catalogue.ts"
import type { McpError } from "../../Schema/McpErrors.ts"

const str = (u: unknown): string | null => (typeof u === "string" ? u : null)

const TOOL_ERROR = /^([a-z_]+): ([\s\S]*)$/

/** The code and message of a protocol error that ended a call. */
const protocolCode = (error: McpError): string => {
  switch (error.code) {
    case -33003:
      return "timeout"
    case -33007:
      return "denied"
    case -33002:
    case -33006:
    case -33000:
      return "cancelled"
    default:
      return `protocol_error ${error.code}`
  }
}

/**
 * The tool, recording each call in `history`. Tools whose statements never reach Weaviate (listing
 * connections, describing tables…) are returned as they are.
 *
 * @category combinators
 */
export const recorded = (
  tool: Tool,
  history: HistoryStore["Type"],
  /** The id of the connection a call named (by id or by name): the history is kept, and shown, by id. */
  connectionId: (idOrName: string) => Effect.Effect<string>
): Tool => {
  const name = tool.descriptor.name
  if (!HistoryEntry.RECORDED_TOOLS.has(name)) return tool
  return {
    descriptor: tool.descriptor,
    scopes: tool.scopes,
    call: (args) =>
      Effect.flatMap(RequestContext, (context) =>
        Effect.flatMap(CurrentPrincipal, (principal) => {
          const time = Date.now()
          const start = performance.now()
          return Effect.flatMap(Effect.exit(tool.call(args)), (exit) => {
            if (Exit.isSuccess(exit) && exit.value._tag !== "Complete") return exit
            const durationMs = performance.now() - start
            const named = str(args.connection_id)
            const client = Option.getOrNull(context.clientInfo)?.name ?? null
            return Effect.as(
              Effect.map(named === null ? Effect.succeed(null) : connectionId(named), (connection) => {
                // The entry itself, not a closure over it: a closure made here keeps this scope's
                // context chain alive, with the call's whole result, until the batch runs.
                history.record(entryOf(name, args, exit, { time, durationMs, client, principal, connection }))
              }),
              exit
            ).pipe(Effect.flatten)
          })
        }))
  }
}

const entryOf = (
  tool: string,
  args: Readonly<Record<string, unknown>>,
  exit: Exit.Exit<Outcome<CallToolResult>, McpError>,
  call: {
    readonly time: number
    readonly durationMs: number
    readonly client: string | null
    readonly principal: { readonly id: string; readonly name: string }
    readonly connection: string | null
  }
): HistoryEntry.NewEntry => {
  let outcome: HistoryEntry.Outcome = "ok"
  let errorCode: string | null = null
  let errorMessage: string | null = null
  let structured: Readonly<Record<string, unknown>> | undefined
  if (Exit.isSuccess(exit)) {
    const result = (exit.value as { readonly value: CallToolResult }).value
    if (result.isError === true) {
      const text = str((result.content[0] as { text?: unknown } | undefined)?.text) ?? ""
      const match = TOOL_ERROR.exec(text)
      outcome = "error"
      errorCode = match?.[1] ?? "tool_error"
      errorMessage = match?.[2] ?? text
    } else {
      structured = result.structuredContent
    }
  } else {
    outcome = "error"
    const failure = Cause.failureOption(exit.cause)
    if (Option.isSome(failure)) {
      errorCode = protocolCode(failure.value)
      errorMessage = failure.value.message
    } else {
      errorCode = Cause.isInterruptedOnly(exit.cause) ? "cancelled" : "internal_failure"
      errorMessage = Cause.isInterruptedOnly(exit.cause) ? "the call was cancelled" : "the tool failed unexpectedly"
    }
  }
  const statement = HistoryEntry.statementOf(tool, args, structured)
  const table = str(args.table) ?? (tool === "execute_query" ? HistoryEntry.collectionOfStatement(statement) : null)
  const level = str(args.consistency_level)
  return {
    time: call.time,
    connection: call.connection,
    collection: table === null ? null : str(structured?.table) ?? table,
    tenant: str(args.tenant),
    consistencyLevel: level,
    source: "mcp",
    client: call.client,
    principal: call.principal.id,
    principalName: call.principal.name,
    tool,
    statement,
    digest: HistoryEntry.statementDigests(tool, args)[0] ?? null,
    durationMs: call.durationMs,
    rows: outcome === "ok" ? HistoryEntry.rowsOf(tool, structured) : null,
    outcome,
    errorCode,
    errorMessage,
    approval: str(structured?.approvedBy)
  }
}
