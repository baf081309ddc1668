/**
 * The MCP endpoint as an `HttpHandler`. This first version proves the wiring with `server/discover`;
 * the protocol core replaces it.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ServerInstance } from "../Daemon/Handshake.ts"
import { NAME, VERSION } from "../Daemon/Version.ts"
import * as HttpTransport from "./HttpTransport.ts"

const SUPPORTED_VERSIONS = ["2026-07-28", "2025-11-25", "2025-06-18"] as const

/** @category layers */
export const layer = Layer.effect(
  HttpTransport.HttpHandler,
  Effect.gen(function*() {
    const instance = yield* ServerInstance
    return HttpTransport.HttpHandler.of({
      tooLarge: () =>
        HttpTransport.json(413, { jsonrpc: "2.0", id: null, error: { code: -33005, message: "Payload too large: the body cap is 10 MB" } }),
      handle: (request) =>
        Effect.sync(() => {
          if (request.path !== "/mcp") return HttpTransport.full(404)
          if (request.method !== "POST") return HttpTransport.full(405, "", { allow: "POST, OPTIONS" })
          let message: { id?: unknown; method?: unknown }
          try {
            message = JSON.parse(request.body)
          } catch {
            return HttpTransport.json(400, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } })
          }
          const id = message.id ?? null
          if (message.method !== "server/discover") {
            return HttpTransport.json(404, { jsonrpc: "2.0", id, error: { code: -32601, message: "Method not found" } })
          }
          return HttpTransport.json(200, {
            jsonrpc: "2.0",
            id,
            result: {
              resultType: "complete",
              supportedVersions: SUPPORTED_VERSIONS,
              capabilities: {
                tools: { listChanged: false },
                resources: { subscribe: true, listChanged: true },
                prompts: { listChanged: false },
                completions: {},
                extensions: {}
              },
              serverInfo: { name: NAME, version: VERSION, title: "Weaviate MCP", instanceId: instance.instanceId },
              _meta: { "io.modelcontextprotocol/serverInfo": { name: NAME, version: VERSION } }
            }
          })
        })
    })
  })
)
