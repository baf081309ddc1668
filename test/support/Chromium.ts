/**
 * Debian's headless Chromium for the browser tests, driven by `playwright-core` (no browser
 * download): where it is, whether it is installed, and a launch with the flags every test wants
 * (no sandbox or GPU, nothing fetched in the background) plus the test's own, such as
 * `--host-resolver-rules` that keep every name on loopback.
 */
import * as NodeFs from "node:fs"

export const PATH = "/usr/bin/chromium"

/** Whether Chromium is installed; when not, says which tests are skipped and how to install it. */
export const available = (tests: string): boolean => {
  const found = NodeFs.existsSync(PATH)
  if (!found) console.warn(`${tests} skipped: ${PATH} is not installed (apt-get install chromium)`)
  return found
}

export const launch = async (args: ReadonlyArray<string>): Promise<import("playwright-core").Browser> => {
  const { chromium } = await import("playwright-core")
  return chromium.launch({
    executablePath: PATH,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      ...args
    ]
  })
}
