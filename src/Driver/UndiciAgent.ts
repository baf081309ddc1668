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
 * Both are loaded when the first connection opens (`load`), not when the process starts.
 *
 * @since 0.1.0
 */
/// <reference path="./UndiciFiles.d.ts" />
import type { Agent as UndiciAgent, Dispatcher } from "undici"

/** An undici `Agent`. @category models */
export type Agent = UndiciAgent

/** The `Agent` class and `agent.request(options)`, as undici's index would install it. @category models */
export interface Undici {
  readonly Agent: typeof UndiciAgent
  readonly request: (agent: Agent, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>
}

let loading: Promise<Undici> | undefined

/**
 * The two files, loaded when the first connection is opened, not when the daemon starts: a daemon
 * that has not reached Weaviate yet (and every CLI command that never does) does not initialize
 * undici's 350 KB. In the bundle `import()` becomes a `require` of code in the file, run on first use
 * (scripts/build.mjs). Loaded once; every connection shares it.
 *
 * @category constructors
 */
export const load = (): Promise<Undici> =>
  loading ??= Promise.all([import("undici/lib/dispatcher/agent.js"), import("undici/lib/api/api-request.js")]).then(
    ([agent, api]) => ({ Agent: agent.default, request: (on, options) => api.default.call(on, options) })
  )
