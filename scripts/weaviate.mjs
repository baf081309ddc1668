// The real Weaviate server for the tests, built from its Go module (`go install`, as its Dockerfile
// does: cgo on, `-trimpath -ldflags "-s -w"`) into a per-user cache and reused. The version is pinned
// here and nowhere else; `WEAVIATE_VERSION` overrides it. Go's module and build caches are Go's own
// (GOMODCACHE, GOCACHE), so a rebuild after a version change only compiles what changed.
//
//   node scripts/weaviate.mjs build     builds it when missing (progress on stderr), prints the path
//   node scripts/weaviate.mjs path      prints where the binary is or would be
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const PINNED_WEAVIATE_VERSION = "1.39.0"

export const weaviateVersion = () => {
  const v = (process.env["WEAVIATE_VERSION"] ?? PINNED_WEAVIATE_VERSION).trim().replace(/^v/, "")
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(v)) throw new Error(`WEAVIATE_VERSION must look like 1.39.0, got ${JSON.stringify(v)}`)
  return v
}

const cacheRoot = () => {
  const xdg = process.env["XDG_CACHE_HOME"]
  return path.join(xdg !== undefined && xdg !== "" ? xdg : path.join(os.homedir(), ".cache"), "weaviate-mcp")
}

/** Where the binary of `version` lives: `~/.cache/weaviate-mcp/weaviate-<version>/weaviate-server`. */
export const weaviateBinary = (version = weaviateVersion()) =>
  path.join(cacheRoot(), `weaviate-${version}`, "weaviate-server")

/** The `go` command, or undefined when Go is not installed. */
export const goCommand = () => {
  const r = spawnSync("go", ["version"], { encoding: "utf8" })
  return r.status === 0 ? r.stdout.trim() : undefined
}

/**
 * Builds the server of `version` unless it is cached. Go's output (every module it downloads, every
 * package it compiles with -v) goes to `log` line by line, so a first build that takes minutes shows
 * what it is doing. Resolves to the binary's path.
 */
export const buildWeaviate = async (version = weaviateVersion(), log = (line) => process.stderr.write(`${line}\n`)) => {
  const binary = weaviateBinary(version)
  if (fs.existsSync(binary)) return binary
  if (goCommand() === undefined) throw new Error("Go is not installed: the real Weaviate server cannot be built")
  const dir = path.dirname(binary)
  // Build into a temporary GOBIN and rename: an interrupted build never leaves a half binary behind.
  const staging = `${dir}.partial-${process.pid}`
  fs.mkdirSync(staging, { recursive: true })
  const started = Date.now()
  log(`building Weaviate ${version} from github.com/weaviate/weaviate (first time only; this takes minutes) ...`)
  const args = ["install", "-v", "-trimpath", "-ldflags", "-s -w", `github.com/weaviate/weaviate/cmd/weaviate-server@v${version}`]
  const code = await new Promise((resolve, reject) => {
    const child = spawn("go", args, {
      env: { ...process.env, CGO_ENABLED: "1", GOBIN: staging },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let count = 0
    let pending = ""
    const onData = (chunk) => {
      pending += chunk.toString("utf8")
      const lines = pending.split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) {
        if (line.trim() === "") continue
        count++
        // Downloads and errors verbatim, compiled packages as a running count.
        if (!line.startsWith("go: downloading") && !/error|cannot|undefined|\.go:\d+/.test(line)) {
          if (count % 100 === 0) log(`  ... ${count} steps, ${Math.round((Date.now() - started) / 1000)} s`)
          continue
        }
        log(`  ${line}`)
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.on("error", reject)
    child.on("close", (c) => resolve(c))
  })
  if (code !== 0) {
    fs.rmSync(staging, { recursive: true, force: true })
    throw new Error(`go install of Weaviate ${version} failed (exit ${code})`)
  }
  fs.mkdirSync(dir, { recursive: true })
  fs.renameSync(path.join(staging, "weaviate-server"), binary)
  fs.rmSync(staging, { recursive: true, force: true })
  log(`built Weaviate ${version} in ${Math.round((Date.now() - started) / 1000)} s: ${binary}`)
  return binary
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const command = process.argv[2]
  if (command === "path") console.log(weaviateBinary())
  else if (command === "build") console.log(await buildWeaviate())
  else {
    console.error("usage: node scripts/weaviate.mjs build|path")
    process.exit(2)
  }
}
