/**
 * What the structure commands (`collections create|add-property|update|drop`, `tenants
 * create|activate|deactivate|offload|delete`) share: a connection opened for writing (Safe Mode
 * `readOnly` refuses every write), a planned change (`SchemaEdits`) refused with its reasons before
 * anything is sent, the confirmation of a destructive change (asked on a terminal, `--yes` otherwise),
 * and the one request sent.
 *
 * The CLI is the user at their own machine: a change that is not destructive runs at once, as
 * `rest` and `import` do.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs"
import * as NodeReadline from "node:readline"
import { ConnectionStore } from "../Driver/ConnectionStore.ts"
import { Driver } from "../Driver/Driver.ts"
import * as SchemaEdits from "../Driver/SchemaEdits.ts"
import type { Connection } from "../Schema/Connection.ts"
import { UsageError } from "./CliErrors.ts"

/** A structure change refused before anything was sent (Safe Mode, or what Weaviate would refuse). @category errors */
export class ChangeRefused extends Schema.TaggedError<ChangeRefused>()("ChangeRefused", {
  reason: Schema.String
}) {
  override get message() {
    return `Refused: ${this.reason}`
  }
}

/** The user answered no at the terminal. @category errors */
export class ChangeCancelled extends Schema.TaggedError<ChangeCancelled>()("ChangeCancelled", {}) {
  override get message() {
    return "Cancelled: nothing was changed"
  }
}

/**
 * The connection, unless its Safe Mode is `readOnly`.
 *
 * @category steps
 */
export const writable = Effect.fnUntraced(function*(ref: string) {
  const connection = yield* Effect.flatMap(ConnectionStore, (store) => store.get(ref))
  if (connection.safeMode === "readOnly") {
    return yield* new ChangeRefused({ reason: `the connection ${connection.name} is in Safe Mode readOnly: writes are refused` })
  }
  return connection
})

/** The server's modules and collections, for planning. @category steps */
export const serverFacts = (connection: Connection) =>
  Effect.flatMap(Driver, (driver) =>
    Effect.all({
      modules: Effect.map(driver.health(connection), (health) => health.modules),
      collections: driver.listCollections(connection)
    }, { concurrency: 2 }))

/** A plan, or its problems as a refusal. @category steps */
export const planned = <P>(plan: { readonly problems: ReadonlyArray<string> } | P): Effect.Effect<P, ChangeRefused> =>
  typeof plan === "object" && plan !== null && "problems" in plan
    ? Effect.fail(new ChangeRefused({ reason: (plan as { readonly problems: ReadonlyArray<string> }).problems.join("; ") }))
    : Effect.succeed(plan as P)

/** Reads one line from a terminal, after a prompt on stderr. */
const ask = (prompt: string): Effect.Effect<string> =>
  Effect.async<string>((resume) => {
    const rl = NodeReadline.createInterface({ input: process.stdin, output: process.stderr, terminal: true })
    rl.question(prompt, (answer) => {
      rl.close()
      resume(Effect.succeed(answer))
    })
    return Effect.sync(() => rl.close())
  })

/**
 * The confirmation of a destructive change: `--yes` confirms; on a terminal the summary is shown and
 * the collection's name must be typed; anywhere else the command is a usage error asking for `--yes`.
 *
 * @category steps
 */
export const confirmDestructive = Effect.fnUntraced(function*(
  plan: SchemaEdits.Plan,
  options: { readonly yes: boolean; readonly name: string; readonly command: string; readonly interactive?: boolean }
) {
  if (options.yes) return
  if (!(options.interactive ?? (process.stdin.isTTY === true && process.stderr.isTTY === true))) {
    return yield* new UsageError({ message: `${options.command} cannot be undone: confirm it on a terminal, or pass --yes` })
  }
  process.stderr.write(`${plan.summary.join("\n")}\n`)
  const answer = yield* ask(`Type ${options.name} to confirm: `)
  if (answer.trim() !== options.name) return yield* new ChangeCancelled()
})

/** Sends a planned request once (Weaviate's 403 in the words of the permission check). @category steps */
export const send = (connection: Connection, request: SchemaEdits.SchemaRequest) =>
  Effect.flatMap(Driver, (driver) => driver.sendSchemaEdit(connection, request))

/** Reads a JSON file given to `--file`; an unreadable or malformed file is a usage error. @category io */
export const readJsonFile = (path: string): Effect.Effect<unknown, UsageError> =>
  Effect.try({
    try: () => JSON.parse(NodeFs.readFileSync(path, "utf8")) as unknown,
    catch: (error) => new UsageError({ message: `--file ${path}: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}` })
  })

/** Decodes a value with a schema; what does not fit is a usage error naming the place. @category io */
export const decodeOr = <A, I>(schema: Schema.Schema<A, I>, value: unknown, where: string): Effect.Effect<A, UsageError> =>
  Schema.decodeUnknown(schema, { onExcessProperty: "error" })(value).pipe(
    Effect.mapError((error) => new UsageError({ message: `${where}: ${error.message.split("\n").filter((l) => l.trim() !== "").slice(-1)[0]?.trim() ?? "invalid"}` }))
  )
