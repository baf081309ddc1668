// Before the run: build the command line's bundle (the CLI tests run the real binary), and choose the
// Weaviate the end-to-end tests run against (test/weaviate/TestWeaviate.ts), building the real server
// from its Go module the first time. The choice reaches the test workers through the environment.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildCli } from "../scripts/build.mjs"
import { buildWeaviate, goCommand, weaviateBinary, weaviateVersion } from "../scripts/weaviate.mjs"
import { progress } from "./support/Progress.ts"
import type { Target } from "./weaviate/Target.ts"

const loud = (lines: ReadonlyArray<string>) => {
  const bar = "!".repeat(100)
  process.stderr.write(`\n${bar}\n${lines.map((l) => `!! ${l}`).join("\n")}\n${bar}\n\n`)
}

const externalVersion = async (url: string, key: string | undefined): Promise<string> => {
  const r = await fetch(`${url.replace(/\/+$/, "")}/v1/meta`, {
    headers: key === undefined ? {} : { authorization: `Bearer ${key}` },
    signal: AbortSignal.timeout(10_000)
  })
  if (r.status !== 200) throw new Error(`WEAVIATE_TEST_URL ${url}: GET /v1/meta answered ${r.status}`)
  return String(((await r.json()) as { version?: unknown }).version)
}

const chooseTarget = async (): Promise<Target> => {
  const compatible = (why: string): Target => {
    loud([
      `NOT A REAL WEAVIATE: ${why}.`,
      "The end-to-end tests run against the Weaviate-compatible test instance (test/weaviate), which follows",
      "Weaviate 1.39 but is not it. Install Go (1.26+) or set WEAVIATE_TEST_URL to test against the real server."
    ])
    return { kind: "compatible", version: "1.39.0", label: "the Weaviate-compatible test instance (1.39 behaviour), NOT a real Weaviate" }
  }
  if (process.env["WEAVIATE_TEST_SERVER"] === "compatible") return compatible("WEAVIATE_TEST_SERVER=compatible")
  const url = process.env["WEAVIATE_TEST_URL"]
  if (url !== undefined && url !== "") {
    const version = await externalVersion(url, process.env["WEAVIATE_TEST_API_KEY"] || undefined)
    return { kind: "external", version, label: `Weaviate ${version} at WEAVIATE_TEST_URL ${url}` }
  }
  const version = weaviateVersion()
  const binary = weaviateBinary(version)
  if (!fs.existsSync(binary)) {
    if (goCommand() === undefined) return compatible("Go is not installed and WEAVIATE_TEST_URL is not set")
    // Go's output is kept, not printed: one line says what is happening, the rest only if it fails.
    const goOutput: Array<string> = []
    progress(`building the real Weaviate ${version} from its Go module into ${path.dirname(binary)} (first run only; several minutes)`)
    try {
      await buildWeaviate(version, (line) => void goOutput.push(line))
    } catch (e) {
      process.stderr.write(`${goOutput.slice(-40).join("\n")}\n`)
      return compatible(`building Weaviate ${version} failed (${e instanceof Error ? e.message : String(e)})`)
    }
  }
  return { kind: "real", version, label: `Weaviate ${version}, the real server built from its Go module (${binary})` }
}

export default async function setup() {
  progress("building the command line's bundle (bin/weaviate-mcp.js) and choosing the Weaviate under test")
  const [, target] = await Promise.all([buildCli(), chooseTarget()])
  process.env["WEAVIATE_MCP_TEST_TARGET"] = JSON.stringify(target)
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), "weaviate-mcp-run-"))
  process.env["WEAVIATE_MCP_TEST_RUN_DIR"] = runDir
  // No test stores a secret in the keychain of the person running them: the session bus is one nobody
  // listens on, and the keychain tests start a Secret Service of their own (test/support/SecretService.ts).
  process.env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/weaviate-mcp-tests-bus"
  process.stderr.write(`Weaviate under test: ${target.label}\n`)
  return () => fs.rmSync(runDir, { recursive: true, force: true })
}
