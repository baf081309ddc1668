/**
 * undici's `Agent` and its `request`, loaded from the two files that hold them rather than from
 * undici's index. The index also loads fetch, WebSocket, EventSource, the cookie and cache stores and
 * the mock agents, none of which the driver uses: 720 KB of the CLI bundle, where these two files and
 * what they need are 350 KB. With graphql's ES module build in the bundle (scripts/build.mjs), a daemon
 * started 831 -> 709 ms and idle RSS went 101 -> 91 MB (docs/benchmarks.md, "Start and idle memory").
 *
 * `request` is the function undici's index installs as `Dispatcher.prototype.request`; it is called
 * on the agent here, so no prototype is changed. A new undici that moves either file fails every
 * driver test at once (and `npm run build`).
 *
 * @since 0.1.0
 */
/// <reference path="./UndiciFiles.d.ts" />
import type { Agent as UndiciAgent, Dispatcher } from "undici"
import AgentClass from "undici/lib/dispatcher/agent.js"
import apiRequest from "undici/lib/api/api-request.js"

/** The undici `Agent` class. @category constructors */
export const Agent: typeof UndiciAgent = AgentClass

/** An undici `Agent`. @category models */
export type Agent = UndiciAgent

/** `agent.request(options)`, as undici's index would install it. @category requests */
export const request = (agent: Agent, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData> =>
  apiRequest.call(agent, options)
