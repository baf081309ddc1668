/**
 * Secrets in the OS keychain, on the real binary: the Secret Service (gnome-keyring in a private D-Bus
 * session) stores and gives back a connection's key, used against the real Weaviate 1.39 with API-key
 * auth; without a keychain the 0600 file keeps it and every command says so; files written before
 * keep working and move with `connections migrate-secrets`; `connections export` writes no secret and
 * names those to enter again, which `connections import` repeats.
 */
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as Keychain from "../../src/Base/Keychain.ts"
import * as Cli from "../support/Cli.ts"
import { type SecretService, startSecretService } from "../support/SecretService.ts"
import * as TestHome from "../support/TestHome.ts"
import { type RealWeaviate, startRealWeaviate } from "../weaviate/RealWeaviate.ts"

const KEY = "keychain-test-key-4c8e1f0a"
/** A bus nobody listens on: no keychain answers. */
const NO_KEYCHAIN = { DBUS_SESSION_BUS_ADDRESS: "unix:path=/nonexistent/weaviate-mcp-test-bus" }

let weaviate: RealWeaviate
let secretService: SecretService
let home: string

const cli = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, input?: string) =>
  Cli.run([...args, "--home", home], { env, ...(input !== undefined ? { input } : {}), timeoutMs: 60_000 })
const withKeychain = (args: ReadonlyArray<string>, input?: string) => cli(args, secretService.env, input)
const withoutKeychain = (args: ReadonlyArray<string>, input?: string) => cli(args, NO_KEYCHAIN, input)

const file = () => NodeFs.readFileSync(NodePath.join(home, "connections.json"), "utf8")
const saved = (name: string) => (JSON.parse(file()).connections as Array<Record<string, unknown>>).find((c) => c.name === name)!

beforeAll(async () => {
  ;[weaviate, secretService] = await Promise.all([startRealWeaviate({ apiKeys: [KEY] }), startSecretService()])
  home = TestHome.tempDirSync()
}, 120_000)

afterAll(async () => {
  await weaviate?.stop()
  await secretService?.stop()
})

