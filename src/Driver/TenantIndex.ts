/**
 * The tenants of one collection in a compact form: every name in one string (sorted, joined), the
 * start of each name in a `Uint32Array`, each status as one byte, and a second order by lower-cased
 * name for case-insensitive prefixes (completions). A tenant costs its name's length (tenant names
 * are ASCII: one byte a character) plus 9 bytes; a million tenants named like `tenant-0000001` hold
 * in about 23 MB, far below the budget of 100 bytes a tenant (`BUDGET_BYTES_PER_TENANT`).
 *
 * Pages, prefix ranges and exact names are binary searches: a page costs the same at the start and
 * deep into the list.
 *
 * @since 0.1.0
 */
import type { Tenant } from "./Tenants.ts"

/** The memory a tenant may cost in the cache (name and status). @category constants */
export const BUDGET_BYTES_PER_TENANT = 100

/**
 * Status groups: Weaviate names the same state two ways (`HOT`/`ACTIVE`, `COLD`/`INACTIVE`,
 * `FROZEN`/`OFFLOADED`), and a status filter matches both.
 *
 * @category constants
 */
export const STATUS_ALIASES: Readonly<Record<string, string>> = {
  ACTIVE: "HOT",
  INACTIVE: "COLD",
  OFFLOADED: "FROZEN"
}

/** The canonical name of a status (`ACTIVE` → `HOT`). @category combinators */
export const canonicalStatus = (status: string): string => STATUS_ALIASES[status.toUpperCase()] ?? status.toUpperCase()

/** @category models */
export interface TenantIndex {
  readonly size: number
  /** The name of the i-th tenant in name order. */
  readonly name: (i: number) => string
  /** Its status as Weaviate said it. */
  readonly status: (i: number) => string
  /** Its canonical status (`canonicalStatus`), as a code comparable with `statusCode`. */
  readonly statusCodeAt: (i: number) => number
  /** The code of a canonical status, or -1 when no tenant has it. */
  readonly statusCode: (status: string) => number
  /** The first position whose name is after `name` (exclusive) or at it (inclusive). */
  readonly seek: (name: string, inclusive: boolean) => number
  /** The positions `[from, to)` of the names that start with `prefix` (case-sensitive). */
  readonly prefixRange: (prefix: string) => readonly [number, number]
  /** The position of a name, or -1. */
  readonly find: (name: string) => number
  /** The first `max` names that start with `prefix`, ignoring case, and how many do. */
  readonly completions: (prefix: string, max: number) => { readonly values: ReadonlyArray<string>; readonly total: number }
  /** The bytes the index holds (its string, one byte a character, and its arrays). */
  readonly bytes: number
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** The first i in [lo, hi) with `before(i)` false (`before` true then false along the range). */
const partition = (lo: number, hi: number, before: (i: number) => boolean): number => {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (before(mid)) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * The index of tenants as Weaviate listed them (any order; a name listed twice is kept once).
 *
 * @category constructors
 */
export const make = (tenants: ReadonlyArray<Tenant>): TenantIndex => {
  const sorted = tenants.slice().sort((a, b) => compare(a.name, b.name))
  const statusNames: Array<string> = []
  const canonical: Array<number> = []
  const codes = new Map<string, number>()
  const canonicalCodes = new Map<string, number>()
  const codeOf = (status: string) => {
    let code = codes.get(status)
    if (code === undefined) {
      code = statusNames.length
      statusNames.push(status)
      codes.set(status, code)
      const c = canonicalStatus(status)
      let cc = canonicalCodes.get(c)
      if (cc === undefined) canonicalCodes.set(c, cc = canonicalCodes.size)
      canonical.push(cc)
    }
    return code
  }
  const names: Array<string> = []
  const statusList: Array<number> = []
  for (const t of sorted) {
    if (names.length > 0 && names[names.length - 1] === t.name) continue
    names.push(t.name)
    statusList.push(codeOf(t.activityStatus))
  }
  const size = names.length
  const text = names.join("")
  const offsets = new Uint32Array(size + 1)
  for (let i = 0, at = 0; i < size; i++) {
    offsets[i] = at
    at += names[i]!.length
    offsets[i + 1] = at
  }
  const statuses = Uint8Array.from(statusList)
  const name = (i: number) => text.slice(offsets[i]!, offsets[i + 1]!)
  const lower = (i: number) => name(i).toLowerCase()
  const byLower = new Uint32Array(size)
  {
    const order = Array.from({ length: size }, (_, i) => i)
    const lowered = names.map((n) => n.toLowerCase())
    order.sort((a, b) => compare(lowered[a]!, lowered[b]!) || a - b)
    byLower.set(order)
  }
  const seek = (target: string, inclusive: boolean) =>
    partition(0, size, (i) => (inclusive ? name(i) < target : name(i) <= target))
  const prefixRange = (prefix: string): readonly [number, number] => {
    const from = seek(prefix, true)
    const to = partition(from, size, (i) => name(i).startsWith(prefix))
    return [from, to]
  }
  return {
    size,
    name,
    status: (i) => statusNames[statuses[i]!]!,
    statusCodeAt: (i) => canonical[statuses[i]!]!,
    statusCode: (status) => canonicalCodes.get(canonicalStatus(status)) ?? -1,
    seek,
    prefixRange,
    find: (target) => {
      const i = seek(target, true)
      return i < size && name(i) === target ? i : -1
    },
    completions: (prefix, max) => {
      const needle = prefix.toLowerCase()
      const from = partition(0, size, (k) => lower(byLower[k]!) < needle)
      const to = partition(from, size, (k) => lower(byLower[k]!).startsWith(needle))
      const values: Array<string> = []
      for (let k = from; k < to && values.length < max; k++) values.push(name(byLower[k]!))
      return { values, total: to - from }
    },
    bytes: text.length + offsets.byteLength + statuses.byteLength + byLower.byteLength
  }
}
