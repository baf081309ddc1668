/**
 * Certificates for the HTTPS mode of the test instance, generated at start in pure JS
 * (node:crypto for keys and signatures, a tiny DER encoder for the X.509 structure):
 * a CA certificate and a leaf certificate for `localhost` / `127.0.0.1` signed by it.
 * Nothing is written to disk and no openssl binary is needed.
 */
import * as crypto from "node:crypto"

export interface GeneratedTls {
  readonly caPem: string
  readonly certPem: string
  readonly keyPem: string
}

const length = (n: number): Buffer => {
  if (n < 0x80) return Buffer.from([n])
  const bytes: Array<number> = []
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff)
  return Buffer.from([0x80 | bytes.length, ...bytes])
}
const tlv = (tag: number, content: Buffer): Buffer => Buffer.concat([Buffer.from([tag]), length(content.length), content])
const seq = (...parts: ReadonlyArray<Buffer>): Buffer => tlv(0x30, Buffer.concat(parts))
const set = (...parts: ReadonlyArray<Buffer>): Buffer => tlv(0x31, Buffer.concat(parts))
const integer = (value: Buffer): Buffer => tlv(0x02, value[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), value]) : value)
const bool = (v: boolean): Buffer => tlv(0x01, Buffer.from([v ? 0xff : 0]))
const octets = (b: Buffer): Buffer => tlv(0x04, b)
const bits = (b: Buffer, unused = 0): Buffer => tlv(0x03, Buffer.concat([Buffer.from([unused]), b]))
const utf8 = (s: string): Buffer => tlv(0x0c, Buffer.from(s, "utf8"))
const explicit = (n: number, content: Buffer): Buffer => tlv(0xa0 | n, content)
const oid = (dotted: string): Buffer => {
  const parts = dotted.split(".").map(Number)
  const out: Array<number> = [40 * parts[0]! + parts[1]!]
  for (const p of parts.slice(2)) {
    const chunk: Array<number> = [p & 0x7f]
    for (let v = Math.floor(p / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80)
    out.push(...chunk)
  }
  return tlv(0x06, Buffer.from(out))
}
const time = (d: Date): Buffer => {
  const iso = d.toISOString().replace(/[-:T]/g, "").slice(0, 14) + "Z" // YYYYMMDDHHMMSSZ
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2), "ascii")) : tlv(0x18, Buffer.from(iso, "ascii"))
}
const name = (cn: string): Buffer => seq(set(seq(oid("2.5.4.3"), utf8(cn))), set(seq(oid("2.5.4.10"), utf8("weaviate-mcp test instance"))))
const extension = (id: string, critical: boolean, value: Buffer): Buffer =>
  critical ? seq(oid(id), bool(true), octets(value)) : seq(oid(id), octets(value))

const ECDSA_SHA256 = seq(oid("1.2.840.10045.4.3.2"))

interface CertSpec {
  readonly subject: string
  readonly issuer: string
  readonly publicKey: crypto.KeyObject
  readonly signingKey: crypto.KeyObject
  readonly issuerKeyId: Buffer
  readonly isCa: boolean
}

const keyId = (key: crypto.KeyObject): Buffer =>
  crypto.createHash("sha1").update(key.export({ type: "spki", format: "der" })).digest()

const certificate = (spec: CertSpec): string => {
  const spki = spec.publicKey.export({ type: "spki", format: "der" })
  const now = Date.now()
  const extensions: Array<Buffer> = [
    extension("2.5.29.19", true, spec.isCa ? seq(bool(true)) : seq()),
    // keyUsage: CA = digitalSignature|keyCertSign|cRLSign, leaf = digitalSignature
    extension("2.5.29.15", true, spec.isCa ? bits(Buffer.from([0x86]), 1) : bits(Buffer.from([0x80]), 7)),
    extension("2.5.29.14", false, octets(keyId(spec.publicKey))),
    extension("2.5.29.35", false, seq(tlv(0x80, spec.issuerKeyId)))
  ]
  if (!spec.isCa) {
    extensions.push(extension("2.5.29.37", false, seq(oid("1.3.6.1.5.5.7.3.1"))))
    extensions.push(
      extension("2.5.29.17", false, seq(tlv(0x82, Buffer.from("localhost", "ascii")), tlv(0x87, Buffer.from([127, 0, 0, 1]))))
    )
  }
  const tbs = seq(
    explicit(0, integer(Buffer.from([2]))),
    integer(crypto.randomBytes(16)),
    ECDSA_SHA256,
    name(spec.issuer),
    seq(time(new Date(now - 3_600_000)), time(new Date(now + 365 * 86_400_000))),
    name(spec.subject),
    spki,
    explicit(3, seq(...extensions))
  )
  const signature = crypto.sign("sha256", tbs, spec.signingKey)
  const der = seq(tbs, ECDSA_SHA256, bits(signature))
  const b64 = der.toString("base64").replace(/(.{64})/g, "$1\n").trimEnd()
  return `-----BEGIN CERTIFICATE-----\n${b64}\n-----END CERTIFICATE-----\n`
}

/** A fresh CA and a `localhost`/`127.0.0.1` server certificate signed by it (EC P-256). */
export const generateTls = (): GeneratedTls => {
  const ca = crypto.generateKeyPairSync("ec", { namedCurve: "P-256" })
  const leaf = crypto.generateKeyPairSync("ec", { namedCurve: "P-256" })
  const caKeyId = keyId(ca.publicKey)
  const caPem = certificate({
    subject: "weaviate-mcp test CA",
    issuer: "weaviate-mcp test CA",
    publicKey: ca.publicKey,
    signingKey: ca.privateKey,
    issuerKeyId: caKeyId,
    isCa: true
  })
  const certPem = certificate({
    subject: "localhost",
    issuer: "weaviate-mcp test CA",
    publicKey: leaf.publicKey,
    signingKey: ca.privateKey,
    issuerKeyId: caKeyId,
    isCa: false
  })
  return { caPem, certPem, keyPem: leaf.privateKey.export({ type: "pkcs8", format: "pem" }).toString() }
}
