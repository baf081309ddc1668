/**
 * The write tools and their approvals in process: every row of the "Approval of a write" state table,
 * Safe Mode, AI policy, first access, per-row results, and the write reaching the instance exactly
 * once in every accepted path and never in the others (asserted on the instance's request log).
 */
import * as Layer from "effect/Layer"
import { layer } from "@effect/vitest"
import { describe, expect, it } from "vitest"
import { Dialog } from "../../../src/Approval/Dialog.ts"
import { sampleId } from "../../weaviate/SampleData.ts"
import {
  approved,
  completed,
  declined,
  type Harness,
  inputRequired,
  harnessLayer,
  makeHarness,
  protocolError,
  success,
  token,
  toolError,
  withHarness,
  writesTo
} from "./support.ts"


let principalCounter = 0
/** A fresh principal (first access is remembered per principal and connection) whose first access is granted. */
const fresh = async (h: Harness, access: "readOnly" | "readWrite" | "fullAccess", connection = "local") => {
  const principal = token(access, { id: `tok-${access}-${++principalCounter}` })
  h.dialog.answer = true
  success(h, "list_tables", await h.call("list_tables", { connection_id: h.ids[connection] }, { principal }))
  return principal
}

const newRow = (title: string) => ({ properties: { title, wordCount: 1 } })
const insertArgs = (h: Harness, connection = "local", title = "new article") => ({
  connection_id: h.ids[connection],
  table: "Article",
  rows: [newRow(title)]
})

const test = withHarness((h) => {
  h.dialog.answer = true
  h.dialog.asked.length = 0
  h.w.clearRequests()
})

