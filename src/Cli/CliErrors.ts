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

/**
 * The command printed its own report of what failed (`doctor`): exit 1 and print nothing more
 * (with `--json` stdout stays one JSON document).
 *
 * @category errors
 */
export class AlreadyReported extends Schema.TaggedError<AlreadyReported>()("AlreadyReported", {}) {}
