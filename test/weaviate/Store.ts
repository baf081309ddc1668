/**
 * The in-memory database: classes (with their tenants) and objects. Objects of a class live in
 * partitions (one per tenant, or one for a class without multi-tenancy). A Map keeps insertion order,
 * which stands for Weaviate's internal docID order; an update re-inserts (a new docID), as Weaviate does.
 */
import * as crypto from "node:crypto"
import { isRecord } from "./Json.ts"
import { isUuid, PropertyValueError, validateProperties } from "./PropertyValues.ts"
import { type ClassDef, autoSchemaClass, normalizeClass, parseBeacon, SchemaError, upperFirst } from "./Schema.ts"
import { objectText, TEST_VECTORIZER, vectorizeText } from "./Vectorizer.ts"

export interface StoredObject {
  readonly id: string
  readonly class: string
  readonly tenant: string | undefined
  properties: Record<string, unknown>
  vector: Array<number> | undefined
  vectors: Record<string, Array<number>> | undefined
  readonly creationTimeUnix: number
  lastUpdateTimeUnix: number
}

export interface Tenant {
  name: string
  activityStatus: string
}

/** Errors Weaviate reports as multi-tenancy problems (HTTP 422 on REST). */
export class TenantError extends Error {}
/** `id '<uuid>' already exists` and friends (HTTP 422). */
export class InvalidInputError extends Error {}

const SHARD_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
const shardName = (): string => Array.from(crypto.randomBytes(12), (b) => SHARD_CHARS[b % SHARD_CHARS.length]).join("")

export class ClassState {
  readonly shardName = shardName()
  readonly tenants = new Map<string, Tenant>()
  readonly partitions = new Map<string, Map<string, StoredObject>>()
  private readonly uuidOrder = new Map<string, Array<StoredObject>>()
  constructor(readonly def: ClassDef) {}

  get name(): string {
    return this.def.class
  }
  get multiTenant(): boolean {
    return this.def.multiTenancyConfig.enabled
  }
  /** Name of the local shard as it appears in error messages: `<lowercaseclass>_<12 random chars>`. */
  get shardLabel(): string {
    return `${this.def.class.toLowerCase()}_${this.shardName}`
  }
  touched(partition: string): void {
    this.uuidOrder.delete(partition)
  }
  inUuidOrder(partition: string): Array<StoredObject> {
    let cached = this.uuidOrder.get(partition)
    if (cached === undefined) {
      cached = [...(this.partitions.get(partition)?.values() ?? [])].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      this.uuidOrder.set(partition, cached)
    }
    return cached
  }
  count(): number {
    let n = 0
    for (const p of this.partitions.values()) n += p.size
    return n
  }
}

export interface ObjectInput {
  readonly class: string
  readonly id?: string | undefined
  readonly properties?: unknown
  readonly vector?: unknown
  readonly vectors?: unknown
  readonly tenant?: string | undefined
}

const numberArray = (v: unknown): Array<number> | undefined =>
  Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "number") ? v.map((x) => Math.fround(x)) : undefined

export class Store {
  private readonly classes = new Map<string, ClassState>()
  /** Bumped on every schema change (GraphQL schema cache key). */
  version = 0
  autoSchema = true

  reset(): void {
    this.classes.clear()
    this.version++
  }
  listClasses(): Array<ClassState> {
    return [...this.classes.values()]
  }
  getClass(name: string): ClassState | undefined {
    return this.classes.get(upperFirst(name))
  }
  createClass(raw: unknown): ClassState {
    const def = normalizeClass(raw, (n) => this.classes.has(n))
    const state = new ClassState(def)
    this.classes.set(def.class, state)
    this.version++
    return state
  }
  deleteClass(name: string): void {
    if (this.classes.delete(upperFirst(name))) this.version++
  }
  schemaChanged(): void {
    this.version++
  }

