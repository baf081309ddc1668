/**
 * Redaction of secrets from every text that leaves the process: log lines, error messages, tool
 * results. Known secrets (API keys, tokens) are registered and replaced wherever they appear;
 * `Authorization` values, our token format and credentials in URLs are recognised by shape.
 *
 * @since 0.1.0
 */

/** The text that replaces a secret. @category constants */
export const REDACTED = "[redacted]"

const patterns: ReadonlyArray<readonly [RegExp, string]> = [
  // Authorization header values, in any casing, with or without the header name.
  [/(authorization["']?\s*[:=]\s*["']?)(bearer|basic)\s+[^\s"',;}]+/gi, `$1$2 ${REDACTED}`],
  [/\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  // Our own token format.
  [/\bwmcp_[A-Za-z0-9_-]{8,}/g, REDACTED],
  // user:password@ in URLs.
  [/([a-z][a-z0-9+.-]*:\/\/)[^\s/@:]+:[^\s/@]+@/gi, `$1${REDACTED}@`],
  // api key query parameters and JSON members.
  [/((?:api[_-]?key|apikey|x-api-key|token|password|secret)["']?\s*[:=]\s*["']?)[^\s"'&,;}]{4,}/gi, `$1${REDACTED}`]
]

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * Whether a text may hold something the patterns replace: most texts (a log line, a row) hold none,
 * and are then returned after one scan instead of five.
 */
const CANDIDATE = /authorization|bearer|wmcp_|:\/\/[^\s/@]*@|api[_-]?key|token|password|secret/i

/** One expression matching any of the secrets (`undefined` when there are none of 4 characters or more). */
const secretsPattern = (secrets: Iterable<string>): RegExp | undefined => {
  const alternatives = Array.from(secrets, (s) => s).filter((s) => s.length >= 4)
    // Longest first: a secret that contains another is replaced whole.
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
  return alternatives.length === 0 ? undefined : new RegExp(alternatives.join("|"), "g")
}

const redactWith = (text: string, secrets: RegExp | undefined): string => {
  let out = secrets === undefined ? text : text.replace(secrets, REDACTED)
  if (!CANDIDATE.test(out)) return out
  for (const [pattern, replacement] of patterns) out = out.replace(pattern, replacement)
  return out
}

/**
 * Redacts a text given the known secrets.
 *
 * @category combinators
 */
export const redactText = (text: string, secrets: Iterable<string> = []): string => redactWith(text, secretsPattern(secrets))

/** A registry of known secrets and the redaction that uses it. @category models */
export interface Registry {
  readonly register: (secret: string) => void
  readonly redact: (text: string) => string
}

const makeRegistry = (): Registry => {
  const secrets = new Set<string>()
  // Compiled once per new secret, not once per text.
  let pattern: RegExp | undefined
  return {
    register: (secret) => {
      if (secret.length < 4 || secrets.has(secret)) return
      secrets.add(secret)
      pattern = secretsPattern(secrets)
    },
    redact: (text) => redactWith(text, pattern)
  }
}

/**
 * The process-wide registry of known secrets, shared by every surface (the logger has no context of
 * its own). Secrets are added when they are loaded (connection API keys, tokens printed once) and
 * never removed during the process's life: a rotated-out key must still be redacted if an old
 * message quotes it.
 *
 * @category constants
 */
export const global: Registry = makeRegistry()
