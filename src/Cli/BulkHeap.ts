/**
 * The heap of a bulk command (`export`, `import`). Neither keeps rows: after every full collection of
 * an export of 100,000 rows with 384-dimension vectors the heap holds the same 27 MB. But a page of
 * such rows arrives as one string of megabytes, which V8 keeps outside its young generation, where
 * only a full collection frees it; and V8 lets the heap grow to about four times what survived the
 * last full collection before it runs the next one. So the peak floated between 190 and 240 MB, and
 * which run hit which peak was chance: an export of 100,000 rows peaked 10 to 53 MB above one of 10,000.
 *
 * With V8's `--heap-growing-percent=50` the next full collection comes at 1.5 times what survived:
 * the peak was 162-180 MB at either size, and the growth from 10,000 to 100,000 rows -9 to +12 MB
 * over eleven runs (within 10 MB in ten), for about 5% more time on a synthetic export
 * (`bench:bulk-memory`; docs/export-import.md). 25% lowered the peak but not the spread, for 15% more
 * time. V8 reads the flag each time it sets the limit, so it works when set at run time
 * (`--max-old-space-size` does not); a value given on node's command line is left alone.
 *
 * @since 0.1.0
 */
import * as NodeV8 from "node:v8"

/** @category constants */
export const HEAP_GROWING_PERCENT = 50

const FLAG = "--heap-growing-percent"

/**
 * Whether this process was started with its own `--heap-growing-percent` (on node's command line:
 * `NODE_OPTIONS` does not take it).
 *
 * @category predicates
 */
export const givenByUser = (execArgv: ReadonlyArray<string> = process.execArgv): boolean =>
  execArgv.some((arg) => arg === FLAG || arg.startsWith(`${FLAG}=`) || arg.startsWith("--heap_growing_percent"))

/**
 * Sets `--heap-growing-percent` for the rest of the process, unless it was given when Node started.
 *
 * @category constructors
 */
export const bound = (): void => {
  if (!givenByUser()) NodeV8.setFlagsFromString(`${FLAG}=${HEAP_GROWING_PERCENT}`)
}
