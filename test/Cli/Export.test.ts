/**
 * `weaviate-mcp export` and `weaviate-mcp import` through the real binary, against the real Weaviate
 * (started with QUERY_MAXIMUM_RESULTS = 1000, so an export of 2,500 rows proves the cursor has no
 * cap). Faults (a lost connection after the k-th page, a hang to interrupt, 429 and 503 answers) come
 * from a small loopback proxy in front of it that counts requests: nothing here waits on a timer.
 */
import * as NodeChild from "node:child_process"
import * as NodeFs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Cli from "../support/Cli.ts"
import { childrenOf, isAlive, stateOf } from "../support/Processes.ts"
import * as TestHome from "../support/TestHome.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"
import { servesReal } from "../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"

const MAX_RESULTS = 1000
const ROWS = 2500
const real = servesReal({ maxResults: MAX_RESULTS })
let w: WeaviateTestInstance
const home = TestHome.tempDirSync()
const dir = TestHome.tempDirSync("weaviate-mcp-export-")
const file = (name: string) => NodePath.join(dir, name)

// ===== Weaviate by hand =====

const send = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${w.url}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {})
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
  return text.length > 0 ? JSON.parse(text) as unknown : undefined
}

const properties = [
  { name: "title", dataType: ["text"] },
  { name: "n", dataType: ["int"] },
  { name: "price", dataType: ["number"] },
  { name: "ok", dataType: ["boolean"] },
  { name: "tags", dataType: ["text[]"] },
  { name: "when", dataType: ["date"] },
  { name: "sku", dataType: ["text"] }
]

const createCollection = (name: string, extra: Record<string, unknown> = {}) =>
  send("POST", "/v1/schema", { class: name, vectorizer: "none", properties, ...extra })

const count = async (name: string, tenant?: string) => {
  const args = tenant === undefined ? "" : `(tenant: "${tenant}")`
  const r = await send("POST", "/v1/graphql", { query: `{ Aggregate { ${name}${args} { meta { count } } } }` }) as {
    data: { Aggregate: Record<string, Array<{ meta: { count: number } }>> }
  }
  return r.data.Aggregate[name]![0]!.meta.count
}

const uuidOf = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`

const sampleRow = (i: number) => ({
  class: "Item",
  id: uuidOf(i),
  properties: {
    title: i === 1 ? "commas, \"quotes\"\nand a new line" : i === 2 ? "" : `item ${i}`,
    n: i,
    price: i / 4,
    ok: i % 2 === 0,
    tags: [`t${i % 7}`, "all"],
    when: `2024-01-${String((i % 28) + 1).padStart(2, "0")}T10:00:00Z`,
    ...(i === 3 ? {} : { sku: `sku-${i}` })
  },
  vector: [i % 5, 0.5, -1.25, i / 1024]
})

// ===== The command line =====

const cli = (args: ReadonlyArray<string>, timeoutMs = 60_000) => Cli.run([...args, "--home", home], { timeoutMs })

const lines = (path: string) => NodeFs.readFileSync(path, "utf8").split("\n").filter((l) => l.length > 0)
const jsonl = (path: string) => lines(path).map((l) => JSON.parse(l) as Record<string, unknown>)
const byUuid = (rows: ReadonlyArray<Record<string, unknown>>) => [...rows].sort((a, b) => String(a.uuid).localeCompare(String(b.uuid)))
const lastJson = (text: string) => JSON.parse(text.trim().split("\n").at(-1)!) as Record<string, unknown>

const exportAll = async (table: string, out: string, extra: ReadonlyArray<string> = []) => {
  const r = await cli(["export", "w", table, "--output", out, "--include-vector", ...extra])
  expect(r.code, r.stderr).toBe(0)
  return jsonl(out)
}

/**
 * Runs the command line on a pseudo-terminal (util-linux `script`), 200 columns wide: stdin, stdout
 * and stderr are the terminal, and `text` is what it showed. `seen` resolves when the output matches.
 */
const onTerminal = (args: ReadonlyArray<string>) => {
  const quote = (a: string) => `'${a.replace(/'/g, "'\\''")}'`
  const command = `stty cols 200 rows 40; exec ${[process.execPath, Cli.BIN, ...args, "--home", home].map(quote).join(" ")}`
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("WEAVIATE_MCP_")))
  const child = NodeChild.spawn("script", ["-qefc", command, "/dev/null"], { stdio: ["pipe", "pipe", "pipe"], env })
  let text = ""
  const waiting: Array<{ pattern: RegExp; resolve: () => void }> = []
  child.stdout.on("data", (d: Buffer) => {
    text += d.toString()
    for (const w of waiting.filter((w) => w.pattern.test(text))) {
      waiting.splice(waiting.indexOf(w), 1)
      w.resolve()
    }
  })
  child.stderr.on("data", (d: Buffer) => (text += d.toString()))
  const exited = new Promise<{ code: number | null; text: string }>((resolve) => child.once("exit", (code) => resolve({ code, text })))
  return {
    exited,
    /** The pid of `script`, whose child is the command. */
    pid: child.pid!,
    /** Types on the terminal (`\x03` is Ctrl-C). */
    type: (text: string) => child.stdin.write(text),
    seen: (pattern: RegExp) =>
      pattern.test(text) ? Promise.resolve() : Promise.race([
        new Promise<void>((resolve) => waiting.push({ pattern, resolve })),
        exited.then(({ text }) => Promise.reject(new Error(`exited before ${pattern}:\n${text}`)))
      ])
  }
}

