/**
 * Benchmark: big databases. The built daemon (`weaviate-mcp serve`) in front of a Weaviate holding
 * 10, 100 and 1,000 collections, then one multi-tenant collection with 1,000, 10,000 and 100,000
 * tenants, and for each size, over MCP on real HTTP:
 * - `list_tables` and `search_schema` (first page), at each collection count;
 * - `list_tenants` (first page, and a page 90% deep into the cursor), tenant completions
 *   (`completion/complete`, first 100 matches) and one tenant by exact name, at each tenant count.
 * Each: the first (cold) call apart, then the p50 of the warm calls, the answer's bytes, the Weaviate
 * requests per call (counted where Weaviate is reached) and the daemon's RSS after them. Pages hold
 * 5 collections or 100 tenants, fewer than the smallest size, so every size answers a full page.
 * Then the tenant cache's bytes per tenant at 1,000,000 tenants (the compact index built in this
 * process, measured after a full collection), and the daemon's RSS serving them.
 *
 * Every row prints the growth, largest size against smallest, checks the targets (p50 ≤ 1.5×,
 * bytes ≤ 1.1×, requests per call constant, exact lookup one request and no listing, ≤ 100 bytes per
 * tenant), prints held/missed per target and exits 3 on a miss (as a missed standing target does). Rows go to bench/results.json as
 * `scenario: "scale"`: p50 and bytes against `baselineName: "smallest-size"` (the same tool at the
 * smallest size), requests per call and bytes per tenant against `baselineName: "budget"` (1 request
 * a call, 100 bytes a tenant).
 *
 * Against the bundled compatible instance (`test/weaviate/*`), whose `bulkSeed` creates the sizes in
 * seconds. `SIZES=small` runs 10/100 collections and 1,000/10,000 tenants and no million;
 * `SCALE_REAL=1` confirms against the real Weaviate 1.39 (300 collections, 20,000 tenants; it creates
 * collections at 1–5 a second, so this takes minutes). Run with `npm run bench:scale`.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { performance } from "node:perf_hooks"
import { Pool } from "undici"
import * as TenantIndex from "../src/Driver/TenantIndex.ts"
import * as Cli from "../test/support/Cli.ts"
import { validateMessage } from "../test/support/McpSchemas.ts"
import { startRealWeaviate } from "../test/weaviate/RealWeaviate.ts"
import { startRecordingProxy } from "../test/weaviate/RecordingProxy.ts"
import type { RecordedRequest } from "../test/weaviate/WeaviateServer.ts"
import { startWeaviate } from "../test/weaviate/WeaviateServer.ts"
import { merge, type Row, MISSED_EXIT } from "./support/Results.ts"

const REAL = process.env["SCALE_REAL"] === "1"
const SMALL = process.env["SIZES"] === "small"
const COLLECTIONS = REAL ? [10, 300] : SMALL ? [10, 100] : [10, 100, 1_000]
const TENANTS = REAL ? [1_000, 20_000] : SMALL ? [1_000, 10_000] : [1_000, 10_000, 100_000]
const MILLION = REAL || SMALL ? 0 : 1_000_000
/** Warm calls measured per tool and size (bounded). */
const CALLS = Math.min(Math.max(Number(process.env["CALLS"] ?? 100), 5), 500)
/** The warm calls are made in this many turns over the sizes. */
const ROUNDS = 5
const TABLE_PAGE = 5
const TENANT_PAGE = 100
const MT = "BigTenants"

/** Targets of the issue: growth bounds of the paged tools, one request for an exact name, the cache budget. */
const P50_GROWTH = 1.5
const BYTES_GROWTH = 1.1
/** Requests per warm call may differ by this between sizes (a background refresh that falls in the window). */
const REQUESTS_SLACK = 0.1

const tenantName = (i: number) => `tenant-${String(i).padStart(7, "0")}`
const collectionName = (i: number) => `Bulk${String(i).padStart(4, "0")}`
const collectionDef = (name: string) => ({
  class: name,
  vectorizer: "none",
  properties: [{ name: "label", dataType: ["text"] }, { name: "rank", dataType: ["int"] }]
})

