/** See alloc-probe.mjs. */
export declare const allocated: (
  startUsed: number,
  statistics: ReadonlyArray<{
    readonly beforeGC: { readonly heapStatistics: { readonly usedHeapSize: number } }
    readonly afterGC: { readonly heapStatistics: { readonly usedHeapSize: number } }
  }>,
  endUsed: number
) => number

/** What a window's collections cost (see alloc-probe.mjs). */
export interface Collected {
  readonly scavenges: number
  /** Main-thread pause of the scavenges, ms. */
  readonly scavengeMs: number
  /** Mark-compacts (full collections). */
  readonly fullCollections: number
  /** Main-thread pause of the full collections (and incremental marking steps), ms. */
  readonly fullMs: number
  /** Bytes the scavenges promoted to the old generation. */
  readonly promotedBytes: number
}

/** See alloc-probe.mjs. */
export declare const collected: (
  statistics: ReadonlyArray<{
    readonly gcType: string
    readonly cost: number
    readonly beforeGC: { readonly heapSpaceStatistics: ReadonlyArray<{ readonly spaceName: string; readonly spaceUsedSize: number }> }
    readonly afterGC: { readonly heapSpaceStatistics: ReadonlyArray<{ readonly spaceName: string; readonly spaceUsedSize: number }> }
  }>
) => Collected

/** Quantiles of one component of the requests' time, ms. */
export interface Quantiles {
  readonly p50: number
  readonly p99: number
  readonly max: number
}

/** Where the requests' time went on the server's side (WEAVIATE_MCP_STALL_PROBE=1; see alloc-probe.mjs). */
export interface Stalls {
  readonly requests: number
  /** From the `request` event to `response.end()`. */
  readonly work: Quantiles
  /** From `response.end()` to `finish`. */
  readonly drain: Quantiles
  /** From the previous `finish` on the same socket to this `request` event. */
  readonly turnaround: Quantiles
  /** From a connection's `connection` event to its first `request` event. */
  readonly firstRequest: Quantiles
  /** From the first `connection` event of the window to its last. */
  readonly connectionsSpreadMs: number
  /** From the window's opening to its first `connection` event. */
  readonly openedAfterMs: number
  readonly loopDelayMaxMs: number
  readonly loopDelayP99Ms: number
  readonly longestGcPauseMs: number
  /** The longest time without any response finishing. */
  readonly longestGapMs: number
}
