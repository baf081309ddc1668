/** See alloc-probe.mjs. */
export declare const allocated: (
  startUsed: number,
  statistics: ReadonlyArray<{
    readonly beforeGC: { readonly heapStatistics: { readonly usedHeapSize: number } }
    readonly afterGC: { readonly heapStatistics: { readonly usedHeapSize: number } }
  }>,
  endUsed: number
) => number
