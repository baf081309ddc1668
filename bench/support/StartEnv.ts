/**
 * The environment of the Node processes whose start a benchmark times: this process's, without
 * `NODE_EXTRA_CA_CERTS`. Node reads and parses that file at every start, before any script runs:
 * on the machine these benchmarks were written on it names the system's 144 certificates and took
 * 47 of the 76 ms of `node -e 0` (29 ms without it). A fixed cost paid by both sides of a ratio
 * flatters it, and a user's machine seldom sets the variable, so timed starts go without it; both
 * sides alike. `BENCH_KEEP_NODE_EXTRA_CA_CERTS=1` keeps it (docs/benchmarks.md, "Method").
 */
export const keptExtraCaCerts = process.env.BENCH_KEEP_NODE_EXTRA_CA_CERTS === "1"

/** This process's environment with `extra`, for a process whose start is timed. */
export const startEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra }
  if (!keptExtraCaCerts) delete env["NODE_EXTRA_CA_CERTS"]
  return env
}

/** Prints what the timed starts do about it, when this machine sets the variable. */
export const printNote = (): void => {
  if (process.env["NODE_EXTRA_CA_CERTS"] === undefined) return
  console.log(
    keptExtraCaCerts
      ? "NODE_EXTRA_CA_CERTS kept in the timed starts (BENCH_KEEP_NODE_EXTRA_CA_CERTS=1): every node start parses it"
      : "NODE_EXTRA_CA_CERTS removed from the timed starts, ours and the baseline's alike (node parses it at every start)"
  )
}
