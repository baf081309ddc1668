/**
 * The command line as a shell user expects it (issue 13), run through the built binary: invalid
 * settings are usage errors that name the field, `--json` failures are JSON on stdout, help without a
 * terminal is plain and narrow, `--version` is one line, `--url` is a shorthand, and a TLS handshake
 * against a plain-HTTP port says so with the fix.
 */
import * as NodeHttp from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { VERSION } from "../../src/Base/Version.ts"
import * as Cli from "../support/Cli.ts"
import * as TestHome from "../support/TestHome.ts"

const lines = (text: string) => text.trim().split("\n").filter((l) => l.trim().length > 0)
const ESC = "\u001b"

describe("invalid settings are usage errors: exit 2, one plain line naming the field", () => {
  it.each([
    [["connections", "add", "--name", "a", "--host", "localhost:8080"], "--host", "use --host localhost --port 8080"],
    [["connections", "add", "--name", "a", "--host", "localhost", "--port", "99999"], "--port", "between 1 and 65535"],
    [["connections", "add", "--name", "a", "--host", "http://localhost:8080"], "--host", "use --url http://localhost:8080"],
    [["connections", "add", "--name", "a", "--url", "ftp://host"], "--url", "http:// or https://"],
    [["connections", "add", "--name", "a", "--url", "https://host:443/v1"], "--url", "no path"],
    [["serve", "--port", "99999"], "--port", "between 0 and 65535"],
    [["serve", "--port", "0", "--health-timeout", "-1"], "--health-timeout", "0 or more"],
    [["serve", "--port", "0", "--schema-timeout", "-5"], "--schema-timeout", "0 or more"],
    [["serve", "--port", "0", "--schema-cache-ms", "-1"], "--schema-cache-ms", "0 or more"]
  ])("%j", async (args, field, fix) => {
    const r = await Cli.run([...args, "--home", TestHome.tempDirSync()])
    expect(r.code, r.stderr).toBe(2)
    expect(lines(r.stderr)).toHaveLength(1)
    expect(lines(r.stderr)[0]).toMatch(new RegExp(`^${field.replace(/-/g, "\\-")} `))
    expect(r.stderr).toContain(fix)
    expect(r.stderr).not.toMatch(/Struct|Encoded side|internal error/)
  })

  it("connections update with an invalid --port is a usage error too, and the saved connection is unchanged", async () => {
    const home = TestHome.tempDirSync()
    expect((await Cli.run(["connections", "add", "--home", home, "--name", "a", "--host", "localhost"])).code).toBe(0)
    const r = await Cli.run(["connections", "update", "a", "--home", home, "--port", "0"])
    expect(r.code).toBe(2)
    expect(lines(r.stderr)).toEqual(["--port must be a port number between 1 and 65535, got 0"])
    const shown = JSON.parse((await Cli.run(["connections", "show", "a", "--home", home, "--json"])).stdout)
    expect(shown.port).toBe(8080)
  })
})

describe("connections add --url", () => {
  it("https://host:443 is a shorthand for --host host --port 443 with SSL Mode Required", async () => {
    const home = TestHome.tempDirSync()
    const r = await Cli.run(["connections", "add", "--home", home, "--name", "cloud", "--url", "https://example.weaviate.cloud:443", "--json"])
    expect(r.code, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ host: "example.weaviate.cloud", port: 443, sslMode: "required", url: "https://example.weaviate.cloud:443" })
  })

  it("http://localhost:8080 is plain HTTP; --url with --host is refused", async () => {
    const home = TestHome.tempDirSync()
    const r = await Cli.run(["connections", "add", "--home", home, "--name", "local", "--url", "http://localhost:8080", "--json"])
    expect(JSON.parse(r.stdout)).toMatchObject({ host: "localhost", port: 8080, sslMode: "disabled" })
    const both = await Cli.run(["connections", "add", "--home", home, "--name", "x", "--url", "http://a:1", "--host", "b"])
    expect(both.code).toBe(2)
    expect(lines(both.stderr)).toEqual(["Give --url or --host/--port, not both"])
  })
})