// ===== A proxy that counts and injects faults =====

type Verdict = "forward" | "drop" | "hang" | { readonly status: number }

interface FaultProxy {
  readonly port: number
  readonly seen: Array<{ method: string; path: string }>
  decide: (req: { method: string; path: string; index: number }) => Verdict
  readonly hung: Promise<void>
  close(): Promise<void>
}

const startProxy = async (upstream: string): Promise<FaultProxy> => {
  const target = new URL(upstream)
  const seen: Array<{ method: string; path: string }> = []
  let onHang: () => void = () => undefined
  const hung = new Promise<void>((resolve) => (onHang = resolve))
  const held: Array<http.ServerResponse> = []
  const proxy: FaultProxy = {
    port: 0,
    seen,
    decide: () => "forward",
    hung,
    close: () => new Promise<void>((resolve) => {
      for (const res of held) res.destroy()
      server.close(() => resolve())
      server.closeAllConnections()
    })
  }
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const entry = { method: req.method ?? "GET", path: req.url ?? "/" }
      seen.push(entry)
      const verdict = proxy.decide({ ...entry, index: seen.length - 1 })
      if (verdict === "drop") return void req.socket.destroy()
      if (verdict === "hang") {
        held.push(res)
        return onHang()
      }
      if (typeof verdict === "object") {
        const body = JSON.stringify({ error: [{ message: `injected ${verdict.status}` }] })
        res.writeHead(verdict.status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
        return void res.end(body)
      }
      const out = http.request(new URL(req.url ?? "/", target), { method: req.method, headers: { ...req.headers, host: target.host } }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers)
        up.pipe(res)
      })
      out.on("error", () => res.destroy())
      out.end(Buffer.concat(chunks))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return Object.assign(proxy, { port: (server.address() as AddressInfo).port })
}

const addConnection = async (name: string, port: number, extra: ReadonlyArray<string> = []) => {
  const added = await cli(["connections", "add", "--name", name, "--host", "127.0.0.1", "--port", String(port), ...extra])
  if (added.code !== 0) throw new Error(added.stderr)
}

// ===== Exports held at a page =====

