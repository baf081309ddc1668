/**
 * A Weaviate-compatible test instance on 127.0.0.1 (HTTP or HTTPS with a CA generated at start),
 * with API-key / anonymous auth changeable at run time, request recording, and a fault switch that
 * delays, hangs or drops responses. The behaviour follows test/fixtures/reference/weaviate/behaviour.md
 * (Weaviate 1.39); see Rest.ts, Graphql.ts and Query.ts.
 */
import * as http from "node:http"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import { Context, Effect, Layer } from "effect"
import { bearerToken } from "./Auth.ts"
import type { HttpReply } from "./Http.ts"
import { isRecord } from "./Json.ts"
import { DEFAULT_LIMITS } from "./Query.ts"
import { RestApi, WEAVIATE_VERSION } from "./Rest.ts"
import { Store } from "./Store.ts"
import { generateTls } from "./Tls.ts"
import { makeRecorder } from "./Recorder.ts"

export interface WeaviateTestOptions {
  /** default 0 (a free port); the host is always 127.0.0.1 */
  readonly port?: number
  /** when given, API-key auth is on */
  readonly apiKeys?: ReadonlyArray<string>
  /** default: true when no apiKeys, false otherwise */
  readonly anonymousAccess?: boolean
  /** HTTPS with the generated certificate */
  readonly tls?: boolean
  /** QUERY_MAXIMUM_RESULTS, default 10000 */
  readonly maxResults?: number
  /** append the request's API key to every error message (for redaction tests) */
  readonly echoApiKeyInErrors?: boolean
  /** more Weaviate modules (ENABLE_MODULES), e.g. ["text2vec-bigram"]: only a real server has them */
  readonly modules?: ReadonlyArray<string>
}

export interface RecordedRequest {
  method: string
  path: string
  query: Record<string, string>
  headers: Record<string, string>
  body: string
  /** the client went away before the response was finished */
  aborted: boolean
  /** the response was completely written */
  completed: boolean
}

/** What `bulkSeed` creates: collections (class definitions as `POST /v1/schema` takes them), and tenants of one of them. */
export interface BulkSeed {
  readonly collections?: ReadonlyArray<Record<string, unknown>>
  readonly tenants?: { readonly collection: string; readonly names: Iterable<string>; readonly activityStatus?: string }
}

export type Fault =
  | { readonly kind: "none" }
  | { readonly kind: "delay"; readonly ms: number }
  | { readonly kind: "hang" }
  | { readonly kind: "drop" }
  /** the status line, the headers and the first half of the body, then the connection is cut */
  | { readonly kind: "truncate" }

