/**
 * `weaviate-mcp serve`: runs the daemon until SIGINT/SIGTERM.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { DialogConfigError } from "../Approval/Dialog.ts"
import * as Daemon from "../Daemon/Daemon.ts"
import * as Logging from "../Daemon/Logging.ts"
import * as Settings from "../Daemon/Settings.ts"
import * as ClientConfig from "./ClientConfig.ts"
import * as Tracing from "../Tracing/Tracing.ts"
import * as CommonOptions from "./CommonOptions.ts"
import { UsageError } from "./CliErrors.ts"

const options = {
  home: CommonOptions.home,
  port: Options.integer("port").pipe(
    Options.withDescription(`Port on 127.0.0.1 (default ${Settings.DEFAULT_PORT}, or a free one when taken; 0 = any free port)`),
    Options.optional
  ),
  auth: Options.choice("auth", ["tokens", "off"]).pipe(
    Options.withDescription("tokens (default): every request needs a token; off: the anonymous loopback principal"),
    Options.optional
  ),
  approvals: Options.choice("approvals", ["auto", "dialog", "terminal", "deny", "exec"]).pipe(
    Options.withDescription("How writes are confirmed on this machine (default auto: a native dialog, else the terminal, else deny)"),
    Options.optional
  ),
  approvalCommand: Options.text("approval-command").pipe(
    Options.withDescription("With --approvals exec: a command that gets the request as JSON on stdin; exit 0 approves"),
    Options.optional
  ),
  allowedOrigin: Options.text("allowed-origin").pipe(
    Options.withDescription("An allowed browser Origin (repeatable; default https://claude.ai and https://app.cursor.com)"),
    CommonOptions.repeatable
  ),
  rateLimit: Options.integer("rate-limit").pipe(
    Options.withDescription("Requests per second per principal (default 50, bursts of 100; 0 = off)"),
    Options.optional
  ),
  authLockout: Options.integer("auth-lockout").pipe(
    Options.withDescription("Failed authentications per minute per client address before lockout (default 10)"),
    Options.optional
  ),
  healthTimeout: Options.integer("health-timeout").pipe(
    Options.withDescription("Seconds a health check of a connection may take (default 10; 0 = no bound)"),
    Options.optional
  ),
  schemaTimeout: Options.integer("schema-timeout").pipe(
    Options.withDescription("Seconds a schema read may take (default 15; 0 = no bound)"),
    Options.optional
  ),
  schemaCacheMs: Options.integer("schema-cache-ms").pipe(
    Options.withDescription("Milliseconds a collection read from the schema is reused (default 2000; 0 = read it on every call)"),
    Options.optional
  ),
  history: Options.choice("history", ["on", "off"]).pipe(
    Options.withDescription("Record every statement in the query history, history.db (default on; settings.json history.enabled)"),
    Options.optional
  ),
  logLevel: Options.choice("log-level", ["all", "trace", "debug", "info", "warning", "error", "fatal", "none"]).pipe(Options.optional),
  logFormat: Options.choice("log-format", ["text", "json"]).pipe(Options.optional),
  otlp: Options.text("otlp").pipe(
    Options.withDescription("Export traces to this OTLP/HTTP endpoint (base URL, e.g. http://127.0.0.1:4318; default OTEL_EXPORTER_OTLP_ENDPOINT)"),
    Options.optional
  )
}

/**
 * What the first run prints, once: the `default` token and a client configuration to paste. Printed
 * on stdout, never logged.
 *
 * @category formatting
 */
export const firstRunMessage = (created: Daemon.DefaultToken): string =>
  [
    "",
    `First run: created the access token "${created.name}" (readWrite). It is shown only this once;`,
    "`weaviate-mcp tokens create` makes more, `weaviate-mcp tokens revoke ID` revokes one.",
    "",
    "Client configuration (paste into your MCP client):",
    ClientConfig.render(created.url, created.token),
    ""
  ].join("\n")

/** @category commands */
export const serveCommand = Command.make("serve", options, (flags) =>
  Effect.gen(function*() {
    const provider = yield* Settings.provider()
    const configured = yield* Effect.withConfigProvider(Settings.ServeSettings, provider)
    const overridden = Settings.overrideWith(configured, {
      port: Option.map(flags.port, Option.some),
      auth: flags.auth,
      approvals: flags.approvals,
      approvalCommand: Option.map(flags.approvalCommand, Option.some),
      allowedOrigins: flags.allowedOrigin.length > 0 ? Option.some(flags.allowedOrigin) : Option.none(),
      rateLimit: flags.rateLimit,
      authLockout: flags.authLockout,
      healthTimeoutSeconds: flags.healthTimeout,
      schemaTimeoutSeconds: flags.schemaTimeout,
      schemaCacheMs: flags.schemaCacheMs,
      logLevel: flags.logLevel,
      logFormat: flags.logFormat
    })
    const settings = Option.isSome(flags.history) ? { ...overridden, history: { ...overridden.history, enabled: flags.history.value === "on" } } : overridden
    if (Option.isSome(settings.port) && !(Number.isInteger(settings.port.value) && settings.port.value >= 0 && settings.port.value <= 65535)) {
      const field = Option.isSome(flags.port) ? "--port" : "the port setting (settings.json or WEAVIATE_MCP_PORT)"
      return yield* new UsageError({ message: `${field} must be a port number between 0 and 65535 (0 = any free port), got ${settings.port.value}` })
    }
    if (!(Number.isInteger(settings.schemaCacheMs) && settings.schemaCacheMs >= 0)) {
      return yield* new UsageError({ message: `--schema-cache-ms must be a whole number of milliseconds, 0 or more (0 = no cache), got ${settings.schemaCacheMs}` })
    }
    for (const [flag, value] of [["--health-timeout", settings.healthTimeoutSeconds], ["--schema-timeout", settings.schemaTimeoutSeconds]] as const) {
      if (!(Number.isInteger(value) && value >= 0)) {
        return yield* new UsageError({ message: `${flag} must be a whole number of seconds, 0 or more (0 = no bound), got ${value}` })
      }
    }
    if (settings.approvals === "exec" && Option.isNone(settings.approvalCommand)) {
      return yield* Effect.fail(new UsageError({ message: "--approvals exec needs --approval-command CMD" }))
    }
    const daemon = Daemon.layer({
      settings,
      port: Option.match(settings.port, { onNone: () => ({ preferred: Settings.DEFAULT_PORT }), onSome: (port) => port }),
      otlpTracesUrl: Tracing.tracesUrl(Option.getOrUndefined(flags.otlp)),
      history: { offReason: Option.isSome(flags.history) ? "serve --history off" : "history.enabled is false in settings.json" },
      onListening: (address) => Console.log(`weaviate-mcp listening on ${address.url}/mcp`),
      onDefaultToken: (created) => Console.log(firstRunMessage(created))
    })
    return yield* Layer.launch(daemon).pipe(
      // A dialog mode that cannot work here (no native dialog, no TTY) is a usage error: exit 2.
      Effect.catchIf(
        (error): error is DialogConfigError => error instanceof DialogConfigError,
        (error) => Effect.fail(new UsageError({ message: error.message }))
      ),
      Effect.provide(Logging.layer({ format: settings.logFormat, level: settings.logLevel }))
    )
  }).pipe(Effect.provide(CommonOptions.homeLayer(flags.home)))).pipe(
  Command.withDescription("Run the local MCP endpoint on 127.0.0.1 until SIGINT/SIGTERM")
)
