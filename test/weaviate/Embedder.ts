/**
 * A tiny deterministic embedding server on 127.0.0.1 speaking the text2vec-transformers inference
 * API, which the real Weaviate's `text2vec-transformers` module calls: `GET /.well-known/ready`,
 * `GET /meta`, `POST /vectors` ({ text } -> { text, dims, vector }). It stands in for a model server
 * with the compatible instance's own hashing vectorizer (Vectorizer.ts): texts sharing words are close.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { DIMENSIONS, vectorizeText } from "./Vectorizer.ts"

export interface Embedder {
  readonly url: string
  /** texts vectorized so far */
  readonly calls: () => number
  readonly close: () => Promise<void>
}

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body)
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
  res.end(text)
}

export const startEmbedder = async (): Promise<Embedder> => {
  let calls = 0
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const route = `${req.method} ${new URL(req.url ?? "/", "http://127.0.0.1").pathname}`
      if (route === "GET /.well-known/ready" || route === "GET /.well-known/live") return json(res, 200, {})
      if (route === "GET /meta") return json(res, 200, { model: { name: "weaviate-mcp-hashing", dimensions: DIMENSIONS } })
      if (route !== "POST /vectors" && route !== "POST /vectors/") return json(res, 404, { error: `no route ${route}` })
      let text: unknown
      try {
        text = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { text?: unknown }).text
      } catch {
        return json(res, 400, { error: "the body is not JSON" })
      }
      if (typeof text !== "string") return json(res, 422, { error: "text must be a string" })
      calls++
      json(res, 200, { text, dims: DIMENSIONS, vector: vectorizeText(text) })
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  // Weaviate holds keep-alive connections open; they must not keep a worker alive.
  server.unref()
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    calls: () => calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}