describe("--json failures print a JSON error object on stdout", () => {
  it.each([
    [["connections", "show", "nope", "--json"], "ConnectionNotFound", 1],
    [["connections", "test", "nope", "--json"], "ConnectionNotFound", 1],
    [["connections", "remove", "nope", "--json"], "ConnectionNotFound", 1],
    [["connections", "add", "--name", "a", "--host", "a:1", "--json"], "usage_error", 2],
    [["connections", "list", "--bogus", "--json"], "usage_error", 2],
    [["tokens", "create", "--name", "t", "--access", "readOnly", "--scopes", "nope", "--json"], "usage_error", 2],
    [["tokens", "list", "--json", "--bogus"], "usage_error", 2],
    [["browse", "nope", "Table", "--json"], "ConnectionNotFound", 1]
  ])("%j", async (args, code, exitCode) => {
    const r = await Cli.run([...args, "--home", TestHome.tempDirSync()])
    expect(r.code, r.stderr).toBe(exitCode)
    const printed = JSON.parse(r.stdout)
    expect(printed.error.code).toBe(code)
    expect(printed.error.exitCode).toBe(exitCode)
    expect(typeof printed.error.message).toBe("string")
    expect(printed.error.message.length).toBeGreaterThan(0)
  })
})

describe("--help and --version", () => {
  it.each([[["--help"]], [["serve", "--help"]], [["tokens", "create", "--help"]], [["browse", "--help"]], [["connections", "add", "--help"]], [[]], [["tokens"]]])(
    "%j without a terminal: help with no ANSI codes, every line within 80 columns",
    async (args) => {
      const r = await Cli.run(args)
      expect(r.code).toBe(0)
      expect(r.stdout).toContain("USAGE")
      expect(r.stdout).not.toContain(ESC)
      const widest = Math.max(...r.stdout.split("\n").map((l) => l.length))
      expect(widest).toBeLessThanOrEqual(80)
    }
  )

  it("optional repeatable flags are shown in brackets, not as required", async () => {
    const serve = (await Cli.run(["serve", "--help"])).stdout
    expect(serve).toContain("[--allowed-origin text...]")
    const browse = (await Cli.run(["browse", "--help"])).stdout
    expect(browse).toContain("[--filter text...]")
    expect(browse).toContain("[--sort text...]")
  })

  it("--version prints exactly one line", async () => {
    const r = await Cli.run(["--version"])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(`${VERSION}\n`)
  })

  it("--help of an unknown subcommand is a usage error: one line naming it, exit 2 (not the root help with exit 0)", async () => {
    const r = await Cli.run(["frobnicate", "--help"])
    expect(r.code).toBe(2)
    expect(r.stderr.trim()).toBe("unknown command: frobnicate (see weaviate-mcp --help)")
    expect(r.stdout).not.toContain("COMMANDS")
    const json = await Cli.run(["frobnicate", "--json"])
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: "usage_error", exitCode: 2 } })
  })

  it("--help of a known subcommand still prints its help with exit 0", async () => {
    const r = await Cli.run(["serve", "--help"])
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("--port")
  })
})

describe("TLS against a plain-HTTP port", () => {
  let server: NodeHttp.Server
  let port = 0
  beforeAll(async () => {
    server = NodeHttp.createServer((_req, res) => res.end("{}"))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    port = (server.address() as { port: number }).port
  })
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

  it("says the port speaks plain HTTP, with the fix --ssl-mode disabled, on one line", async () => {
    const home = TestHome.tempDirSync()
    await Cli.run(["connections", "add", "--home", home, "--name", "tls", "--host", "127.0.0.1", "--port", String(port), "--ssl-mode", "required"])
    const r = await Cli.run(["connections", "test", "tls", "--home", home])
    expect(r.code).toBe(1)
    expect(lines(r.stderr)).toHaveLength(1)
    expect(r.stderr).toContain("plain HTTP")
    expect(r.stderr).toContain("--ssl-mode disabled")
  })
})
