/**
 * Types of the two undici files `UndiciAgent` loads directly (undici 7 publishes no `exports` map, so
 * its files are reachable; its types describe only the index). The values are the ones the index
 * re-exports: `Agent` is `undici.Agent`, and `request` is the `Dispatcher.prototype.request` the
 * index installs.
 */
declare module "undici/lib/dispatcher/agent.js" {
  import type { Agent } from "undici"
  const AgentClass: typeof Agent
  export default AgentClass
}

declare module "undici/lib/api/api-request.js" {
  import type { Dispatcher } from "undici"
  const request: (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>
  export default request
}
