// Preloaded with `node --import` (through NODE_OPTIONS): registers a module hook that appends the URL
// of every module loaded from a file to the file named by LOADED_FILES_LOG, so a test can say which of
// the package's files a process loaded. The CLI bundle is not a module to Node: bin/weaviate-mcp.js
// reads it and runs it through vm.Script, so every `.cjs` file opened with fs.openSync or read with
// fs.readFileSync (by its path) is logged too. With LOADED_BUILTINS_LOG, Node's own modules the
// process loaded (`process.moduleLoadList`) are written to that file at its exit.
import * as NodeFs from "node:fs"
import { register, syncBuiltinESMExports } from "node:module"
import { pathToFileURL } from "node:url"

const hooks = `
import { appendFileSync } from "node:fs"
export async function load(url, context, next) {
  if (url.startsWith("file:") && process.env.LOADED_FILES_LOG) appendFileSync(process.env.LOADED_FILES_LOG, url + "\\n")
  return next(url, context)
}
`
register(`data:text/javascript,${encodeURIComponent(hooks)}`)

const logged = (path) => {
  if (typeof path === "string" && path.endsWith(".cjs") && process.env.LOADED_FILES_LOG) {
    NodeFs.appendFileSync(process.env.LOADED_FILES_LOG, pathToFileURL(path).href + "\n")
  }
}
const readFileSync = NodeFs.default.readFileSync
NodeFs.default.readFileSync = function (path, ...rest) {
  logged(path)
  return readFileSync.call(this, path, ...rest)
}
const openSync = NodeFs.default.openSync
NodeFs.default.openSync = function (path, ...rest) {
  logged(path)
  return openSync.call(this, path, ...rest)
}
syncBuiltinESMExports()

if (process.env.LOADED_BUILTINS_LOG) {
  const file = process.env.LOADED_BUILTINS_LOG
  process.once("exit", () => NodeFs.writeFileSync(file, process.moduleLoadList.join("\n")))
}
