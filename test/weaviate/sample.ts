/**
 * `npm run weaviate:sample -- --port 8080 [--api-key K]... [--tls] [--max-results N]`
 * Starts the Weaviate-compatible test instance alone, loads the sample data set and prints its URL.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { loadSampleData } from "./SampleData.ts"
import { startWeaviate } from "./WeaviateServer.ts"

const usage = "usage: npm run weaviate:sample -- [--port 8080] [--api-key KEY]... [--tls] [--max-results N] [--echo-api-key]"
const args = process.argv.slice(2)
let port = 8080
const apiKeys: Array<string> = []
let tls = false
let maxResults: number | undefined
let echo = false
for (let i = 0; i < args.length; i++) {
  const a = args[i]!
  const next = (): string => {
    const v = args[++i]
    if (v === undefined) {
      console.error(`${a} needs a value\n${usage}`)
      process.exit(2)
    }
    return v
  }
  if (a === "--port") port = Number(next())
  else if (a === "--api-key") apiKeys.push(next())
  else if (a === "--tls") tls = true
  else if (a === "--max-results") maxResults = Number(next())
  else if (a === "--echo-api-key") echo = true
  else if (a === "--help" || a === "-h") {
    console.log(usage)
    process.exit(0)
  } else {
    console.error(`unknown argument ${a}\n${usage}`)
    process.exit(2)
  }
}

const w = await startWeaviate({
  port,
  tls,
  echoApiKeyInErrors: echo,
  ...(apiKeys.length > 0 ? { apiKeys } : {}),
  ...(maxResults !== undefined ? { maxResults } : {})
})
const started = Date.now()
const { objects } = await loadSampleData(w, apiKeys.length > 0 ? { apiKey: apiKeys[0]! } : {})
console.log(`Weaviate-compatible test instance (1.39 behaviour) listening on ${w.url}`)
console.log(`  sample data: ${objects} objects in Author, Article (text2vec-transformers), Product, Ticket (tenants acme, globex), loaded in ${Date.now() - started} ms`)
console.log(`  auth: ${apiKeys.length > 0 ? `API key required (${apiKeys.length} key${apiKeys.length > 1 ? "s" : ""})` : "anonymous"}`)
if (w.caPem !== undefined) {
  const caFile = path.join(os.tmpdir(), `weaviate-mcp-sample-ca-${w.port}.pem`)
  fs.writeFileSync(caFile, w.caPem)
  console.log(`  TLS: certificate for localhost/127.0.0.1, CA written to ${caFile}`)
}
console.log("  press Ctrl-C to stop")
const stop = () => {
  void w.close().then(() => process.exit(0))
}
process.on("SIGINT", stop)
process.on("SIGTERM", stop)
