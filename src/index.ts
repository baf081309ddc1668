/**
 * weaviate-mcp as a library: every service is an Effect `Layer` a host program can compose, and
 * every wire shape a `Schema`. Each module is exported as a namespace named after its concept.
 *
 * @since 0.1.0
 */

// ===== The daemon =====
export * as Daemon from "./Daemon/Daemon.ts"
export * as Handshake from "./Daemon/Handshake.ts"
export * as Home from "./Base/Home.ts"
export * as Logging from "./Daemon/Logging.ts"
export * as Redaction from "./Base/Redaction.ts"
export * as SecretFile from "./Base/SecretFile.ts"
export * as Serve from "./Daemon/Serve.ts"
export * as Settings from "./Daemon/Settings.ts"

// ===== The Weaviate driver =====
export * as BatchImport from "./Driver/BatchImport.ts"
export * as CollectionSchema from "./Driver/CollectionSchema.ts"
export * as ConnectionStore from "./Driver/ConnectionStore.ts"
export * as Driver from "./Driver/Driver.ts"
export * as DriverError from "./Driver/DriverError.ts"
export * as FilterBuilder from "./Driver/FilterBuilder.ts"
export * as GraphqlEditor from "./Driver/GraphqlEditor.ts"
export * as ObjectsPage from "./Driver/ObjectsPage.ts"
export * as Grid from "./Driver/Grid.ts"
export * as RestConsole from "./Driver/RestConsole.ts"
export * as RowEdits from "./Driver/RowEdits.ts"
export * as RowFormat from "./Driver/RowFormat.ts"
export * as WeaviateHttp from "./Driver/WeaviateHttp.ts"
export * as Permissions from "./Driver/Permissions.ts"

// ===== The MCP endpoint =====
export * as Authenticator from "./Auth/Authenticator.ts"
export * as BridgeToken from "./Auth/BridgeToken.ts"
export * as Catalogue from "./Mcp/Catalogue.ts"
export * as Endpoint from "./Mcp/Endpoint.ts"
export * as HttpTransport from "./Mcp/HttpTransport.ts"
export * as Lifecycle from "./Mcp/Lifecycle.ts"
export * as McpHttpApp from "./Mcp/McpHttpApp.ts"
export * as Principal from "./Auth/Principal.ts"
export * as RateLimiter from "./Auth/RateLimiter.ts"
export * as TokenStore from "./Auth/TokenStore.ts"
export * as Completions from "./Catalogue/Completions/Completions.ts"
export * as Prompts from "./Catalogue/Prompts/Prompts.ts"
export * as Resources from "./Catalogue/Resources/Resources.ts"

// ===== Approvals and cancellation =====
export * as ApprovalFlow from "./Approval/ApprovalFlow.ts"
export * as Dialog from "./Approval/Dialog.ts"
export * as FirstAccess from "./Approval/FirstAccess.ts"
export * as RequestState from "./Approval/RequestState.ts"
export * as Deadline from "./Cancellation/Deadline.ts"
export * as InFlight from "./Cancellation/InFlight.ts"

// ===== Wire and policy schemas =====
export * as Connection from "./Schema/Connection.ts"
export * as JsonRpc from "./Schema/JsonRpc.ts"
export * as McpErrors from "./Schema/McpErrors.ts"
export * as McpWire from "./Schema/McpWire.ts"
export * as Policy from "./Schema/Policy.ts"
