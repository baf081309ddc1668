/**
 * `TenantIndex`, the compact tenant list, checked against a plain sorted array of the same tenants:
 * exact names, prefix ranges, pages after a name, case-insensitive completions, status groups, and
 * the memory budget of 100 bytes a tenant.
 */
import { describe, expect, it } from "vitest"
import * as TenantIndex from "../../src/Driver/TenantIndex.ts"
import { pageOf } from "../../src/Catalogue/Tools/TenantTools.ts"

/** A fixed pseudo-random sequence (no dependence on the run). */
const random = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
}

const ALPHABET = "abcXYZ019-_"
const STATUSES = ["HOT", "COLD", "FROZEN", "ACTIVE", "INACTIVE", "OFFLOADED", "FREEZING"]

const sample = (n: number, seed: number) => {
  const next = random(seed)
  return Array.from({ length: n }, () => ({
    name: Array.from({ length: 1 + Math.floor(next() * 5) }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join(""),
    activityStatus: STATUSES[Math.floor(next() * STATUSES.length)]!
  }))
}

const model = (tenants: ReadonlyArray<{ name: string; activityStatus: string }>) => {
  // A name listed twice is kept once, as first listed.
  const byName = new Map<string, { name: string; activityStatus: string }>()
  for (const t of tenants) if (!byName.has(t.name)) byName.set(t.name, t)
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

describe("TenantIndex", () => {
  it("holds every tenant once, in name order, with its status, whatever order Weaviate listed them in", () => {
    const tenants = sample(2_000, 7)
    const index = TenantIndex.make(tenants)
    const sorted = model(tenants)
    expect(index.size).toBe(sorted.length)
    expect(Array.from({ length: index.size }, (_, i) => [index.name(i), index.status(i)])).toEqual(sorted.map((t) => [t.name, t.activityStatus]))
  })

  it("finds exact names, prefix ranges and the page after any name as the sorted list does", () => {
    const tenants = sample(1_500, 11)
    const index = TenantIndex.make(tenants)
    const sorted = model(tenants).map((t) => t.name)
    for (const probe of [...sample(200, 13).map((t) => t.name), "", "~", "a", "Z"]) {
      expect(index.find(probe), probe).toBe(sorted.indexOf(probe))
      const [from, to] = index.prefixRange(probe)
      expect(sorted.slice(from, to), probe).toEqual(sorted.filter((n) => n.startsWith(probe)))
      expect(index.seek(probe, false), probe).toBe(sorted.filter((n) => n <= probe).length)
      expect(index.seek(probe, true), probe).toBe(sorted.filter((n) => n < probe).length)
    }
  })

  it("completes a prefix ignoring case: the first matches in lower-case order, and how many match", () => {
    const tenants = sample(1_500, 17)
    const index = TenantIndex.make(tenants)
    const lowerSorted = model(tenants).map((t) => t.name).sort((a, b) => {
      const x = a.toLowerCase()
      const y = b.toLowerCase()
      return x < y ? -1 : x > y ? 1 : a < b ? -1 : 1
    })
    for (const prefix of ["", "a", "A", "xy", "Xy", "9-", "zzz"]) {
      const all = lowerSorted.filter((n) => n.toLowerCase().startsWith(prefix.toLowerCase()))
      expect(index.completions(prefix, 100), prefix).toEqual({ values: all.slice(0, 100), total: all.length })
    }
  })

  it("a status filter takes both names of a state (HOT and ACTIVE, COLD and INACTIVE, FROZEN and OFFLOADED)", () => {
    const index = TenantIndex.make([
      { name: "a", activityStatus: "HOT" },
      { name: "b", activityStatus: "ACTIVE" },
      { name: "c", activityStatus: "COLD" },
      { name: "d", activityStatus: "INACTIVE" },
      { name: "e", activityStatus: "OFFLOADED" },
      { name: "f", activityStatus: "FREEZING" }
    ])
    const names = (status: string) => pageOf(index, { status, limit: 10 }).rows.map((r) => r.name)
    expect(names("ACTIVE")).toEqual(["a", "b"])
    expect(names("hot")).toEqual(["a", "b"])
    expect(names("COLD")).toEqual(["c", "d"])
    expect(names("FROZEN")).toEqual(["e"])
    expect(names("FREEZING")).toEqual(["f"])
    expect(names("NOSUCH")).toEqual([])
    expect(pageOf(index, { status: "ACTIVE", limit: 10 }).rows.map((r) => r.activityStatus)).toEqual(["HOT", "ACTIVE"])
  })

  it("pages of a status filter: total over the whole range, and the cursor leaves nothing out", () => {
    const tenants = sample(3_000, 23)
    const index = TenantIndex.make(tenants)
    const cold = model(tenants).filter((t) => TenantIndex.canonicalStatus(t.activityStatus) === "COLD").map((t) => t.name)
    const seen: Array<string> = []
    let after: string | undefined
    for (let page = 0; page < 100; page++) {
      const p = pageOf(index, { status: "COLD", after, limit: 37 })
      expect(p.total).toBe(cold.length)
      seen.push(...p.rows.map((r) => r.name))
      if (p.last === undefined) break
      after = p.last
    }
    expect(seen).toEqual(cold)
  })

  it(`a million tenants fit in the budget of ${TenantIndex.BUDGET_BYTES_PER_TENANT} bytes a tenant`, () => {
    const n = 1_000_000
    const index = TenantIndex.make(Array.from({ length: n }, (_, i) => ({ name: `tenant-${String(i).padStart(7, "0")}`, activityStatus: "HOT" })))
    expect(index.size).toBe(n)
    expect(index.bytes / n).toBeLessThanOrEqual(TenantIndex.BUDGET_BYTES_PER_TENANT)
    expect(index.name(n - 1)).toBe("tenant-0999999")
    expect(index.find("tenant-0500000")).toBe(500_000)
  })
})