layer(harnessLayer(), { excludeTestServices: true, timeout: "3 minutes" })('write tools', (it) => {
  describe("approval of a write with a client that declared elicitation", () => {
    it.effect("the call returns input_required with the exact statement and a signed requestState; nothing is written", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess")
        h.w.clearRequests()
        const asked = inputRequired(await h.call("insert_rows", insertArgs(h), { principal, elicitation: true }))
        const request = asked.inputRequests.approve_statement as any
        expect(request.method).toBe("elicitation/create")
        expect(request.params.mode).toBe("form")
        expect(request.params.requestedSchema.required).toEqual(["approved"])
        const description: string = request.params.requestedSchema.properties.approved.description
        expect(description).toBe(`POST /v1/objects\n${JSON.stringify({ class: "Article", properties: { title: "new article", wordCount: 1 } })}`)
        expect(asked.requestState.length).toBeGreaterThan(20)
        expect(writesTo(h.w)).toEqual([])
      }))

    it.effect("accept + approved by a fullAccess token runs the write exactly once with no second prompt", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess")
        const args = insertArgs(h, "local", "approved once")
        const asked = inputRequired(await h.call("insert_rows", args, { principal, elicitation: true }))
        h.w.clearRequests()
        h.dialog.asked.length = 0
        const { structured, text } = success(
          h,
          "insert_rows",
          await h.call("insert_rows", args, { principal, elicitation: true, requestState: asked.requestState, inputResponses: approved })
        )
        expect(structured.applied).toBe(1)
        expect(text).toBe("Article: 1 row inserted")
        expect(structured.results[0].row).toBe(1)
        expect(structured.approvedBy).toBe("form")
        expect(writesTo(h.w).map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/objects"])
        expect(h.dialog.asked).toEqual([])
      }))

    it.effect("a readWrite token under Safe Mode confirm gets a second confirmation on the user's machine", () =>
      test(async (h) => {
        const principal = await fresh(h, "readWrite")
        const args = insertArgs(h, "local", "confirmed twice")
        const asked = inputRequired(await h.call("insert_rows", args, { principal, elicitation: true }))
        h.dialog.asked.length = 0
        h.w.clearRequests()
        const { structured } = success(
          h,
          "insert_rows",
          await h.call("insert_rows", args, { principal, elicitation: true, requestState: asked.requestState, inputResponses: approved })
        )
        expect(structured.approvedBy).toBe("exec")
        expect(h.dialog.asked).toHaveLength(1)
        expect(h.dialog.asked[0]!.statement).toContain("confirmed twice")
        expect(writesTo(h.w)).toHaveLength(1)
      }))

    it.effect("the user's 'no' in that second confirmation is denied and writes nothing", () =>
      test(async (h) => {
        const principal = await fresh(h, "readWrite")
        const args = insertArgs(h, "local", "refused on the machine")
        const asked = inputRequired(await h.call("insert_rows", args, { principal, elicitation: true }))
        h.dialog.answer = false
        h.w.clearRequests()
        toolError(await h.call("insert_rows", args, { principal, elicitation: true, requestState: asked.requestState, inputResponses: approved }), "denied")
        expect(writesTo(h.w)).toEqual([])
      }))

    it.effect("a readWrite token under Safe Mode silent executes after the accepted form", () =>
      test(async (h) => {
        const principal = await fresh(h, "readWrite", "silent")
        const args = insertArgs(h, "silent", "silent mode")
        const asked = inputRequired(await h.call("insert_rows", args, { principal, elicitation: true }))
        h.dialog.asked.length = 0
        h.w.clearRequests()
        success(h, "insert_rows", await h.call("insert_rows", args, { principal, elicitation: true, requestState: asked.requestState, inputResponses: approved }))
        expect(h.dialog.asked).toEqual([])
        expect(writesTo(h.w)).toHaveLength(1)
      }))

    it.effect("a declined form is the tool error denied; nothing is written", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess")
        const args = insertArgs(h)
        const asked = inputRequired(await h.call("insert_rows", args, { principal, elicitation: true }))
        h.w.clearRequests()
        toolError(await h.call("insert_rows", args, { principal, elicitation: true, requestState: asked.requestState, inputResponses: declined }), "denied")
        const unchecked = inputRequired(await h.call("insert_rows", args, { principal, elicitation: true }))
        toolError(
          await h.call("insert_rows", args, {
            principal,
            elicitation: true,
            requestState: unchecked.requestState,
            inputResponses: { approve_statement: { action: "accept", content: { approved: false } } }
          }),
          "denied"
        )
        expect(writesTo(h.w)).toEqual([])
      }))

    it.effect("a repeat without an answer asks again", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess")
        const args = insertArgs(h)
        const asked = inputRequired(await h.call("insert_rows", args, { principal, elicitation: true }))
        const again = inputRequired(await h.call("insert_rows", args, { principal, elicitation: true, requestState: asked.requestState }))
        expect(again.requestState).not.toBe(asked.requestState)
      }))

    it.effect("a replayed state is -32602 and the write does not run a second time", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess")
        const args = insertArgs(h, "local", "replayed")
        const asked = inputRequired(await h.call("insert_rows", args, { principal, elicitation: true }))
        const repeat = { principal, elicitation: true, requestState: asked.requestState, inputResponses: approved }
        h.w.clearRequests()
        success(h, "insert_rows", await h.call("insert_rows", args, repeat))
        protocolError(await h.call("insert_rows", args, repeat), -32602)
        expect(writesTo(h.w)).toHaveLength(1)
      }))

    it.effect("a changed argument, an altered state, another principal or an expired state is -32602; nothing is written", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess")
        const args = insertArgs(h, "local", "bound")
        const ask = async () => inputRequired(await h.call("insert_rows", args, { principal, elicitation: true })).requestState
        h.w.clearRequests()
        protocolError(
          await h.call("insert_rows", insertArgs(h, "local", "changed"), { principal, elicitation: true, requestState: await ask(), inputResponses: approved }),
          -32602
        )
        const state = await ask()
        const altered = state.slice(0, -2) + (state.endsWith("AA") ? "BB" : "AA")
        protocolError(await h.call("insert_rows", args, { principal, elicitation: true, requestState: altered, inputResponses: approved }), -32602)
        const other = await fresh(h, "fullAccess")
        protocolError(await h.call("insert_rows", args, { principal: other, elicitation: true, requestState: await ask(), inputResponses: approved }), -32602)
        protocolError(
          await h.call("insert_rows", args, {
            principal,
            elicitation: true,
            requestState: await ask(),
            inputResponses: approved,
            clockAt: Date.now() + 5 * 60_000 + 1_000
          }),
          -32602
        )
        expect(writesTo(h.w)).toEqual([])
      }))
  })

  describe("approval of a write with a client without elicitation", () => {
    it.effect("the call blocks on the user's dialog, then completes; the write runs once", () =>
      test(async (h) => {
        const principal = await fresh(h, "readWrite")
        h.dialog.asked.length = 0
        h.w.clearRequests()
        const { structured } = success(h, "insert_rows", await h.call("insert_rows", insertArgs(h, "local", "dialog"), { principal }))
        expect(structured.approvedBy).toBe("exec")
        expect(h.dialog.asked).toHaveLength(1)
        expect(h.dialog.asked[0]!.statement).toContain("POST /v1/objects")
        expect(writesTo(h.w)).toHaveLength(1)
      }))

    it.effect("a legacy client never gets input_required, even when it declared elicitation", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess")
        h.dialog.asked.length = 0
        h.w.clearRequests()
        success(h, "insert_rows", await h.call("insert_rows", insertArgs(h, "local", "legacy"), { principal, era: "legacy", elicitation: true }))
        expect(h.dialog.asked).toHaveLength(1)
        expect(writesTo(h.w)).toHaveLength(1)
      }))

    it.effect("the user's refusal is denied; nothing is written", () =>
      test(async (h) => {
        const principal = await fresh(h, "readWrite")
        h.dialog.answer = false
        h.w.clearRequests()
        toolError(await h.call("insert_rows", insertArgs(h), { principal }), "denied")
        expect(writesTo(h.w)).toEqual([])
      }))
  })

  describe("policies", () => {
    it.effect("Safe Mode readOnly refuses writes with denied, without asking", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess", "guarded")
        h.dialog.asked.length = 0
        h.w.clearRequests()
        toolError(await h.call("insert_rows", insertArgs(h, "guarded"), { principal }), "denied")
        expect(h.dialog.asked).toEqual([])
        expect(writesTo(h.w)).toEqual([])
      }))

    it.effect("an AI policy of readOnly refuses writes with -33007", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess", "aiRead")
        protocolError(await h.call("insert_rows", insertArgs(h, "aiRead"), { principal }), -33007)
      }))

    it.effect("a readOnly token cannot write (-33007)", () =>
      test(async (h) => {
        const principal = await fresh(h, "readOnly")
        protocolError(await h.call("delete_rows", { connection_id: h.ids.local, table: "Article", uuids: [sampleId(2, 0)] }, { principal }), -33007)
        expect(writesTo(h.w)).toEqual([])
      }))

    it.effect("first access asks once per token and connection, and a refusal holds (-33007)", () =>
      test(async (h) => {
        const principal = token("readOnly", { id: "tok-first-access" })
        h.dialog.asked.length = 0
        success(h, "list_tables", await h.call("list_tables", { connection_id: h.ids.local }, { principal }))
        success(h, "list_tables", await h.call("list_tables", { connection_id: h.ids.local }, { principal }))
        expect(h.dialog.asked.map((q) => q.title)).toEqual(["weaviate-mcp: allow access to a connection"])
        const refused = token("readOnly", { id: "tok-refused" })
        h.dialog.answer = false
        protocolError(await h.call("list_tables", { connection_id: h.ids.local }, { principal: refused }), -33007)
        h.dialog.answer = true
        protocolError(await h.call("list_tables", { connection_id: h.ids.local }, { principal: refused }), -33007)
      }))

    it.effect("first access through the client's form: input_required, then granted", () =>
      test(async (h) => {
        const principal = token("readOnly", { id: "tok-first-form" })
        const asked = inputRequired(await h.call("count_rows", { connection_id: h.ids.local, table: "Author" }, { principal, elicitation: true }))
        const { structured } = success(
          h,
          "count_rows",
          await h.call("count_rows", { connection_id: h.ids.local, table: "Author" }, {
            principal,
            elicitation: true,
            requestState: asked.requestState,
            inputResponses: approved
          })
        )
        expect(structured.count).toBe(20)
      }))
  })

  describe("insert_rows", () => {
    it.effect("more than 1,000 rows are refused with invalid_argument before anyone is asked", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess")
        h.dialog.asked.length = 0
        h.w.clearRequests()
        const rows = Array.from({ length: 1001 }, (_, i) => newRow(`r${i}`))
        const text = toolError(await h.call("insert_rows", { connection_id: h.ids.local, table: "Article", rows }, { principal }), "invalid_argument")
        expect(text).toContain("at most 1,000")
        expect(h.dialog.asked).toEqual([])
        expect(writesTo(h.w)).toEqual([])
      }))

    it.effect("gives a result per row: a row the database refuses fails alone; ids and vectors are kept", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess")
        h.w.clearRequests()
        const id = "00000000-0000-4000-8000-00000000a001"
        const { structured, text } = success(
          h,
          "insert_rows",
          await h.call("insert_rows", {
            connection_id: h.ids.local,
            table: "Product",
            rows: [
              { id, properties: { name: "Kept id", price: 1 }, vector: [1, 0, 0, 0, 0, 0, 0, 0] },
              { properties: { name: "Bad", price: "expensive" } },
              { properties: { name: "Fine", price: 2 } }
            ]
          }, { principal })
        )
        expect(structured.results.map((r: { status: string }) => r.status)).toEqual(["inserted", "failed", "inserted"])
        expect(structured.results[0].uuid).toBe(id)
        expect(structured.results[1].error).toContain("price")
        expect(text).toContain("2 rows inserted, 1 failed")
        expect(structured.results.map((r: { row: number }) => r.row)).toEqual([1, 2, 3])
        expect(text).toContain("row 2: failed")
        expect(writesTo(h.w)).toHaveLength(3)
        const row = success(h, "get_row", await h.call("get_row", { connection_id: h.ids.local, table: "Product", uuid: id, include_vector: true }, { principal }))
        expect(row.structured.row.vector).toEqual([1, 0, 0, 0, 0, 0, 0, 0])
      }))

    it.effect("an unknown table is not_found before anyone is asked", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess")
        h.dialog.asked.length = 0
        toolError(await h.call("insert_rows", { connection_id: h.ids.local, table: "Nope", rows: [newRow("x")] }, { principal }), "not_found")
        expect(h.dialog.asked).toEqual([])
      }))
  })

  describe("update_rows", () => {
    it.effect("updates by uuid with a class-scoped PATCH; a row without uuid is skipped and reported", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess")
        h.w.clearRequests()
        const id = sampleId(1, 3)
        const { structured } = success(
          h,
          "update_rows",
          await h.call("update_rows", {
            connection_id: h.ids.local,
            table: "Author",
            rows: [{ uuid: id, values: { bio: "updated bio" } }, { values: { bio: "lost" } }]
          }, { principal })
        )
        expect(structured.results.map((r: { status: string }) => r.status)).toEqual(["updated", "skipped"])
        expect(structured.results[1].error).toContain("no uuid")
        expect(h.dialog.asked.at(-1)!.statement).toBe(`PATCH /v1/objects/Author/${id}\n{"class":"Author","properties":{"bio":"updated bio"}}`)
        expect(writesTo(h.w).map((r) => `${r.method} ${r.path}`)).toEqual([`PATCH /v1/objects/Author/${id}`])
        const row = success(h, "get_row", await h.call("get_row", { connection_id: h.ids.local, table: "Author", uuid: id }, { principal }))
        expect(row.structured.row.bio).toBe("updated bio")
      }))

    it.effect("only rows without uuid: nothing to approve, nothing written", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess")
        h.dialog.asked.length = 0
        h.w.clearRequests()
        const { structured } = success(
          h,
          "update_rows",
          await h.call("update_rows", { connection_id: h.ids.local, table: "Author", rows: [{ uuid: null, values: { bio: "x" } }] }, { principal })
        )
        expect(structured.skipped).toBe(1)
        expect(h.dialog.asked).toEqual([])
        expect(writesTo(h.w)).toEqual([])
      }))
  })

  describe("delete_rows", () => {
    it.effect("deletes by uuid with class-scoped DELETEs, once each", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess")
        h.w.clearRequests()
        const ids = [sampleId(1, 10), sampleId(1, 11)]
        const { structured } = success(h, "delete_rows", await h.call("delete_rows", { connection_id: h.ids.local, table: "Author", uuids: ids }, { principal }))
        expect(structured.applied).toBe(2)
        expect(writesTo(h.w).map((r) => `${r.method} ${r.path}`)).toEqual(ids.map((id) => `DELETE /v1/objects/Author/${id}`))
        toolError(await h.call("get_row", { connection_id: h.ids.local, table: "Author", uuid: ids[0] }, { principal }), "not_found")
      }))
  })

  describe("the approval shows what is sent", () => {
    /** The statement's requests: a `METHOD path[?query]` line, then the JSON body on the next line when there is one. */
    const statementRequests = (statement: string) => {
      const requests: Array<{ method: string; path: string; query: Record<string, string>; body: unknown }> = []
      for (const line of statement.split("\n")) {
        const head = /^(POST|PATCH|DELETE) (\S+)$/.exec(line)
        if (head !== null) {
          const url = new URL(head[2]!, "http://x")
          requests.push({ method: head[1]!, path: url.pathname, query: Object.fromEntries(url.searchParams), body: undefined })
        } else {
          requests[requests.length - 1]!.body = JSON.parse(line)
        }
      }
      return requests
    }
    const received = (h: Harness) =>
      writesTo(h.w).map((r) => ({ method: r.method, path: r.path, query: r.query, body: r.body.length === 0 ? undefined : JSON.parse(r.body) }))

    it.effect("each write tool sends exactly the requests the user approved: method, path, query and body", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess")
        const id = sampleId(1, 20)
        const cases: Array<[string, Record<string, unknown>]> = [
          ["insert_rows", { table: "Article", rows: [newRow("shown"), { ...newRow("with id"), id: "00000000-0000-4000-8000-00000000a001" }] }],
          ["update_rows", { table: "Author", rows: [{ uuid: id, values: { bio: "shown bio", vector: [1] } }, { values: { bio: "skipped" } }] }],
          ["delete_rows", { table: "Author", uuids: [id] }]
        ]
        for (const [tool, args] of cases) {
          h.dialog.asked.length = 0
          h.w.clearRequests()
          success(h, tool, await h.call(tool, { connection_id: h.ids.local, ...args }, { principal }))
          expect(h.dialog.asked, tool).toHaveLength(1)
          const shown = statementRequests(h.dialog.asked[0]!.statement)
          expect(shown.length, tool).toBeGreaterThan(0)
          expect(received(h), tool).toEqual(shown)
        }
      }))
  })

  describe("confirm_destructive_operation", () => {
    it.effect("is for fullAccess tokens only (-33007)", () =>
      test(async (h) => {
        const principal = await fresh(h, "readWrite")
        protocolError(
          await h.call("confirm_destructive_operation", {
            connection_id: h.ids.local,
            operation: "drop_table",
            table: "Author",
            confirm: "Author"
          }, { principal }),
          -33007
        )
      }))

    it.effect("confirm must repeat the table name exactly", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess")
        toolError(
          await h.call("confirm_destructive_operation", { connection_id: h.ids.local, operation: "drop_table", table: "Author", confirm: "author" }, { principal }),
          "invalid_argument"
        )
      }))

    it.effect("asks the user every time, even after an accepted form, and runs only on their yes", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess")
        const args = {
          connection_id: h.ids.local,
          operation: "delete_where",
          table: "Article",
          filters: [{ column: "featured", operator: "equals", value: true }],
          confirm: "Article"
        }
        const before = success(h, "count_rows", await h.call("count_rows", { connection_id: h.ids.local, table: "Article", filters: args.filters }, { principal }))
        expect(before.structured.count).toBeGreaterThan(0)
        const asked = inputRequired(await h.call("confirm_destructive_operation", args, { principal, elicitation: true }))
        h.dialog.asked.length = 0
        h.dialog.answer = false
        h.w.clearRequests()
        toolError(
          await h.call("confirm_destructive_operation", args, { principal, elicitation: true, requestState: asked.requestState, inputResponses: approved }),
          "denied"
        )
        expect(h.dialog.asked).toHaveLength(1)
        expect(writesTo(h.w)).toEqual([])
        h.dialog.answer = true
        const again = inputRequired(await h.call("confirm_destructive_operation", args, { principal, elicitation: true }))
        const { structured } = success(
          h,
          "confirm_destructive_operation",
          await h.call("confirm_destructive_operation", args, { principal, elicitation: true, requestState: again.requestState, inputResponses: approved })
        )
        expect(structured.deleted).toBe(before.structured.count)
        expect(h.dialog.asked).toHaveLength(2)
        expect(h.dialog.asked[1]!.statement).toContain("DELETE /v1/batch/objects")
        expect(writesTo(h.w).filter((r) => r.method === "DELETE")).toHaveLength(1)
      }))

    it.effect("delete_all_rows empties a collection; drop_table drops it", () =>
      test(async (h) => {
        const principal = await fresh(h, "fullAccess")
        const deleted = success(
          h,
          "confirm_destructive_operation",
          await h.call("confirm_destructive_operation", { connection_id: h.ids.local, operation: "delete_all_rows", table: "Ticket", tenant: "acme", confirm: "Ticket" }, { principal })
        )
        expect(deleted.structured.deleted).toBe(15)
        h.w.clearRequests()
        const dropped = success(
          h,
          "confirm_destructive_operation",
          await h.call("confirm_destructive_operation", { connection_id: h.ids.local, operation: "drop_table", table: "Ticket", confirm: "Ticket" }, { principal })
        )
        expect(dropped.structured.dropped).toBe(true)
        expect(writesTo(h.w).map((r) => `${r.method} ${r.path}`)).toEqual(["DELETE /v1/schema/Ticket"])
        toolError(await h.call("describe_table", { connection_id: h.ids.local, table: "Ticket" }, { principal }), "not_found")
      }))
  })
})

