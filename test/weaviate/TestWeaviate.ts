/**
 * The Weaviate the end-to-end tests run against, chosen once per run (test/globalSetup.ts):
 *  - `external`: the server at WEAVIATE_TEST_URL (key in WEAVIATE_TEST_API_KEY), when set;
 *  - `real`: the real Weaviate built from its Go module (scripts/weaviate.mjs), when Go or the cached
 *    binary is there;
 *  - `compatible`: our Weaviate-compatible instance (WeaviateServer.ts), loudly, when neither is.
 * WEAVIATE_TEST_SERVER=compatible forces the last.
 *
 * `startTestWeaviate` hands a test a `WeaviateTestInstance` on any of them. A real server is shared
 * by the leases of one test file that ask for the same configuration (one at a time: a lease's close
 * drops every collection before the next one gets it), and each lease has a recording proxy of its
 * own in front, so request assertions and fault injection (delay, hang, drop) work on every target.
 * What only the compatible instance can do (changing its keys at run time, echoing the key into
 * errors, a fixed port) is asked of it explicitly with `startWeaviate`.
 */
import { Effect, Layer } from "effect"
import { afterAll } from "vitest"
import * as fs from "node:fs"
import { weaviateBinary } from "../../scripts/weaviate.mjs"
import { type RealWeaviate, startRealWeaviate } from "./RealWeaviate.ts"
import { startRecordingProxy } from "./RecordingProxy.ts"
import { currentTarget } from "./Target.ts"
import { startWeaviate, WeaviateInstance, type WeaviateTestInstance, type WeaviateTestOptions } from "./WeaviateServer.ts"

/** The options only the compatible instance honours. */
const needsCompatible = (options: WeaviateTestOptions) => options.echoApiKeyInErrors === true || options.port !== undefined

/** The options the external server is taken to have: anonymous (the proxy adds its key), no TLS, default limits. */
const externalFits = (options: WeaviateTestOptions) =>
  options.modules === undefined && options.apiKeys === undefined && options.tls !== true && options.maxResults === undefined && options.anonymousAccess !== false

interface Pooled {
  readonly server: Upstream
  busy: boolean
}

interface Upstream {
  readonly url: string
  /** a server this worker started (not WEAVIATE_TEST_URL's) */
  readonly stop?: () => Promise<void>
  readonly caPem: string | undefined
  readonly tls: RealWeaviate["tls"]
  readonly adminKey: string | undefined
  readonly version: string
  readonly kind: "real" | "external"
}

const pool = new Map<string, Array<Pooled>>()

const keyOf = (options: WeaviateTestOptions) =>
  JSON.stringify([options.apiKeys ?? null, options.anonymousAccess ?? null, options.tls === true, options.maxResults ?? null, options.modules ?? null])

/**
 * A test file that imports this module will most likely lease a server with the default options,
 * so one starts at import: its ~3 s start overlaps with the file's own imports and collection.
 * Unclaimed, it ends with the worker.
 */
let prestarted: Promise<RealWeaviate> | undefined =
  process.env["VITEST_WORKER_ID"] !== undefined && currentTarget().kind === "real" ? startRealWeaviate() : undefined
prestarted?.catch(() => undefined)

// The servers of a test file stop after it (this hook, registered at import, runs after the file's
// own): vitest ends its workers without an `exit` event, and a stopped server removes its data.
afterAll(async () => {
  const servers: Array<Promise<unknown>> = []
  for (const entries of pool.values()) {
    for (const entry of entries) if (entry.server.stop !== undefined) servers.push(entry.server.stop())
  }
  if (prestarted !== undefined) servers.push(prestarted.then((s) => s.stop(), () => undefined))
  pool.clear()
  prestarted = undefined
  await Promise.all(servers)
})

const externalUpstream = (): Upstream => {
  const url = process.env["WEAVIATE_TEST_URL"]!.replace(/\/+$/, "")
  return {
    url,
    caPem: undefined,
    tls: undefined,
    adminKey: process.env["WEAVIATE_TEST_API_KEY"] || undefined,
    version: currentTarget().version,
    kind: "external"
  }
}

/** Drops every collection (each lease starts on an empty server). */
export const dropAllCollections = async (server: Pick<Upstream, "url" | "caPem" | "adminKey">) => {
  const headers: Record<string, string> = server.adminKey === undefined ? {} : { authorization: `Bearer ${server.adminKey}` }
  const send = (method: string, path: string) => requestText(server, method, path, headers)
  const schema = await send("GET", "/v1/schema")
  if (schema.status !== 200) throw new Error(`listing collections to reset: ${schema.status} ${schema.text}`)
  const classes = ((JSON.parse(schema.text) as { classes?: Array<{ class: string }> }).classes ?? []).map((c) => c.class)
  for (const name of classes) {
    const r = await send("DELETE", `/v1/schema/${encodeURIComponent(name)}`)
    if (r.status !== 200) throw new Error(`dropping ${name}: ${r.status} ${r.text}`)
  }
}

