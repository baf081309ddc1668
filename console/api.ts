/**
 * The console's calls to its daemon: same origin only, the session cookie sent by the browser, the
 * CSRF token on every POST. Nothing here ever reaches another host.
 */

export type {
  Approvals,
  CallView,
  ConnectionCheck,
  ConnectionView,
  HistoryAnswer,
  HistoryEntry,
  Overview,
  SeenClient,
  TokenView
} from "../src/Daemon/ConsoleWire.ts"

export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message)
  }
}

let csrf = ""

export const setCsrf = (token: string) => {
  csrf = token
}

const BASE = "/console/api/"

const read = async <A>(response: Response): Promise<A> => {
  const body = (await response.json().catch(() => ({}))) as { error?: string }
  if (!response.ok) throw new ApiError(response.status, body.error ?? `HTTP ${response.status}`)
  return body as A
}

export const get = async <A>(route: string): Promise<A> =>
  read<A>(await fetch(BASE + route, { credentials: "same-origin", headers: { accept: "application/json" } }))

export const post = async <A>(route: string, body: unknown): Promise<A> =>
  read<A>(
    await fetch(BASE + route, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", accept: "application/json", "x-csrf-token": csrf },
      body: JSON.stringify(body)
    })
  )
