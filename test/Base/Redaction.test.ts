/**
 * Redaction: the fast path (one compiled expression for the known secrets, the shape patterns only
 * when a text may hold one) replaces exactly what replacing each secret and each pattern in turn does.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Redaction from "../../src/Base/Redaction.ts"

const SHAPES: ReadonlyArray<readonly [RegExp, string]> = [
  [/(authorization["']?\s*[:=]\s*["']?)(bearer|basic)\s+[^\s"',;}]+/gi, `$1$2 ${Redaction.REDACTED}`],
  [/\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${Redaction.REDACTED}`],
  [/\bwmcp_[A-Za-z0-9_-]{8,}/g, Redaction.REDACTED],
  [/([a-z][a-z0-9+.-]*:\/\/)[^\s/@:]+:[^\s/@]+@/gi, `$1${Redaction.REDACTED}@`],
  [/((?:api[_-]?key|apikey|x-api-key|token|password|secret)["']?\s*[:=]\s*["']?)[^\s"'&,;}]{4,}/gi, `$1${Redaction.REDACTED}`]
]

/** The plain algorithm: each secret (longest first), then each shape, in turn. */
const reference = (text: string, secrets: ReadonlyArray<string>) => {
  let out = text
  for (const secret of [...secrets].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length)) out = out.split(secret).join(Redaction.REDACTED)
  for (const [pattern, replacement] of SHAPES) out = out.replace(pattern, replacement)
  return out
}

const fragment = fc.oneof(
  fc.constantFrom("Authorization: Bearer ", "bearer ", "wmcp_", "https://", "user:pw@", "api_key=", "x-api-key: ", "token=", "password:", "secret=", " ", "\"", "=", ":", "@", "/"),
  fc.string({ maxLength: 12 })
)

describe("Redaction", () => {
  it("redacts exactly what replacing each secret and each shape in turn redacts", () => {
    fc.assert(
      fc.property(fc.array(fragment, { maxLength: 12 }).map((parts) => parts.join("")), fc.array(fc.string({ minLength: 1, maxLength: 10 }), { maxLength: 3 }), (text, secrets) => {
        const withSecrets = secrets.length > 0 ? `${text}${secrets[0]}` : text
        expect(Redaction.redactText(withSecrets, secrets)).toBe(reference(withSecrets, secrets))
      }),
      { numRuns: 2000 }
    )
  })

  it("a text without any secret or shape is returned as it is", () => {
    const line = "timestamp=2026-11-24T04:50:11Z level=INFO message=\"mcp request\" method=tools/list principal=default"
    expect(Redaction.redactText(line, ["abcdefgh"])).toBe(line)
  })

  it("a secret registered later is redacted from then on, and one inside a longer one leaves nothing behind", () => {
    const key = `k-${Math.random().toString(36).slice(2)}-key`
    expect(Redaction.global.redact(`quoted ${key}`)).toContain(key)
    Redaction.global.register(key)
    Redaction.global.register(`${key}-longer`)
    expect(Redaction.global.redact(`quoted ${key} and ${key}-longer`)).toBe(`quoted ${Redaction.REDACTED} and ${Redaction.REDACTED}`)
  })

  it("the OIDC fields are redacted by shape: tokens, refresh tokens, client secrets and passwords, as JSON members and form fields", () => {
    const texts = [
      `{"access_token":"eyJhbGciOiJSUzI1NiJ9.payload.sig","refresh_token":"rt-7f3a9c21","expires_in":600}`,
      "grant_type=password&username=alice&password=hunter2-secret&client_id=weaviate",
      "grant_type=client_credentials&client_id=service&client_secret=cs-1b2c3d4e",
      "grant_type=refresh_token&refresh_token=rt-7f3a9c21&client_id=weaviate",
      `{"oidcClientSecret":"cs-1b2c3d4e","oidcPassword":"hunter2-secret","oidcAccessToken":"at-99887766","oidcRefreshToken":"rt-7f3a9c21"}`
    ]
    for (const text of texts) {
      const out = Redaction.redactText(text)
      for (const secret of ["eyJhbGciOiJSUzI1NiJ9.payload.sig", "rt-7f3a9c21", "hunter2-secret", "cs-1b2c3d4e", "at-99887766"]) expect(out).not.toContain(secret)
      expect(out).toContain(Redaction.REDACTED)
    }
    // What is not a secret stays readable.
    expect(Redaction.redactText("grant_type=password&username=alice&client_id=weaviate")).toBe("grant_type=password&username=alice&client_id=weaviate")
  })
})