  addTenants(cls: ClassState, tenants: ReadonlyArray<Tenant>): void {
    for (const t of tenants) cls.tenants.set(t.name, { name: t.name, activityStatus: t.activityStatus })
  }
  deleteTenants(cls: ClassState, names: ReadonlyArray<string>): void {
    for (const n of names) {
      cls.tenants.delete(n)
      cls.partitions.delete(n)
      cls.touched(n)
    }
  }

  /** The partition key for a request, with Weaviate's multi-tenancy errors. */
  partitionKey(cls: ClassState, tenant: string | undefined, forWrite: boolean): string {
    const t = tenant === undefined || tenant === "" ? undefined : tenant
    if (!cls.multiTenant) {
      if (t !== undefined) throw new TenantError(`class ${cls.name} has multi-tenancy disabled, but request was with tenant`)
      return ""
    }
    if (t === undefined) throw new TenantError(`class ${cls.name} has multi-tenancy enabled, but request was without tenant`)
    if (!cls.tenants.has(t)) {
      if (forWrite && cls.def.multiTenancyConfig.autoTenantCreation) {
        cls.tenants.set(t, { name: t, activityStatus: "ACTIVE" })
      } else {
        throw new TenantError(`tenant not found: ${JSON.stringify(t)}`)
      }
    }
    const status = cls.tenants.get(t)!.activityStatus
    if (status !== "ACTIVE" && status !== "HOT") throw new TenantError(`tenant not active: ${JSON.stringify(t)}`)
    return t
  }
  partition(cls: ClassState, key: string): Map<string, StoredObject> {
    let p = cls.partitions.get(key)
    if (p === undefined) {
      p = new Map()
      cls.partitions.set(key, p)
    }
    return p
  }

  getObject(cls: ClassState, key: string, id: string): StoredObject | undefined {
    return cls.partitions.get(key)?.get(id.toLowerCase())
  }
  /** Every object with this UUID in any class and tenant (the deprecated `/v1/objects/{id}` routes). */
  findEverywhere(id: string): Array<StoredObject> {
    const out: Array<StoredObject> = []
    for (const cls of this.classes.values()) {
      for (const p of cls.partitions.values()) {
        const o = p.get(id.toLowerCase())
        if (o !== undefined) out.push(o)
      }
    }
    return out
  }
  resolveBeacon(beacon: unknown, tenant: string | undefined): StoredObject | undefined {
    const ref = parseBeacon(beacon)
    if (ref === undefined) return undefined
    const candidates = ref.className !== undefined ? [this.getClass(ref.className)] : [...this.classes.values()]
    for (const cls of candidates) {
      if (cls === undefined) continue
      const o = cls.partitions.get(cls.multiTenant ? (tenant ?? "") : "")?.get(ref.id)
      if (o !== undefined) return o
    }
    return undefined
  }

  /** Class for a write, created by auto-schema when unknown. */
  /** Validates properties against the class; auto-schema may add properties, which changes the schema. */
  private validate(cls: ClassState, properties: unknown): Record<string, unknown> {
    const before = JSON.stringify(cls.def.properties)
    try {
      return validateProperties(properties, {
        def: cls.def,
        autoSchema: this.autoSchema,
        now: new Date(),
        classOfId: (rid) => this.findEverywhere(rid)[0]?.class
      })
    } finally {
      if (JSON.stringify(cls.def.properties) !== before) this.version++
    }
  }

  classForWrite(name: string): ClassState {
    if (name === "") throw new InvalidInputError("the given class is empty")
    const existing = this.getClass(name)
    if (existing !== undefined) return existing
    if (!this.autoSchema) throw new InvalidInputError(`class ${JSON.stringify(upperFirst(name))} not found in schema`)
    const state = new ClassState(autoSchemaClass(upperFirst(name)))
    this.classes.set(state.name, state)
    this.version++
    return state
  }