const requestText = async (
  server: Pick<Upstream, "url" | "caPem">,
  method: string,
  path: string,
  headers: Record<string, string>
): Promise<{ status: number; text: string }> => {
  if (server.caPem === undefined) {
    const r = await fetch(`${server.url}${path}`, { method, headers })
    return { status: r.status, text: await r.text() }
  }
  const https = await import("node:https")
  return new Promise((resolve, reject) => {
    const req = https.request(`${server.url}${path}`, { method, headers, ca: server.caPem }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end()
  })
}

const lease = async (options: WeaviateTestOptions): Promise<Pooled | undefined> => {
  const key = keyOf(options)
  const entries = pool.get(key) ?? []
  pool.set(key, entries)
  const idle = entries.find((e) => !e.busy)
  if (idle !== undefined) {
    idle.busy = true
    return idle
  }
  let server: Upstream
  if (currentTarget().kind === "external" && externalFits(options) && entries.length === 0) {
    server = externalUpstream()
    await dropAllCollections(server)
  } else if (!builtServer()) {
    // WEAVIATE_TEST_URL's server is leased already and no server is built: nothing real is free
    return undefined
  } else {
    const early = key === keyOf({}) ? prestarted : undefined
    if (early !== undefined) prestarted = undefined
    const real = (early === undefined ? undefined : await early.catch(() => undefined)) ?? await startRealWeaviate({
      ...(options.apiKeys !== undefined ? { apiKeys: options.apiKeys } : {}),
      ...(options.anonymousAccess !== undefined ? { anonymousAccess: options.anonymousAccess } : {}),
      ...(options.tls === true ? { tls: true } : {}),
      ...(options.maxResults !== undefined ? { maxResults: options.maxResults } : {}),
      ...(options.modules !== undefined ? { modules: options.modules } : {})
    })
    server = { ...real, kind: "real" }
  }
  const entry: Pooled = { server, busy: true }
  entries.push(entry)
  return entry
}

const builtServer = () => fs.existsSync(weaviateBinary())

/** Whether a lease of `options` would be served by a real server on this run. */
export const servesReal = (options: WeaviateTestOptions = {}) => {
  const kind = currentTarget().kind
  if (kind === "compatible" || needsCompatible(options)) return false
  return kind === "real" || externalFits(options) || builtServer()
}

/**
 * A Weaviate for one test (or one `describe`): the run's target when it can serve `options`, else the
 * compatible instance. Close it when done (the collections it holds are dropped).
 */
export const startTestWeaviate = async (options: WeaviateTestOptions = {}): Promise<WeaviateTestInstance> => {
  const entry = servesReal(options) ? await lease(options) : undefined
  if (entry === undefined) return startWeaviate(options)
  const { server } = entry
  const proxy = await startRecordingProxy({
    upstream: server.url,
    ...(server.tls !== undefined ? { tls: server.tls } : {}),
    ...(server.kind === "external" && server.adminKey !== undefined ? { defaultApiKey: server.adminKey } : {})
  })
  let closed: Promise<void> | undefined
  return {
    kind: server.kind,
    version: server.version,
    url: proxy.url,
    port: proxy.port,
    caPem: server.caPem,
    get requests() {
      return proxy.requests
    },
    clearRequests: () => proxy.clearRequests(),
    setApiKeys: () => {
      throw new Error("a real Weaviate cannot change its API keys at run time: use the compatible instance (startWeaviate)")
    },
    setFault: (fault, o) => proxy.setFault(fault, o),
    waitForRequest: (predicate, timeoutMs) => proxy.waitForRequest(predicate, timeoutMs),
    reset: () => {
      throw new Error("reset a real Weaviate with resetAsync()")
    },
    resetAsync: () => dropAllCollections(server),
    close: () => {
      closed ??= (async () => {
        await proxy.close()
        try {
          await dropAllCollections(server)
          entry.busy = false
        } catch {
          // a server that cannot be reset is not handed out again
        }
      })()
      return closed
    }
  }
}

/** Scoped lease for @effect/vitest: started on acquire, closed on release. */
export const TestWeaviate = (options?: WeaviateTestOptions) =>
  Effect.acquireRelease(
    Effect.promise(() => startTestWeaviate(options)),
    (w) => Effect.promise(() => w.close())
  )

/** A Layer providing a lease as `WeaviateInstance`. */
export const layer = (options?: WeaviateTestOptions): Layer.Layer<WeaviateInstance> =>
  Layer.scoped(WeaviateInstance, TestWeaviate(options))
