/**
 * The driver's errors. Each one's `message` is what a person reads; the two the contract gives a
 * prefix start with it (`Authentication failed: `, `Connection failed: `). No message ever holds an
 * API key: server texts pass through `Redaction.global` (which knows every key the driver resolved)
 * before they are put into an error.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * The key was rejected, or the node wants a key while Auth Method is `None`.
 *
 * @category errors
 */
export class AuthenticationFailed extends Schema.TaggedError<AuthenticationFailed>()("AuthenticationFailed", {
  reason: Schema.String,
  status: Schema.optional(Schema.Number)
}) {
  override get message() {
    return `Authentication failed: ${this.reason}`
  }
}

/**
 * TLS or network failure (refused, reset, timed out, certificate not trusted, wrong protocol).
 *
 * @category errors
 */
export class ConnectionFailed extends Schema.TaggedError<ConnectionFailed>()("ConnectionFailed", {
  reason: Schema.String,
  /** The system error code when there is one (`ECONNREFUSED`, `DEPTH_ZERO_SELF_SIGNED_CERT`, ...). */
  code: Schema.optional(Schema.String)
}) {
  override get message() {
    return `Connection failed: ${this.reason}`
  }
}

/**
 * The database answered and refused the request (its own message is passed on), e.g. offset plus
 * limit beyond `QUERY_MAXIMUM_RESULTS`, a validation error, a GraphQL error without data.
 *
 * @category errors
 */
export class DatabaseRefused extends Schema.TaggedError<DatabaseRefused>()("DatabaseRefused", {
  status: Schema.Number,
  detail: Schema.String
}) {
  override get message() {
    return `The database refused the request (HTTP ${this.status}): ${this.detail}`
  }
}

/**
 * A filter (or a sort) that the database cannot run; refused before any request is sent.
 *
 * @category errors
 */
export class FilterRefused extends Schema.TaggedError<FilterRefused>()("FilterRefused", {
  filter: Schema.String,
  reason: Schema.String
}) {
  override get message() {
    return `Filter refused (${this.filter}): ${this.reason}`
  }
}

/**
 * A statement refused before sending: a GraphQL mutation or subscription, more than one operation,
 * a syntax error, or a REST console line that is not `<METHOD> <path> [body]`.
 *
 * @category errors
 */
export class StatementRefused extends Schema.TaggedError<StatementRefused>()("StatementRefused", {
  reason: Schema.String
}) {
  override get message() {
    return `Statement refused: ${this.reason}`
  }
}

/**
 * A collection (or a column of it) that the schema does not have.
 *
 * @category errors
 */
export class CollectionNotFound extends Schema.TaggedError<CollectionNotFound>()("CollectionNotFound", {
  collection: Schema.String
}) {
  override get message() {
    return `Collection not found: ${this.collection}`
  }
}

/**
 * The database answered with something that is not what its API promises.
 *
 * @category errors
 */
export class UnexpectedResponse extends Schema.TaggedError<UnexpectedResponse>()("UnexpectedResponse", {
  detail: Schema.String
}) {
  override get message() {
    return `Unexpected response from the database: ${this.detail}`
  }
}

/** Every error a call to the database can end with. @category errors */
export type RequestError = AuthenticationFailed | ConnectionFailed | DatabaseRefused | UnexpectedResponse
