/**
 * The console's calls to its daemon: same origin only, the session cookie sent by the browser, the
 * CSRF token on every POST. Nothing here ever reaches another host.
 */

export interface CallView {
  readonly time: number
  readonly client: string | null
  readonly clientVersion: string | null
  readonly principal: string | null
  readonly principalName: string | null
  readonly method: string
  readonly tool: string | null
  readonly connection: string | null
  readonly collection: string | null
  readonly outcome: string
  readonly code: number | null
  readonly durationMs: number
}

export interface SeenClient {
  readonly name: string
  readonly version: string | null
  readonly principalName: string | null
  readonly principalSource: string
  readonly era: string
  readonly lastCall: string
  readonly inFlight: number
}

export interface Overview {
  readonly paused: boolean
  readonly version: string
  readonly startedAt: string
  readonly approvals: string
  readonly pendingApprovals: number
  readonly clients: ReadonlyArray<SeenClient>
}

export interface TokenView {
  readonly id: string
  readonly name: string
  readonly access: string
  readonly scopes: ReadonlyArray<string>
  readonly connections: ReadonlyArray<string> | null
  readonly createdAt: string
  readonly expiresAt: string | null
  readonly revokedAt: string | null
  readonly status: string
  readonly lastUsedAt: string | null
}

export interface ConnectionView {
  readonly id: string
  readonly name: string
  readonly url: string
  readonly aiPolicy: string
  readonly safeMode: string
  readonly connected: boolean
}

export interface ConnectionCheck {
  readonly id: string
  readonly ok: boolean
  readonly error?: string
  readonly version?: string
  readonly latencyMs?: number
  readonly cluster?: {
    readonly health: string
    readonly summary: string
    readonly nodes: ReadonlyArray<{ readonly name: string; readonly status: string; readonly version?: string }>
  }
}

export interface Approvals {
  readonly mode: string
  readonly waiting: ReadonlyArray<{ readonly id: number; readonly title: string; readonly principalName: string; readonly connectionName: string; readonly clientName: string; readonly dialog: string; readonly since: string }>
  readonly forms: ReadonlyArray<CallView>
}

export interface HistoryEntry {
  readonly id: number
  readonly time: number
  readonly connection: string | null
  readonly collection: string | null
  readonly client: string | null
  readonly principalName: string | null
  readonly tool: string
  readonly statement: string | null
  readonly durationMs: number
  readonly rows: number | null
  readonly outcome: string
  readonly errorCode: string | null
}

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
