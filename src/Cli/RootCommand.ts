/**
 * The root command with every subcommand: the tree `weaviate-mcp --help` lists and every command but
 * `serve` runs in. `src/Main.ts` loads it on demand, so that starting the daemon does not evaluate the
 * other commands' modules (its commit message).
 *
 * @since 0.1.0
 */
import { activityCommand } from "./ActivityCommand.ts"
import { aggregateCommand } from "./AggregateCommand.ts"
import { bridgeCommand } from "./BridgeCommand.ts"
import { browseCommand } from "./BrowseCommand.ts"
import * as CommonOptions from "./CommonOptions.ts"
import { clientsCommand } from "./ClientsCommand.ts"
import { collectionsCommand } from "./CollectionsCommand.ts"
import { connectionsCommand } from "./ConnectionsCommand.ts"
import { consoleCommand } from "./ConsoleCommand.ts"
import { doctorCommand } from "./DoctorCommand.ts"
import { exportCommand } from "./ExportCommand.ts"
import { graphqlCommand } from "./GraphqlCommand.ts"
import { historyCommand } from "./HistoryCommand.ts"
import { importCommand } from "./ImportCommand.ts"
import { pauseCommand, resumeCommand } from "./PauseCommand.ts"
import { restCommand } from "./RestCommand.ts"
import { serveCommand } from "./ServeCommand.ts"
import { setupCommand } from "./SetupCommand.ts"
import { statusCommand } from "./StatusCommand.ts"
import { tenantsCommand } from "./TenantsCommand.ts"
import { tokensCommand } from "./TokensCommand.ts"

/** The root command. @category commands */
export const root = CommonOptions.rootOf([serveCommand, tokensCommand, connectionsCommand, browseCommand, tenantsCommand, graphqlCommand,
  restCommand, activityCommand, clientsCommand, statusCommand, pauseCommand, resumeCommand, bridgeCommand, setupCommand, doctorCommand,
  exportCommand, importCommand, historyCommand, consoleCommand, aggregateCommand, collectionsCommand])
