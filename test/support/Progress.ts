/**
 * One line saying what a slow part of the suite is doing, while it does it (building the CLI and the
 * real Weaviate, starting a Weaviate that is slow to come up, the dialog and browser tests). It goes
 * straight to the terminal: unlike a test's console lines, which are captured and shown only for a
 * failing test (test/support/ReadableReporter.ts), a newcomer waiting on the first run should see it.
 */
export const progress = (line: string): void => {
  process.stderr.write(`… ${line}\n`)
}
