/**
 * Writing many rows at once, the way the official batchers do: rows are checked against the
 * collection's schema, grouped into batches and sent to `POST /v1/batch/objects`, a bounded number of
 * batches in flight. A batch answered 429 or 503 (or lost on the way) is sent again after a growing
 * pause; every object carries an id, so sending a batch twice writes each row once.
 *
 * Ids: a `uuid` value, or the value of the id field (`idField`): a UUID is used as it is, any other
 * value becomes the UUID v5 of its text (in the DNS namespace, as the Python client's
 * `generate_uuid5`), so a re-run upserts the same objects instead of adding new ones. A row without
 * either gets a random id.
 *
 * Each rejected row is reported with its line (or position) and the reason: a value of the wrong
 * type for its column, an unknown column, a vector whose length differs from the collection's, or
 * Weaviate's own message for that object. The other rows continue.
 *
 * @since 0.1.0
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as NodeCrypto from "node:crypto"
import type { Collection, Property } from "./CollectionSchema.ts"
import { DatabaseRefused, type RequestError } from "./DriverError.ts"
import type * as RowFormat from "./RowFormat.ts"
import type { WeaviateHttp } from "./WeaviateHttp.ts"

// ===== Models =====

/** An object as `POST /v1/batch/objects` takes it. @category models */
export interface BatchObject {
  readonly class: string
  readonly id: string
  readonly properties: Readonly<Record<string, unknown>>
  readonly vector?: ReadonlyArray<number>
  readonly vectors?: Readonly<Record<string, ReadonlyArray<number>>>
  readonly tenant?: string
}

/** A row ready to send. @category models */
export interface Prepared {
  readonly _tag: "Prepared"
  readonly line: number
  readonly object: BatchObject
}

/** A row that was not written, and why. @category models */
export interface Rejected {
  readonly _tag: "Rejected"
  readonly line: number
  readonly uuid?: string
  readonly reason: string
  /** Nothing after this row can be read (a CSV that cannot be parsed further). */
  readonly fatal?: boolean
}

/** What one batch did. @category models */
export interface BatchResult {
  /** Rows written (or, in a dry run, valid). */
  readonly written: number
  readonly rejected: ReadonlyArray<Rejected>
}

/** @category models */
export interface PrepareOptions {
  /** The column whose value is each row's id (see the module's description). */
  readonly idField?: string | undefined
  readonly tenant?: string | undefined
  /** Vector lengths already in the collection, by vector name (`""` for the single vector). */
  readonly vectorLengths?: ReadonlyMap<string, number>
}

/** @category models */
export interface WriteOptions extends PrepareOptions {
  /** Rows per batch (default 100). */
  readonly batchSize?: number
  /** Batches in flight (default 4). */
  readonly concurrency?: number
  /** Weaviate's `consistency_level` (`ONE`, `QUORUM`, `ALL`), passed as it is. */
  readonly consistencyLevel?: string | undefined
  /** Check every row and send nothing. */
  readonly dryRun?: boolean
  /** Sends of one batch after a 429, a 503 or a lost connection (default 8), the first pause (default 200 ms, doubled each time, at most 10 s). */
  readonly retry?: { readonly times?: number; readonly baseMs?: number }
}

// ===== Ids =====

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const DNS_NAMESPACE = Buffer.from("6ba7b8109dad11d180b400c04fd430c8", "hex")

/**
 * The UUID v5 (RFC 9562) of a text in the DNS namespace.
 *
 * @category ids
 */
