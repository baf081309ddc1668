/**
 * Ranking: vector distances (cosine/dot/l2-squared/manhattan/hamming as in vectorIndexConfig.distance),
 * BM25 over the searchable text properties (k1/b from invertedIndexConfig.bm25), and hybrid fusion
 * (relativeScoreFusion, the default, and rankedFusion).
 */
import { type ClassDef, findProperty, isTextType } from "./Schema.ts"
import type { StoredObject } from "./Store.ts"
import { dropStopwords, stopwordSet, tokenize } from "./Tokenizer.ts"

export const distanceMetric = (def: ClassDef, target: string | undefined): string => {
  const cfg = target !== undefined ? def.vectorConfig?.[target]?.vectorIndexConfig : def.vectorIndexConfig
  return typeof cfg?.["distance"] === "string" ? (cfg["distance"] as string) : "cosine"
}

export class VectorLengthError extends Error {}

export const distance = (metric: string, a: ReadonlyArray<number>, b: ReadonlyArray<number>): number => {
  if (a.length !== b.length) throw new VectorLengthError(`vector lengths don't match: ${b.length} vs ${a.length}`)
  let dot = 0
  let na = 0
  let nb = 0
  let l2 = 0
  let l1 = 0
  let ham = 0
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!
    const y = b[i]!
    dot += x * y
    na += x * x
    nb += y * y
    l2 += (x - y) ** 2
    l1 += Math.abs(x - y)
    if (x !== y) ham++
  }
  switch (metric) {
    case "dot":
      return Math.fround(-dot)
    case "l2-squared":
      return Math.fround(l2)
    case "manhattan":
      return Math.fround(l1)
    case "hamming":
      return ham
    default:
      return na === 0 || nb === 0 ? 1 : Math.fround(1 - dot / Math.sqrt(na * nb))
  }
}

/** Go's `strconv.FormatFloat(float64(float32(x)), 'f', -1, 32)`: shortest float32 text, no exponent. */
export const formatFloat32 = (x: number): string => {
  const f = Math.fround(x)
  if (f === 0 || !Number.isFinite(f)) return String(f)
  for (let p = 1; p <= 9; p++) {
    const s = f.toPrecision(p)
    if (Math.fround(Number(s)) === f) {
      const n = Number(s)
      return Math.abs(n) >= 1e-6 ? String(n) : n.toFixed(p + Math.ceil(-Math.log10(Math.abs(n))))
    }
  }
  return String(f)
}

export interface Scored {
  readonly obj: StoredObject
  readonly score: number
}

/** BM25 over `properties` (optionally boosted `name^2`), or all searchable text properties. */
export const bm25 = (
  def: ClassDef,
  objects: ReadonlyArray<StoredObject>,
  query: string,
  properties: ReadonlyArray<string> | undefined
): Array<Scored> => {
  const k1 = def.invertedIndexConfig.bm25.k1
  const b = def.invertedIndexConfig.bm25.b
  const stop = stopwordSet(def.invertedIndexConfig.stopwords)
  const targets = (
    properties !== undefined && properties.length > 0
      ? properties.map((p) => {
          const [name, boost] = p.split("^")
          return { prop: findProperty(def, name ?? ""), boost: boost === undefined ? 1 : Number(boost) }
        })
      : (def.properties ?? []).map((prop) => ({ prop, boost: 1 }))
  ).filter(
    (t): t is { prop: NonNullable<typeof t.prop>; boost: number } =>
      t.prop !== undefined && isTextType(t.prop.dataType[0] ?? "") && t.prop.indexSearchable !== false
  )
  const scores = new Map<StoredObject, number>()
  for (const { prop, boost } of targets) {
    const tokenization = prop.tokenization ?? "word"
    const docs = objects.map((o) => {
      const v = o.properties[prop.name]
      const texts = typeof v === "string" ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []
      return texts.flatMap((t) => tokenize(tokenization, t))
    })
    const withProp = docs.filter((d) => d.length > 0)
    const avgLen = withProp.reduce((s, d) => s + d.length, 0) / Math.max(1, withProp.length)
    const terms = [...new Set(dropStopwords(tokenization, tokenize(tokenization, query), stop))]
    for (const term of terms) {
      const df = docs.filter((d) => d.includes(term)).length
      if (df === 0) continue
      const idf = Math.log(1 + (objects.length - df + 0.5) / (df + 0.5))
      docs.forEach((d, i) => {
        const tf = d.filter((x) => x === term).length
        if (tf === 0) return
        const s = (boost * idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * d.length) / avgLen))
        scores.set(objects[i]!, (scores.get(objects[i]!) ?? 0) + s)
      })
    }
  }
  return objects
    .filter((o) => scores.has(o))
    .map((o) => ({ obj: o, score: Math.fround(scores.get(o)!) }))
    .sort((x, y) => y.score - x.score)
}

/** Fusion of a keyword (higher = better) and a vector (distance, lower = better) result list. */
export const fuse = (
  keyword: ReadonlyArray<Scored>,
  vector: ReadonlyArray<{ readonly obj: StoredObject; readonly distance: number }>,
  alpha: number,
  fusionType: string
): Array<Scored & { explain: string }> => {
  const out = new Map<StoredObject, { score: number; explain: Array<string> }>()
  const add = (o: StoredObject, s: number, why: string) => {
    const e = out.get(o) ?? { score: 0, explain: [] }
    e.score += s
    e.explain.push(why)
    out.set(o, e)
  }
  if (fusionType === "rankedFusion") {
    keyword.forEach((k, i) => add(k.obj, (1 - alpha) / (60 + i), `(hybrid) Document ${k.obj.id} contributed ${(1 - alpha) / (60 + i)} to the score`))
    vector.forEach((v, i) => add(v.obj, alpha / (60 + i), `(hybrid) Document ${v.obj.id} contributed ${alpha / (60 + i)} to the score`))
  } else {
    const norm = (xs: ReadonlyArray<number>, invert: boolean) => {
      const min = Math.min(...xs)
      const max = Math.max(...xs)
      return (x: number) => (max === min ? 1 : invert ? (max - x) / (max - min) : (x - min) / (max - min))
    }
    if (alpha < 1) {
      const n = norm(keyword.map((k) => k.score), false)
      for (const k of keyword) add(k.obj, (1 - alpha) * n(k.score), `(hybrid) Document ${k.obj.id}: original score ${k.score}, normalized score: ${n(k.score)} - keyword,bm25`)
    }
    if (alpha > 0) {
      const n = norm(vector.map((v) => v.distance), true)
      for (const v of vector) add(v.obj, alpha * n(v.distance), `(hybrid) Document ${v.obj.id}: original score ${v.distance}, normalized score: ${n(v.distance)} - vector`)
    }
  }
  return [...out.entries()]
    .map(([obj, e]) => ({ obj, score: Math.fround(e.score), explain: e.explain.join("\n") }))
    .sort((x, y) => y.score - x.score)
}
