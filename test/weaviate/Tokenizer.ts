/**
 * Weaviate's text tokenization (entities/tokenizer): `word` (split on anything that is not a letter or
 * a digit, lower-cased), `lowercase`, `whitespace`, `field`, plus the wildcard-preserving variant used
 * by `Like`, and the English stopword preset used for `word` tokenization.
 */
export type Tokenization = "word" | "lowercase" | "whitespace" | "field"

export const EN_STOPWORDS: ReadonlySet<string> = new Set([
  "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not",
  "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was",
  "will", "with"
])

const nonEmpty = (tokens: ReadonlyArray<string>): Array<string> => tokens.filter((t) => t.length > 0)

export const tokenize = (tokenization: string | undefined, text: string): Array<string> => {
  switch (tokenization) {
    case "field":
      return nonEmpty([text.trim()])
    case "whitespace":
      return nonEmpty(text.split(/\s+/u))
    case "lowercase":
      return nonEmpty(text.toLowerCase().split(/\s+/u))
    default:
      return nonEmpty(text.split(/[^\p{L}\p{N}]+/u).map((t) => t.toLowerCase()))
  }
}

/** Tokenization of a `Like` value: `*` and `?` survive as part of tokens. */
export const tokenizeWithWildcards = (tokenization: string | undefined, text: string): Array<string> => {
  switch (tokenization) {
    case "field":
    case "whitespace":
    case "lowercase":
      return tokenize(tokenization, text)
    default:
      return nonEmpty(text.split(/[^\p{L}\p{N}*?]+/u).map((t) => t.toLowerCase()))
  }
}

export interface StopwordConfig {
  readonly preset?: string
  readonly additions?: ReadonlyArray<string> | null
  readonly removals?: ReadonlyArray<string> | null
}

export const stopwordSet = (config: StopwordConfig | undefined): ReadonlySet<string> => {
  const base = new Set(config?.preset === "none" ? [] : EN_STOPWORDS)
  for (const a of config?.additions ?? []) base.add(a.toLowerCase())
  for (const r of config?.removals ?? []) base.delete(r.toLowerCase())
  return base
}

/** Stopwords are only dropped for `word` tokenization. */
export const dropStopwords = (
  tokenization: string | undefined,
  tokens: ReadonlyArray<string>,
  stopwords: ReadonlySet<string>
): Array<string> => (tokenization === undefined || tokenization === "word" ? tokens.filter((t) => !stopwords.has(t)) : [...tokens])

/** `Like` token matching: anchored, `*` = any run, `?` = any single character. */
export const likeRegExp = (pattern: string): RegExp =>
  new RegExp(
    "^" +
      [...pattern]
        .map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[.+^${}()|[\]\\]/g, "\\$&")))
        .join("") +
      "$",
    "su"
  )
