/**
 * Pages of the listing tools (`list_tables`, `search_schema`, `list_tenants`): 100 items by default,
 * in name order, with an opaque cursor that names the last item of the page and what it was a page
 * of (the tool, the connection, the collection, the filter). Items added or removed between pages
 * neither repeat nor shift the rest; a cursor passed with another collection or filter is refused.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { intBetween } from "./Parameters.ts"
import * as ToolError from "./ToolError.ts"

/** Items per page when `limit` is not given. @category constants */
export const DEFAULT_PAGE = 100

/** The most items one page may hold (`limit`). @category constants */
export const MAX_PAGE = 1000

/** @category schemas */
export const Limit = intBetween(1, MAX_PAGE).annotations({
  description: `Items per page, 1 to ${MAX_PAGE} (default ${DEFAULT_PAGE}).`
})

/** @category schemas */
export const Cursor = Schema.String.pipe(Schema.minLength(1)).annotations({
  description: "The nextCursor of the previous page, with the same other arguments; omit for the first page."
})

/** What a cursor is a page of: another value refuses the cursor. */
type Scope = Readonly<Record<string, string | number | undefined>>

const entries = (scope: Scope) => Object.keys(scope).sort().map((k) => [k, scope[k] ?? null])

/**
 * The cursor after `last`, for the listing `scope`.
 *
 * @category constructors
 */
export const encode = (scope: Scope, last: string): string =>
  Buffer.from(JSON.stringify({ s: entries(scope), a: last }), "utf8").toString("base64url")

/**
 * The last item named by a cursor of this listing, or `invalid_argument` for a cursor that is not
 * one, or that belongs to another tool, connection, collection or filter.
 *
 * @category combinators
 */
export const after = (tool: string, scope: Scope, cursor: string | undefined): Effect.Effect<string | undefined, ToolError.ToolFailure> => {
  if (cursor === undefined) return Effect.succeed(undefined)
  let value: { s?: unknown; a?: unknown } | undefined
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as { s?: unknown; a?: unknown }
  } catch {
    value = undefined
  }
  if (typeof value !== "object" || value === null || typeof value.a !== "string" || !Array.isArray(value.s)) {
    return Effect.fail(ToolError.fail("invalid_argument", `cursor is not a nextCursor of ${tool}`))
  }
  if (JSON.stringify(value.s) !== JSON.stringify(entries(scope))) {
    return Effect.fail(
      ToolError.fail("invalid_argument", `cursor belongs to another ${tool} listing (another connection, collection or filter): pass the same arguments as for the page it came from, or omit cursor to start again`)
    )
  }
  return Effect.succeed(value.a)
}

/**
 * The text line that ends a page that is not the last: how many are shown of how many, and how to
 * narrow or page.
 *
 * @category rendering
 */
export const moreLine = (shown: number, total: number, noun: string, narrow: string, cursor: string): string =>
  `[page: ${shown} of ${total} ${noun} shown; narrow with ${narrow}, or call again with cursor ${cursor} for the next page]`

/**
 * How old a cached listing is, when it is older than the cache's time to live: "" otherwise.
 *
 * @category rendering
 */
export const staleLine = (read: { readonly stale: boolean; readonly ageMs: number }, what: string): string =>
  read.stale ? `[stale: ${what} as read ${(read.ageMs / 1000).toFixed(1)} s ago; a fresh read is under way]` : ""
