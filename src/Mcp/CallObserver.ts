/**
 * The one point where the endpoint reports an MCP call: it begins when a request with an id has been
 * read, learns its principal once authenticated, and ends with the response (or the interruption)
 * the client gets. The daemon's observer (`Activity/ActivityObserver`) feeds the activity log, the
 * connected clients and the operational log line from it.
 *
 * Without an observer (the default reference) the endpoint pays nothing: `begin` answers `undefined`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Principal } from "../Auth/Principal.ts"
import type * as HttpTransport from "./HttpTransport.ts"

/** A call being observed. @category models */
export interface Observation {
  readonly authenticated: (principal: Principal) => void
  readonly end: (response: Effect.Effect<HttpTransport.HttpResponse>) => Effect.Effect<HttpTransport.HttpResponse>
}

/** @category models */
export interface Started {
  readonly request: HttpTransport.HttpRequest
  readonly method: string
  readonly params: Readonly<Record<string, unknown>>
  readonly meta: Readonly<Record<string, unknown>> | undefined
}

/** @category services */
export class CallObserver extends Context.Reference<CallObserver>()("weaviate-mcp/CallObserver", {
  defaultValue: (): { readonly begin: (started: Started) => Observation | undefined } => ({ begin: () => undefined })
}) {}
