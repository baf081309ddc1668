/**
 * Errors of the command line that are not failures of an operation.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A usage error found after parsing (exit code 2, one line on stderr).
 *
 * @category errors
 */
export class UsageError extends Schema.TaggedError<UsageError>()("UsageError", {
  message: Schema.String
}) {}