const MODERN = "2026-07-28"

/** A request of the modern protocol (test/Mcp/support/EndpointHarness.ts, which vitest alone can load). */
const modern = (method: string, params: Record<string, unknown>, id: number) => ({
  jsonrpc: "2.0",
  id,
  method,
  params: {
    ...params,
    _meta: {
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": { name: "bench-scale", version: "1.0.0" }
    }
  }
})

const modernHeaders = (method: string, name: string | undefined): Record<string, string> => ({
  "content-type": "application/json",
  "mcp-protocol-version": MODERN,
  "mcp-method": method,
  ...(name === undefined ? {} : { "mcp-name": name })
})

/** Resident memory of a process in kB (/proc/PID/status, Linux). */
const rssKb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(NodeFs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? Number.NaN)

/** A home with one silent connection to `port` and one full-access token. */
const makeHome = async (port: number) => {
  const home = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "weaviate-mcp-scale-"))
  const cli = (...args: ReadonlyArray<string>) => Cli.run([...args, "--home", home], { timeoutMs: 30_000 })
  const added = await cli("connections", "add", "--name", "big", "--host", "127.0.0.1", "--port", String(port), "--safe-mode", "silent", "--json")
  if (added.code !== 0) throw new Error(`connections add: ${added.stderr}`)
  const created = await cli("tokens", "create", "--name", "scale", "--access", "fullAccess", "--json")
  if (created.code !== 0) throw new Error(`tokens create: ${created.stderr}`)
  return { home, connection: JSON.parse(added.stdout).id as string, token: JSON.parse(created.stdout).token as string }
}

interface Target {
  readonly url: string
  readonly port: number
  readonly requests: () => ReadonlyArray<RecordedRequest>
  readonly clear: () => void
  readonly seedCollections: (n: number) => Promise<void>
  readonly seedTenants: (n: number) => Promise<void>
  readonly reset: () => Promise<void>
  readonly close: () => Promise<void>
}

const postJson = async (url: string, path: string, body: unknown) => {
  const response = await fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })
  if (response.status >= 300) throw new Error(`${path}: ${response.status} ${await response.text()}`)
}

const compatibleTarget = async (): Promise<Target> => {
  const w = await startWeaviate()
  return {
    url: w.url,
    port: w.port,
    requests: () => w.requests,
    clear: () => w.clearRequests(),
    seedCollections: async (n) => w.bulkSeed!({ collections: Array.from({ length: n }, (_, i) => collectionDef(collectionName(i))) }),
    seedTenants: async (n) => {
      w.bulkSeed!({ collections: [{ ...collectionDef(MT), multiTenancyConfig: { enabled: true } }] })
      w.bulkSeed!({ tenants: { collection: MT, names: Array.from({ length: n }, (_, i) => tenantName(i)) } })
    },
    reset: async () => w.reset(),
    close: () => w.close()
  }
}

const realTarget = async (): Promise<Target> => {
  const w = await startRealWeaviate()
  const proxy = await startRecordingProxy({ upstream: w.url })
  return {
    url: proxy.url,
    port: proxy.port,
    requests: () => proxy.requests,
    clear: () => proxy.clearRequests(),
    seedCollections: async (n) => {
      for (let i = 0; i < n; i++) await postJson(w.url, "/v1/schema", collectionDef(collectionName(i)))
    },
    seedTenants: async (n) => {
      await postJson(w.url, "/v1/schema", { ...collectionDef(MT), multiTenancyConfig: { enabled: true } })
      // COLD: an active tenant is a loaded shard with its files open, and 20,000 of them exhaust the
      // process's open files; big multi-tenant deployments keep most tenants inactive anyway.
      for (let start = 0; start < n; start += 1_000) {
        await postJson(
          w.url,
          `/v1/schema/${MT}/tenants`,
          Array.from({ length: Math.min(1_000, n - start) }, (_, i) => ({ name: tenantName(start + i), activityStatus: "COLD" }))
        )
      }
    },
    reset: async () => {
      const schema = (await (await fetch(`${w.url}/v1/schema`)).json()) as { classes?: Array<{ class: string }> }
      for (const c of schema.classes ?? []) await fetch(`${w.url}/v1/schema/${c.class}`, { method: "DELETE" })
    },
    close: async () => {
      await proxy.close()
      await w.stop()
    }
  }
}