describe("the dialog through --approvals exec", () => {
  const withExec = async (command: string, run: (x: Harness) => Promise<void>) => {
    const x = await makeHarness({ dialog: Layer.succeed(Dialog, Dialog.makeExec(command)) })
    try {
      await run(x)
    } finally {
      await x.close()
    }
  }

  it("exit 0 approves: the write runs once", () =>
    withExec("exit 0", async (x) => {
      const principal = token("readWrite", { id: "tok-exec-yes" })
      x.w.clearRequests()
      const result = completed(await x.call("insert_rows", { connection_id: x.ids.local, table: "Author", rows: [{ properties: { name: "Exec" } }] }, { principal }))
      expect(result.isError).toBeUndefined()
      expect(writesTo(x.w)).toHaveLength(1)
    }))

  it("exit 1 denies (here already the first access, -33007): nothing is written", () =>
    withExec("exit 1", async (x) => {
      const principal = token("readWrite", { id: "tok-exec-no" })
      x.w.clearRequests()
      protocolError(await x.call("insert_rows", { connection_id: x.ids.local, table: "Author", rows: [{ properties: { name: "Exec" } }] }, { principal }), -33007)
      expect(writesTo(x.w)).toEqual([])
    }))

  it("no dialog available (deny): a write that needs the user's machine is user_cancelled", async () => {
    const x = await makeHarness({ dialog: Dialog.layerDeny })
    try {
      const principal = token("readWrite", { id: "tok-deny" })
      const args = { connection_id: x.ids.local, table: "Author", rows: [{ properties: { name: "x" } }] }
      const access = inputRequired(await x.call("list_tables", { connection_id: x.ids.local }, { principal, elicitation: true }))
      success(x, "list_tables", await x.call("list_tables", { connection_id: x.ids.local }, { principal, elicitation: true, requestState: access.requestState, inputResponses: approved }))
      const asked = inputRequired(await x.call("insert_rows", args, { principal, elicitation: true }))
      toolError(await x.call("insert_rows", args, { principal, elicitation: true, requestState: asked.requestState, inputResponses: approved }), "user_cancelled")
      expect(writesTo(x.w).filter((r) => r.path === "/v1/objects")).toEqual([])
    } finally {
      await x.close()
    }
  })
})
