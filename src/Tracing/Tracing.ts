/**
 * Tracing, end to end: a client's W3C trace context (`traceparent`, `tracestate` in a request's
 * `_meta`) continues into every HTTP request the driver sends to Weaviate for that call, and, with
 * an OTLP endpoint configured, the daemon exports its spans.
 *
 * - Propagation needs no exporter: the endpoint makes the client's `traceparent` the parent span of
 *   the call; the driver writes `traceparent` (and `b3`) from its own client span, which is in the
 *   client's trace; `tracestate` is carried in a fiber-local value the driver adds.
 * - Export: `serve --otlp URL` or `OTEL_EXPORTER_OTLP_ENDPOINT` (the base URL; spans go to
 *   `URL/v1/traces`, as the OpenTelemetry specification says; `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
 *   is taken as the full URL). Spans: MCP request (`tools/call execute_query`, kind server) → tool
 *   (`Tools.execute_query`) → approval wait (`approval.wait`) → Weaviate request (`http.client POST`),
 *   with the semantic-convention names (`mcp.method.name`, `jsonrpc.request.id`,
 *   `mcp.protocol.version`, `gen_ai.tool.name`, `http.request.method`, `url.full`…). Header values
 *   that carry credentials (`authorization`) are redacted by the driver; log lines are not
 *   copied into spans (they go through the redacting logger only).
 * - Nothing configured and no client trace: no exporter is loaded, and neither the endpoint nor the
 *   driver makes a span (`isTraced` is false), so the hot path costs nothing for tracing.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Tracer from "effect/Tracer"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import { NAME, VERSION } from "../Base/Version.ts"

/**
 * Whether spans are exported: the endpoint adds its request spans only then.
 *
 * @category services
 */
export class TracingEnabled extends Context.Reference<TracingEnabled>()("weaviate-mcp/TracingEnabled", {
  defaultValue: () => false
}) {}

/**
 * Whether the work on `fiber` is traced: spans are exported (`TracingEnabled`), or the call continues
 * a client's trace (its span descends from the client's `traceparent`).
 *
 * @category predicates
 */
export const isTraced = (fiber: Fiber.RuntimeFiber<unknown, unknown>): boolean => {
  const context = fiber.currentContext
  if (Context.get(context, TracingEnabled)) return true
  let span: Option.Option<Tracer.AnySpan> = Context.getOption(context, Tracer.ParentSpan)
  for (let depth = 0; depth < 64 && Option.isSome(span); depth++) {
    if (span.value._tag === "ExternalSpan") return true
    span = span.value.parent
  }
  return false
}

/**
 * `effect` in a span named `name` when its fiber is traced (`isTraced`), and as it is otherwise: an
 * untraced call pays for no span (each copies the fiber's context) and no stack trace (`withSpan`
 * captures one per call unless told not to, and copies its options to add it).
 *
 * @category combinators
 */
export const spanWhenTraced = (name: string, attributes?: Readonly<Record<string, unknown>>) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((fiber) =>
    isTraced(fiber)
      ? Effect.withSpan(effect, name, attributes === undefined ? { captureStackTrace: false } : { captureStackTrace: false, attributes })
      : effect
  )

/**
 * The client's `tracestate`, for the driver's requests of the call.
 *
 * @category context
 */
export const currentTraceState: FiberRef.FiberRef<string | undefined> = FiberRef.unsafeMake<string | undefined>(undefined)

/**
 * The OTLP/HTTP traces URL from `--otlp` or the environment; `undefined` when tracing is off.
 *
 * @category config
 */
export const tracesUrl = (flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const base = (url: string) => `${url.replace(/\/+$/, "")}/v1/traces`
  if (flag !== undefined && flag !== "") return base(flag)
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
  if (traces !== undefined && traces !== "") return traces
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT
  if (endpoint !== undefined && endpoint !== "") return base(endpoint)
  return undefined
}

/** The module's exports whether it was loaded as ES (named exports) or as CommonJS (`default`). */
const commonJs = <M extends object>(module: M, member: keyof M): M =>
  member in module ? module : (module as unknown as { readonly default: M }).default

/**
 * Exports spans to an OTLP/HTTP endpoint (JSON) through `@effect/opentelemetry`. The OpenTelemetry
 * packages are loaded only here, when tracing is on. Spans still queued are flushed when the layer
 * closes.
 *
 * @category layers
 */
export const layerOtlp = (url: string) =>
  Layer.unwrapEffect(
    Effect.promise(async () => {
      const [OtelTracer, OtelResource, SdkTraceBaseModule, ExporterModule] = await Promise.all([
        import("@effect/opentelemetry/Tracer"),
        import("@effect/opentelemetry/Resource"),
        import("@opentelemetry/sdk-trace-base"),
        import("@opentelemetry/exporter-trace-otlp-http")
      ])
      // A CommonJS package imported on demand from the bundle's chunk arrives as `{ default: exports }`.
      const SdkTraceBase = commonJs(SdkTraceBaseModule, "BasicTracerProvider")
      const Exporter = commonJs(ExporterModule, "OTLPTraceExporter")
      const provider = Layer.scoped(
        OtelTracer.OtelTracerProvider,
        Effect.flatMap(OtelResource.Resource, (resource) =>
          Effect.acquireRelease(
            Effect.sync(() =>
              new SdkTraceBase.BasicTracerProvider({
                resource,
                spanProcessors: [new SdkTraceBase.BatchSpanProcessor(new Exporter.OTLPTraceExporter({ url }), { scheduledDelayMillis: 500 })]
              })
            ),
            (p) => Effect.promise(() => p.forceFlush().then(() => p.shutdown()).catch(() => undefined))
          ))
      )
      return Layer.mergeAll(
        Layer.succeed(TracingEnabled, true),
        // Log lines stay in the redacting logger; they are not copied into span events.
        Logger.remove(Logger.tracerLogger),
        OtelTracer.layer.pipe(
          Layer.provide(provider),
          Layer.provide(OtelResource.layer({ serviceName: NAME, serviceVersion: VERSION }))
        ),
        Layer.effectDiscard(Effect.logInfo("exporting traces").pipe(Effect.annotateLogs({ url })))
      )
    })
  )
