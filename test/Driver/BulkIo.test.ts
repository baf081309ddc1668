/**
 * The library side of export and import: `Driver.readAll` into `Driver.writeAll` copies a collection
 * (the embedding example of docs/export-import.md), and `BatchImport`'s row checks and ids.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as BatchImport from "../../src/Driver/BatchImport.ts"
import { decodeCollection } from "../../src/Driver/CollectionSchema.ts"
import { ConnectionStore } from "../../src/Driver/ConnectionStore.ts"
import { Driver } from "../../src/Driver/Driver.ts"
import * as RowFormat from "../../src/Driver/RowFormat.ts"
import { startTestWeaviate } from "../weaviate/TestWeaviate.ts"
import type { WeaviateTestInstance } from "../weaviate/WeaviateServer.ts"
import { type DriverRuntime, loadArticles, makeRuntime, tempHome } from "./support.ts"

describe("BatchImport ids and checks (no server)", () => {
  it("uuid5 is RFC 9562's (the DNS namespace, as Python's uuid.uuid5 and generate_uuid5)", () => {
    assert.strictEqual(BatchImport.uuid5("python.org"), "886313e1-3b8a-5372-9b90-0c9aee199e5d")
    assert.strictEqual(BatchImport.idOf("00000000-0000-4000-8000-00000000000A"), "00000000-0000-4000-8000-00000000000a")
    assert.strictEqual(BatchImport.idOf(42), BatchImport.uuid5("42"))
  })

  const collection = decodeCollection({
    class: "Thing",
    properties: [
      { name: "title", dataType: ["text"] },
      { name: "n", dataType: ["int"] },
      { name: "tags", dataType: ["text[]"] },
      { name: "at", dataType: ["geoCoordinates"] }
    ]
  })!

  it("CSV cells are read as the schema says; JSON values are checked as they are", () => {
    const prepare = BatchImport.preparer(collection, { idField: "title" })
    const csv = prepare({ _tag: "Parsed", line: 2, text: true, values: { title: "a", n: "7", tags: "[\"x\"]", at: "{\"latitude\":1,\"longitude\":2}" } })
    assert.deepStrictEqual(csv, {
      _tag: "Prepared",
      line: 2,
      object: { class: "Thing", id: BatchImport.uuid5("a"), properties: { title: "a", n: 7, tags: ["x"], at: { latitude: 1, longitude: 2 } } }
    })
    const wrong = prepare({ _tag: "Parsed", line: 3, text: false, values: { title: "b", tags: ["x", 2] } })
    assert.deepStrictEqual(wrong, { _tag: "Rejected", line: 3, uuid: BatchImport.uuid5("b"), reason: "column \"tags\": item 2: expected text, got 2" })
  })

  it("the first vector fixes the length; a later one of another length is rejected", () => {
    const prepare = BatchImport.preparer(collection)
    assert.strictEqual(prepare({ _tag: "Parsed", line: 1, text: false, values: { vector: [1, 2] } })._tag, "Prepared")
    const r = prepare({ _tag: "Parsed", line: 2, text: false, values: { vector: [1, 2, 3] } })
    assert.deepStrictEqual(r._tag === "Rejected" ? r.reason : r, "column \"vector\": the vector has 3 dimensions, the collection's have 2")
  })
})

describe("RowFormat.read line numbers (no server)", () => {
  it.effect("a CSV record is numbered by its first line: quoted line breaks, empty lines, LF and CRLF alike", () =>
    Effect.gen(function*() {
      const dir = tempHome()
      const text = "uuid,title\n\n,a\n,\"b\nc\"\n\n,d,x\n,e\n"
      for (const [name, content] of [["lf.csv", text], ["crlf.csv", text.replace(/\n/g, "\r\n")]] as const) {
        NodeFs.writeFileSync(NodePath.join(dir, name), content)
        const items = yield* Stream.runCollect(RowFormat.read(NodePath.join(dir, name), "csv"))
        assert.deepStrictEqual(Chunk.toReadonlyArray(items).map((i) => [i._tag, i.line]), [["Parsed", 3], ["Parsed", 4], ["BadLine", 7], ["Parsed", 8]])
      }
      NodeFs.writeFileSync(NodePath.join(dir, "rows.jsonl"), "{\"a\":1}\n\n{oops\n[1]\n{\"a\":2}\n")
      const lines = yield* Stream.runCollect(RowFormat.read(NodePath.join(dir, "rows.jsonl"), "jsonl"))
      assert.deepStrictEqual(Chunk.toReadonlyArray(lines).map((i) => [i._tag, i.line]), [["Parsed", 1], ["BadLine", 3], ["BadLine", 4], ["Parsed", 5]])
    }))

  it.effect("JSONL is read a block at a time: LF, CRLF and CR lines, a BOM, lines longer than a read, UTF-8 across reads", () =>
    Effect.gen(function*() {
      const dir = tempHome()
      // A line of 200,000 characters spans several 64 KiB reads; "é" (2 bytes) falls across them.
      const long = JSON.stringify({ a: 3, text: "é".repeat(100_000) })
      const body = ["{\"a\":1}", "", "{\"a\":2}", long, "{oops", "{\"a\":4}"]
      for (const [name, content] of [
        ["lf.jsonl", `\ufeff${body.join("\n")}\n`],
        ["crlf.jsonl", body.join("\r\n")],
        ["cr.jsonl", `${body.join("\r")}\r`]
      ] as const) {
        const path = NodePath.join(dir, name)
        NodeFs.writeFileSync(path, content)
        const items = Chunk.toReadonlyArray(yield* Stream.runCollect(RowFormat.read(path, "jsonl")))
        assert.deepStrictEqual(items.map((i) => [i._tag, i.line]), [["Parsed", 1], ["Parsed", 3], ["Parsed", 4], ["BadLine", 5], ["Parsed", 6]], name)
        const parsed = items.filter((i): i is RowFormat.Parsed => i._tag === "Parsed")
        assert.strictEqual((parsed[2]!.values.text as string).length, 100_000)
        assert.deepStrictEqual(parsed.map((i) => i.values.a), [1, 2, 3, 4])
        // Offsets (progress) only grow, and the last one is the file's size.
        const offsets = parsed.map((i) => i.offset!)
        assert.deepStrictEqual([...offsets].sort((x, y) => x - y), offsets)
        assert.strictEqual(offsets.at(-1), NodeFs.statSync(path).size)
      }
    }))
})

let w: WeaviateTestInstance
let runtime: DriverRuntime
beforeAll(async () => {
  w = await startTestWeaviate()
  await loadArticles(w)
  runtime = makeRuntime(tempHome())
  await runtime.runPromise(Effect.flatMap(ConnectionStore, (s) => s.add({ name: "local", host: "127.0.0.1", port: w.port })))
}, 60_000)
afterAll(async () => {
  await runtime?.dispose()
  await w?.close()
})

describe("Driver.readAll into Driver.writeAll", () => {
  it("copies every row, property and vector of a collection into another", async () => {
    const schema = await (await fetch(`${w.url}/v1/schema/Article`)).json() as Record<string, unknown>
    const created = await fetch(`${w.url}/v1/schema`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ class: "ArticleCopy", vectorizer: "none", properties: schema.properties })
    })
    assert.strictEqual(created.status, 200)
    const copy = Effect.gen(function*() {
      const driver = yield* Driver
      const results = yield* driver.writeAll("local", "ArticleCopy", driver.readAll("local", "Article", { pageSize: 2 }), { batchSize: 3 })
        .pipe(Stream.runCollect)
      const original = yield* Stream.runCollect(driver.readAll("local", "Article"))
      const copied = yield* Stream.runCollect(driver.readAll("local", "ArticleCopy"))
      return { results: Chunk.toReadonlyArray(results), original: Chunk.toReadonlyArray(original), copied: Chunk.toReadonlyArray(copied) }
    })
    const { copied, original, results } = await runtime.runPromise(copy)
    assert.deepStrictEqual(results.map((r) => [r.written, r.rejected.length]), [[3, 0], [1, 0]])
    const byUuid = (rows: ReadonlyArray<Record<string, unknown>>) => [...rows].sort((a, b) => String(a.uuid).localeCompare(String(b.uuid)))
    assert.strictEqual(copied.length, 4)
    assert.deepStrictEqual(byUuid(copied), byUuid(original))
  })
})

describe("BatchImport reads only the errors of a batch's answer", () => {
  it("an answer without \"errors\" wrote every row; a property named errors and a refused row are still read right", async () => {
    const created = await fetch(`${w.url}/v1/schema`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ class: "Errs", vectorizer: "none", properties: [{ name: "errors", dataType: ["text"] }, { name: "when", dataType: ["date"] }] })
    })
    assert.strictEqual(created.status, 200)
    const write = (rows: ReadonlyArray<Record<string, unknown>>) =>
      runtime.runPromise(Effect.flatMap(Driver, (driver) => Stream.runCollect(driver.writeAll("local", "Errs", Stream.fromIterable(rows)))))
    const clean = Chunk.toReadonlyArray(await write([{ errors: "{\"errors\":{\"error\":[{\"message\":\"no\"}]}}" }, { when: "2024-01-01T00:00:00Z" }]))
    assert.deepStrictEqual(clean.map((r) => [r.written, r.rejected]), [[2, []]])
    const mixed = Chunk.toReadonlyArray(await write([{ errors: "none" }, { when: "2024-01-01" }, { errors: "x" }]))
    assert.deepStrictEqual(mixed.map((r) => [r.written, r.rejected.map((x) => [x.line, x.reason])]), [[2, [[
      2,
      "invalid date property 'when' on class 'Errs': requires a string with a RFC3339 formatted date, but the given value is '2024-01-01'"
    ]]]])
    const count = await (await fetch(`${w.url}/v1/objects?class=Errs&limit=100`)).json() as { objects: Array<unknown> }
    assert.strictEqual(count.objects.length, 4)
  })
})
