/** See lean-contract.mjs. */
export declare const leanToken: () => string
export declare const leanIntake: (token: string) => (request: unknown, chunks: ReadonlyArray<Uint8Array>) => number | Record<string, unknown>
export declare const openLeanLines: (dir: string) => {
  readonly previous: string
  readonly append: (members: Record<string, unknown>, logLine: string) => void
}
