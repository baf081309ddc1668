/**
 * A recording reverse proxy on 127.0.0.1 in front of a Weaviate (real or external): it records every
 * request (method, path, query, headers, body; whether the client aborted it and whether the answer
 * was complete) exactly as the compatible instance does, so tests can prove a write reached Weaviate
 * exactly once or a request was aborted, and it injects the same faults (delay, hang, drop) before a
 * request is forwarded: a request that hangs or is dropped never reaches the server.
 */
import * as http from "node:http"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import type { Fault, RecordedRequest } from "./WeaviateServer.ts"
import { makeRecorder } from "./Recorder.ts"

export interface ProxyOptions {
  /** the server behind it, e.g. https://127.0.0.1:43211 */
  readonly upstream: string
  /** PEM the upstream's certificate is checked against (and the proxy serves it to clients too) */
  readonly tls?: { readonly caPem: string; readonly certPem: string; readonly keyPem: string }
  /** PEM of the upstream's CA when the proxy itself speaks plain HTTP */
  readonly upstreamCa?: string
  /** sent as `Authorization: Bearer` when the client sent none (an external server that needs a key) */
  readonly defaultApiKey?: string
}

export interface RecordingProxy {
  readonly url: string
  readonly port: number
  readonly requests: ReadonlyArray<RecordedRequest>
  clearRequests(): void
  setFault(fault: Fault, options?: { readonly pathPrefix?: string }): void
  waitForRequest(predicate: (r: RecordedRequest) => boolean, timeoutMs?: number): Promise<RecordedRequest>
  close(): Promise<void>
}

// Hop-by-hop headers are the proxy's own business (RFC 9110 §7.6.1).
const HOP = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer"])

export const startRecordingProxy = async (options: ProxyOptions): Promise<RecordingProxy> => {
  const upstream = new URL(options.upstream)
  const upstreamCa = options.tls?.caPem ?? options.upstreamCa
  const agent = upstream.protocol === "https:"
    ? new https.Agent({ keepAlive: true, ...(upstreamCa !== undefined ? { ca: upstreamCa } : {}) })
    : new http.Agent({ keepAlive: true })
  const recorder = makeRecorder()
  const { records } = recorder

  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    let forwarded: http.ClientRequest | undefined
    const tracked = recorder.track(req, res, (r, url) => {
      const forward = (truncating: boolean, retried = false) => {
        if (res.destroyed || res.writableEnded) return
        const out: Record<string, string> = {}
        for (const [k, v] of Object.entries(r.headers)) if (!HOP.has(k)) out[k] = v
        out["host"] = upstream.host
        if (options.defaultApiKey !== undefined && out["authorization"] === undefined) {
          out["authorization"] = `Bearer ${options.defaultApiKey}`
        }
        const body = Buffer.from(r.body, "utf8")
        out["content-length"] = String(body.length)
        const target = new URL(`${url.pathname}${url.search}`, upstream)
        forwarded = (upstream.protocol === "https:" ? https : http).request(target, { method: r.method, headers: out, agent }, (up) => {
          const back: Record<string, string | Array<string>> = {}
          for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP.has(k)) back[k] = v
          res.writeHead(up.statusCode ?? 502, back)
          if (truncating) {
            const parts: Array<Buffer> = []
            up.on("data", (c: Buffer) => parts.push(c))
            up.on("end", () => {
              tracked.drop()
              const all = Buffer.concat(parts)
              res.write(all.subarray(0, Math.floor(all.length / 2)), () => req.socket.destroy())
            })
            return
          }
          up.pipe(res)
          up.on("error", () => res.destroy())
        })
        const sent = forwarded
        sent.on("error", (e: NodeJS.ErrnoException) => {
          if (res.headersSent) return void res.destroy()
          // A kept-alive connection the server had just closed: the request did not reach it (Node's
          // advice for `reusedSocket`), so it is sent once more on a fresh one. Seen as a 502 in a
          // test's batch import, from a connection left idle by the test before.
          if (sent.reusedSocket && e.code === "ECONNRESET" && !retried) return forward(truncating, true)
          const text = JSON.stringify({ error: [{ message: `recording proxy: upstream ${e.message}` }] })
          res.writeHead(502, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
          res.end(text)
        })
        forwarded.end(body)
      }
      recorder.underFault(r.path, req.socket, forward, tracked.drop)
    }, () => forwarded?.destroy())
  }

  const server: http.Server = options.tls === undefined
    ? http.createServer(onRequest)
    : https.createServer({ cert: options.tls.certPem, key: options.tls.keyPem }, onRequest)
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject)
      resolve()
    })
  })
  const port = (server.address() as AddressInfo).port
  let closed: Promise<void> | undefined
  return {
    url: `${options.tls === undefined ? "http" : "https"}://127.0.0.1:${port}`,
    port,
    get requests() {
      return records
    },
    clearRequests: () => {
      records.length = 0
    },
    setFault: recorder.setFault,
    waitForRequest: recorder.waitForRequest,
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        recorder.close("the recording proxy")
        server.close(() => resolve())
        server.closeAllConnections()
        agent.destroy()
      })
      return closed
    }
  }
}