  private vectorsFor(cls: ClassState, props: Record<string, unknown>, input: ObjectInput, previous?: StoredObject) {
    const def = cls.def
    const given = numberArray(input.vector)
    if (def.vectorConfig === undefined) {
      let vector = given ?? previous?.vector
      if (given === undefined && def.vectorizer === TEST_VECTORIZER) vector = vectorizeText(objectText(def, props))
      return { vector, vectors: undefined }
    }
    const names = Object.keys(def.vectorConfig)
    const vectors: Record<string, Array<number>> = {}
    const givenNamed = isRecord(input.vectors) ? input.vectors : {}
    for (const name of names) {
      const v =
        numberArray(givenNamed[name]) ?? (names.length === 1 ? given : undefined) ?? previous?.vectors?.[name]
      const entry = def.vectorConfig[name]!
      if (v !== undefined && numberArray(givenNamed[name]) !== undefined) vectors[name] = v
      else if (TEST_VECTORIZER in entry.vectorizer) vectors[name] = vectorizeText(objectText(def, props))
      else if (v !== undefined) vectors[name] = v
    }
    return { vector: undefined, vectors: Object.keys(vectors).length > 0 ? vectors : undefined }
  }

  /** Create (`mode: "create"`), replace an existing object (`"replace"`), or upsert (batch). */
  putObject(input: ObjectInput, mode: "create" | "replace" | "upsert"): StoredObject {
    const cls = this.classForWrite(input.class)
    const key = this.partitionKey(cls, input.tenant, true)
    const part = this.partition(cls, key)
    const id = (input.id ?? crypto.randomUUID()).toLowerCase()
    if (input.id !== undefined && !isUuid(input.id)) throw new InvalidInputError(`invalid object: invalid UUID length: ${String(input.id).length}`)
    const previous = part.get(id)
    if (mode === "create" && previous !== undefined) throw new InvalidInputError(`id '${id}' already exists`)
    const properties = this.validate(cls, input.properties)
    const now = Date.now()
    const { vector, vectors } = this.vectorsFor(cls, properties, input)
    const obj: StoredObject = {
      id,
      class: cls.name,
      tenant: cls.multiTenant ? key : undefined,
      properties,
      vector,
      vectors,
      creationTimeUnix: mode === "create" || previous === undefined ? now : previous.creationTimeUnix,
      lastUpdateTimeUnix: now
    }
    part.delete(id)
    part.set(id, obj)
    cls.touched(key)
    return obj
  }

  /** PATCH: top-level merge, `null` deletes a property, vector kept unless given (or re-vectorized). */
  mergeObject(cls: ClassState, key: string, id: string, patch: ObjectInput): StoredObject | undefined {
    const part = this.partition(cls, key)
    const previous = part.get(id.toLowerCase())
    if (previous === undefined) return undefined
    const rawPatch = isRecord(patch.properties) ? patch.properties : {}
    const toDelete = Object.entries(rawPatch).filter(([, v]) => v === null).map(([k]) => k)
    const validated = this.validate(cls, rawPatch)
    const properties = { ...previous.properties, ...validated }
    for (const k of toDelete) delete properties[k]
    const vectorizer = cls.def.vectorizer === TEST_VECTORIZER
    const { vector, vectors } = this.vectorsFor(
      cls,
      properties,
      vectorizer && patch.vector === undefined ? { ...patch, vector: undefined } : patch,
      vectorizer ? undefined : previous
    )
    const obj: StoredObject = { ...previous, properties, vector, vectors, lastUpdateTimeUnix: Date.now() }
    part.delete(obj.id)
    part.set(obj.id, obj)
    cls.touched(key)
    return obj
  }

  deleteObject(cls: ClassState, key: string, id: string): boolean {
    const part = cls.partitions.get(key)
    const existed = part?.delete(id.toLowerCase()) ?? false
    if (existed) cls.touched(key)
    return existed
  }
}

export { PropertyValueError, SchemaError }
