// Preloaded with `node --import` (through NODE_OPTIONS): registers a module hook that appends the URL
// of every module loaded from a file to the file named by LOADED_FILES_LOG, so a test can say which of
// the package's files a process loaded.
import { register } from "node:module"

const hooks = `
import { appendFileSync } from "node:fs"
export async function load(url, context, next) {
  if (url.startsWith("file:") && process.env.LOADED_FILES_LOG) appendFileSync(process.env.LOADED_FILES_LOG, url + "\\n")
  return next(url, context)
}
`
register(`data:text/javascript,${encodeURIComponent(hooks)}`)