interface Measure {
  readonly tool: string
  readonly size: number
  readonly coldMs: number
  readonly coldRequests: number
  readonly p50Ms: number
  readonly bytes: number
  readonly requestsPerCall: number
  /** requests of the given kind per warm call (e.g. tenant listings during exact lookups) */
  readonly listingsPerCall: number
  readonly rssMb: number
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/** One daemon serving `target`, and a way to call it over MCP. */
const daemonFor = async (target: Target) => {
  const { home, connection, token } = await makeHome(target.port)
  // First access is approved by a command that answers yes (as test/Reliability/RealDaemon.ts does).
  const running = await Cli.serve(["--port", "0", "--home", home, "--approvals", "exec", "--approval-command", "cat >/dev/null", "--rate-limit", "0"], { timeoutMs: 30_000 })
  const url = new URL(running.endpoint)
  const pool = new Pool(url.origin, { connections: 1, pipelining: 1 })
  let id = 0
  const send = async (method: string, params: Record<string, unknown>, validate = false) => {
    const name = method === "tools/call" ? String(params["name"]) : undefined
    const started = performance.now()
    const r = await pool.request({
      path: url.pathname,
      method: "POST",
      headers: { ...modernHeaders(method, name), "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
      body: JSON.stringify(modern(method, params, ++id))
    })
    const text = await r.body.text()
    const ms = performance.now() - started
    const json = JSON.parse(text)
    if (validate) validateMessage(MODERN, json)
    if (json.error !== undefined || json.result?.isError === true) throw new Error(`${method} ${name ?? ""}: ${text.slice(0, 500)}`)
    return { ms, bytes: Buffer.byteLength(text), json }
  }
  const stop = async () => {
    await pool.close()
    running.child.kill("SIGTERM")
    await running.exited
    NodeFs.rmSync(home, { recursive: true, force: true })
  }
  return { send, connection, pid: running.child.pid!, stop }
}

type Daemon = Awaited<ReturnType<typeof daemonFor>>

/** One tool of one size: how to call it, and which requests count as a listing. */
interface Probe {
  readonly tool: string
  readonly call: (validate?: boolean) => Promise<{ ms: number; bytes: number }>
  readonly listing?: (r: RecordedRequest) => boolean
}

/** One size served by its own daemon (and, on the compatible instance, its own Weaviate), its tools' cold calls done. */
interface Setup {
  readonly size: number
  readonly target: Target
  readonly daemon: Daemon
  readonly probes: ReadonlyArray<Probe>
  readonly cold: Map<string, { readonly ms: number; readonly requests: number }>
  readonly warm: Map<string, { readonly times: Array<number>; bytes: number; requests: number; listings: number; calls: number }>
}

/** The first call of a tool on its daemon, validated against the official schema and reported apart. */
const coldCall = async (setup: Setup, probe: Probe) => {
  setup.target.clear()
  const cold = await probe.call(true)
  setup.cold.set(probe.tool, { ms: cold.ms, requests: setup.target.requests().length })
  // A second call lets a background read the first one started finish before the warm calls.
  await probe.call()
}

/** `calls` warm calls of every tool of a setup, added to what earlier rounds measured. */
const warmRound = async (setup: Setup, calls: number) => {
  for (const probe of setup.probes) {
    const entry = setup.warm.get(probe.tool) ?? { times: [], bytes: 0, requests: 0, listings: 0, calls: 0 }
    setup.target.clear()
    for (let i = 0; i < calls; i++) {
      const r = await probe.call()
      entry.times.push(r.ms)
      entry.bytes = r.bytes
    }
    const requests = setup.target.requests()
    entry.requests += requests.length
    entry.listings += requests.filter(probe.listing ?? (() => false)).length
    entry.calls += calls
    setup.warm.set(probe.tool, entry)
  }
}

/** The measures of a setup after its rounds. */
const measuresOf = (setup: Setup): Array<Measure> =>
  setup.probes.map((probe) => {
    const warm = setup.warm.get(probe.tool)!
    const cold = setup.cold.get(probe.tool)!
    return {
      tool: probe.tool,
      size: setup.size,
      coldMs: cold.ms,
      coldRequests: cold.requests,
      p50Ms: median(warm.times),
      bytes: warm.bytes,
      requestsPerCall: warm.requests / warm.calls,
      listingsPerCall: warm.listings / warm.calls,
      rssMb: rssKb(setup.daemon.pid) / 1024
    }
  })

const tool = (daemon: Daemon, name: string, args: Record<string, unknown>) => (validate = false) =>
  daemon.send("tools/call", { name, arguments: { connection_id: daemon.connection, ...args } }, validate)

const setupOf = (size: number, target: Target, daemon: Daemon, probes: ReadonlyArray<Probe>): Setup => ({
  size,
  target,
  daemon,
  probes,
  cold: new Map(),
  warm: new Map()
})

const collectionSetup = async (target: Target, size: number): Promise<Setup> => {
  await target.seedCollections(size)
  const daemon = await daemonFor(target)
  const setup = setupOf(size, target, daemon, [
    { tool: "list_tables", call: tool(daemon, "list_tables", { limit: TABLE_PAGE }) },
    { tool: "search_schema", call: tool(daemon, "search_schema", { pattern: "label", limit: TABLE_PAGE }) }
  ])
  for (const probe of setup.probes) await coldCall(setup, probe)
  return setup
}

const isTenantListing = (r: RecordedRequest) => r.method === "GET" && /^\/v1\/schema\/[^/]+\/tenants$/.test(r.path)

const tenantSetup = async (target: Target, size: number): Promise<Setup> => {
  await target.seedTenants(size)
  const daemon = await daemonFor(target)
  const firstPage: Probe = { tool: "list_tenants", call: tool(daemon, "list_tenants", { table: MT, limit: TENANT_PAGE }) }
  const setup = setupOf(size, target, daemon, [])
  // The first page's cold call is the first call of all: it reads the tenant list.
  await coldCall(setup, firstPage)
  const first = await daemon.send("tools/call", { name: "list_tenants", arguments: { connection_id: daemon.connection, table: MT, limit: 1_000 } })
  // A cursor 90% deep: walked in pages of 1,000 (the cursor does not name the page size).
  let cursor: string | undefined = first.json.result.structuredContent.nextCursor
  for (let seen = 1_000; seen < size * 0.9 && cursor !== undefined; seen += 1_000) {
    const page = await daemon.send("tools/call", { name: "list_tenants", arguments: { connection_id: daemon.connection, table: MT, limit: 1_000, cursor } })
    cursor = page.json.result.structuredContent.nextCursor
  }
  const complete = (validate = false) =>
    daemon.send("completion/complete", {
      ref: { type: "ref/resource", uri: "weaviate://connections/{connection_id}/tables/{table}/tenants/{tenant}/rows/{uuid}" },
      argument: { name: "tenant", value: "tenant-0" },
      context: { arguments: { connection_id: daemon.connection, table: MT } }
    }, validate)
  const completion = await complete()
  if (completion.json.result.completion.values.length !== 100) throw new Error(`completion: ${JSON.stringify(completion.json).slice(0, 300)}`)
  const one = tenantName(Math.floor(size / 2))
  const found = await daemon.send("tools/call", { name: "list_tenants", arguments: { connection_id: daemon.connection, table: MT, name: one } })
  if (found.json.result.structuredContent.tenants[0]?.name !== one) throw new Error(`exact lookup: ${JSON.stringify(found.json).slice(0, 300)}`)
  const rest: Array<Probe> = [
    { tool: "list_tenants_deep", call: tool(daemon, "list_tenants", { table: MT, limit: TENANT_PAGE, ...(cursor !== undefined ? { cursor } : {}) }) },
    { tool: "tenant_completion", call: complete },
    { tool: "tenant_by_name", call: tool(daemon, "list_tenants", { table: MT, name: one }), listing: isTenantListing }
  ]
  for (const probe of rest) await coldCall(setup, probe)
  return { ...setup, probes: [firstPage, ...rest] }
}

/**
 * The warm calls of several sizes in turns (`ROUNDS` rounds, each size in each): a machine whose
 * load changes during the run weighs on every size alike, not on the size measured at the time.
 */
const interleaved = async (setups: ReadonlyArray<Setup>) => {
  const perRound = Math.max(1, Math.ceil(CALLS / ROUNDS))
  for (let round = 0; round < ROUNDS; round++) {
    for (const setup of round % 2 === 0 ? setups : [...setups].reverse()) await warmRound(setup, perRound)
  }
  return setups.flatMap(measuresOf)
}

/**
 * Every size of one kind. On the compatible instance each size has its own instance and daemon, all
 * up at once and measured in turns; the real Weaviate holds one size at a time.
 */
const sizes = async (
  kind: string,
  counts: ReadonlyArray<number>,
  make: (target: Target, size: number) => Promise<Setup>,
  shared: Target | undefined
): Promise<Array<Measure>> => {
  const setups: Array<Setup> = []
  const measures: Array<Measure> = []
  try {
    for (const size of counts) {
      console.log(`… ${size.toLocaleString("en-US")} ${kind}`)
      if (shared !== undefined) {
        await shared.reset()
        const setup = await make(shared, size)
        try {
          measures.push(...await interleaved([setup]))
        } finally {
          await setup.daemon.stop()
        }
        continue
      }
      const target = await compatibleTarget()
      try {
        setups.push(await make(target, size))
      } catch (e) {
        await target.close()
        throw e
      }
    }
    return shared !== undefined ? measures : await interleaved(setups)
  } finally {
    for (const setup of setups) {
      await setup.daemon.stop()
      await setup.target.close()
    }
  }
}

/** The compact tenant index of a million tenants, in bytes per tenant: as it counts itself, and as the heap grew. */
const millionBytes = (n: number) => {
  const gc = (globalThis as { gc?: () => void }).gc
  const tenants = Array.from({ length: n }, (_, i) => ({ name: tenantName(i), activityStatus: i % 10 === 0 ? "COLD" : "HOT" }))
  const used = () => {
    gc?.()
    const m = process.memoryUsage()
    return m.heapUsed + m.arrayBuffers
  }
  const before = used()
  const index = TenantIndex.make(tenants)
  const after = used()
  // The input stays alive until both readings: the difference is what the index holds.
  return { counted: index.bytes / n, heap: gc === undefined ? Number.NaN : (after - before) / n, size: index.size + tenants.length * 0 }
}

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a")

const main = async () => {
  // The daemon's log lines (Cli.serve prints them) stay out of the figures' output.
  const log = console.error
  console.error = (...args: Array<unknown>) => {
    if (!String(args[0]).startsWith("[weaviate-mcp serve")) log(...args)
  }
  const shared = REAL ? await realTarget() : undefined
  const measures: Array<Measure> = []
  const started = performance.now()
  try {
    measures.push(...await sizes("collections", COLLECTIONS, collectionSetup, shared))
    measures.push(...await sizes("tenants", TENANTS, tenantSetup, shared))
    if (MILLION > 0) {
      const [page] = await sizes("tenants (memory)", [MILLION], tenantSetup, undefined)
      console.log(`daemon at ${MILLION.toLocaleString("en-US")} tenants: list_tenants cold ${fmt(page!.coldMs, 0)} ms, p50 ${fmt(page!.p50Ms, 2)} ms, RSS ${fmt(page!.rssMb)} MB`)
      measures.push({ ...page!, tool: "list_tenants_million" })
    }
  } finally {
    await shared?.close()
  }

  console.log(`\n${REAL ? "real Weaviate 1.39" : "compatible instance"}; ${CALLS} warm calls each; ${((performance.now() - started) / 1000).toFixed(0)} s\n`)
  console.log("| tool | size | cold ms | cold requests | p50 ms | bytes | requests/call | daemon RSS MB |")
  console.log("|---|---|---|---|---|---|---|---|")
  for (const m of measures) {
    console.log(`| ${m.tool} | ${m.size.toLocaleString("en-US")} | ${fmt(m.coldMs, 0)} | ${m.coldRequests} | ${fmt(m.p50Ms, 2)} | ${m.bytes} | ${fmt(m.requestsPerCall, 2)} | ${fmt(m.rssMb)} |`)
  }

  const rows: Array<Row> = []
  const checks: Array<{ readonly what: string; readonly held: boolean }> = []
  const row = (metric: string, unit: string, ours: number, baseline: number, baselineName: Row["baselineName"] = "smallest-size") =>
    rows.push({ scenario: "scale", metric, unit, ours, baseline, baselineName, ratio: Math.round((ours / baseline) * 1000) / 1000 })
  console.log("\ngrowth, largest size against smallest:")
  for (const name of ["list_tables", "search_schema", "list_tenants", "list_tenants_deep", "tenant_completion", "tenant_by_name"]) {
    const of = measures.filter((m) => m.tool === name)
    const small = of[0]!
    const large = of[of.length - 1]!
    const p50 = large.p50Ms / small.p50Ms
    const bytes = large.bytes / small.bytes
    console.log(`  ${name} (${small.size.toLocaleString("en-US")} → ${large.size.toLocaleString("en-US")}): p50 ×${fmt(p50, 2)}, bytes ×${fmt(bytes, 3)}, requests/call ${fmt(small.requestsPerCall, 2)} → ${fmt(large.requestsPerCall, 2)}`)
    row(`${name} p50`, "ms", large.p50Ms, small.p50Ms)
    row(`${name} bytes`, "bytes", large.bytes, small.bytes)
    // Against the budget of one request per warm call (a ratio against the smallest size's 0 would not be a number).
    row(`${name} requests per call`, "requests", large.requestsPerCall, 1, "budget")
    if (name === "tenant_by_name") {
      checks.push({ what: `${name}: one request and no tenant listing per call at every size`, held: of.every((m) => Math.abs(m.requestsPerCall - 1) <= REQUESTS_SLACK && m.listingsPerCall === 0) })
      continue
    }
    checks.push({ what: `${name}: p50 ≤ ${P50_GROWTH}× the smallest size's (×${fmt(p50, 2)})`, held: p50 <= P50_GROWTH })
    checks.push({ what: `${name}: answer bytes ≤ ${BYTES_GROWTH}× (×${fmt(bytes, 3)})`, held: bytes <= BYTES_GROWTH })
    checks.push({
      what: `${name}: Weaviate requests per warm call constant (${of.map((m) => fmt(m.requestsPerCall, 2)).join(", ")})`,
      held: of.every((m) => m.requestsPerCall <= Math.max(small.requestsPerCall, 1) && Math.abs(m.requestsPerCall - small.requestsPerCall) <= REQUESTS_SLACK)
    })
  }
  const million = millionBytes(MILLION > 0 ? MILLION : TENANTS[TENANTS.length - 1]!)
  console.log(`\ntenant cache at ${million.size.toLocaleString("en-US")} tenants: ${fmt(million.counted)} bytes per tenant counted, ${fmt(million.heap)} measured on the heap`)
  row("tenant cache bytes per tenant", "bytes", Number.isFinite(million.heap) ? Math.max(million.heap, million.counted) : million.counted, TenantIndex.BUDGET_BYTES_PER_TENANT, "budget")
  checks.push({
    what: `tenant cache ≤ ${TenantIndex.BUDGET_BYTES_PER_TENANT} bytes per tenant at ${million.size.toLocaleString("en-US")} tenants`,
    held: million.counted <= TenantIndex.BUDGET_BYTES_PER_TENANT && !(million.heap > TenantIndex.BUDGET_BYTES_PER_TENANT)
  })

  console.log("\ntargets:")
  for (const c of checks) console.log(`  ${c.held ? "held  " : "MISSED"} ${c.what}`)
  if (!REAL && !SMALL) merge(rows)
  else console.log(`\n(not written to bench/results.json: ${REAL ? "SCALE_REAL" : "SIZES=small"} is a check, not the figures)`)
  if (checks.some((c) => !c.held) && !process.exitCode) process.exitCode = MISSED_EXIT
}

await main()
