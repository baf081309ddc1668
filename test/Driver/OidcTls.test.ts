/**
 * The connection's TLS settings apply to the identity provider too: a provider on https with a
 * certificate from a private CA, trusted by the real Weaviate (AUTHENTICATION_OIDC_CERTIFICATE).
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { Driver } from "../../src/Driver/Driver.ts"
import { type OidcProvider, SERVICE_CLIENT_ID, SERVICE_SECRET, startOidcProvider } from "../weaviate/OidcProvider.ts"
import { type RealWeaviate, startRealWeaviate } from "../weaviate/RealWeaviate.ts"
import { generateTls } from "../weaviate/Tls.ts"
import { type DriverRuntime, failureOf, makeRuntime, tempHome } from "./support.ts"

let provider: OidcProvider
let weaviate: RealWeaviate
let runtime: DriverRuntime
let caFile: string

beforeAll(async () => {
  const tls = generateTls()
  provider = await startOidcProvider({ tls })
  weaviate = await startRealWeaviate({ anonymousAccess: false, env: provider.weaviateEnv })
  const home = tempHome()
  caFile = NodePath.join(home, "idp-ca.pem")
  NodeFs.writeFileSync(caFile, tls.caPem)
  runtime = makeRuntime(home)
}, 120_000)

afterAll(async () => {
  await runtime?.dispose()
  await weaviate?.stop()
  await provider?.stop()
})

const health = (settings: Record<string, unknown>) =>
  Effect.flatMap(ConnectionStore, (s) =>
    Effect.flatMap(
      s.add({
        name: `c${Math.random()}`,
        host: "127.0.0.1",
        port: weaviate.port,
        authMethod: "oidcClientCredentials",
        oidcClientId: SERVICE_CLIENT_ID,
        oidcClientSecret: SERVICE_SECRET,
        ...settings
      } as never),
      (c) => Effect.flatMap(Driver, (d) => d.health(c.id))
    ))

describe("the identity provider over https", () => {
  it("a provider certificate from a private CA is refused without the CA, with advice", async () => {
    const error = await failureOf(runtime, health({}))
    assert.match(error.message, /^Connection failed: the identity provider https:\/\/127\.0\.0\.1:\d+ cannot be reached \(.*(self-signed|certificate).*\); give its CA with --ca \(Verify CA\) or turn on Skip TLS Verification/)
  })
  it("the connection's CA file makes the provider trusted", async () => {
    assert.strictEqual((await runtime.runPromise(health({ caFile }))).version, weaviate.version)
  })
  it("Skip TLS Verification trusts the provider's certificate", async () => {
    assert.strictEqual((await runtime.runPromise(health({ skipTlsVerify: true }))).version, weaviate.version)
  })
})
