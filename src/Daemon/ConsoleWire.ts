/**
 * What the web console's API answers, as the page reads it: the one definition of the JSON the
 * daemon (`Console`, `ConsoleFeed`) writes and the page (`console/api.ts`) reads, so that neither
 * side can change alone. Types only, with no imports: the page's own build compiles this file too.
 *
 * @since 0.1.0
 */

/** A call as the page sees it (live, over the stream, and from the log's last hour). @category models */
export interface CallView {
  readonly time: number
  readonly client: string | null
  readonly clientVersion: string | null
  readonly principal: string | null
  readonly principalName: string | null
  readonly method: string
  readonly tool: string | null
  readonly connection: string | null
  /** Known for live calls; the log's lines do not carry it. */
  readonly collection: string | null
  readonly outcome: string
  readonly code: number | null
  readonly durationMs: number
}

/** A client seen on the endpoint. @category models */
export interface SeenClient {
  readonly name: string
  readonly version: string | null
  readonly principalName: string | null
  readonly principalSource: string
  readonly era: string
  readonly lastCall: string
  readonly inFlight: number
}

/** `GET overview`. @category models */
export interface Overview {
  readonly paused: boolean
  readonly version: string
  /** This daemon's run (a restart is a new one). */
  readonly instanceId: string
  readonly startedAt: string
  readonly approvals: string
  readonly pendingApprovals: number
  readonly clients: ReadonlyArray<SeenClient>
}

/** A token in `GET tokens`. @category models */
export interface TokenView {
  readonly id: string
  readonly name: string
  readonly access: string
  readonly scopes: ReadonlyArray<string>
  readonly connections: ReadonlyArray<string> | null
  /** The tenant scope: connection id → collection → tenants; `null` for every tenant. */
  readonly tenants: Readonly<Record<string, Readonly<Record<string, ReadonlyArray<string>>>>> | null
  readonly createdAt: string
  readonly expiresAt: string | null
  readonly revokedAt: string | null
  readonly status: string
  readonly lastUsedAt: string | null
}

/** A connection in `GET connections`. @category models */
export interface ConnectionView {
  readonly id: string
  readonly name: string
  readonly url: string
  readonly aiPolicy: string
  readonly safeMode: string
  readonly connected: boolean
}

/** `POST connections/{id}/test`: health, latency and the cluster, or why not. @category models */
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

/** `GET approvals`: the questions waiting, and the forms AI clients were asked to show. @category models */
export interface Approvals {
  readonly mode: string
  readonly waiting: ReadonlyArray<{
    readonly id: number
    readonly title: string
    readonly principalName: string
    readonly connectionName: string
    readonly clientName: string
    readonly dialog: string
    readonly since: string
  }>
  readonly forms: ReadonlyArray<CallView>
}

/** `GET history?q=&limit=`: the newest matching entries, or why the history is off. @category models */
export interface HistoryAnswer {
  readonly state: "on" | "off"
  readonly reason?: string
  readonly entries: ReadonlyArray<HistoryEntry>
}

/** A query history entry in `GET history`. @category models */
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
