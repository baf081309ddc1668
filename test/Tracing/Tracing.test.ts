/**
 * Tracing end to end: a client's `traceparent`/`tracestate` in `_meta` continues into the driver's
 * request to Weaviate (the test instance's request log shows the headers), and with an OTLP endpoint
 * configured the daemon exports its spans — MCP request → tool → Weaviate request — in the client's
 * trace, to an OTLP/HTTP receiver on loopback inside the test; no secret appears in what is exported.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import type { AddressInfo } from "node:net"
import * as Daemon from "../../src/Daemon/Daemon.ts"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { BoundAddress } from "../../src/Mcp/HttpTransport.ts"
import * as Tracing from "../../src/Tracing/Tracing.ts"
import * as Cli from "../support/Cli.ts"
import * as TestDaemon from "../support/TestDaemon.ts"
import * as TestHome from "../support/TestHome.ts"
import { startWeaviate } from "../weaviate/WeaviateServer.ts"

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
const PARENT_ID = "00f067aa0ba902b7"
const API_KEY = "weaviate-secret-key-31337"

/** An OTLP/HTTP (JSON) receiver on 127.0.0.1 keeping every body it gets. */
const receiver = Effect.acquireRelease(
  Effect.async<{ url: string; bodies: Array<string>; server: NodeHttp.Server }>((resume) => {
    const bodies: Array<string> = []
    const server = NodeHttp.createServer((req, res) => {
      let body = ""
      req.on("data", (chunk) => (body += chunk))
      req.on("end", () => {
        if (req.url === "/v1/traces") bodies.push(body)
        res.writeHead(200, { "content-type": "application/json" })
        res.end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () => resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies, server })))
  }),
  ({ server }) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
)

interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly attributes: ReadonlyArray<{ key: string; value: Record<string, unknown> }>
}

const spansOf = (bodies: ReadonlyArray<string>): ReadonlyArray<OtlpSpan> =>
  bodies.flatMap((body) =>
    (JSON.parse(body).resourceSpans as Array<{ scopeSpans: Array<{ spans: Array<OtlpSpan> }> }>).flatMap((r) => r.scopeSpans.flatMap((s) => s.spans))
  )

