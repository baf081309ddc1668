// The command-line tests run the real binary: build its bundle from the current sources first.
import { buildCli } from "../scripts/build.mjs"

export default async function setup() {
  await buildCli()
}
