/**
 * `weaviate-mcp collections create|add-property|update|drop CONN TABLE …`: the structure tools on the
 * command line, from a JSON file or flags, planned and refused exactly as the tools are
 * (`SchemaEdits`). `drop` cannot be undone: it is confirmed on a terminal (the name typed again) and
 * takes `--yes` elsewhere. Safe Mode `readOnly` refuses every one of them.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { CreateTableArguments, collectionSpec, Property, rowsAtStakeOf } from "../Catalogue/Tools/StructureTools.ts"
import { Driver } from "../Driver/Driver.ts"
import * as SchemaEdits from "../Driver/SchemaEdits.ts"
import { UsageError } from "./CliErrors.ts"
import * as CommonOptions from "./CommonOptions.ts"
import { driverLayer } from "./DriverCli.ts"
import * as StructureCli from "./StructureCli.ts"

const connectionArg = Args.text({ name: "CONN" }).pipe(Args.withDescription("Connection id or name"))
const tableArg = Args.text({ name: "TABLE" }).pipe(Args.withDescription("Collection name"))
const file = Options.file("file", { exists: "yes" }).pipe(Options.optional)
const yes = Options.boolean("yes").pipe(Options.withDescription("Confirm without asking (required when not on a terminal)"))

/** `name:type`, as `--property` spells a property. */
const propertySpec = (text: string): Effect.Effect<SchemaEdits.PropertySpec, UsageError> => {
  const at = text.indexOf(":")
  return at <= 0 || at === text.length - 1
    ? Effect.fail(new UsageError({ message: `--property ${text}: expected NAME:TYPE (e.g. title:text)` }))
    : Effect.succeed({ name: text.slice(0, at), dataType: text.slice(at + 1) })
}

/** The plan's summary, then what was done; or one JSON document. */
const report = (json: boolean, document: unknown, lines: ReadonlyArray<string>) =>
  json ? Console.log(JSON.stringify(document, null, 2)) : Console.log(lines.join("\n"))

// ===== create =====

const createCommand = Command.make(
  "create",
  {
    home: CommonOptions.home,
    json: CommonOptions.json,
    connection: connectionArg,
    table: tableArg,
    file: file.pipe(Options.withDescription("A JSON file with create_table's arguments (description, properties, vectorizer, named_vectors, multi_tenancy, …)")),
    property: CommonOptions.repeatable(Options.text("property").pipe(Options.withDescription("A property as NAME:TYPE (e.g. title:text), repeatable"))),
    vectorizer: Options.text("vectorizer").pipe(Options.withDescription("A vectorizer module of the server, or none"), Options.optional),
    description: Options.text("description").pipe(Options.optional),
    multiTenancy: Options.boolean("multi-tenancy").pipe(Options.withDescription("Make the collection multi-tenant")),
    autoTenantCreation: Options.boolean("auto-tenant-creation"),
    autoTenantActivation: Options.boolean("auto-tenant-activation"),
    replicationFactor: Options.integer("replication-factor").pipe(Options.optional)
  },
  (flags) =>
    Effect.gen(function*() {
      const fromFile = Option.isSome(flags.file) ? yield* StructureCli.readJsonFile(flags.file.value) : {}
      if (typeof fromFile !== "object" || fromFile === null || Array.isArray(fromFile)) {
        return yield* new UsageError({ message: "--file: expected a JSON object of create_table's arguments" })
      }
      const added = yield* Effect.forEach(flags.property, propertySpec)
      const merged = {
        properties: [],
        ...fromFile,
        table: flags.table,
        ...(added.length > 0 ? { properties: [...((fromFile as { properties?: Array<unknown> }).properties ?? []), ...added] } : {}),
        ...Option.match(flags.vectorizer, { onNone: () => ({}), onSome: (vectorizer) => ({ vectorizer }) }),
        ...Option.match(flags.description, { onNone: () => ({}), onSome: (description) => ({ description }) }),
        ...(flags.multiTenancy
          ? { multi_tenancy: { enabled: true, autoTenantCreation: flags.autoTenantCreation, autoTenantActivation: flags.autoTenantActivation } }
          : {}),
        ...Option.match(flags.replicationFactor, { onNone: () => ({}), onSome: (replication_factor) => ({ replication_factor }) })
      }
      const input = yield* StructureCli.decodeOr(CreateTableArguments, merged, "collections create")
      const connection = yield* StructureCli.writable(flags.connection)
      const plan = yield* StructureCli.planned(SchemaEdits.planCreate(collectionSpec(input), yield* StructureCli.serverFacts(connection)))
      yield* StructureCli.send(connection, plan.request)
      yield* report(flags.json, { table: input.table, created: true, properties: input.properties.length }, [...plan.summary, `Created the collection ${input.table}.`])
    }).pipe(Effect.provide(driverLayer(flags.home)))
).pipe(Command.withDescription("Create a collection from a JSON file of create_table's arguments, or from flags"))

// ===== add-property =====

