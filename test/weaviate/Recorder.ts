/**
 * What the Weaviate-compatible test instance and the recording proxy share: the log of requests with
 * `waitForRequest`, and the fault switch that delays, hangs, drops or truncates answers for a path
 * prefix. Both servers record a request when its answer finished or its client went away.
 */
import type * as NodeHttp from "node:http"
import type * as NodeNet from "node:net"
import type { Fault, RecordedRequest } from "./WeaviateServer.ts"

interface Waiter {
  readonly predicate: (r: RecordedRequest) => boolean
  readonly resolve: (r: RecordedRequest) => void
  readonly reject: (e: Error) => void
  readonly timer: NodeJS.Timeout
}

export interface Recorder {
  readonly records: Array<RecordedRequest>
  /** Resolves the waiters this request matches. */
  readonly notify: (r: RecordedRequest) => void
  readonly waitForRequest: (predicate: (r: RecordedRequest) => boolean, timeoutMs?: number) => Promise<RecordedRequest>
  readonly setFault: (fault: Fault, options?: { readonly pathPrefix?: string }) => void
  /**
   * Answers a request under the fault for its path: `answer(truncate)` at once, after the delay, or
   * never (hang); a drop destroys the connection and calls `dropped`.
   */
  readonly underFault: (path: string, socket: NodeNet.Socket, answer: (truncate: boolean) => void, dropped: () => void) => void
  /**
   * Records one request: when its body has arrived, `onRead` gets the record (and the parsed URL);
   * the record is marked completed when the answer finished, or aborted when the client went away
   * first (then `onAborted` runs). `drop()` marks a connection the server cut on purpose, which is
   * not an abort.
   */
  readonly track: (
    req: NodeHttp.IncomingMessage,
    res: NodeHttp.ServerResponse,
    onRead: (record: RecordedRequest, url: URL) => void,
    onAborted?: () => void
  ) => { readonly drop: () => void }
  /** Clears timers and rejects every waiter, naming what was closed. */
  readonly close: (what: string) => void
}

export const makeRecorder = (): Recorder => {
  const records: Array<RecordedRequest> = []
  let waiters: Array<Waiter> = []
  let fault: { fault: Fault; prefix: string } = { fault: { kind: "none" }, prefix: "" }
  const timers = new Set<NodeJS.Timeout>()
  const notify = (r: RecordedRequest) => {
    const matched = waiters.filter((w) => w.predicate(r))
    if (matched.length === 0) return
    waiters = waiters.filter((w) => !matched.includes(w))
    for (const w of matched) {
      clearTimeout(w.timer)
      w.resolve(r)
    }
  }
  return {
    records,
    notify,
    track: (req, res, onRead, onAborted) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1")
      const chunks: Array<Buffer> = []
      const headers: Record<string, string> = {}
      for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : v
      let record: RecordedRequest | undefined
      const makeRecord = (): RecordedRequest => {
        if (record === undefined) {
          record = {
            method: req.method ?? "GET",
            path: url.pathname,
            query: Object.fromEntries(url.searchParams.entries()),
            headers,
            body: Buffer.concat(chunks).toString("utf8"),
            aborted: false,
            completed: false
          }
          records.push(record)
        }
        return record
      }
      let dropped = false
      res.on("finish", () => {
        const r = makeRecord()
        r.completed = true
        notify(r)
      })
      res.on("close", () => {
        if (res.writableFinished || dropped) return
        onAborted?.()
        const r = makeRecord()
        r.aborted = true
        notify(r)
      })
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const r = makeRecord()
        notify(r)
        onRead(r, url)
      })
      return { drop: () => void (dropped = true) }
    },
    waitForRequest: (predicate, timeoutMs = 5_000) => {
      const existing = records.find(predicate)
      if (existing !== undefined) return Promise.resolve(existing)
      return new Promise<RecordedRequest>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w.timer !== timer)
          reject(new Error(`no matching request recorded within ${timeoutMs} ms`))
        }, timeoutMs)
        waiters.push({ predicate, resolve, reject, timer })
      })
    },
    setFault: (f, o) => {
      fault = { fault: f, prefix: o?.pathPrefix ?? "" }
    },
    underFault: (path, socket, answer, dropped) => {
      const f = path.startsWith(fault.prefix) ? fault.fault : { kind: "none" as const }
      switch (f.kind) {
        case "none":
          return answer(false)
        case "truncate":
          return answer(true)
        case "hang":
          return
        case "drop":
          dropped()
          socket.destroy()
          return
        case "delay": {
          const t = setTimeout(() => {
            timers.delete(t)
            answer(false)
          }, f.ms)
          timers.add(t)
          return
        }
      }
    },
    close: (what) => {
      for (const t of timers) clearTimeout(t)
      timers.clear()
      for (const w of waiters) {
        clearTimeout(w.timer)
        w.reject(new Error(`${what} was closed`))
      }
      waiters = []
    }
  }
}
