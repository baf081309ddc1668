/**
 * Pages of the four list methods: 50 items each, `nextCursor` when more remain. A cursor is opaque,
 * tamper-evident (HMAC-SHA256 with a secret made when the daemon starts) and bound to the method
 * that issued it; a forged, altered or foreign cursor is `-32602`. Cursors do not outlive the daemon,
 * which is fine: the lists they page through do not either.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as NodeCrypto from "node:crypto"
import { InvalidParams } from "../Schema/McpErrors.ts"

/** @category constants */
export const PAGE_SIZE = 50

/** @category models */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly nextCursor: string | undefined
}

/** @category errors */
export const badCursor = (): InvalidParams => new InvalidParams({ message: "Invalid cursor" })

/**
 * @category services
 */
export class Pagination extends Context.Tag("weaviate-mcp/Pagination")<Pagination, {
  /** The page of `items` that `cursor` (of `method`) points at. */
  readonly page: <A>(method: string, items: ReadonlyArray<A>, cursor: string | undefined) => Either.Either<Page<A>, InvalidParams>
  /** The offset a cursor of `method` stands for (`Left` when it is not one of ours). */
  readonly offsetOf: (method: string, cursor: string) => Either.Either<number, InvalidParams>
}>() {
  /** With a given secret (tests); the daemon uses `layer`, with a random one. */
  static readonly make = (secret: Uint8Array, pageSize: number = PAGE_SIZE): Context.Tag.Service<Pagination> => {
    const sign = (method: string, offset: number) =>
      NodeCrypto.createHmac("sha256", secret).update(`${method}\n${offset}`).digest("base64url")
    const cursorFor = (method: string, offset: number) => `${offset.toString(36)}.${sign(method, offset)}`
    const offsetOf = (method: string, cursor: string): Either.Either<number, InvalidParams> => {
      const dot = cursor.indexOf(".")
      if (dot <= 0 || dot > 12) return Either.left(badCursor())
      const encoded = cursor.slice(0, dot)
      if (!/^[0-9a-z]+$/.test(encoded)) return Either.left(badCursor())
      const offset = Number.parseInt(encoded, 36)
      const expected = Buffer.from(sign(method, offset))
      const given = Buffer.from(cursor.slice(dot + 1))
      if (expected.length !== given.length || !NodeCrypto.timingSafeEqual(expected, given)) return Either.left(badCursor())
      return Either.right(offset)
    }
    const page = <A>(method: string, items: ReadonlyArray<A>, cursor: string | undefined): Either.Either<Page<A>, InvalidParams> => {
      let offset = 0
      if (cursor !== undefined) {
        const decoded = offsetOf(method, cursor)
        if (Either.isLeft(decoded)) return Either.left(decoded.left)
        offset = decoded.right
      }
      const end = offset + pageSize
      return Either.right({
        items: offset === 0 && end >= items.length ? items : items.slice(offset, end),
        nextCursor: end < items.length ? cursorFor(method, end) : undefined
      })
    }
    return Pagination.of({ page, offsetOf })
  }

  /** @category layers */
  static readonly layer = Layer.sync(Pagination, () => Pagination.make(NodeCrypto.randomBytes(32)))
}
