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
 * Redacts a text given the known secrets.
 *
 * @category combinators
 */
export const redactText = (text: string, secrets: Iterable<string> = []): string => {
  let out = text
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.replace(new RegExp(escapeRegExp(secret), "g"), REDACTED)
  }
  for (const [pattern, replacement] of patterns) out = out.replace(pattern, replacement)
  return out
}

/** A registry of known secrets and the redaction that uses it. @category models */
export interface Registry {
  readonly register: (secret: string) => void
  readonly redact: (text: string) => string
}

const makeRegistry = (): Registry => {
  const secrets = new Set<string>()
  return {
    register: (secret) => {
      if (secret.length >= 4) secrets.add(secret)
    },
    redact: (text) => redactText(text, secrets)
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
