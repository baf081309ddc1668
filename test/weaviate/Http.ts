/** Replies in Weaviate's two error shapes, and Go-like JSON body decoding errors. */
import { goJson } from "./Json.ts"

export interface HttpReply {
  readonly status: number
  readonly headers?: Readonly<Record<string, string>>
  /** undefined = no body at all (Weaviate's bodiless 404s and 204s) */
  readonly body?: string
}

export const json = (status: number, value: unknown): HttpReply => ({
  status,
  headers: { "content-type": "application/json" },
  body: goJson(value)
})

/** Handler-level error: `{"error":[{"message":"..."}]}`. */
export const handlerError = (status: number, message: string): HttpReply => json(status, { error: [{ message }] })

/** go-swagger layer error: `{"code":N,"message":"..."}`, codes >= 600 sent as HTTP 422. */
export const swaggerError = (code: number, message: string, headers?: Record<string, string>): HttpReply => ({
  status: code >= 600 ? 422 : code,
  headers: { "content-type": "application/json", ...headers },
  body: goJson({ code, message })
})

export const bodiless = (status: number): HttpReply => ({ status })

export class BodyError extends Error {
  constructor(readonly reply: HttpReply) {
    super(reply.body ?? "")
  }
}

/** encoding/json's syntax error text for an invalid document (its scanner's messages). */
export const goJsonSyntaxError = (text: string): string | undefined => {
  let i = 0
  const ws = () => {
    while (i < text.length && " \t\r\n".includes(text[i]!)) i++
  }
  const q = (c: string) => (c === "'" ? "'\\''" : c === "\n" ? "'\\n'" : c === "\t" ? "'\\t'" : `'${c}'`)
  class Fail extends Error {}
  const fail = (context: string): never => {
    if (i >= text.length) throw new Fail("unexpected EOF")
    throw new Fail(`invalid character ${q(text[i]!)} ${context}`)
  }
  const literal = (word: string) => {
    for (const ch of word) {
      if (i >= text.length) fail("")
      if (text[i] !== ch) fail(`in literal ${word} (expecting ${q(ch)})`)
      i++
    }
  }
  const str = () => {
    i++
    while (i < text.length && text[i] !== '"') {
      if (text.charCodeAt(i) < 0x20) fail("in string literal")
      if (text[i] === "\\") i++
      i++
    }
    if (i >= text.length) fail("")
    i++
  }
  const num = () => {
    if (text[i] === "-") i++
    if (i >= text.length) fail("")
    if (!/[0-9]/.test(text[i]!)) fail("in numeric literal")
    while (i < text.length && /[0-9]/.test(text[i]!)) i++
    if (text[i] === ".") {
      i++
      if (i >= text.length) fail("")
      if (!/[0-9]/.test(text[i]!)) fail("after decimal point in numeric literal")
      while (i < text.length && /[0-9]/.test(text[i]!)) i++
    }
    if (text[i] === "e" || text[i] === "E") {
      i++
      if (text[i] === "+" || text[i] === "-") i++
      if (i >= text.length) fail("")
      if (!/[0-9]/.test(text[i]!)) fail("in exponent of numeric literal")
      while (i < text.length && /[0-9]/.test(text[i]!)) i++
    }
  }
  const value = (): void => {
    ws()
    const c = text[i]
    if (c === "{") {
      i++
      ws()
      if (text[i] === "}") return void i++
      for (;;) {
        ws()
        if (text[i] !== '"') fail("looking for beginning of object key string")
        str()
        ws()
        if (text[i] !== ":") fail("after object key")
        i++
        value()
        ws()
        if (text[i] === ",") {
          i++
          continue
        }
        if (text[i] === "}") return void i++
        fail("after object key:value pair")
      }
    }
    if (c === "[") {
      i++
      ws()
      if (text[i] === "]") return void i++
      for (;;) {
        value()
        ws()
        if (text[i] === ",") {
          i++
          continue
        }
        if (text[i] === "]") return void i++
        fail("after array element")
      }
    }
    if (c === '"') return str()
    if (c === "t") return literal("true")
    if (c === "f") return literal("false")
    if (c === "n") return literal("null")
    if (c !== undefined && /[-0-9]/.test(c)) return num()
    fail("looking for beginning of value")
  }
  try {
    value()
    ws()
    if (i < text.length) fail("after top-level value")
    return undefined
  } catch (e) {
    if (e instanceof Fail) return e.message
    throw e
  }
}

const goDecodeError = (text: string): string => goJsonSyntaxError(text) ?? "unexpected EOF"

/** Decodes a required JSON body with go-swagger's errors (422 required, 400 parse). */
export const decodeBody = (text: string, model: string, expect: "object" | "array" | "any" = "object"): unknown => {
  if (text.trim() === "") throw new BodyError(swaggerError(602, "body in body is required"))
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new BodyError(swaggerError(400, `parsing body body from "" failed, because ${goDecodeError(text)}`))
  }
  const kind = Array.isArray(value) ? "array" : value === null ? "null" : typeof value === "object" ? "object" : typeof value === "number" ? "number" : typeof value
  if (value === null) throw new BodyError(swaggerError(602, "body in body is required"))
  if (expect !== "any" && kind !== expect) {
    throw new BodyError(swaggerError(400, `parsing body body from "" failed, because json: cannot unmarshal ${kind} into Go value of type ${model}`))
  }
  return value
}
