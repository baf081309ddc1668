// Preloaded into `weaviate-mcp serve` (NODE_OPTIONS=--require …) by test/Package/CompileCache.test.ts:
// when serve emits `weaviate-mcp:started` (this listener runs before the bin's own), records the size
// of V8's young generation, then allocates short-lived objects with survivors, enough for V8 to grow
// a young generation that may grow, and records the size again. Writes
// `{ "atStart": bytes, "afterChurn": bytes }` to WEAVIATE_MCP_TEST_YOUNG_FILE.
const NodeFs = require("node:fs")
const NodeV8 = require("node:v8")

const youngBytes = () => NodeV8.getHeapSpaceStatistics().find((space) => space.space_name === "new_space").space_size

process.once("weaviate-mcp:started", () => {
  const atStart = youngBytes()
  setImmediate(() => {
    // Bounded: 40 rounds of 50,000 objects, a tenth of them kept for a while.
    let kept = []
    for (let round = 0; round < 40; round++) {
      for (let i = 0; i < 50_000; i++) {
        const object = { round, i, text: `row ${i}` }
        if (i % 10 === 0) kept.push(object)
      }
      if (kept.length > 50_000) kept = kept.slice(25_000)
    }
    NodeFs.writeFileSync(process.env.WEAVIATE_MCP_TEST_YOUNG_FILE, JSON.stringify({ atStart, afterChurn: youngBytes(), kept: kept.length }))
  })
})
