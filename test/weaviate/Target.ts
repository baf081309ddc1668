/**
 * The Weaviate the run tests against, as test/globalSetup.ts chose it (see TestWeaviate.ts). Its own
 * module, free of side effects, so the reporter and globalSetup can read it.
 */
export type TargetKind = "real" | "external" | "compatible"

export interface Target {
  readonly kind: TargetKind
  /** the Weaviate version under test */
  readonly version: string
  /** one line naming it, for the closing lines of `npm test` */
  readonly label: string
}

/** The run's target as globalSetup decided it (WEAVIATE_MCP_TEST_TARGET); compatible when run outside it. */
export const currentTarget = (): Target => {
  const raw = process.env["WEAVIATE_MCP_TEST_TARGET"]
  if (raw !== undefined) return JSON.parse(raw) as Target
  return { kind: "compatible", version: "1.39.0", label: "the Weaviate-compatible test instance (1.39 behaviour)" }
}
