/**
 * The MCP endpoint inside an `@effect/platform` HTTP server: a program that already runs an
 * `HttpRouter` adds it with one route, `HttpRouter.all("/mcp", McpHttpApp.handler)`, and the daemon's
 * services with `Daemon.layer({ …, transport: McpHttpApp.mounted })`.
 *
 * The adapter only translates: the platform's request becomes the endpoint's `HttpRequest` and its
 * `HttpResponse` a platform response. Every rule stays in `Endpoint`. Shutdown comes from the
 * `Lifecycle` the daemon provides (begun when the host closes the daemon's layer); a client that goes
 * away interrupts the request's fiber, as the platform's node server does for every handler.
 *
 * The daemon's own default stays the `node:http` transport (`HttpTransport`), for its measured speed.
 *
 * @since 0.1.0
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as HttpTransport from "./HttpTransport.ts"
import { Lifecycle } from "./Lifecycle.ts"

const encoder = new TextEncoder()

const toBytes = (body: string | Uint8Array | ReadonlyArray<Uint8Array>): Uint8Array => {
  if (typeof body === "string") return encoder.encode(body)
  if (body instanceof Uint8Array) return body
  return Buffer.concat(body)
}

/** The endpoint's response as a platform response. */
const toResponse = (response: HttpTransport.HttpResponse): HttpServerResponse.HttpServerResponse => {
  const contentType = response.headers["content-type"]
  const options = { status: response.status, headers: response.headers, ...(contentType === undefined ? {} : { contentType }) }
  return response._tag === "Full"
    ? HttpServerResponse.uint8Array(toBytes(response.body), options)
    // An empty first chunk sends the headers at once (node holds them until the first write), so a
    // client sees its event stream open before the first event, as over the node:http transport.
    : HttpServerResponse.stream(Stream.prepend(Stream.encodeText(response.body), Chunk.of(new Uint8Array(0))), options)
}

const portOf = (address: HttpServer.Address) => (address._tag === "TcpAddress" ? address.port : 0)

/**
 * The route handler: answers the request it is given through the endpoint (`HttpTransport.HttpHandler`,
 * which `Daemon.layer` provides). Mount it at `/mcp`: the endpoint keeps its own path rule (`/mcp`
 * only, else 404), so a router that also matches `/mcp/` cannot widen it. The Host check takes the
 * server's bound port.
 *
 * @category handlers
 */
export const handler: Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  never,
  HttpServerRequest.HttpServerRequest | HttpTransport.HttpHandler | HttpServer.HttpServer
> = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const endpoint = yield* HttpTransport.HttpHandler
  const server = yield* HttpServer.HttpServer
  const queryAt = request.url.indexOf("?")
  const base = {
    method: request.method,
    path: queryAt === -1 ? request.url : request.url.slice(0, queryAt),
    url: request.url,
    headers: request.headers,
    remoteAddress: Option.getOrElse(request.remoteAddress, () => ""),
    localPort: portOf(server.address)
  }
  const declared = Number(request.headers["content-length"] ?? "0")
  if (Number.isFinite(declared) && declared > HttpTransport.defaultLimits.maxBodyBytes) {
    return toResponse(endpoint.tooLarge(base))
  }
  // The endpoint's `admit` sees the headers first (authentication among them), as over node:http: a
  // request it refuses, or whose body it caps, never has a large body read.
  const admission = endpoint.admit === undefined ? undefined : yield* endpoint.admit(base)
  if (admission?._tag === "Refuse") return toResponse(admission.response)
  const cap = admission?.bodyCap
  if (cap !== undefined && Number.isFinite(declared) && declared > cap.bytes) return toResponse(cap.response)
  // The platform enforces its body cap (`MaxBodySize`, 10 MB on the node server) while it reads.
  const body = yield* Effect.either(request.text)
  if (body._tag === "Left") return toResponse(endpoint.tooLarge(base))
  if (cap !== undefined && Buffer.byteLength(body.right) > cap.bytes) return toResponse(cap.response)
  return toResponse(yield* endpoint.handle({ ...base, body: body.right, admitted: admission?.value }))
})

/**
 * An `HttpTransport.Transport` for a daemon whose endpoint is mounted in the host's own router (see the module
 * documentation): it starts nothing and reports the host server's address, for the handshake file and
 * the Host check.
 *
 * @category transports
 */
export const mounted: HttpTransport.Transport<HttpServer.HttpServer> = () =>
  Effect.map(HttpServer.HttpServer, (server) => {
    const host = server.address._tag === "TcpAddress" ? server.address.hostname : "127.0.0.1"
    const port = portOf(server.address)
    return { host, port, url: `http://${host}:${port}` }
  })

/**
 * An `HttpTransport.Transport` that serves the endpoint through an `@effect/platform` server of its own (for
 * example `NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 })`) with one router
 * route. The server lives as long as the daemon.
 *
 * @category transports
 */
export const transport = <E>(server: Layer.Layer<HttpServer.HttpServer, E>): HttpTransport.Transport => () =>
  Effect.gen(function*() {
    const endpoint = yield* HttpTransport.HttpHandler
    const lifecycle = yield* Lifecycle
    const app = HttpRouter.empty.pipe(HttpRouter.all("/mcp", handler), HttpServer.serve())
    const context = yield* Layer.build(app.pipe(
      Layer.provide(Layer.succeed(HttpTransport.HttpHandler, endpoint)),
      Layer.provideMerge(server)
    ))
    // Finalizers run in reverse: open streams end with their result before the server closes.
    yield* Effect.addFinalizer(() => lifecycle.beginShutdown)
    return yield* mounted({ port: 0 }).pipe(Effect.provide(context))
  })
