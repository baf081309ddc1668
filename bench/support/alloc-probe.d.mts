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
