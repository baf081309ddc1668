/**
 * WeaviateHttp reads a body as TextDecoder does (UTF-8, a leading BOM dropped, bad bytes as U+FFFD),
 * whether the request is `raw` (the rows an export writes as stored) or parsed. A loopback server
 * answers with the exact bytes each case needs.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { Driver } from "../../src/Driver/Driver.ts"
import { type DriverRuntime, makeRuntime, tempHome } from "./support.ts"

const bodies: Record<string, Buffer> = {
  // A page of rows as JSON, ASCII only and over 1 MB.
  "/ascii": Buffer.from(JSON.stringify({ objects: Array.from({ length: 3000 }, (_, i) => ({ id: i, vector: [0.125, -2.5e-7, i / 3] })) })),
  "/utf8": Buffer.from(JSON.stringify({ title: "café, 漢字, 🎉", text: "a".repeat(2_000_000) })),
  "/bom": Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("{\"a\":\"ü\"}")]),
  "/bad": Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])
}

let server: http.Server
let runtime: DriverRuntime
let id = ""
beforeAll(async () => {
  server = http.createServer((req, res) => {
    const body = bodies[req.url ?? ""] ?? Buffer.from("{}")
    res.writeHead(200, { "content-type": "application/json", "content-length": body.length })
    res.end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  runtime = makeRuntime(tempHome())
  const port = (server.address() as AddressInfo).port
  id = (await runtime.runPromise(Effect.flatMap(ConnectionStore, (s) => s.add({ name: "bytes", host: "127.0.0.1", port })))).id
})
afterAll(async () => {
  await runtime?.dispose()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

const read = (path: string, raw: boolean) =>
  runtime.runPromise(Effect.flatMap(Driver, (driver) => Effect.flatMap(driver.http(id), (h) => h.request({ method: "GET", path, raw }))))

describe("WeaviateHttp body text", () => {
  it("every body reads as TextDecoder reads it (what undici's body.text() gives): ASCII, UTF-8, a BOM, bad bytes; raw or parsed", async () => {
    for (const [path, bytes] of Object.entries(bodies)) {
      const expected = new TextDecoder().decode(bytes)
      for (const raw of [true, false]) {
        const response = await read(path, raw)
        assert.strictEqual(response.text.length, expected.length, `${path} raw=${raw}`)
        assert.isTrue(response.text === expected, `${path} raw=${raw}`)
        if (!raw && path !== "/bad") assert.deepStrictEqual(response.json, JSON.parse(expected))
      }
    }
    assert.strictEqual((await read("/bom", false)).text, "{\"a\":\"ü\"}")
    assert.strictEqual((await read("/bad", true)).text, "{\"a\":\"\ufffd\ufffd\"}")
  })
})
