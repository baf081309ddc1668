/**
 * docs/configuration.md, "Memory": every bound the table states is the constant the code enforces,
 * with the same value, so the page cannot drift from the code.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { MAX_SESSION_CLIENTS } from "../../src/Activity/ActivityObserver.ts"
import { MAX_CLIENTS } from "../../src/Activity/Clients.ts"
import { MAX_CONSUMED } from "../../src/Approval/RequestState.ts"
import { MAX_TRACKED } from "../../src/Auth/RateLimiter.ts"
import { MAX_LISTEN_STREAMS } from "../../src/Mcp/Endpoint.ts"
import { defaultLimits } from "../../src/Mcp/HttpTransport.ts"
import { MAX_SESSIONS } from "../../src/Mcp/LegacySessions.ts"
import { MAX_QUEUED_FRAMES } from "../../src/Mcp/Subscriptions.ts"
import { ROOT } from "../support/Markdown.ts"

/** The rows of the table that follows the "## Memory" heading, as their cells. */
const memoryRows = (): Array<Array<string>> => {
  const text = NodeFs.readFileSync(NodePath.join(ROOT, "docs/configuration.md"), "utf8")
  const lines = text.slice(text.indexOf("\n## Memory\n")).split("\n")
  const header = lines.findIndex((l) => l.startsWith("| What is kept"))
  const rows: Array<Array<string>> = []
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith("|")) break
    rows.push(line.split("|").slice(1, -1).map((c) => c.trim()))
  }
  return rows
}

const shown = (n: number) => n.toLocaleString("en-US")

describe("docs/configuration.md, Memory", () => {
  const rows = memoryRows()

  it.each([
    ["MAX_SESSIONS", MAX_SESSIONS],
    ["MAX_SESSION_CLIENTS", MAX_SESSION_CLIENTS],
    ["MAX_CLIENTS", MAX_CLIENTS],
    ["MAX_TRACKED", MAX_TRACKED],
    ["MAX_CONSUMED", MAX_CONSUMED],
    ["MAX_LISTEN_STREAMS", MAX_LISTEN_STREAMS],
    ["MAX_QUEUED_FRAMES", MAX_QUEUED_FRAMES]
  ])("the bound named %s is stated with the code's value", (name, value) => {
    const stated = rows.filter((row) => row[2]!.includes(`\`${name}\``))
    expect(stated.length, `a row names ${name}`).toBeGreaterThan(0)
    // The number, then words of its unit, then the constant's name: `10,000 tokens (`MAX_TRACKED`)`.
    const bound = new RegExp(`(?<![\\d,])${shown(value)}(?![\\d,])[^()]*\\(\`${name}\`\\)`)
    for (const row of stated) expect(row[2]!, row[0]).toMatch(bound)
  })

  it("the calls in flight are bounded by the transport's connection slots, as stated", () => {
    const row = rows.find((r) => r[0]!.startsWith("Calls in flight"))
    expect(row?.[2]).toContain(`${defaultLimits.maxConnections} connection slots`)
  })
})
