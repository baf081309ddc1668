/**
 * The error of a client config file that cannot be changed as asked (nothing was changed): its own
 * module, so that `ClientConfig` can name it without loading the parsers of `ConfigDocument`.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** The config file cannot be changed as asked; nothing was changed. @category errors */
export class ConfigFileError extends Schema.TaggedError<ConfigFileError>()("ConfigFileError", {
  message: Schema.String
}) {}
