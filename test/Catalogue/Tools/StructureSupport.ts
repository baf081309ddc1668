/**
 * What the structure and tenant tool tests share: a fresh principal whose first access is granted.
 */
import { type Harness, success, token } from "./support.ts"

let counter = 0

/** A fresh principal whose first access to the connection is granted; the dialog and request logs are cleared after. */
export const fresh = async (h: Harness, access: "readOnly" | "readWrite" | "fullAccess", connection = "local") => {
  const principal = token(access, { id: `tok-structure-${access}-${++counter}` })
  h.dialog.answer = true
  success(h, "list_tables", await h.call("list_tables", { connection_id: h.ids[connection] }, { principal }))
  h.dialog.asked.length = 0
  h.w.clearRequests()
  return principal
}
