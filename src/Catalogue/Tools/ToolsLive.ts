/**
 * The tool catalogue as a `Tools` layer over the driver, the connection store and the approvals.
 * Tools are listed in the order a model should meet them.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { HistoryStore } from "../../History/HistoryStore.ts"
import type { ApprovalFlow } from "../../Approval/ApprovalFlow.ts"
import type { FirstAccess } from "../../Approval/FirstAccess.ts"
import type { ConnectionStore } from "../../Driver/ConnectionStore.ts"
import type { Driver } from "../../Driver/Driver.ts"
import { type Tool, Tools } from "../../Mcp/Catalogue.ts"
import * as Aggregate from "./Aggregate.ts"
import { makeEnv, type ToolEnv } from "./ConnectionGate.ts"
import * as ConnectionTools from "./ConnectionTools.ts"
import * as DestructiveOperation from "./DestructiveOperation.ts"
import * as ExecuteQuery from "./ExecuteQuery.ts"
import * as HistoryRecording from "./HistoryRecording.ts"
import * as QueryHistory from "./QueryHistory.ts"
import * as RowTools from "./RowTools.ts"
import * as SchemaTools from "./SchemaTools.ts"
import * as StructureTools from "./StructureTools.ts"
import * as TenantTools from "./TenantTools.ts"
import * as TenantWriteTools from "./TenantWriteTools.ts"
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
  Aggregate.aggregate(env),
  WriteTools.insertRows(env),
  WriteTools.updateRows(env),
  WriteTools.deleteRows(env),
  DestructiveOperation.confirmDestructiveOperation(env),
  StructureTools.createTable(env),
  StructureTools.addColumn(env),
  StructureTools.updateTable(env),
  StructureTools.dropTable(env),
  TenantWriteTools.createTenants(env),
  TenantWriteTools.setTenantStatus(env),
  TenantWriteTools.deleteTenants(env)
]

/**
 * Every tool, each call recorded in the query history when there is one (`HistoryStore` in the
 * context: the daemon's), which also adds `search_query_history`.
 *
 * @category constructors
 */
export const withHistory = (env: ToolEnv, history: HistoryStore["Type"]): ReadonlyArray<Tool> => {
  const connectionId = (idOrName: string) =>
    env.store.get(idOrName).pipe(Effect.map((connection) => connection.id), Effect.orElseSucceed(() => idOrName))
  return [
    ...all(env).map((tool) => HistoryRecording.recorded(tool, history, connectionId)),
    QueryHistory.searchQueryHistory(env.store, history)
  ]
}

/** @category layers */
export const ToolsLive: Layer.Layer<Tools, never, Driver | ConnectionStore | ApprovalFlow | FirstAccess> = Layer.effect(
  Tools,
  Effect.gen(function*() {
    const env = yield* makeEnv
    const history = yield* Effect.serviceOption(HistoryStore)
    return Tools.of({ all: Option.isSome(history) ? withHistory(env, history.value) : all(env) })
  })
)
