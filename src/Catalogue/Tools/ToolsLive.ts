/**
 * The tool catalogue as a `Tools` layer over the driver, the connection store and the approvals.
 * Tools are listed in the order a model should meet them.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ApprovalFlow } from "../../Approval/ApprovalFlow.ts"
import type { FirstAccess } from "../../Approval/FirstAccess.ts"
import type { ConnectionStore } from "../../Driver/ConnectionStore.ts"
import type { Driver } from "../../Driver/Driver.ts"
import { type Tool, Tools } from "../../Mcp/Catalogue.ts"
import { makeEnv, type ToolEnv } from "./ConnectionGate.ts"
import * as ConnectionTools from "./ConnectionTools.ts"
import * as DestructiveOperation from "./DestructiveOperation.ts"
import * as ExecuteQuery from "./ExecuteQuery.ts"
import * as RowTools from "./RowTools.ts"
import * as SchemaTools from "./SchemaTools.ts"
import * as TenantTools from "./TenantTools.ts"
import * as VectorSearch from "./VectorSearch.ts"
import * as WriteTools from "./WriteTools.ts"

/**
 * Every tool of the catalogue.
 *
 * @category constructors
 */
export const all = (env: ToolEnv): ReadonlyArray<Tool> => [
  ConnectionTools.listConnections(env),
  ConnectionTools.getConnectionStatus(env),
  SchemaTools.listTables(env),
  SchemaTools.describeTable(env),
  TenantTools.listTenants(env),
  SchemaTools.searchSchema(env),
  RowTools.browseTable(env),
  RowTools.countRows(env),
  RowTools.getRow(env),
  VectorSearch.vectorSearch(env),
  ExecuteQuery.executeQuery(env),
  WriteTools.insertRows(env),
  WriteTools.updateRows(env),
  WriteTools.deleteRows(env),
  DestructiveOperation.confirmDestructiveOperation(env)
]

/** @category layers */
export const ToolsLive: Layer.Layer<Tools, never, Driver | ConnectionStore | ApprovalFlow | FirstAccess> = Layer.effect(
  Tools,
  Effect.map(makeEnv, (env) => Tools.of({ all: all(env) }))
)