describe("secrets in the OS keychain", () => {
  it("the Secret Service stores a connection's key: connections.json holds a reference, and add says where it went", async () => {
    const added = await withKeychain(["connections", "add", "--name", "kc", "--host", "127.0.0.1", "--port", String(weaviate.port), "--api-key-stdin"], `${KEY}\n`)
    assert.strictEqual(added.code, 0, added.stderr)
    assert.match(added.stdout, /^Saved connection kc .*; API key in the OS keychain$/m)
    assert.notInclude(file(), KEY)
    assert.deepStrictEqual(saved("kc")["keychain"], ["apiKey"])
    assert.strictEqual(NodeFs.statSync(NodePath.join(home, "connections.json")).mode & 0o777, 0o600)
  })

  it("OIDC secrets go to the keychain too: a client secret and a password", async () => {
    const added = await withKeychain(
      ["connections", "add", "--name", "sso", "--host", "127.0.0.1", "--auth", "oidc-client-credentials", "--oidc-client-id", "service", "--oidc-client-secret-stdin"],
      "oidc-client-secret-9e2b\n"
    )
    assert.strictEqual(added.code, 0, added.stderr)
    assert.match(added.stdout, /; OIDC client secret in the OS keychain$/m)
    const switched = await withKeychain(["connections", "update", "sso", "--auth", "oidc-password", "--oidc-username", "alice", "--oidc-password-stdin"], "oidc-password-41fa\n")
    assert.strictEqual(switched.code, 0, switched.stderr)
    assert.match(switched.stdout, /; OIDC password in the OS keychain$/m)
    assert.notInclude(file(), "oidc-client-secret-9e2b")
    assert.notInclude(file(), "oidc-password-41fa")
    assert.deepStrictEqual(saved("sso")["keychain"], ["oidcClientSecret", "oidcPassword"])
    assert.strictEqual((await withKeychain(["connections", "remove", "sso"])).code, 0)
  })

  it("the key is read back from the keychain and signs in to the real Weaviate", async () => {
    const tested = await withKeychain(["connections", "test", "kc"])
    assert.strictEqual(tested.code, 0, tested.stderr)
    assert.match(tested.stdout, /^OK: kc /)
    const shown = await withKeychain(["connections", "show", "kc"])
    assert.match(shown.stdout, /secrets\s+API key in the OS keychain/)
    assert.notInclude(shown.stdout, KEY)
  })

  it("where the keychain does not have it (another machine), the error says to enter it again, and doctor names it", async () => {
    const tested = await withoutKeychain(["connections", "test", "kc"])
    assert.strictEqual(tested.code, 1)
    assert.include(tested.stderr, "the API key of kc is kept in the OS keychain, which does not have it here; enter it again: weaviate-mcp connections update kc --api-key-stdin")
    const doctor = JSON.parse((await withoutKeychain(["doctor", "--json"])).stdout) as { checks: Array<{ id: string; status: string; detail: string; fix: string }> }
    const secrets = doctor.checks.find((c) => c.id === "secrets")!
    assert.strictEqual(secrets.status, "fail")
    assert.include(secrets.detail, "not in the keychain here: the API key of kc")
    assert.strictEqual(secrets.fix, "weaviate-mcp connections update kc --api-key-stdin")
  })

  it("without a keychain the 0600 file keeps the key, add says so, and doctor too", async () => {
    const added = await withoutKeychain(["connections", "add", "--name", "file", "--host", "127.0.0.1", "--port", String(weaviate.port), "--api-key-stdin"], `${KEY}\n`)
    assert.strictEqual(added.code, 0, added.stderr)
    assert.match(added.stdout, /; API key in connections\.json \(mode 0600\): no OS keychain answers here \(.+\)$/m)
    assert.strictEqual(saved("file")["apiKey"], KEY)
    assert.isUndefined(saved("file")["keychain"])
    assert.strictEqual(NodeFs.statSync(NodePath.join(home, "connections.json")).mode & 0o777, 0o600)
    assert.strictEqual((await withoutKeychain(["connections", "test", "file"])).code, 0)
    const doctor = JSON.parse((await withKeychain(["doctor", "--json"])).stdout) as { checks: Array<{ id: string; status: string; detail: string; fix: string }> }
    const secrets = doctor.checks.find((c) => c.id === "secrets")!
    assert.match(secrets.detail, /^1 secret\(s\) in the OS keychain, 1 in connections\.json \(mode 0600\); an OS keychain answers here: the secrets in the file can move there$/)
    assert.strictEqual(secrets.fix, "weaviate-mcp connections migrate-secrets")
  })

  it("a file written before keeps working unmigrated, and connections migrate-secrets moves its keys", async () => {
    // Where no keychain answers, nothing moves and the command says why.
    const refused = await withoutKeychain(["connections", "migrate-secrets"])
    assert.strictEqual(refused.code, 2)
    assert.include(refused.stderr, "No OS keychain answers here")
    assert.include(file(), KEY)
    const migrated = await withKeychain(["connections", "migrate-secrets"])
    assert.strictEqual(migrated.code, 0, migrated.stderr)
    assert.strictEqual(migrated.stdout.trim(), "Moved to the OS keychain: the API key of file")
    assert.notInclude(file(), KEY)
    assert.deepStrictEqual(saved("file")["keychain"], ["apiKey"])
    assert.strictEqual((await withKeychain(["connections", "test", "file"])).code, 0)
    assert.strictEqual((await withKeychain(["connections", "migrate-secrets"])).stdout.trim(), "No secret is kept in connections.json: nothing to move")
  })

  it("connections export writes no secret and names those to enter again; import says it too", async () => {
    const exported = await withKeychain(["connections", "export"])
    assert.strictEqual(exported.code, 0, exported.stderr)
    assert.notInclude(exported.stdout, KEY)
    const body = JSON.parse(exported.stdout) as { version: number; connections: Array<Record<string, unknown>> }
    assert.deepStrictEqual(body.connections.map((c) => [c.name, c.secretsToEnter]), [["kc", ["apiKey"]], ["file", ["apiKey"]]])
    assert.isTrue(body.connections.every((c) => c.apiKey === undefined && c.keychain === undefined && c.id === undefined))
    assert.include(exported.stderr, "enter again: the API key of kc (--api-key-stdin), the API key of file (--api-key-stdin)")
    // Another machine: a new home, no keychain.
    const other = TestHome.tempDirSync()
    const exportFile = NodePath.join(other, "export.json")
    NodeFs.writeFileSync(exportFile, exported.stdout)
    const imported = await Cli.run(["connections", "import", exportFile, "--home", other], { env: NO_KEYCHAIN })
    assert.strictEqual(imported.code, 0, imported.stderr)
    assert.include(imported.stdout, "Imported 2 connection(s): kc, file")
    assert.include(imported.stdout, "enter the API key of kc: weaviate-mcp connections update kc --api-key-stdin")
    const entered = await Cli.run(["connections", "update", "kc", "--api-key-stdin", "--home", other], { env: NO_KEYCHAIN, input: `${KEY}\n` })
    assert.strictEqual(entered.code, 0, entered.stderr)
    assert.strictEqual((await Cli.run(["connections", "test", "kc", "--home", other], { env: NO_KEYCHAIN })).code, 0)
  })

  it("removing a connection removes its secret from the keychain", async () => {
    // This process reads the same Secret Service as the commands.
    process.env["DBUS_SESSION_BUS_ADDRESS"] = secretService.env.DBUS_SESSION_BUS_ADDRESS
    const keychain = Keychain.make({})
    const id = JSON.parse((await withKeychain(["connections", "show", "kc", "--json"])).stdout).id as string
    assert.strictEqual(await Effect.runPromise(keychain.get(Keychain.accountOf(id, "apiKey"))), KEY)
    assert.strictEqual((await withKeychain(["connections", "remove", "kc"])).code, 0)
    assert.isUndefined(await Effect.runPromise(keychain.get(Keychain.accountOf(id, "apiKey"))))
  })
})