export const uuid5 = (text: string): string => {
  const hash = NodeCrypto.createHash("sha1").update(DNS_NAMESPACE).update(text, "utf8").digest()
  hash[6] = (hash[6]! & 0x0f) | 0x50
  hash[8] = (hash[8]! & 0x3f) | 0x80
  const hex = hash.subarray(0, 16).toString("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** The id a value names: itself when it is a UUID, else its UUID v5. @category ids */
export const idOf = (value: unknown): string => {
  const text = typeof value === "string" ? value : JSON.stringify(value)
  return UUID.test(text) ? text.toLowerCase() : uuid5(text)
}

// ===== Values =====

type Checked = { readonly ok: unknown } | { readonly error: string }

const shown = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 60 ? `${text.slice(0, 59)}…` : text
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const expected: Record<Property["baseType"], string> = {
  text: "text",
  int: "an integer",
  number: "a number",
  boolean: "true or false",
  date: "an RFC 3339 date",
  uuid: "a UUID",
  geoCoordinates: "an object {latitude, longitude}",
  phoneNumber: "an object {input}",
  blob: "base64 text",
  object: "an object",
  reference: "a list of references [{beacon}]"
}

/** One scalar value of a property's base type. */
const checkScalar = (p: Property, value: unknown): Checked => {
  const wrong = { error: `expected ${expected[p.baseType]}, got ${shown(value)}` }
  switch (p.baseType) {
    case "text":
    case "blob":
      return typeof value === "string" ? { ok: value } : wrong
    case "uuid":
      return typeof value === "string" && UUID.test(value) ? { ok: value } : wrong
    case "date":
      return typeof value === "string" && !Number.isNaN(Date.parse(value)) ? { ok: value } : wrong
    case "int":
      return typeof value === "number" && Number.isSafeInteger(value) ? { ok: value } : wrong
    case "number":
      return typeof value === "number" && Number.isFinite(value) ? { ok: value } : wrong
    case "boolean":
      return typeof value === "boolean" ? { ok: value } : wrong
    case "geoCoordinates":
      return isRecord(value) && typeof value.latitude === "number" && typeof value.longitude === "number"
        ? { ok: { latitude: value.latitude, longitude: value.longitude } }
        : wrong
    case "phoneNumber":
      // Only what a write takes: the other fields are what Weaviate derived from these.
      return isRecord(value) && typeof value.input === "string"
        ? { ok: { input: value.input, ...(typeof value.defaultCountry === "string" ? { defaultCountry: value.defaultCountry } : {}) } }
        : wrong
    case "object":
      return isRecord(value) ? { ok: value } : wrong
    case "reference":
      return isRecord(value) && typeof value.beacon === "string" ? { ok: { beacon: value.beacon } } : wrong
  }
}

/** A CSV cell as the value its column's type reads it as (text stays text). */
const fromCell = (p: Property, cell: string): Checked => {
  if (!p.isArray && (p.baseType === "text" || p.baseType === "uuid" || p.baseType === "date" || p.baseType === "blob")) {
    return { ok: cell }
  }
  if (!p.isArray && p.baseType === "int") return /^[-+]?\d+$/.test(cell.trim()) ? { ok: Number(cell) } : { error: `expected an integer, got ${shown(cell)}` }
  if (!p.isArray && p.baseType === "number") {
    const n = Number(cell)
    return cell.trim() !== "" && Number.isFinite(n) ? { ok: n } : { error: `expected a number, got ${shown(cell)}` }
  }
  if (!p.isArray && p.baseType === "boolean") {
    return cell === "true" ? { ok: true } : cell === "false" ? { ok: false } : { error: `expected true or false, got ${shown(cell)}` }
  }
  try {
    return { ok: JSON.parse(cell) }
  } catch {
    return { error: `expected JSON (${p.isArray ? "an array" : expected[p.baseType]}), got ${shown(cell)}` }
  }
}

/** A property's value, checked (and reduced to what a write takes). */
const checkValue = (p: Property, value: unknown): Checked => {
  if (!p.isArray) return checkScalar(p, value)
  if (!Array.isArray(value)) return { error: `expected a list of ${expected[p.baseType]}, got ${shown(value)}` }
  const out: Array<unknown> = []
  for (const [i, item] of value.entries()) {
    const checked = checkScalar(p, item)
    if ("error" in checked) return { error: `item ${i + 1}: ${checked.error}` }
    out.push(checked.ok)
  }
  return { ok: out }
}

const checkVector = (value: unknown): ReadonlyArray<number> | string =>
  Array.isArray(value) && value.every((x) => typeof x === "number" && Number.isFinite(x))
    ? value as ReadonlyArray<number>
    : `expected a list of numbers, got ${shown(value)}`

// ===== Preparing =====

/**
 * A checker of rows for one collection: each row becomes a `Prepared` object or a `Rejected` row.
 * It remembers the length of the first vector of each name it sees (when `vectorLengths` does not
 * know it), so a later vector of another length is rejected.
 *
 * @category preparing
 */
export const preparer = (collection: Collection, options: PrepareOptions = {}) => {
  const lengths = new Map(options.vectorLengths ?? [])
  const properties = new Map(collection.properties.map((p) => [p.name, p]))
  const named = new Set(collection.namedVectors)
  return (parsed: RowFormat.Parsed): Prepared | Rejected => {
    const { line, values } = parsed
    const reject = (reason: string, uuid?: string): Rejected => ({ _tag: "Rejected", line, reason, ...(uuid !== undefined ? { uuid } : {}) })
    let id: string | undefined
    const idValue = options.idField !== undefined ? values[options.idField] : values["uuid"]
    if (idValue !== undefined && idValue !== null && idValue !== "") {
      if (options.idField === undefined && (typeof idValue !== "string" || !UUID.test(idValue))) {
        return reject(`column "uuid": expected a UUID, got ${shown(idValue)}`)
      }
      id = idOf(idValue)
    } else if (options.idField !== undefined) {
      return reject(`the id field "${options.idField}" is empty`)
    }
    const props: Record<string, unknown> = {}
    let vector: ReadonlyArray<number> | undefined
    const vectors: Record<string, ReadonlyArray<number>> = {}
    for (const [key, raw] of Object.entries(values)) {
      if (raw === null || raw === undefined) continue
      const isVector = key === "vector" || key.startsWith("vector:")
      if (isVector) {
        if (parsed.text && raw === "") continue
        let value: unknown = raw
        if (parsed.text) {
          try {
            value = JSON.parse(raw as string)
          } catch {
            return reject(`column "${key}": expected a JSON list of numbers, got ${shown(raw)}`, id)
          }
        }
        const checked = checkVector(value)
        if (typeof checked === "string") return reject(`column "${key}": ${checked}`, id)
        if (checked.length === 0) continue
        const name = key === "vector" ? "" : key.slice("vector:".length)
        if (name !== "" && !named.has(name)) return reject(`column "${key}": ${collection.name} has no named vector "${name}"`, id)
        if (name === "" && named.size > 0 && collection.vectors.every((v) => v.name !== "")) {
          return reject(`column "vector": ${collection.name} has named vectors (use vector:<name>)`, id)
        }
        const known = lengths.get(name)
        if (known === undefined) lengths.set(name, checked.length)
        else if (known !== checked.length) {
          return reject(`column "${key}": the vector has ${checked.length} dimensions, the collection's have ${known}`, id)
        }
        if (name === "") vector = checked
        else vectors[name] = checked
        continue
      }
      if (key === "uuid") continue
      const property = properties.get(key)
      if (property === undefined) {
        if (key === options.idField) continue
        return reject(`column "${key}": ${collection.name} has no such property`, id)
      }
      const cell = parsed.text ? fromCell(property, raw as string) : { ok: raw }
      const checked = "error" in cell ? cell : checkValue(property, cell.ok)
      if ("error" in checked) return reject(`column "${key}": ${checked.error}`, id)
      props[key] = checked.ok
    }
    return {
      _tag: "Prepared",
      line,
      object: {
        class: collection.name,
        id: id ?? NodeCrypto.randomUUID(),
        properties: props,
        ...(vector !== undefined ? { vector } : {}),
        ...(Object.keys(vectors).length > 0 ? { vectors } : {}),
        ...(options.tenant !== undefined ? { tenant: options.tenant } : {})
      }
    }
  }
}

/**
 * The vector lengths already in a collection (from one object of it), by vector name (`""` for the
 * single vector); empty for an empty collection.
 *
 * @category preparing
 */
export const vectorLengths = Effect.fn("BatchImport.vectorLengths")(function*(
  http: WeaviateHttp,
  collection: Collection,
  tenant: string | undefined
) {
  const response = yield* http.requestOk({
    method: "GET",
    path: "/v1/objects",
    query: { class: collection.name, limit: "1", include: "vector", tenant }
  })
  const object = ((response.json as { objects?: Array<unknown> } | undefined)?.objects ?? [])[0]
  const lengths = new Map<string, number>()
  if (!isRecord(object)) return lengths
  if (Array.isArray(object.vector) && object.vector.length > 0 && collection.namedVectors.length === 0) lengths.set("", object.vector.length)
  if (isRecord(object.vectors)) {
    for (const [name, v] of Object.entries(object.vectors)) {
      if (Array.isArray(v) && v.length > 0 && typeof v[0] === "number") lengths.set(collection.namedVectors.length === 0 ? "" : name, v.length)
    }
  }
  return lengths
})

// ===== Sending =====

const errorsOf = (result: unknown): string | undefined => {
  if (!isRecord(result)) return undefined
  const errors = isRecord(result.result) && isRecord(result.result.errors) ? result.result.errors.error : undefined
  if (!Array.isArray(errors) || errors.length === 0) return undefined
  return errors.map((e) => (isRecord(e) && typeof e.message === "string" ? e.message : JSON.stringify(e))).join("; ")
}

/**
 * Sends one batch; a 429, a 503 or a lost connection is retried after a pause that doubles each time.
 * Rows Weaviate refused come back with its message.
 *
 * @category sending
 */
export const sendBatch = (
  http: WeaviateHttp,
  rows: ReadonlyArray<Prepared>,
  options: Pick<WriteOptions, "consistencyLevel" | "retry"> = {}
): Effect.Effect<BatchResult, RequestError> => {
  const times = options.retry?.times ?? 8
  const baseMs = options.retry?.baseMs ?? 200
  const request = {
    method: "POST" as const,
    path: "/v1/batch/objects",
    query: { consistency_level: options.consistencyLevel },
    body: { json: { objects: rows.map((r) => r.object) } },
    // The answer echoes every object with its vector; only the errors are read (see `rejectedOf`).
    raw: true
  }
  const pause = (attempt: number) => Effect.sleep(Math.min(10_000, baseMs * 2 ** attempt))
  const attempt = (n: number): Effect.Effect<BatchResult, RequestError> =>
    Effect.matchEffect(http.request(request), {
      // Every object has its id: sending the batch again after a lost answer writes each row once.
      onFailure: (e) => (e._tag === "ConnectionFailed" && n < times ? Effect.zipRight(pause(n), attempt(n + 1)) : Effect.fail(e)),
      onSuccess: (response): Effect.Effect<BatchResult, RequestError> => {
        if ((response.status === 429 || response.status === 503) && n < times) return Effect.zipRight(pause(n), attempt(n + 1))
        if (response.status < 200 || response.status >= 300) {
          const detail = http.scrub(messageOf(response))
          if (response.status === 429 || response.status === 503) return Effect.fail(new DatabaseRefused({ status: response.status, detail }))
          return Effect.succeed({
            written: 0,
            rejected: rows.map((r): Rejected => ({ _tag: "Rejected", line: r.line, uuid: r.object.id, reason: `HTTP ${response.status}: ${detail}` }))
          })
        }
        const rejected = rejectedOf(http, rows, response.text)
        return Effect.succeed({ written: rows.length - rejected.length, rejected })
      }
    })
  return attempt(0)
}

/**
 * The rows of a batch Weaviate refused, from its answer: one entry per object, in order, with
 * `result.errors` only when that object was refused. Weaviate leaves `errors` out of a written
 * object's result, so an answer without the text `"errors"` refused none and is not parsed (a
 * property named `errors` only costs the parse). Messages are scrubbed here (`raw` answers are not).
 */
const rejectedOf = (http: WeaviateHttp, rows: ReadonlyArray<Prepared>, text: string): Array<Rejected> => {
  if (!text.includes(`"errors"`)) return []
  let results: unknown
  try {
    results = JSON.parse(text)
  } catch {
    results = undefined
  }
  const list = Array.isArray(results) ? results : []
  const rejected: Array<Rejected> = []
  rows.forEach((row, i) => {
    const reason = errorsOf(list[i])
    if (reason !== undefined) rejected.push({ _tag: "Rejected", line: row.line, uuid: row.object.id, reason: http.scrub(reason) })
  })
  return rejected
}

const messageOf = (response: { readonly json: unknown; readonly text: string }): string => {
  const body = response.json
  if (isRecord(body) && Array.isArray(body.error)) {
    const m = body.error.map((e) => (isRecord(e) && typeof e.message === "string" ? e.message : "")).filter((x) => x !== "")
    if (m.length > 0) return m.join("; ")
  }
  if (isRecord(body) && typeof body.message === "string") return body.message
  return response.text.trim().slice(0, 500) || "no body"
}

/**
 * Writes every item of a stream: bad lines and rows that fail the checks are reported without a
 * request, the others are sent in batches (`batchSize`), `concurrency` batches in flight. Emits one
 * result per batch, in the order of the input. The input is read as batches are sent, so memory
 * holds at most `concurrency` batches.
 *
 * @category sending
 */
export const writeAll = <E, R>(
  http: WeaviateHttp,
  collection: Collection,
  items: Stream.Stream<RowFormat.Item, E, R>,
  options: WriteOptions = {}
): Stream.Stream<BatchResult, E | RequestError, R> => {
  const prepare = preparer(collection, options)
  const batchSize = Math.max(1, options.batchSize ?? 100)
  return items.pipe(
    Stream.map((item): Prepared | Rejected =>
      item._tag === "BadLine" ? { _tag: "Rejected", line: item.line, reason: item.reason, fatal: item.fatal } : prepare(item)
    ),
    Stream.grouped(batchSize),
    Stream.mapEffect((chunk) => {
      const all = Chunk.toReadonlyArray(chunk)
      const good = all.filter((r): r is Prepared => r._tag === "Prepared")
      const bad = all.filter((r): r is Rejected => r._tag === "Rejected")
      if (good.length === 0 || options.dryRun === true) return Effect.succeed<BatchResult>({ written: good.length, rejected: bad })
      return Effect.map(sendBatch(http, good, options), (result): BatchResult => ({
        written: result.written,
        rejected: [...bad, ...result.rejected].sort((a, b) => a.line - b.line)
      }))
    }, { concurrency: Math.max(1, options.concurrency ?? 4) })
  )
}

/**
 * Rows in the grid's shape (`uuid`, properties, `vector` or `vector:<name>`) as items to write, each
 * numbered by its position (1-based).
 *
 * @category sending
 */
export const itemsOfRows = <E, R>(rows: Stream.Stream<Readonly<Record<string, unknown>>, E, R>): Stream.Stream<RowFormat.Item, E, R> =>
  Stream.map(Stream.zipWithIndex(rows), ([values, i]): RowFormat.Item => ({ _tag: "Parsed", line: i + 1, values, text: false }))

