/**
 * The compatible instance's `text2vec-transformers`: a small deterministic hashing vectorizer in place
 * of a model (the real server gets the same one from Embedder.ts). Each word token is hashed (FNV-1a)
 * into one of DIMENSIONS buckets with a hash-derived sign; the sum is L2-normalised. Texts sharing
 * words therefore have small cosine distances, which is all tests need from a vectorizer.
 */
import { type ClassDef, isTextType } from "./Schema.ts"
import { tokenize } from "./Tokenizer.ts"

export const TEST_VECTORIZER = "text2vec-transformers"
export const DIMENSIONS = 32

const fnv1a = (s: string): number => {
  let h = 0x811c9dc5
  for (const byte of Buffer.from(s, "utf8")) {
    h ^= byte
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h
}

export const vectorizeText = (text: string): Array<number> => {
  const v = new Array<number>(DIMENSIONS).fill(0)
  const tokens = tokenize("word", text)
  for (const t of tokens.length > 0 ? tokens : [""]) {
    const h = fnv1a(t)
    v[h % DIMENSIONS]! += (h >>> 16) & 1 ? 1 : -1
  }
  const norm = Math.hypot(...v)
  return norm === 0 ? v.map((_, i) => (i === 0 ? 1 : 0)) : v.map((x) => Math.fround(x / norm))
}

const setting = (config: unknown, key: string): unknown =>
  config !== null && typeof config === "object" ? (config as Record<string, unknown>)[key] : undefined

/**
 * The text the module vectorizes for an object, as the real text2vec-transformers composes it: the
 * class name (unless `vectorizeClassName` is false), then each text property in schema order unless
 * skipped, preceded by its name when `vectorizePropertyName` is true.
 */
export const objectText = (def: ClassDef, properties: Record<string, unknown>): string => {
  const parts: Array<string> = []
  if (setting(def.moduleConfig?.[TEST_VECTORIZER], "vectorizeClassName") !== false) parts.push(def.class)
  for (const p of def.properties ?? []) {
    if (!isTextType(p.dataType[0] ?? "")) continue
    const mc = p.moduleConfig?.[TEST_VECTORIZER]
    if (setting(mc, "skip") === true) continue
    const v = properties[p.name]
    const texts = typeof v === "string" ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []
    if (texts.length === 0) continue
    if (setting(mc, "vectorizePropertyName") === true) parts.push(p.name)
    parts.push(...texts)
  }
  return parts.join(" ")
}

export const moduleMeta = (): Record<string, unknown> => ({
  [TEST_VECTORIZER]: { dimensions: DIMENSIONS, name: TEST_VECTORIZER, description: "deterministic hashing vectorizer of the weaviate-mcp test instance" }
})
