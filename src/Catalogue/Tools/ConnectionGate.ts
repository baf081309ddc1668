/**
 * What every tool does before it touches a connection, in the contract's order: resolve the
 * connection (`not_found` when no saved connection has that id or name), check the principal's
 * allowlist and the connection's AI policy (`-33007`; a blocked connection is refused, never
 * described), then first access (asked once per token and connection; may be `input_required`).
 * A write is then checked against what the connection's Weaviate user may do (`requirePermission`,
 * RBAC: a write Weaviate would refuse is refused before anyone is asked), goes through the approval
 * flow with the exact statement, and runs only on `Execute`.
 *
 * First access is asked as resources and prompts ask it (`ConnectionAccess.checkFirstAccess`).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { ApprovalFlow } from "../../Approval/ApprovalFlow.ts"
import { FirstAccess } from "../../Approval/FirstAccess.ts"
import { ConnectionStore } from "../../Driver/ConnectionStore.ts"
import { Driver } from "../../Driver/Driver.ts"
import * as Permissions from "../../Driver/Permissions.ts"
import type * as SchemaEdits from "../../Driver/SchemaEdits.ts"
import type { Connection } from "../../Schema/Connection.ts"
import { RequestContext } from "../../Mcp/Catalogue.ts"
import * as Principal from "../../Auth/Principal.ts"
import { asker, checkFirstAccess } from "../ConnectionAccess.ts"
import { ToolCall } from "./ToolDefinition.ts"
import * as ToolError from "./ToolError.ts"

/** The services the tools run on, captured when the `Tools` layer is built. @category models */
export interface ToolEnv {
  readonly driver: Driver["Type"]
  readonly store: ConnectionStore["Type"]
  readonly approvals: ApprovalFlow["Type"]
  readonly firstAccess: FirstAccess["Type"]
}

/** @category constructors */
export const makeEnv = Effect.all({
  driver: Driver,
  store: ConnectionStore,
  approvals: ApprovalFlow,
  firstAccess: FirstAccess
})

/**
 * Opens a connection for a tool call: resolve, permission, first access. Succeeds with the
 * connection, or with the `InputRequired` of first access for the tool to return.
 *
 * @category combinators
 */
export const open = Effect.fnUntraced(function*(
  env: ToolEnv,
  connectionId: string,
  needed: "read" | "write"
) {
  const connection = yield* env.store.get(connectionId)
  const principal = yield* Principal.CurrentPrincipal
  yield* Principal.requireConnection(principal, connection, needed)
  const call = yield* ToolCall
  const outcome = yield* checkFirstAccess(env.firstAccess, connection, { name: call.tool, arguments: call.arguments })
  // Input required is a value the tool returns as it is (`InputRequired.is`), not an error.
  return outcome._tag === "InputRequired" ? outcome : connection
})

/**
 * Asks for a write's approval. Succeeds on `Execute` with how it was approved, or with the
 * `InputRequired` to return (a form to show); a refusal is the tool error `denied` or `user_cancelled`.
 *
 * @category combinators
 */
export const approve = Effect.fnUntraced(function*(
  env: ToolEnv,
  connection: Connection,
  statement: string,
  options: { readonly destructive?: boolean } = {}
) {
  const principal = yield* Principal.CurrentPrincipal
  const context = yield* RequestContext
  const call = yield* ToolCall
  const outcome = yield* env.approvals.approve({
    principal: Principal.toApprovalPrincipal(principal),
    client: yield* asker,
    connection: { id: connection.id, name: connection.name, safeMode: connection.safeMode },
    tool: { name: call.tool, arguments: call.arguments },
    statement,
    destructive: options.destructive ?? false,
    requestState: Option.getOrUndefined(context.requestState),
    inputResponses: Option.getOrUndefined(context.inputResponses)
  })
  switch (outcome._tag) {
    case "Execute":
      return outcome.approvedBy
    case "InputRequired":
      return outcome
    case "Denied":
      return yield* ToolError.fail("denied", outcome.reason)
    case "UserCancelled":
      return yield* ToolError.fail("user_cancelled", outcome.reason)
  }
})

/** The connections already said to have no RBAC, by id: said once per daemon. */
const toldNoRbac = new Set<string>()

/**
 * What the connection's Weaviate user may do (the driver's cached `Permissions.read`). The first time
 * a connection turns out not to be restricted by role (no RBAC, or Weaviate does not say), the
 * operational log says so, once: its writes are not checked before approval.
 *
 * @category combinators
 */
export const permissionsOf = (env: ToolEnv, connection: Connection) =>
  Effect.tap(env.driver.permissions(connection), ({ value }) => {
    if (value._tag !== "NoRbac" || toldNoRbac.has(connection.id)) return Effect.void
    toldNoRbac.add(connection.id)
    return Effect.logInfo(`${connection.name}: writes are not checked against Weaviate permissions before approval: ${value.reason}`).pipe(
      Effect.annotateLogs({ connection: connection.name })
    )
  })

/**
 * Refuses, before the approval step, a write that the connection's Weaviate user may not do (RBAC):
 * the tool error `denied: the Weaviate user "x" has no permission to create data in "Article"`.
 * Every write tool calls it with what it will send: the action (`create_data`, `update_collections`,
 * `create_tenants`, … in Weaviate's names), the collection and, for tenant data, the tenant. Without
 * RBAC (or when Weaviate does not say) it lets the write through: Weaviate decides when it is sent.
 *
 * @category combinators
 */
export const requirePermission = (
  env: ToolEnv,
  connection: Connection,
  action: Permissions.Action,
  collection: string,
  tenant?: string
) =>
  Effect.zipRight(
    Effect.ignore(permissionsOf(env, connection)),
    env.driver.checkPermission(connection, { action, collection, ...(tenant !== undefined ? { tenant } : {}) })
  )

/**
 * `requirePermission` for a request that needs several (`Permissions.targetsOf`: a batch, a REST
 * console line): refused when any one is not allowed.
 *
 * @category combinators
 */
export const requirePermissions = (env: ToolEnv, connection: Connection, targets: ReadonlyArray<Permissions.Target>) =>
  targets.length === 0 ? Effect.void : Effect.zipRight(Effect.ignore(permissionsOf(env, connection)), env.driver.checkPermission(connection, targets))

/**
 * The approval of a structure or tenant change, after the permission check of the request it will
 * send (`Permissions.targetsOf`: `create_collections`, `update_tenants`, …): a change the Weaviate user
 * may not make is refused before anyone is asked, like a row write.
 *
 * @category combinators
 */
export const approveRequest = (
  env: ToolEnv,
  connection: Connection,
  statement: string,
  request: Parameters<typeof Permissions.targetsOf>[0],
  options: { readonly destructive?: boolean } = {}
) => Effect.zipRight(requirePermissions(env, connection, Permissions.targetsOf(request)), approve(env, connection, statement, options))

/**
 * Sends an approved structure or tenant change once. Weaviate's 403 (the permissions changed since
 * they were read; the driver reads them again at once) is the error `denied`, in the words of the
 * check before approval, saying that nothing changed.
 *
 * @category requests
 */
export const sendApproved = (env: ToolEnv, connection: Connection, request: SchemaEdits.SchemaRequest) =>
  env.driver.sendSchemaEdit(connection, request).pipe(
    Effect.catchTag("PermissionDenied", (denied) => ToolError.fail("denied", `${denied.message} (Weaviate refused it: nothing was changed)`))
  )
