/**
 * Go's `time.Parse(time.RFC3339, value)` as Weaviate uses it for dates, with Go's exact error texts
 * (`parsing time "2024-01-01" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "T"`).
 */
const LAYOUT = "2006-01-02T15:04:05Z07:00"

const goQuote = (s: string): string => JSON.stringify(s)

export class TimeParseError extends Error {}

const cannotParse = (value: string, valueElem: string, layoutElem: string): TimeParseError =>
  new TimeParseError(
    `parsing time ${goQuote(value)} as ${goQuote(LAYOUT)}: cannot parse ${goQuote(valueElem)} as ${goQuote(layoutElem)}`
  )
const outOfRange = (value: string, what: string): TimeParseError =>
  new TimeParseError(`parsing time ${goQuote(value)}: ${what} out of range`)

const isDigit = (s: string, i: number): boolean => i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57

const getnum = (s: string, fixed: boolean): [number, string] | undefined => {
  if (!isDigit(s, 0)) return undefined
  if (!isDigit(s, 1)) return fixed ? undefined : [Number(s[0]), s.slice(1)]
  return [Number(s.slice(0, 2)), s.slice(2)]
}

const daysIn = (month: number, year: number): number => new Date(Date.UTC(year, month, 0)).getUTCDate()

/** Milliseconds since the epoch, or a TimeParseError with Go's message. */
export const parseRfc3339 = (value: string): number => {
  let rest = value
  const literal = (lit: string): void => {
    if (!rest.startsWith(lit)) throw cannotParse(value, rest, lit)
    rest = rest.slice(lit.length)
  }
  const num = (elem: string, fixed: boolean): number => {
    const r = getnum(rest, fixed)
    if (r === undefined) throw cannotParse(value, rest, elem)
    rest = r[1]
    return r[0]
  }
  if (rest.length < 4 || !isDigit(rest, 0) || !/^\d{4}$/.test(rest.slice(0, 4))) throw cannotParse(value, rest, "2006")
  const year = Number(rest.slice(0, 4))
  rest = rest.slice(4)
  literal("-")
  const month = num("01", true)
  if (month < 1 || month > 12) throw outOfRange(value, "month")
  literal("-")
  const day = num("02", true)
  if (day < 1 || day > 31) throw outOfRange(value, "day")
  literal("T")
  const hour = num("15", false)
  if (hour >= 24) throw outOfRange(value, "hour")
  literal(":")
  const minute = num("04", true)
  if (minute >= 60) throw outOfRange(value, "minute")
  literal(":")
  const second = num("05", true)
  if (second >= 60) throw outOfRange(value, "second")
  let fraction = 0
  if (rest.length >= 2 && (rest[0] === "." || rest[0] === ",") && isDigit(rest, 1)) {
    let n = 1
    while (isDigit(rest, n)) n++
    fraction = Number("0." + rest.slice(1, n))
    rest = rest.slice(n)
  }
  let offsetMinutes = 0
  if (rest.startsWith("Z")) {
    rest = rest.slice(1)
  } else {
    if (rest.length < 6 || rest[3] !== ":") throw cannotParse(value, rest, "Z07:00")
    const sign = rest[0]
    const hh = getnum(rest.slice(1, 3), true)
    const mm = getnum(rest.slice(4, 6), true)
    if ((sign !== "+" && sign !== "-") || hh === undefined || mm === undefined) throw cannotParse(value, rest, "Z07:00")
    if (hh[0] > 24) throw outOfRange(value, "time zone offset hour")
    if (mm[0] > 60) throw outOfRange(value, "time zone offset minute")
    offsetMinutes = (sign === "-" ? -1 : 1) * (hh[0] * 60 + mm[0])
    rest = rest.slice(6)
  }
  if (rest.length > 0) throw new TimeParseError(`parsing time ${goQuote(value)}: extra text: ${goQuote(rest)}`)
  if (day > daysIn(month, year)) throw outOfRange(value, "day")
  return Date.UTC(year, month - 1, day, hour, minute, second) + Math.round(fraction * 1000) - offsetMinutes * 60_000
}

export const isRfc3339 = (value: string): boolean => {
  try {
    parseRfc3339(value)
    return true
  } catch {
    return false
  }
}