/** Waits (at most 5 s, polling) until `ok` holds; fails naming `what` when it does not. */
const until = async (what: string, ok: () => boolean) => {
  for (let i = 0; i < 250 && !ok(); i++) await new Promise((resolve) => setTimeout(resolve, 20))
  expect(ok(), what).toBe(true)
}
/** Rows in the file an export to `out` is writing (`.NAME.PID.tmp` beside it): lines that begin a row. */
const rowsOnDisk = (out: string) => {
  const dir = NodePath.dirname(out)
  const writing = NodeFs.readdirSync(dir).find((name) => name.startsWith(`.${NodePath.basename(out)}.`) && name.endsWith(".tmp"))
  if (writing === undefined) return 0
  return NodeFs.readFileSync(NodePath.join(dir, writing), "utf8").split(/\r?\n/).filter((l) => /^(\{"uuid":")?00000000-/.test(l)).length
}
/**
 * Waits until the export to `out` asked for its third page (held) and wrote its first two: the next
 * page is asked for while one is written, so the request alone does not mean the rows are written.
 */
const atThirdPage = async (proxy: FaultProxy, out: string) => {
  await proxy.hung
  await until("the first two pages written", () => rowsOnDisk(out) === 500)
}
/** Runs `body` with a connection `name` to a proxy that holds the third page of an export. */
const held = async (name: string, body: (proxy: FaultProxy) => Promise<void>) => {
  const proxy = await startProxy(w.url)
  try {
    await addConnection(name, proxy.port)
    let pages = 0
    proxy.decide = (req) => req.method === "GET" && req.path.startsWith("/v1/objects?") && ++pages > 2 ? "hang" : "forward"
    await body(proxy)
  } finally {
    await proxy.close()
  }
}

beforeAll(async () => {
  if (!real) return
  w = await startTestWeaviate({ maxResults: MAX_RESULTS })
  await createCollection("Item")
  for (let start = 1; start <= ROWS; start += 500) {
    const objects = Array.from({ length: Math.min(500, ROWS - start + 1) }, (_, k) => sampleRow(start + k))
    await send("POST", "/v1/batch/objects", { objects })
  }
  await addConnection("w", w.port)
}, 120_000)
afterAll(async () => {
  if (w !== undefined) await w.close()
})

describe.skipIf(!real)("weaviate-mcp export / import (real Weaviate, QUERY_MAXIMUM_RESULTS 1000)", () => {
  it("exports more rows than QUERY_MAXIMUM_RESULTS through the cursor, every row once, in the grid's shape", async () => {
    const out = file("all.jsonl")
    const r = await cli(["export", "w", "Item", "--output", out, "--include-vector", "--page-size", "300"])
    expect(r.code, r.stderr).toBe(0)
    const rows = jsonl(out)
    expect(rows).toHaveLength(ROWS)
    expect(new Set(rows.map((x) => x.uuid)).size).toBe(ROWS)
    expect(Object.keys(rows[0]!)).toEqual(["uuid", "title", "n", "price", "ok", "tags", "when", "sku", "vector"])
    const one = rows.find((x) => x.uuid === uuidOf(1))!
    expect(one).toMatchObject({ title: "commas, \"quotes\"\nand a new line", n: 1, price: 0.25, ok: false, tags: ["t1", "all"] })
    expect(one.vector).toEqual([1, 0.5, -1.25, 1 / 1024])
    // Without a terminal the summary is one JSON object (on stdout, as the rows went to a file).
    expect(lastJson(r.stdout)).toMatchObject({ complete: true, rows: ROWS, errors: 0, cursor: null, output: out })
    // No temporary file is left beside the output.
    expect(NodeFs.readdirSync(dir).filter((n) => n.includes(".tmp"))).toEqual([])
    // JSON: one array (the format from the output name); the consistency level is Weaviate's query parameter.
    w.clearRequests()
    const asJson = await cli(["export", "w", "Item", "--output", file("all.json"), "--page-size", "1000", "--consistency-level", "ALL"])
    expect(asJson.code, asJson.stderr).toBe(0)
    const array = JSON.parse(NodeFs.readFileSync(file("all.json"), "utf8")) as Array<Record<string, unknown>>
    expect(array.map((x) => x.uuid)).toEqual(rows.map((x) => x.uuid))
    const pages = w.requests.filter((q) => q.method === "GET" && q.path === "/v1/objects")
    expect(pages.map((q) => [q.query.consistency_level, q.query.limit, q.query.include])).toEqual([
      ["ALL", "1000", undefined],
      ["ALL", "1000", undefined],
      ["ALL", "1000", undefined]
    ])
    // Without --include-vector there is no vector column.
    const plain = await cli(["export", "w", "Item", "--page-size", "1000"])
    expect(plain.code, plain.stderr).toBe(0)
    const first = JSON.parse(plain.stdout.split("\n")[0]!) as Record<string, unknown>
    expect(Object.keys(first)).not.toContain("vector")
  })

  it("JSONL round trip: export, import into a new collection, export again gives the same rows and vectors", async () => {
    const original = await exportAll("Item", file("rt.jsonl"))
    await createCollection("CopyJ")
    const imported = await cli(["import", "w", "CopyJ", file("rt.jsonl"), "--batch-size", "200"])
    expect(imported.code, imported.stderr).toBe(0)
    expect(lastJson(imported.stdout)).toMatchObject({ rows: ROWS, rejected: 0, complete: true })
    const copy = await exportAll("CopyJ", file("rt-copy.jsonl"))
    expect(byUuid(copy)).toEqual(byUuid(original))
  })

  it("vectors are written as Weaviate sent them (copied, not parsed and printed): each line is the JSON of the row read whole; named vectors too, in JSONL and CSV", async () => {
    await send("POST", "/v1/schema", {
      class: "Named",
      properties: [{ name: "title", dataType: ["text"] }],
      vectorConfig: {
        a: { vectorizer: { none: {} }, vectorIndexType: "hnsw" },
        b: { vectorizer: { none: {} }, vectorIndexType: "hnsw" }
      }
    })
    const named = [
      // -0: Weaviate writes "-0", which printing the parsed number would turn into "0".
      { title: "small and large", a: [1e-7, -2.5e-12, 123456.78, -0], b: [0.1, -1] },
      { title: "\"vector\":[9,9] in a text", a: [0, 1, 2, 3], b: [1 / 3, 2 / 3] }
    ]
    // JSON.stringify writes -0 as 0: the "-0" is put in the text by hand.
    const batch = JSON.stringify({
      objects: named.map((n, i) => ({ class: "Named", id: uuidOf(i + 1), properties: { title: n.title }, vectors: { a: n.a, b: n.b } }))
    }).replace("123456.78,0]", "123456.78,-0]")
    const written = await fetch(`${w.url}/v1/batch/objects`, { method: "POST", headers: { "content-type": "application/json" }, body: batch })
    expect(written.status).toBe(200)
    const page = await fetch(`${w.url}/v1/objects?class=Named&include=vector&limit=10`).then((r) => r.text())
    const objects = (JSON.parse(page) as { objects: Array<{ id: string; properties: { title: string }; vectors: Record<string, Array<number>> }> }).objects
    const expected = objects.map((o) => ({ uuid: o.id, title: o.properties.title, "vector:a": o.vectors.a, "vector:b": o.vectors.b }))
    // The rows read whole, value for value; the second line byte for byte what printing it gives.
    const exported = await cli(["export", "w", "Named", "--output", file("named.jsonl"), "--include-vector"])
    expect(exported.code, exported.stderr).toBe(0)
    expect(jsonl(file("named.jsonl"))).toEqual(expected)
    expect(lines(file("named.jsonl"))[1]).toBe(JSON.stringify(expected[1]))
    // And each vector is the very text Weaviate sent ("-0" included).
    expect(page).toContain("-0]")
    for (const name of ["a", "b"]) {
      const sent = [...page.matchAll(new RegExp(`"${name}":(\\[[^\\]]*\\])`, "g"))].map((m) => m[1]!)
      const written = lines(file("named.jsonl")).map((line) => line.match(new RegExp(`"vector:${name}":(\\[[^\\]]*\\])`))![1])
      expect(written).toEqual(sent)
    }
    const csv = await cli(["export", "w", "Named", "--output", file("named.csv"), "--include-vector"])
    expect(csv.code, csv.stderr).toBe(0)
    const records = NodeFs.readFileSync(file("named.csv"), "utf8").split("\r\n")
    expect(records[0]).toBe("uuid,title,vector:a,vector:b")
    expect(records[2]).toBe(`${expected[1]!.uuid},"""vector"":[9,9] in a text","${JSON.stringify(expected[1]!["vector:a"])}","${JSON.stringify(expected[1]!["vector:b"])}"`)
    expect(records[1]).toContain(",\"[1e-7,-2.5e-12,123456.78,-0]\",")
  })

  it("export's and import's compiled code is kept across runs: the second run loads it (it is not written again), though both set --heap-growing-percent", async () => {
    const cache = TestHome.tempDirSync("weaviate-mcp-cc-bulk-")
    const run = async (args: ReadonlyArray<string>) => {
      const r = await Cli.run([...args, "--home", home], { timeoutMs: 60_000, env: { WEAVIATE_MCP_COMPILE_CACHE: cache } })
      expect(r.code, r.stderr).toBe(0)
    }
    const both = async (name: string) => {
      await run(["export", "w", "Item", "--output", file(name), "--page-size", "1000"])
      await run(["import", "w", "CopyCache", file(name), "--id-field", "uuid"])
    }
    const stamps = () =>
      // By command: export's file names another set of flags (its child's) than import's.
      NodeFs.readdirSync(cache).map((entry) => {
        const stat = NodeFs.statSync(NodePath.join(cache, entry))
        return [entry.replace(/^[0-9a-f]+-[0-9a-f]+-/, ""), stat.ino, stat.mtimeMs] as const
      }).sort((a, b) => a[0].localeCompare(b[0]))
    await createCollection("CopyCache")
    await both("cache-1.jsonl")
    const written = stamps()
    expect(written.map(([entry]) => entry)).toEqual(["export.bin", "import.bin"])
    await both("cache-2.jsonl")
    expect(stamps()).toEqual(written)
    expect(await count("CopyCache")).toBe(ROWS)
  })

  it("rows are exported as stored: a text that looks like a secret is not redacted (a round trip gives it back)", async () => {
    await createCollection("Secretish")
    const titles = ["password: hunter22", "Authorization: Bearer abcdefgh12345678", "see https://user:pw@example.com/x", "api_key=abcd1234"]
    await send("POST", "/v1/batch/objects", {
      objects: titles.map((title, i) => ({ class: "Secretish", id: uuidOf(9000 + i), properties: { title } }))
    })
    const rows = await exportAll("Secretish", file("secretish.jsonl"))
    expect(byUuid(rows).map((r) => r.title)).toEqual(titles)
  })

  it("CSV round trip, RFC 4180 quoting of commas, quotes and new lines; null and empty text stay apart", async () => {
    const out = file("rt.csv")
    const r = await cli(["export", "w", "Item", "--output", out, "--include-vector"])
    expect(r.code, r.stderr).toBe(0)
    const text = NodeFs.readFileSync(out, "utf8")
    expect(text.split("\r\n")[0]).toBe("uuid,title,n,price,ok,tags,when,sku,vector")
    expect(text).toContain(`${uuidOf(1)},"commas, ""quotes""\nand a new line",1,0.25,false,"[""t1"",""all""]"`)
    expect(text).toContain(`${uuidOf(2)},"",2,`)
    expect(text).toMatch(new RegExp(`${uuidOf(3)},item 3,3,0.75,false,"\\[""t3"",""all""\\]",[^,]+,,"\\[3,`))
    await createCollection("CopyC")
    const imported = await cli(["import", "w", "CopyC", out])
    expect(imported.code, imported.stderr).toBe(0)
    const original = await exportAll("Item", file("rt-c1.jsonl"))
    const copy = await exportAll("CopyC", file("rt-c2.jsonl"))
    expect(byUuid(copy)).toEqual(byUuid(original))
    const row2 = copy.find((x) => x.uuid === uuidOf(2))!
    const row3 = copy.find((x) => x.uuid === uuidOf(3))!
    expect([row2.title, row3.sku]).toEqual(["", null])
  })

  it("a lost connection after the 3rd page keeps only whole rows in FILE.partial; --resume gives the rest, every row exactly once", async () => {
    const proxy = await startProxy(w.url)
    try {
      await addConnection("flaky", proxy.port)
      let pages = 0
      proxy.decide = (req) => req.method === "GET" && req.path.startsWith("/v1/objects?") && ++pages > 3 ? "drop" : "forward"
      const out = file("cut.jsonl")
      const r = await cli(["export", "flaky", "Item", "--output", out, "--page-size", "400", "--include-vector"])
      expect(r.code).toBe(1)
      expect(NodeFs.existsSync(out)).toBe(false)
      const kept = jsonl(`${out}.partial`)
      expect(kept).toHaveLength(1200)
      const cursor = /--resume ([0-9a-f-]{36})/.exec(r.stderr)?.[1]
      expect(cursor, r.stderr).toBe(kept.at(-1)!.uuid)
      expect(r.stderr).toMatch(/^Connection failed: /m)
      expect(lastJson(r.stdout)).toMatchObject({ complete: false, rows: 1200, cursor, output: `${out}.partial` })
      const rest = file("rest.jsonl")
      const resumed = await cli(["export", "w", "Item", "--output", rest, "--resume", cursor!, "--include-vector"])
      expect(resumed.code, resumed.stderr).toBe(0)
      const all = [...kept, ...jsonl(rest)]
      expect(all).toHaveLength(ROWS)
      expect(new Set(all.map((x) => x.uuid)).size).toBe(ROWS)
    } finally {
      await proxy.close()
    }
  })

  it("Ctrl-C (SIGINT) while a page is pending: FILE.partial with whole rows, the cursor printed, exit 1", async () => {
    await held("hangs", async (proxy) => {
      const out = file("sigint.csv")
      const child = NodeChild.spawn(process.execPath, [Cli.BIN, "export", "hangs", "Item", "--output", out, "--page-size", "250", "--home", home], {
        stdio: "pipe"
      })
      let stderr = ""
      let stdout = ""
      child.stderr.on("data", (d) => (stderr += d))
      child.stdout.on("data", (d) => (stdout += d))
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
      await atThirdPage(proxy, out)
      child.kill("SIGINT")
      expect(await exited, stderr).toBe(1)
      const text = NodeFs.readFileSync(`${out}.partial`, "utf8")
      const records = text.split("\r\n").filter((l) => l.startsWith("00000000-"))
      expect(records).toHaveLength(500)
      const cursor = /--resume ([0-9a-f-]{36})/.exec(stderr)?.[1]
      expect(cursor, stderr).toBe(records.at(-1)!.slice(0, 36))
      expect(stderr).toContain("export interrupted after 500 rows")
      expect(lastJson(stdout)).toMatchObject({ complete: false, rows: 500, cursor })
    })
  })

  describe("export runs in a child Node with its young generation capped", () => {
    it("--max-semi-space-size=4 (a flag V8 takes only at start); SIGTERM to the command reaches the export, which keeps its rows; the command exits as the export did", async () => {
      await held("held-term", async (proxy) => {
        const out = file("term.jsonl")
        const child = NodeChild.spawn(process.execPath, [Cli.BIN, "export", "held-term", "Item", "--output", out, "--page-size", "250", "--home", home], { stdio: "pipe" })
        let stderr = ""
        child.stderr.on("data", (d) => (stderr += d))
        const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
        await atThirdPage(proxy, out)
        const [exporter] = childrenOf(child.pid!)
        expect(NodeFs.readFileSync(`/proc/${exporter}/cmdline`, "utf8").split("\0")).toContain("--max-semi-space-size=4")
        child.kill("SIGTERM")
        expect(await exited, stderr).toBe(1)
        expect(lines(`${out}.partial`)).toHaveLength(500)
        expect(stderr).toContain("export interrupted after 500 rows")
      })
    })

    it("given the flag already (NODE_OPTIONS), the export runs in the command's own process", async () => {
      await held("held-own", async (proxy) => {
        const out = file("own.jsonl")
        const child = NodeChild.spawn(process.execPath, [Cli.BIN, "export", "held-own", "Item", "--output", out, "--page-size", "250", "--home", home], {
          stdio: "ignore",
          env: { ...process.env, NODE_OPTIONS: "--max-semi-space-size=8" }
        })
        const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
        await atThirdPage(proxy, out)
        expect(childrenOf(child.pid!)).toEqual([])
        child.kill("SIGINT")
        expect(await exited).toBe(1)
        expect(lines(file("own.jsonl.partial"))).toHaveLength(500)
      })
    })

    it("a terminal's Ctrl-C interrupts the export once (it leads a process group of its own): FILE.partial, exit 1", async () => {
      await held("held-tty", async (proxy) => {
        const out = file("tty.jsonl")
        const terminal = onTerminal(["export", "held-tty", "Item", "--output", out, "--page-size", "250"])
        await atThirdPage(proxy, out)
        terminal.type("\x03")
        const { code, text } = await terminal.exited
        expect(code, text).toBe(1)
        expect(text).toContain("export interrupted after 500 rows")
        expect(lines(`${out}.partial`)).toHaveLength(500)
      })
    })

    it("a terminal's Ctrl-Z stops the export with the command, SIGCONT continues both, and Ctrl-C then keeps the rows", async () => {
      await held("held-tstp", async (proxy) => {
        const out = file("tstp.jsonl")
        const terminal = onTerminal(["export", "held-tstp", "Item", "--output", out, "--page-size", "250"])
        await atThirdPage(proxy, out)
        const [command] = childrenOf(terminal.pid)
        const [exporter] = childrenOf(command!)
        terminal.type("\x1a")
        // script, the terminal here, stops itself once it sees its child stopped: waited for too, or a
        // slow script could stop after the SIGCONT below and never pass the Ctrl-C on (a CI run hung so).
        await until("all three stopped", () => stateOf(command!) === "T" && stateOf(exporter!) === "T" && stateOf(terminal.pid) === "T")
        // What a shell's `fg` does.
        process.kill(terminal.pid, "SIGCONT")
        process.kill(command!, "SIGCONT")
        await until("all three running", () => stateOf(command!) !== "T" && stateOf(exporter!) !== "T" && stateOf(terminal.pid) !== "T")
        terminal.type("\x03")
        const { code, text } = await terminal.exited
        expect(code, text).toBe(1)
        expect(lines(`${out}.partial`)).toHaveLength(500)
      })
    })

    it("the command killed outright (SIGKILL): the export notices, stops and keeps its rows", async () => {
      await held("held-kill", async (proxy) => {
        const out = file("kill.jsonl")
        const child = NodeChild.spawn(process.execPath, [Cli.BIN, "export", "held-kill", "Item", "--output", out, "--page-size", "250", "--home", home], { stdio: "ignore" })
        await atThirdPage(proxy, out)
        const [exporter] = childrenOf(child.pid!)
        child.kill("SIGKILL")
        await until("the export has exited", () => !isAlive(exporter!))
        expect(lines(`${out}.partial`)).toHaveLength(500)
      })
    })
  })

  it("import with --id-field twice writes each row once (upsert); a uuid column does the same", async () => {
    await createCollection("Keyed")
    const input = file("keyed.jsonl")
    NodeFs.writeFileSync(input, Array.from({ length: 50 }, (_, i) => JSON.stringify({ sku: `k${i}`, title: `v${i}` })).join("\n") + "\n")
    for (const _ of [1, 2]) {
      const r = await cli(["import", "w", "Keyed", input, "--id-field", "sku"])
      expect(r.code, r.stderr).toBe(0)
    }
    expect(await count("Keyed")).toBe(50)
    const rows = await exportAll("Keyed", file("keyed-out.jsonl"))
    expect(rows.find((x) => x.sku === "k7")!.title).toBe("v7")
    // A re-run of an export file (uuid column) adds nothing either.
    const again = await cli(["import", "w", "Keyed", file("keyed-out.jsonl")])
    expect(again.code, again.stderr).toBe(0)
    expect(await count("Keyed")).toBe(50)
  })

  it("bad lines are reported with their line numbers (stderr, summary, --errors) and every good row lands once", async () => {
    await createCollection("Bad")
    const input = file("bad.jsonl")
    NodeFs.writeFileSync(input, [
      JSON.stringify({ uuid: uuidOf(1), title: "one", n: 1, vector: [1, 2, 3] }),
      "{not json",
      JSON.stringify({ uuid: uuidOf(3), title: "three", n: "three" }),
      JSON.stringify({ uuid: uuidOf(4), title: "four", vector: [1, 2] }),
      JSON.stringify({ uuid: uuidOf(5), title: "five", colour: "red" }),
      "",
      JSON.stringify({ uuid: uuidOf(7), title: "seven", n: 7, vector: [7, 7, 7] }),
      "[1,2]",
      // passes our checks; Weaviate refuses the object, and its message is the reason
      JSON.stringify({ uuid: uuidOf(9), title: "nine", when: "2024-01-01" })
    ].join("\n") + "\n")
    const errors = file("bad-errors.jsonl")
    const r = await cli(["import", "w", "Bad", input, "--errors", errors, "--batch-size", "2"])
    expect(r.code).toBe(1)
    const reported = jsonl(errors)
    expect(reported.map((e) => e.line)).toEqual([2, 3, 4, 5, 8, 9])
    expect(reported[5]).toMatchObject({ uuid: uuidOf(9) })
    expect(reported[5]!.reason).toBe(
      "invalid date property 'when' on class 'Bad': requires a string with a RFC3339 formatted date, but the given value is '2024-01-01'"
    )
    expect(reported[1]!.reason).toBe("column \"n\": expected an integer, got \"three\"")
    expect(reported[2]!.reason).toBe("column \"vector\": the vector has 2 dimensions, the collection's have 3")
    expect(reported[3]!.reason).toBe("column \"colour\": Bad has no such property")
    expect(r.stderr).toContain("line 2: malformed JSON")
    expect(r.stderr).toContain("line 8: the line is not a JSON object")
    expect(lastJson(r.stdout)).toMatchObject({ rows: 2, rejected: 6, complete: true })
    expect(await count("Bad")).toBe(2)
    // A CSV record with the wrong number of cells, by line.
    const csv = file("bad.csv")
    NodeFs.writeFileSync(csv, `uuid,title,n\n${uuidOf(11)},eleven,11\n${uuidOf(12)},twelve\n${uuidOf(13)},"thir\nteen",13\n${uuidOf(14)},x,notint\n`)
    const c = await cli(["import", "w", "Bad", csv])
    expect(c.code).toBe(1)
    expect(lastJson(c.stdout)).toMatchObject({
      rows: 2,
      rejected: 2,
      errors: [
        { line: 3, reason: "2 cells where the header has 3" },
        { line: 6, uuid: uuidOf(14), reason: "column \"n\": expected an integer, got \"notint\"" }
      ]
    })
    expect(await count("Bad")).toBe(4)
  })

  it("--fail-fast stops at the first rejected row", async () => {
    await createCollection("Fast")
    const input = file("fast.jsonl")
    const rows = Array.from({ length: 20 }, (_, i) => JSON.stringify({ title: `r${i}`, n: i === 4 ? "x" : i }))
    NodeFs.writeFileSync(input, rows.join("\n") + "\n")
    const r = await cli(["import", "w", "Fast", input, "--fail-fast", "--batch-size", "2"])
    expect(r.code).toBe(1)
    expect(lastJson(r.stdout)).toMatchObject({ complete: false, rejected: 1, errors: [{ line: 5 }] })
    expect(await count("Fast")).toBeLessThan(20)
  })

  it("--dry-run checks the file against the schema and sends nothing", async () => {
    await createCollection("Dry")
    const input = file("dry.jsonl")
    NodeFs.writeFileSync(input, [JSON.stringify({ title: "a", n: 1 }), JSON.stringify({ title: "b", n: 1.5 }), JSON.stringify({ title: "c" })].join("\n") + "\n")
    w.clearRequests()
    const r = await cli(["import", "w", "Dry", input, "--dry-run"])
    expect(r.code).toBe(1)
    expect(lastJson(r.stdout)).toMatchObject({ dryRun: true, rows: 2, rejected: 1, errors: [{ line: 2, reason: "column \"n\": expected an integer, got 1.5" }] })
    expect(w.requests.filter((q) => q.method !== "GET" && !(q.method === "POST" && q.path === "/v1/graphql"))).toEqual([])
    expect(await count("Dry")).toBe(0)
  })

  it("Safe Mode readOnly refuses an import (exit 1) and writes nothing", async () => {
    await createCollection("Guarded")
    await addConnection("ro", w.port, ["--safe-mode", "readOnly"])
    const input = file("ro.jsonl")
    NodeFs.writeFileSync(input, JSON.stringify({ title: "x" }) + "\n")
    const r = await cli(["import", "ro", "Guarded", input])
    expect(r.code).toBe(1)
    expect(r.stderr.trim()).toBe("Import refused: the connection ro is in Safe Mode readOnly")
    expect(await count("Guarded")).toBe(0)
  })

  it("backs off on 429 and 503 and sends the batch again: every row lands once", async () => {
    await createCollection("Busy")
    const proxy = await startProxy(w.url)
    try {
      await addConnection("busy", proxy.port)
      let batches = 0
      proxy.decide = (req) => {
        if (req.method !== "POST" || !req.path.startsWith("/v1/batch/objects")) return "forward"
        batches++
        return batches === 1 ? { status: 429 } : batches === 2 ? { status: 503 } : batches === 4 ? { status: 429 } : "forward"
      }
      const input = file("busy.jsonl")
      NodeFs.writeFileSync(input, Array.from({ length: 30 }, (_, i) => JSON.stringify({ uuid: uuidOf(i + 1), title: `b${i}` })).join("\n") + "\n")
      const r = await cli(["import", "busy", "Busy", input, "--batch-size", "10", "--consistency-level", "QUORUM"])
      expect(r.code, r.stderr).toBe(0)
      expect(lastJson(r.stdout)).toMatchObject({ rows: 30, rejected: 0 })
      expect(await count("Busy")).toBe(30)
      const posts = proxy.seen.filter((s) => s.method === "POST" && s.path.startsWith("/v1/batch/objects"))
      expect(posts).toHaveLength(6)
      expect(posts.every((p) => p.path.includes("consistency_level=QUORUM"))).toBe(true)
    } finally {
      await proxy.close()
    }
  })

  it("Ctrl-C during an import ends it with exit 1 and says how far it got", async () => {
    await createCollection("Stopped")
    const proxy = await startProxy(w.url)
    try {
      await addConnection("stalls", proxy.port)
      let batches = 0
      proxy.decide = (req) => req.method === "POST" && req.path.startsWith("/v1/batch/objects") && ++batches > 1 ? "hang" : "forward"
      const input = file("stopped.jsonl")
      NodeFs.writeFileSync(input, Array.from({ length: 100 }, (_, i) => JSON.stringify({ uuid: uuidOf(i + 1), title: `s${i}` })).join("\n") + "\n")
      const child = NodeChild.spawn(process.execPath, [Cli.BIN, "import", "stalls", "Stopped", input, "--batch-size", "10", "--home", home], { stdio: "pipe" })
      let stderr = ""
      child.stderr.on("data", (d) => (stderr += d))
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
      await proxy.hung
      child.kill("SIGINT")
      expect(await exited, stderr).toBe(1)
      expect(stderr).toMatch(/^import interrupted: \d+ rows written, 0 rejected$/m)
    } finally {
      await proxy.close()
    }
  })

  it("a tenant's rows round-trip into another tenant; --progress prints progress on stderr", async () => {
    await createCollection("Multi", { multiTenancyConfig: { enabled: true } })
    await send("POST", "/v1/schema/Multi/tenants", [{ name: "acme" }, { name: "globex" }])
    await send("POST", "/v1/batch/objects", {
      objects: Array.from({ length: 40 }, (_, i) => ({ ...sampleRow(i + 1), class: "Multi", tenant: "acme" }))
    })
    // Without its tenant the export is refused before any row: no file is left, not even a .partial.
    const refused = await cli(["export", "w", "Multi", "--output", file("none.jsonl")])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("Multi is multi-tenant; pass tenant")
    expect(NodeFs.readdirSync(dir).filter((n) => n.includes("none.jsonl"))).toEqual([])
    const out = file("acme.jsonl")
    const r = await cli(["export", "w", "Multi", "--tenant", "acme", "--output", out, "--include-vector", "--progress", "--page-size", "15"])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/^export: 40\/40 rows, 100%, [\d,]+ rows\/s, 0:\d\d elapsed$/m)
    const imported = await cli(["import", "w", "Multi", out, "--tenant", "globex", "--progress"])
    expect(imported.code, imported.stderr).toBe(0)
    expect(imported.stderr).toMatch(/^import: 40 rows, 100%, [\d,]+ rows\/s/m)
    expect(await count("Multi", "globex")).toBe(40)
    const copy = await exportAll("Multi", file("globex.jsonl"), ["--tenant", "globex"])
    expect(byUuid(copy)).toEqual(byUuid(jsonl(out)))
  })

  it("on a terminal (a pseudo-terminal): the progress line shows rows of the Aggregate total, rows/s, the elapsed time and an ETA", async () => {
    const proxy = await startProxy(w.url)
    try {
      await addConnection("slow", proxy.port)
      // The 3rd page is held: the export is 800 rows in while we read its progress line.
      let pages = 0
      proxy.decide = (req) => req.method === "GET" && req.path.startsWith("/v1/objects?") && ++pages === 3 ? "hang" : "forward"
      const run = onTerminal(["export", "slow", "Item", "--output", file("tty.jsonl"), "--page-size", "400"])
      const line = /export \[=+-+\]: 800\/2,500 rows, 32%, [\d,]+ rows\/s, 0:\d\d elapsed, ETA \d+:\d\d/
      await run.seen(line)
      // The held page's connection is lost: the export stops, keeping the 800 rows.
      await proxy.close()
      const { code, text } = await run.exited
      expect(code, text).toBe(1)
      expect(text).toMatch(line)
      // Redrawn in place: carriage returns or cursor moves, not one line per redraw.
      expect(text.split("\n").filter((l) => l.includes("800/2,500 rows")).length).toBe(1)
      expect(text).toContain("export stopped after 800 rows")
    } finally {
      await proxy.close()
    }
  })

  it("on a terminal with --json, and without a terminal, there is no progress: one JSON summary", async () => {
    const tty = await onTerminal(["export", "w", "Item", "--output", file("quiet.jsonl"), "--json"]).exited
    expect(tty.code, tty.text).toBe(0)
    expect(JSON.parse(tty.text.trim())).toMatchObject({ complete: true, rows: ROWS, errors: 0, cursor: null })
    const piped = await cli(["export", "w", "Item", "--output", file("quiet.jsonl")])
    expect(piped.code, piped.stderr).toBe(0)
    expect(piped.stderr).toBe("")
    expect(piped.stdout.trim().split("\n")).toHaveLength(1)
    expect(JSON.parse(piped.stdout)).toMatchObject({ complete: true, rows: ROWS, seconds: expect.any(Number), rowsPerSecond: expect.any(Number) })
    // An import on a terminal: the share of the file read, and a summary for a person.
    await createCollection("TtyCopy")
    const imported = await onTerminal(["import", "w", "TtyCopy", file("quiet.jsonl")]).exited
    expect(imported.code, imported.text).toBe(0)
    expect(imported.text).toMatch(/import \[=+\]: 2,500 rows, 100%, [\d,]+ rows\/s, 0:\d\d elapsed/)
    expect(imported.text).toMatch(/imported 2500 rows into TtyCopy in [\d.]+ s/)
    expect(await count("TtyCopy")).toBe(ROWS)
  })

  it("a reader that goes away (| head) ends the export with one line and the cursor, no stack trace", async () => {
    const child = NodeChild.spawn(process.execPath, [Cli.BIN, "export", "w", "Item", "--page-size", "100", "--home", home], { stdio: "pipe" })
    let stderr = ""
    child.stderr.on("data", (d) => (stderr += d))
    child.stdout.once("data", () => child.stdout.destroy())
    const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)))
    expect(code, stderr).toBe(1)
    expect(stderr).toMatch(/^export stopped after \d+ rows; continue with --resume [0-9a-f-]{36}$/m)
    expect(stderr).toMatch(/^Cannot write stdout: write EPIPE$/m)
    expect(stderr).not.toContain("node:events")
  })

  it("usage errors exit 2 with one line", async () => {
    const r = await cli(["export", "w", "Item", "--resume", "nope"])
    expect(r.code).toBe(2)
    expect(r.stderr.trim()).toBe("--resume must be a cursor (a uuid), got 'nope'")
  })
})
