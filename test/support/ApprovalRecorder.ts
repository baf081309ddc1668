/**
 * An `--approvals exec` command for tests: it appends each question (the dialog's JSON) to a log and
 * answers with what the test last set (`yes` approves, `no` declines).
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as TestHome from "./TestHome.ts"

export interface ApprovalRecorder {
  /** The shell command to pass as `approvalCommand`. */
  readonly command: string
  readonly setAnswer: (answer: "yes" | "no") => void
  /** The questions asked so far, oldest first. */
  readonly questions: () => ReadonlyArray<{ readonly title: string; readonly statement: string }>
  /** Forgets the questions asked so far. */
  readonly clear: () => void
}

export const make = (prefix: string): ApprovalRecorder => {
  const dir = TestHome.tempDirSync(prefix)
  const answer = NodePath.join(dir, "answer")
  const log = NodePath.join(dir, "log")
  const setAnswer = (value: "yes" | "no") => NodeFs.writeFileSync(answer, value)
  const clear = () => NodeFs.writeFileSync(log, "")
  clear()
  setAnswer("yes")
  return {
    command: `cat >> '${log}'; echo >> '${log}'; test "$(cat '${answer}')" = yes`,
    setAnswer,
    questions: () =>
      NodeFs.readFileSync(log, "utf8").split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as { title: string; statement: string }),
    clear
  }
}
