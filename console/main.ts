/**
 * The weaviate-mcp console: one page, served by the daemon, that shows what AI clients are doing and
 * holds the controls a person needs. Preact + htm (no build step for templates, ~5 KB), uPlot for the
 * charts (~20 KB). Everything it loads and calls is the daemon's own (the page's CSP says so).
 */
import { html, render } from "htm/preact"
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks"
import * as Api from "./api.ts"
import { CallsPerMinute, LatencyByTool } from "./charts.ts"
import "./console.css"

type SignIn = { readonly _tag: "checking" } | { readonly _tag: "out"; readonly reason: string } | { readonly _tag: "in" }

const MAX_ROWS = 200

const fmtTime = (ms: number) => new Date(ms).toLocaleTimeString([], { hour12: false })
const fmtDate = (iso: string | null) => (iso === null ? "—" : new Date(iso).toLocaleString([], { hour12: false }))
const dash = (value: string | null | undefined) => (value === null || value === undefined || value === "" ? "—" : value)

/** Signs in with the code of the link (once), or finds the session the cookie names. */
const signIn = async (): Promise<SignIn> => {
  const match = /(?:^#|&)code=([A-Za-z0-9_-]+)/.exec(window.location.hash)
  if (match !== null) {
    // The code leaves the address bar and the history before it is used.
    window.history.replaceState(null, "", "/console")
    try {
      const session = await Api.post<{ csrf: string }>("session", { code: match[1] })
      Api.setCsrf(session.csrf)
      return { _tag: "in" }
    } catch (error) {
      return { _tag: "out", reason: error instanceof Error ? error.message : String(error) }
    }
  }
  try {
    const session = await Api.get<{ csrf: string }>("session")
    Api.setCsrf(session.csrf)
    return { _tag: "in" }
  } catch {
    return { _tag: "out", reason: "Not signed in." }
  }
}

const Table = (props: { id: string; children?: unknown }) =>
  html`<div class="scroll" role="region" aria-labelledby=${props.id} tabindex="0">${props.children}</div>`

// ===== Live activity =====

const OUTCOMES = ["ok", "tool_error", "input_required", "error", "refused", "unauthenticated", "cancelled"]

const Activity = (props: { calls: ReadonlyArray<Api.CallView>; live: boolean; held: number; onLive: (live: boolean) => void }) => {
  const [client, setClient] = useState("")
  const [tool, setTool] = useState("")
  const [outcome, setOutcome] = useState("")
  const [connection, setConnection] = useState("")
  const options = (pick: (c: Api.CallView) => string | null) =>
    Array.from(new Set(props.calls.map(pick).filter((v): v is string => v !== null))).sort()
  const shown = props.calls
    .filter((c) => (client === "" || c.client === client) && (tool === "" || (c.tool ?? c.method) === tool) &&
      (outcome === "" || c.outcome === outcome) && (connection === "" || c.connection === connection))
    .slice(-MAX_ROWS)
    .reverse()
  const select = (id: string, label: string, value: string, set: (v: string) => void, values: ReadonlyArray<string>) =>
    html`<div class="field"><label for=${id}>${label}</label>
      <select id=${id} value=${value} onChange=${(e: Event) => set((e.target as HTMLSelectElement).value)}>
        <option value="">All</option>
        ${values.map((v) => html`<option value=${v}>${v}</option>`)}
      </select></div>`
  return html`<section id="activity" aria-labelledby="activity-title">
    <h2 id="activity-title">Live activity</h2>
    <div class="toolbar">
      ${select("filter-client", "Client", client, setClient, options((c) => c.client))}
      ${select("filter-tool", "Tool", tool, setTool, options((c) => c.tool ?? c.method))}
      ${select("filter-outcome", "Outcome", outcome, setOutcome, OUTCOMES)}
      ${select("filter-connection", "Connection", connection, setConnection, options((c) => c.connection))}
      <button type="button" aria-pressed=${!props.live} onClick=${() => props.onLive(!props.live)}>
        ${props.live ? "Pause the stream" : "Resume the stream"}
      </button>
    </div>
    <p class="hint">${props.live ? "Calls appear as they happen." : `The stream is paused: ${props.held === 1 ? "1 new call" : `${props.held} new calls`} kept, shown when you resume.`} Showing ${shown.length} of ${props.calls.length} calls of the last hour.</p>
    <${Table} id="activity-caption">
      <table id="activity-table">
        <caption id="activity-caption">Calls, newest first</caption>
        <thead><tr><th scope="col">Time</th><th scope="col">Client</th><th scope="col">Principal</th><th scope="col">Tool</th><th scope="col">Connection</th><th scope="col">Collection</th><th scope="col">Outcome</th><th scope="col">Duration</th></tr></thead>
        <tbody>
          ${shown.map((c) => html`<tr class=${`outcome-${c.outcome}`}>
            <td>${fmtTime(c.time)}</td><td>${dash(c.client)}</td><td>${dash(c.principalName)}</td><td>${c.tool ?? c.method}</td>
            <td>${dash(c.connection)}</td><td>${dash(c.collection)}</td>
            <td><span class="badge">${c.outcome}${c.code === null ? "" : ` ${c.code}`}</span></td><td class="num">${c.durationMs} ms</td>
          </tr>`)}
        </tbody>
      </table>
    <//>
  </section>`
}

// ===== Charts =====

const Charts = (props: { calls: ReadonlyArray<Api.CallView> }) => {
  const perMinute = useRef<HTMLDivElement>(null)
  const latency = useRef<HTMLDivElement>(null)
  const charts = useRef<{ perMinute?: CallsPerMinute; latency?: LatencyByTool }>({})
  useEffect(() => {
    if (perMinute.current !== null) charts.current.perMinute ??= new CallsPerMinute(perMinute.current)
    if (latency.current !== null) charts.current.latency ??= new LatencyByTool(latency.current)
    charts.current.perMinute?.update(props.calls, Date.now())
    charts.current.latency?.update(props.calls)
  }, [props.calls])
  useEffect(() => {
    const resize = () => {
      charts.current.perMinute?.resize()
      charts.current.latency?.resize()
    }
    window.addEventListener("resize", resize)
    return () => window.removeEventListener("resize", resize)
  }, [])
  const summary = LatencyByTool.summary(props.calls)
  return html`<section id="charts" aria-labelledby="charts-title">
    <h2 id="charts-title">Charts (last hour)</h2>
    <div class="charts">
      <figure><figcaption id="per-minute-title">Calls per minute, by client</figcaption><div ref=${perMinute} class="chart" role="img" aria-labelledby="per-minute-title"></div></figure>
      <figure><figcaption id="latency-title">Latency distribution, by tool (ms, by percentile)</figcaption><div ref=${latency} class="chart" role="img" aria-labelledby="latency-title"></div></figure>
    </div>
    <${Table} id="latency-caption">
      <table>
        <caption id="latency-caption">Latency by tool</caption>
        <thead><tr><th scope="col">Tool</th><th scope="col">Calls</th><th scope="col">p50</th><th scope="col">p95</th><th scope="col">Max</th></tr></thead>
        <tbody>${summary.map((s) => html`<tr><td>${s.tool}</td><td class="num">${s.count}</td><td class="num">${s.p50} ms</td><td class="num">${s.p95} ms</td><td class="num">${s.max} ms</td></tr>`)}</tbody>
      </table>
    <//>
  </section>`
}

// ===== Clients and tokens =====

const Clients = (props: { clients: ReadonlyArray<Api.SeenClient> }) =>
  html`<section id="clients" aria-labelledby="clients-title">
    <h2 id="clients-title">Connected clients</h2>
    ${props.clients.length === 0 ? html`<p>No client called in the last 5 minutes.</p>` : html`<${Table} id="clients-caption">
      <table>
        <caption id="clients-caption">Clients seen in the last 5 minutes</caption>
        <thead><tr><th scope="col">Client</th><th scope="col">Principal</th><th scope="col">Era</th><th scope="col">Last call</th><th scope="col">In flight</th></tr></thead>
        <tbody>${props.clients.map((c) => html`<tr><td>${c.name}${c.version === null ? "" : ` ${c.version}`}</td><td>${dash(c.principalName)} (${c.principalSource})</td><td>${c.era}</td><td>${fmtDate(c.lastCall)}</td><td class="num">${c.inFlight}</td></tr>`)}</tbody>
      </table>
    <//>`}
  </section>`

const Tokens = (props: { tokens: ReadonlyArray<Api.TokenView>; reload: () => void; say: (text: string) => void }) => {
  const [created, setCreated] = useState<{ token: string; name: string } | undefined>(undefined)
  const [confirming, setConfirming] = useState<string | undefined>(undefined)
  const [error, setError] = useState("")
  const [copied, setCopied] = useState(false)
  const create = async (event: Event) => {
    event.preventDefault()
    const form = event.target as HTMLFormElement
    const data = new FormData(form)
    const connections = String(data.get("connections") ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "")
    const days = String(data.get("expires") ?? "").trim()
    try {
      const reply = await Api.post<{ token: string; info: Api.TokenView }>("tokens", {
        name: String(data.get("name") ?? ""),
        access: String(data.get("access") ?? "readOnly"),
        ...(connections.length === 0 ? {} : { connections }),
        ...(days === "" ? {} : { expiresInDays: Number(days) })
      })
      setError("")
      setCopied(false)
      setCreated({ token: reply.token, name: reply.info.name })
      form.reset()
      props.say(`Token ${reply.info.name} created. Copy it now: it is shown once.`)
      props.reload()
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e))
    }
  }
  const revoke = async (token: Api.TokenView) => {
    try {
      await Api.post("tokens/revoke", { id: token.id })
      setConfirming(undefined)
      props.say(`Token ${token.name} revoked.`)
      props.reload()
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e))
    }
  }
  const copy = async () => {
    if (created === undefined) return
    try {
      await navigator.clipboard.writeText(created.token)
      setCopied(true)
    } catch {
      setCopied(false)
      props.say("The browser refused the clipboard: select the token and copy it.")
    }
  }
  return html`<section id="tokens" aria-labelledby="tokens-title">
    <h2 id="tokens-title">Tokens</h2>
    ${created === undefined ? null : html`<div class="once" role="alert">
      <p><strong>New token "${created.name}".</strong> Copy it now: it is shown this once and never again.</p>
      <div class="copy"><label for="new-token">Token</label><input id="new-token" readonly value=${created.token} />
        <button type="button" onClick=${copy}>${copied ? "Copied" : "Copy"}</button>
        <button type="button" onClick=${() => setCreated(undefined)}>Done</button></div>
    </div>`}
    <form class="toolbar" onSubmit=${create} aria-labelledby="create-title">
      <h3 id="create-title" class="sr-only">Create a token</h3>
      <div class="field"><label for="token-name">Name</label><input id="token-name" name="name" required maxLength="200" /></div>
      <div class="field"><label for="token-access">Access level</label><select id="token-access" name="access">
        <option value="readOnly">readOnly</option><option value="readWrite">readWrite</option><option value="fullAccess">fullAccess</option></select></div>
      <div class="field"><label for="token-connections">Connections (ids, comma-separated; empty: all)</label><input id="token-connections" name="connections" /></div>
      <div class="field"><label for="token-expires">Expires in days (empty: never)</label><input id="token-expires" name="expires" type="number" min="1" max="3650" /></div>
      <button type="submit">Create token</button>
    </form>
    ${error === "" ? null : html`<p class="error" role="alert">${error}</p>`}
    <${Table} id="tokens-caption">
      <table id="tokens-table">
        <caption id="tokens-caption">Tokens (the secrets are never shown)</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Level</th><th scope="col">Scopes</th><th scope="col">Allowlist</th><th scope="col">Expires</th><th scope="col">Last use</th><th scope="col">Status</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
        <tbody>${props.tokens.map((t) => html`<tr>
          <td>${t.name} <span class="muted">${t.id}</span></td><td>${t.access}</td><td>${t.scopes.join(", ")}</td>
          <td>${t.connections === null ? "all connections" : t.connections.join(", ")}</td><td>${fmtDate(t.expiresAt)}</td>
          <td>${fmtDate(t.lastUsedAt)}</td><td>${t.status}</td>
          <td>${t.status !== "active" ? null : confirming === t.id
            ? html`<span class="confirm">Revoke ${t.name}? <button type="button" class="danger" onClick=${() => revoke(t)}>Yes, revoke</button> <button type="button" onClick=${() => setConfirming(undefined)}>Cancel</button></span>`
            : html`<button type="button" onClick=${() => setConfirming(t.id)} aria-label=${`Revoke ${t.name}`}>Revoke</button>`}</td>
        </tr>`)}</tbody>
      </table>
    <//>
  </section>`
}

// ===== Connections =====

const Connections = (props: { connections: ReadonlyArray<Api.ConnectionView> }) => {
  const [checks, setChecks] = useState<Record<string, Api.ConnectionCheck | "checking">>({})
  const check = useCallback(async (id: string) => {
    setChecks((all) => ({ ...all, [id]: "checking" }))
    try {
      const result = await Api.post<Api.ConnectionCheck>("connections/check", { id })
      setChecks((all) => ({ ...all, [id]: result }))
    } catch (e) {
      setChecks((all) => ({ ...all, [id]: { id, ok: false, error: e instanceof Error ? e.message : String(e) } }))
    }
  }, [])
  const cell = (c: Api.ConnectionView) => {
    const result = checks[c.id]
    if (result === undefined) return html`<td colspan="3">not checked</td>`
    if (result === "checking") return html`<td colspan="3">checking…</td>`
    if (!result.ok) return html`<td colspan="3" class="error">${result.error}</td>`
    return html`<td>${result.version}</td><td class="num">${result.latencyMs} ms</td>
      <td><span class=${`badge health-${result.cluster?.health}`}>${result.cluster?.health}</span> ${result.cluster?.summary}<br />
        <span class="muted">${result.cluster?.nodes.map((n) => `${n.name}: ${n.status}`).join(", ")}</span></td>`
  }
  return html`<section id="connections" aria-labelledby="connections-title">
    <h2 id="connections-title">Connections</h2>
    ${props.connections.length === 0 ? html`<p>No saved connection (weaviate-mcp connections add).</p>` : html`<${Table} id="connections-caption">
      <table>
        <caption id="connections-caption">Saved connections and their cluster</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">URL</th><th scope="col">AI policy</th><th scope="col">Safe Mode</th><th scope="col">Connected</th><th scope="col">Version</th><th scope="col">Latency</th><th scope="col">Cluster</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
        <tbody>${props.connections.map((c) => html`<tr>
          <td>${c.name}</td><td>${c.url}</td><td>${c.aiPolicy}</td><td>${c.safeMode}</td><td>${c.connected ? "yes" : "no"}</td>
          ${cell(c)}
          <td><button type="button" onClick=${() => check(c.id)} aria-label=${`Test ${c.name}`}>Test</button></td>
        </tr>`)}</tbody>
      </table>
    <//>`}
  </section>`
}

// ===== AI access =====

const Access = (props: { paused: boolean; toggle: () => void }) =>
  html`<section id="access" aria-labelledby="access-title">
    <h2 id="access-title">AI access</h2>
    <p>${props.paused
      ? "AI access is paused: every MCP request is answered 503 (-33006). The command line keeps working."
      : "AI access is on: AI clients with a valid token can call the tools."}</p>
    <button type="button" class=${props.paused ? "" : "danger"} onClick=${props.toggle}>${props.paused ? "Resume AI access" : "Pause AI access"}</button>
  </section>`

// ===== Approvals =====

const WHERE: Record<string, string> = {
  native: "in the dialog on this machine",
  terminal: "at the prompt of the terminal running serve",
  exec: "by the approval command (--approval-command)",
  deny: "nowhere: nobody is asked"
}

const Approvals = (props: { approvals: Api.Approvals | undefined }) =>
  html`<section id="approvals" aria-labelledby="approvals-title">
    <h2 id="approvals-title">Pending approvals</h2>
    <p class="hint">Shown here, answered elsewhere: the console does not answer approvals.</p>
    ${props.approvals === undefined ? null : html`
      ${props.approvals.waiting.length === 0 ? html`<p>No question is waiting for you.</p>` : html`<ul>
        ${props.approvals.waiting.map((a) => html`<li><strong>${a.title}</strong>: ${a.clientName} (${a.principalName}) on ${a.connectionName}, since ${fmtDate(a.since)}; answer it ${WHERE[a.dialog] ?? a.dialog}.</li>`)}
      </ul>`}
      ${props.approvals.forms.length === 0 ? null : html`<h3>Asked in the AI client's form (last 10 minutes)</h3><ul>
        ${props.approvals.forms.map((c) => html`<li>${fmtTime(c.time)}: ${dash(c.client)} (${dash(c.principalName)}), ${c.tool ?? c.method} on ${dash(c.connection)}: answer it in the client's form.</li>`)}
      </ul>`}`}
  </section>`

// ===== History =====

const History = () => {
  const [entries, setEntries] = useState<ReadonlyArray<Api.HistoryEntry> | undefined>(undefined)
  const [note, setNote] = useState("")
  const search = async (event: Event) => {
    event.preventDefault()
    const q = String(new FormData(event.target as HTMLFormElement).get("q") ?? "")
    try {
      const reply = await Api.get<Api.HistoryAnswer>(`history?q=${encodeURIComponent(q)}&limit=50`)
      setEntries(reply.entries)
      setNote(reply.state === "off" ? `The query history is off: ${reply.reason ?? ""}` : `${reply.entries.length} entries.`)
    } catch (e) {
      setNote(e instanceof Error ? e.message : String(e))
    }
  }
  return html`<section id="history" aria-labelledby="history-title">
    <h2 id="history-title">History</h2>
    <form class="toolbar" role="search" onSubmit=${search}>
      <div class="field grow"><label for="history-q">Search the query history</label><input id="history-q" name="q" type="search" placeholder="e.g. Article" /></div>
      <button type="submit">Search</button>
    </form>
    <p class="hint" aria-live="polite">${note}</p>
    ${entries === undefined || entries.length === 0 ? null : html`<${Table} id="history-caption">
      <table>
        <caption id="history-caption">Statements, newest first</caption>
        <thead><tr><th scope="col">Time</th><th scope="col">Tool</th><th scope="col">Connection</th><th scope="col">Collection</th><th scope="col">Client</th><th scope="col">Outcome</th><th scope="col">Duration</th><th scope="col">Statement</th></tr></thead>
        <tbody>${entries.map((e) => html`<tr><td>${fmtDate(new Date(e.time).toISOString())}</td><td>${e.tool}</td><td>${dash(e.connection)}</td><td>${dash(e.collection)}</td><td>${dash(e.client)}</td><td>${e.outcome}${e.errorCode === null ? "" : ` (${e.errorCode})`}</td><td class="num">${Math.round(e.durationMs)} ms</td><td><code>${(e.statement ?? "").slice(0, 300)}</code></td></tr>`)}</tbody>
      </table>
    <//>`}
  </section>`
}

// ===== The page =====

const App = () => {
  const [state, setState] = useState<SignIn>({ _tag: "checking" })
  const [overview, setOverview] = useState<Api.Overview | undefined>(undefined)
  const [calls, setCalls] = useState<ReadonlyArray<Api.CallView>>([])
  const [live, setLive] = useState(true)
  const held = useRef<Array<Api.CallView>>([])
  const [heldCount, setHeldCount] = useState(0)
  const liveRef = useRef(true)
  const [tokens, setTokens] = useState<ReadonlyArray<Api.TokenView>>([])
  const [connections, setConnections] = useState<ReadonlyArray<Api.ConnectionView>>([])
  const [approvals, setApprovals] = useState<Api.Approvals | undefined>(undefined)
  const [message, setMessage] = useState("")
  const [streamUp, setStreamUp] = useState(false)

  useEffect(() => {
    void signIn().then(setState)
  }, [])

  const lost = (error: unknown) => {
    if (error instanceof Api.ApiError && error.status === 401) setState({ _tag: "out", reason: error.message })
  }
  const loadOverview = useCallback(() => Api.get<Api.Overview>("overview").then(setOverview, lost), [])
  const loadTokens = useCallback(() => Api.get<{ tokens: ReadonlyArray<Api.TokenView> }>("tokens").then((r) => setTokens(r.tokens), lost), [])
  const loadConnections = useCallback(() => Api.get<{ connections: ReadonlyArray<Api.ConnectionView> }>("connections").then((r) => setConnections(r.connections), lost), [])
  const loadApprovals = useCallback(() => Api.get<Api.Approvals>("approvals").then(setApprovals, lost), [])

  useEffect(() => {
    if (state._tag !== "in") return
    void Api.get<{ calls: ReadonlyArray<Api.CallView> }>("activity").then((r) => setCalls(r.calls), lost)
    void loadOverview()
    void loadTokens()
    void loadConnections()
    void loadApprovals()
    const events = new EventSource("/console/api/events")
    // The stream's first event (the pause state) says it is listening: calls from then on arrive.
    events.addEventListener("error", () => {
      setStreamUp(false)
      // A stream ended by a sign-out: the next read says so.
      void loadOverview()
    })
    events.addEventListener("calls", (event) => {
      const batch = JSON.parse((event as MessageEvent<string>).data) as ReadonlyArray<Api.CallView>
      if (!liveRef.current) {
        held.current.push(...batch)
        setHeldCount(held.current.length)
        return
      }
      setCalls((all) => all.concat(batch).slice(-20_000))
    })
    events.addEventListener("pause", (event) => {
      const { paused } = JSON.parse((event as MessageEvent<string>).data) as { paused: boolean }
      setStreamUp(true)
      setOverview((o) => (o === undefined ? o : { ...o, paused }))
    })
    const every = window.setInterval(() => {
      void loadOverview()
      void loadApprovals()
    }, 5000)
    return () => {
      events.close()
      window.clearInterval(every)
    }
  }, [state._tag])

  const setLiveStream = (next: boolean) => {
    liveRef.current = next
    setLive(next)
    if (next && held.current.length > 0) {
      const batch = held.current
      held.current = []
      setHeldCount(0)
      setCalls((all) => all.concat(batch).slice(-20_000))
    }
  }

  const togglePause = async () => {
    const paused = !(overview?.paused ?? false)
    try {
      const reply = await Api.post<{ paused: boolean }>("pause", { paused })
      setOverview((o) => (o === undefined ? o : { ...o, paused: reply.paused }))
      setMessage(reply.paused ? "AI access paused." : "AI access resumed.")
    } catch (e) {
      setMessage(e instanceof Error ? e.message : String(e))
    }
  }

  const signOut = async () => {
    await Api.post("sign-out", {}).catch(() => undefined)
    setState({ _tag: "out", reason: "Signed out." })
  }

  const paused = overview?.paused ?? false
  const memoCalls = useMemo(() => calls, [calls])

  if (state._tag === "checking") return html`<main id="main"><h1>weaviate-mcp console</h1><p>Signing in…</p></main>`
  if (state._tag === "out") {
    return html`<main id="main" class="signin"><h1>weaviate-mcp console</h1>
      <p>${state.reason}</p>
      <p>To sign in, run <code>weaviate-mcp console</code> on this machine: it opens a link that signs you in once, within 60 seconds.</p></main>`
  }
  return html`
    <a class="skip" href="#main">Skip to the content</a>
    <header class="top">
      <h1>weaviate-mcp console</h1>
      <p class=${`state ${paused ? "paused" : "on"}`} role="status" id="access-state">${paused ? "AI access paused" : "AI access on"}</p>
      <button type="button" class=${paused ? "" : "danger"} onClick=${togglePause}>${paused ? "Resume AI access" : "Pause AI access"}</button>
      <button type="button" onClick=${signOut}>Sign out</button>
    </header>
    <nav aria-label="Sections"><ul>
      <li><a href="#activity">Activity</a></li><li><a href="#charts">Charts</a></li><li><a href="#clients">Clients</a></li>
      <li><a href="#tokens">Tokens</a></li><li><a href="#connections">Connections</a></li><li><a href="#access">AI access</a></li>
      <li><a href="#approvals">Approvals${overview !== undefined && overview.pendingApprovals > 0 ? ` (${overview.pendingApprovals})` : ""}</a></li><li><a href="#history">History</a></li>
    </ul></nav>
    <main id="main" tabindex="-1">
      <p class="sr-only" aria-live="polite">${message}</p>
      ${message === "" ? null : html`<p class="message">${message}</p>`}
      <p class="hint">${streamUp ? "Live." : "Connecting to the live stream…"} ${overview === undefined ? "" : `weaviate-mcp ${overview.version}, running since ${fmtDate(overview.startedAt)}.`}</p>
      <${Activity} calls=${memoCalls} live=${live} held=${heldCount} onLive=${setLiveStream} />
      <${Charts} calls=${memoCalls} />
      <${Clients} clients=${overview?.clients ?? []} />
      <${Tokens} tokens=${tokens} reload=${loadTokens} say=${setMessage} />
      <${Connections} connections=${connections} />
      <${Access} paused=${paused} toggle=${togglePause} />
      <${Approvals} approvals=${approvals} />
      <${History} />
    </main>`
}

const root = document.getElementById("app")!
// The static "Loading…" goes; the app owns the element.
root.textContent = ""
render(html`<${App} />`, root)