export interface WeaviateTestInstance {
  /** which server answers: this compatible instance, a real Weaviate we started, or WEAVIATE_TEST_URL's */
  readonly kind: "compatible" | "real" | "external"
  /** the Weaviate version it is (or follows) */
  readonly version: string
  /** e.g. http://127.0.0.1:43211 or https://127.0.0.1:43211 */
  readonly url: string
  readonly port: number
  /** PEM of the CA that signed the server certificate (tls only) */
  readonly caPem: string | undefined
  readonly requests: ReadonlyArray<RecordedRequest>
  clearRequests(): void
  setApiKeys(keys: ReadonlyArray<string>): void
  setFault(fault: Fault, options?: { readonly pathPrefix?: string }): void
  /** resolves when a matching request is recorded (for aborted ones, when the abort is seen) */
  waitForRequest(predicate: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>
  /** drop all classes and objects (the compatible instance only) */
  reset(): void
  /** drop all classes and objects, on any server */
  resetAsync(): Promise<void>
  /**
   * Creates collections and tenants in the store directly, without HTTP (the compatible instance
   * only): a benchmark or test of a big schema gets 1,000 collections or a million tenants in seconds.
   */
  readonly bulkSeed?: (seed: BulkSeed) => void
  close(): Promise<void>
}

const echoKey = (reply: HttpReply, key: string): HttpReply => {
  if (reply.body === undefined) return reply
  const suffix = ` (api key: ${key})`
  if (reply.status === 401 && reply.headers?.["content-type"]?.startsWith("text/plain")) {
    return { ...reply, body: reply.body.replace(/" }$/, `${suffix}" }`) }
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(reply.body)
  } catch {
    return reply
  }
  if (!isRecord(parsed)) return reply
  let changed = false
  const add = (items: unknown) => {
    if (!Array.isArray(items)) return
    for (const it of items) {
      if (isRecord(it) && typeof it["message"] === "string") {
        it["message"] = it["message"] + suffix
        changed = true
      }
    }
  }
  add(parsed["error"])
  add(parsed["errors"])
  if (typeof parsed["message"] === "string" && reply.status >= 400) {
    parsed["message"] = parsed["message"] + suffix
    changed = true
  }
  return changed ? { ...reply, body: JSON.stringify(parsed) } : reply
}

export const startWeaviate = async (options: WeaviateTestOptions = {}): Promise<WeaviateTestInstance> => {
  const store = new Store()
  let apiKeyEnabled = options.apiKeys !== undefined
  let apiKeys: ReadonlyArray<string> = options.apiKeys ?? []
  const anonymousAccess = options.anonymousAccess ?? options.apiKeys === undefined
  const maxResults = options.maxResults ?? DEFAULT_LIMITS.maxResults
  // The default limits stay 10 and 100 whatever QUERY_MAXIMUM_RESULTS is: on the real server a Get
  // without a limit fails once QUERY_MAXIMUM_RESULTS is below 100 (test/weaviate/Fidelity.test.ts).
  const limits = { ...DEFAULT_LIMITS, maxResults }
  const tls = options.tls === true ? generateTls() : undefined
  const scheme = tls === undefined ? "http" : "https"
  let port = 0
  const api = new RestApi(store, {
    limits: () => limits,
    auth: () => ({ apiKeyEnabled, apiKeys, anonymousAccess }),
    hostname: () => `${scheme}://127.0.0.1:${port}`
  })

  const recorder = makeRecorder()
  const { records } = recorder

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const tracked = recorder.track(req, res, (r, url) => {
      const respond = (truncate: boolean) => {
        if (res.destroyed || res.writableEnded) return
        let reply = api.handle({ method: r.method, path: r.path, query: url.searchParams, headers: r.headers, body: r.body })
        const key = bearerToken(r.headers["authorization"], url.searchParams)
        if (options.echoApiKeyInErrors === true && key !== undefined) reply = echoKey(reply, key)
        const h: Record<string, string | number> = { ...reply.headers }
        h["content-length"] = reply.body === undefined ? 0 : Buffer.byteLength(reply.body)
        res.writeHead(reply.status, h)
        if (truncate && reply.body !== undefined) {
          tracked.drop()
          const bytes = Buffer.from(reply.body, "utf8")
          res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => req.socket.destroy())
          return
        }
        res.end(r.method === "HEAD" ? undefined : reply.body)
      }
      recorder.underFault(r.path, req.socket, respond, tracked.drop)
    })
  }

  const server: http.Server =
    tls === undefined ? http.createServer(onRequest) : https.createServer({ cert: tls.certPem, key: tls.keyPem }, onRequest)
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject)
      resolve()
    })
  })
  port = (server.address() as AddressInfo).port
  let closed: Promise<void> | undefined

  return {
    kind: "compatible",
    version: WEAVIATE_VERSION,
    url: `${scheme}://127.0.0.1:${port}`,
    port,
    caPem: tls?.caPem,
    get requests() {
      return records
    },
    clearRequests: () => {
      records.length = 0
    },
    setApiKeys: (keys) => {
      apiKeyEnabled = true
      apiKeys = [...keys]
    },
    setFault: recorder.setFault,
    waitForRequest: recorder.waitForRequest,
    reset: () => store.reset(),
    bulkSeed: (seed) => {
      for (const c of seed.collections ?? []) store.createClass(c)
      if (seed.tenants !== undefined) {
        const cls = store.getClass(seed.tenants.collection)
        if (cls === undefined) throw new Error(`bulkSeed: no collection ${seed.tenants.collection}`)
        const status = seed.tenants.activityStatus ?? "HOT"
        for (const name of seed.tenants.names) cls.tenants.set(name, { name, activityStatus: status })
      }
    },
    resetAsync: async () => store.reset(),
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        recorder.close("the Weaviate test instance")
        server.close(() => resolve())
        server.closeAllConnections()
      })
      return closed
    }
  }
}

/** Scoped instance for @effect/vitest: started on acquire, closed on release. */
export const WeaviateTest = (options?: WeaviateTestOptions) =>
  Effect.acquireRelease(
    Effect.promise(() => startWeaviate(options)),
    (w) => Effect.promise(() => w.close())
  )

export class WeaviateInstance extends Context.Tag("test/WeaviateInstance")<WeaviateInstance, WeaviateTestInstance>() {}

/** A Layer providing a fresh instance as `WeaviateInstance`. */
export const layer = (options?: WeaviateTestOptions): Layer.Layer<WeaviateInstance> =>
  Layer.scoped(WeaviateInstance, WeaviateTest(options))
