/**
 * `npm run weaviate:real -- --port 8080 [--api-key K]... [--tls] [--max-results N]`
 * Starts the real Weaviate (built from its Go module on first use, see scripts/weaviate.mjs) alone,
 * with the embedding server behind `text2vec-transformers`, loads the same sample data set as
 * `npm run weaviate:sample` through REST and prints its URL.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildWeaviate, weaviateVersion } from "../../scripts/weaviate.mjs"
import { startRealWeaviate } from "./RealWeaviate.ts"
import { loadSampleData } from "./SampleData.ts"

const usage = "usage: npm run weaviate:real -- [--port 8080] [--api-key KEY]... [--tls] [--max-results N]"
const args = process.argv.slice(2)
let port = 8080
const apiKeys: Array<string> = []
let tls = false
let maxResults: number | undefined
const fail = (message: string): never => {
  console.error(`${message}\n${usage}`)
  process.exit(2)
}
const integer = (flag: string, value: string, min: number, max: number) => {
  const n = Number(value)
  if (!Number.isInteger(n) || n < min || n > max) fail(`${flag} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`)
  return n
}
for (let i = 0; i < args.length; i++) {
  const a = args[i]!
  const next = (): string => args[++i] ?? fail(`${a} needs a value`)
  if (a === "--port") port = integer(a, next(), 1, 65535)
  else if (a === "--api-key") apiKeys.push(next())
  else if (a === "--tls") tls = true
  else if (a === "--max-results") maxResults = integer(a, next(), 1, 1_000_000_000)
  else if (a === "--help" || a === "-h") {
    console.log(usage)
    process.exit(0)
  } else fail(`unknown argument ${a}`)
}

await buildWeaviate(weaviateVersion())
const w = await startRealWeaviate({
  port,
  tls,
  ...(apiKeys.length > 0 ? { apiKeys } : {}),
  ...(maxResults !== undefined ? { maxResults } : {})
})
const stop = () => {
  void w.stop().then(() => process.exit(0))
}
process.on("SIGINT", stop)
process.on("SIGTERM", stop)
const started = Date.now()
const { objects } = await loadSampleData(w, apiKeys.length > 0 ? { apiKey: apiKeys[0]! } : {})
console.log(`Weaviate ${w.version} (the real server) listening on ${w.url}, started in ${w.startupMs} ms`)
console.log(`  sample data: ${objects} objects in Author, Article (text2vec-transformers), Product, Ticket (tenants acme, globex), loaded in ${Date.now() - started} ms`)
console.log(`  auth: ${apiKeys.length > 0 ? `API key required (${apiKeys.length} key${apiKeys.length > 1 ? "s" : ""})` : "anonymous"}`)
console.log(`  gRPC on 127.0.0.1:${w.grpcPort}; Weaviate's own MCP server at ${w.url}/v1/mcp`)
if (maxResults !== undefined) console.log(`  QUERY_MAXIMUM_RESULTS=${maxResults}`)
if (w.caPem !== undefined) {
  const caFile = path.join(os.tmpdir(), `weaviate-mcp-real-ca-${w.port}.pem`)
  fs.writeFileSync(caFile, w.caPem)
  console.log(`  TLS: certificate for localhost/127.0.0.1, CA written to ${caFile}`)
}
console.log("  press Ctrl-C to stop (the data is thrown away)")