describe("tracing", () => {
  it("tracesUrl: --otlp wins, then OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, then OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces; nothing set, no exporter", () => {
    assert.strictEqual(Tracing.tracesUrl("http://127.0.0.1:4318/", { OTEL_EXPORTER_OTLP_ENDPOINT: "http://x" }), "http://127.0.0.1:4318/v1/traces")
    assert.strictEqual(Tracing.tracesUrl(undefined, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://c/t", OTEL_EXPORTER_OTLP_ENDPOINT: "http://x" }), "http://c/t")
    assert.strictEqual(Tracing.tracesUrl(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }), "http://collector:4318/v1/traces")
    assert.strictEqual(Tracing.tracesUrl(undefined, {}), undefined)
  })

  it.live("the client's trace continues into the Weaviate request and the exported spans, without secrets", () =>
    Effect.gen(function*() {
      const w = yield* Effect.acquireRelease(Effect.promise(() => startWeaviate({ apiKeys: [API_KEY] })), (w) => Effect.promise(() => w.close()))
      const otlp = yield* receiver
      const settings = yield* TestDaemon.settings({ auth: "off", approvals: "exec", approvalCommand: Option.some("true") })
      const home = yield* TestHome.tempDir()
      const homeLayer = TestHome.at(home)
      const connection = yield* Effect.flatMap(ConnectionStore, (store) =>
        store.add({ name: "w", host: "127.0.0.1", port: w.port, authMethod: "apiKey", apiKey: API_KEY } as never)).pipe(
          Effect.provide(ConnectionStore.layer.pipe(Layer.provide(homeLayer))),
          Effect.orDie
        )

      yield* Effect.scoped(Effect.gen(function*() {
        const { url } = yield* BoundAddress
        const response = yield* Effect.promise(() =>
          fetch(`${url}/mcp`, {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "execute_query" },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: 1,
              method: "tools/call",
              params: {
                name: "execute_query",
                arguments: { connection_id: connection.id, query: "{ Get { Article { title } } }" },
                _meta: {
                  "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {},
                  traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
                  tracestate: "vendor=client-state"
                }
              }
            })
          }).then((r) => r.json() as Promise<{ result?: unknown; error?: unknown }>)
        )
        assert.isDefined(response.result, JSON.stringify(response))
      }).pipe(Effect.provide(Daemon.layer({ settings, port: 0, otlpTracesUrl: `${otlp.url}/v1/traces` }).pipe(Layer.provide(homeLayer)))))

      // The Weaviate request carried the client's trace.
      const graphql = w.requests.find((r) => r.path === "/v1/graphql")
      assert.isDefined(graphql)
      assert.match(graphql!.headers.traceparent ?? "", new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`))
      assert.strictEqual(graphql!.headers.tracestate, "vendor=client-state")

      // The daemon has stopped: its spans were flushed to the receiver.
      const spans = spansOf(otlp.bodies)
      const inTrace = spans.filter((s) => s.traceId === TRACE_ID)
      const request = inTrace.find((s) => s.name === "tools/call execute_query")
      const tool = inTrace.find((s) => s.name === "Tools.execute_query")
      const http = inTrace.find((s) => s.name === "http.client POST")
      assert.isDefined(request, spans.map((s) => s.name).join(", "))
      assert.isDefined(tool)
      assert.isDefined(http)
      assert.strictEqual(request!.parentSpanId, PARENT_ID)
      assert.strictEqual(tool!.parentSpanId, request!.spanId)
      assert.deepInclude(tool!.attributes, { key: "gen_ai.tool.name", value: { stringValue: "execute_query" } })
      assert.deepInclude(request!.attributes, { key: "mcp.method.name", value: { stringValue: "tools/call" } })
      assert.deepInclude(request!.attributes, { key: "gen_ai.tool.name", value: { stringValue: "execute_query" } })
      // The Weaviate request's span is the one whose id went out in traceparent.
      assert.strictEqual(graphql!.headers.traceparent!.split("-")[2], http!.spanId)
      const all = otlp.bodies.join("\n")
      assert.notInclude(all, API_KEY)
    }).pipe(Effect.scoped), 60_000)

  /** One short run of the built CLI with --otlp: a tool call, then SIGINT; the spans the receiver got. */
  const shortRun = (compileCache: string) =>
    Effect.scoped(Effect.gen(function*() {
      const otlp = yield* receiver
      const daemon = yield* Effect.acquireRelease(
        Effect.promise(() =>
          Cli.serve(["--home", TestHome.tempDirSync("weaviate-mcp-otlp-cli-"), "--port", "0", "--auth", "off", "--otlp", otlp.url], {
            env: { WEAVIATE_MCP_COMPILE_CACHE: compileCache }
          })
        ),
        (d) => Effect.promise(async () => {
          d.child.kill("SIGINT")
          await d.exited
        })
      )
      const response = yield* Effect.promise(() =>
        fetch(daemon.endpoint, {
          method: "POST",
          headers: { "content-type": "application/json", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "list_connections" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "tools/call",
            params: { name: "list_connections", arguments: {}, _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } }
          })
        }).then((r) => r.status)
      )
      assert.strictEqual(response, 200)
      // The batch processor exports on shutdown at the latest.
      daemon.child.kill("SIGINT")
      const finished = yield* Effect.promise(() => daemon.exited)
      return { spans: spansOf(otlp.bodies), stderr: finished.stderr }
    }))

  it.live("a request without a client's trace is a trace of its own: its server span is a root, not a child of the daemon's start, and the tool's span is its child", () =>
    Effect.gen(function*() {
      const { spans } = yield* shortRun(TestHome.tempDirSync("weaviate-mcp-otlp-cache-"))
      const names = spans.map((s) => s.name).join(", ")
      const request = spans.find((s) => s.name === "tools/call list_connections")
      const tool = spans.find((s) => s.name === "Tools.list_connections")
      const start = spans.find((s) => s.name === "Serve.make")
      assert.isDefined(request, names)
      assert.isDefined(tool, names)
      assert.isDefined(start, names)
      assert.isNotOk(request!.parentSpanId, "the request's span has no parent")
      assert.notStrictEqual(request!.traceId, start!.traceId)
      assert.strictEqual(tool!.traceId, request!.traceId)
      assert.strictEqual(tool!.parentSpanId, request!.spanId)
    }))

  it.live("the built CLI exports with --otlp, also when it runs from V8's code cache: the exporter, a chunk of the bundle loaded only then, starts and sends spans", () =>
    Effect.gen(function*() {
      const cache = TestHome.tempDirSync("weaviate-mcp-otlp-cache-")
      // The first run compiles the bundle and keeps the code; the second runs from the cache, where an
      // `import()` in the bundle used to fail (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING) and the spans were lost.
      const first = yield* shortRun(cache)
      assert.isAbove(first.spans.length, 0, "spans of the first run")
      assert.isNotEmpty(NodeFs.readdirSync(cache), "the first run kept its code")
      const cached = yield* shortRun(cache)
      assert.isAbove(cached.spans.length, 0, "spans of the run from the code cache")
      // The loader no longer needs Node's experimental dynamic-import loader, nor warns about it.
      for (const run of [first, cached]) assert.notInclude(run.stderr, "ExperimentalWarning")
    }))
})