const addPropertyCommand = Command.make(
  "add-property",
  {
    home: CommonOptions.home,
    json: CommonOptions.json,
    connection: connectionArg,
    table: tableArg,
    file: file.pipe(Options.withDescription("A JSON file with the property (name, dataType, description, tokenization, …)")),
    property: Options.text("property").pipe(Options.withDescription("The property as NAME:TYPE (e.g. priority:int)"), Options.optional),
    description: Options.text("description").pipe(Options.optional),
    tokenization: Options.text("tokenization").pipe(Options.optional)
  },
  (flags) =>
    Effect.gen(function*() {
      if (Option.isSome(flags.file) === Option.isSome(flags.property)) {
        return yield* new UsageError({ message: "collections add-property: give the property with --property NAME:TYPE or --file, one of them" })
      }
      const base = Option.isSome(flags.file) ? yield* StructureCli.readJsonFile(flags.file.value) : yield* propertySpec(Option.getOrThrow(flags.property))
      const merged = {
        ...(base as object),
        ...Option.match(flags.description, { onNone: () => ({}), onSome: (description) => ({ description }) }),
        ...Option.match(flags.tokenization, { onNone: () => ({}), onSome: (tokenization) => ({ tokenization }) })
      }
      const property = yield* StructureCli.decodeOr(Property, merged, "collections add-property")
      const connection = yield* StructureCli.writable(flags.connection)
      const driver = yield* Driver
      const collection = (yield* driver.describe(connection, flags.table)).collection
      const plan = yield* StructureCli.planned(SchemaEdits.planAddProperty(collection, property, yield* StructureCli.serverFacts(connection)))
      yield* StructureCli.send(connection, plan.request)
      yield* report(flags.json, { table: collection.name, added: property.name }, [...plan.summary, `Added the property ${property.name} to ${collection.name}.`])
    }).pipe(Effect.provide(driverLayer(flags.home)))
).pipe(Command.withDescription("Add one property to a collection (Weaviate cannot rename or drop it afterwards)"))

// ===== update =====

/** `path=value`: the value as JSON when it parses (numbers, booleans, lists), else as text. */
const setting = (text: string): Effect.Effect<readonly [string, unknown], UsageError> => {
  const at = text.indexOf("=")
  if (at <= 0) return Effect.fail(new UsageError({ message: `--set ${text}: expected PATH=VALUE (e.g. vectorIndexConfig.ef=128)` }))
  const raw = text.slice(at + 1)
  let value: unknown = raw
  try {
    value = JSON.parse(raw)
  } catch {
    // text as it is
  }
  return Effect.succeed([text.slice(0, at), value] as const)
}

const updateCommand = Command.make(
  "update",
  {
    home: CommonOptions.home,
    json: CommonOptions.json,
    connection: connectionArg,
    table: tableArg,
    file: file.pipe(Options.withDescription("A JSON object of settings by path, e.g. {\"vectorIndexConfig.ef\": 128}")),
    set: CommonOptions.repeatable(Options.text("set").pipe(Options.withDescription("A setting as PATH=VALUE (e.g. replicationConfig.asyncEnabled=true), repeatable"))),
    description: Options.text("description").pipe(Options.optional)
  },
  (flags) =>
    Effect.gen(function*() {
      const fromFile = Option.isSome(flags.file) ? yield* StructureCli.readJsonFile(flags.file.value) : {}
      const settings = { ...(yield* StructureCli.decodeOr(Schema.Record({ key: Schema.String, value: Schema.Unknown }), fromFile, "--file")), ...Object.fromEntries(yield* Effect.forEach(flags.set, setting)) }
      const connection = yield* StructureCli.writable(flags.connection)
      const driver = yield* Driver
      const collection = (yield* driver.describe(connection, flags.table)).collection
      const current = yield* Effect.flatMap(driver.http(connection), (http) => SchemaEdits.readDocument(http, collection.name))
      const plan = yield* StructureCli.planned(SchemaEdits.planUpdate(current, { description: Option.getOrUndefined(flags.description), settings }))
      yield* StructureCli.send(connection, plan.request)
      yield* report(flags.json, { table: collection.name, changed: [...(Option.isSome(flags.description) ? ["description"] : []), ...Object.keys(settings)] }, [
        ...plan.summary,
        `Changed ${collection.name}.`
      ])
    }).pipe(Effect.provide(driverLayer(flags.home)))
).pipe(Command.withDescription("Change a collection's description and mutable settings (immutable ones are refused, named)"))

// ===== drop =====

const dropCommand = Command.make(
  "drop",
  { home: CommonOptions.home, json: CommonOptions.json, yes, connection: connectionArg, table: tableArg },
  (flags) =>
    Effect.gen(function*() {
      const connection = yield* StructureCli.writable(flags.connection)
      const driver = yield* Driver
      const collection = (yield* driver.describe(connection, flags.table)).collection
      const stake = yield* rowsAtStakeOf(driver, connection, collection)
      const plan: SchemaEdits.Plan = {
        summary: [`Drop the collection ${collection.name} with all its rows`, ...stake.lines, "This cannot be undone."],
        request: { method: "DELETE", path: `/v1/schema/${encodeURIComponent(collection.name)}` }
      }
      yield* StructureCli.confirmDestructive(plan, { yes: flags.yes, name: collection.name, command: `collections drop ${collection.name}` })
      yield* StructureCli.send(connection, plan.request)
      yield* report(flags.json, { table: collection.name, dropped: true, rowsLost: stake.rows }, [
        `Dropped the collection ${collection.name} (${stake.rows} ${stake.rows === 1 ? "row" : "rows"}${stake.uncounted.length > 0 ? " counted" : ""}).`
      ])
    }).pipe(Effect.provide(driverLayer(flags.home)))
).pipe(Command.withDescription("Drop a collection and all its rows (asks on a terminal; --yes elsewhere)"))

/** @category commands */
export const collectionsCommand = Command.make("collections").pipe(
  Command.withDescription("Create, change and drop collections"),
  Command.withSubcommands([createCommand, addPropertyCommand, updateCommand, dropCommand])
)
