/**
 * `subscriptions/listen` (modern era): a long-lived stream on the response of the request that opened
 * it. The first message acknowledges the subscription with the notification types the server agreed
 * to honour; every message carries `_meta["io.modelcontextprotocol/subscriptionId"]` (the request's
 * id); only the types asked for are sent: `notifications/resources/list_changed` (when the catalogue's
 * resource list changes) and `notifications/resources/updated` for each subscribed URI. A comment
 * every 15 s keeps the connection alive. `toolsListChanged` and `promptsListChanged` are never agreed
 * to: those lists do not change (`listChanged: false`).
 *
 * The endpoint runs the stream exempt from the handler deadline, ends it with a
 * `SubscriptionsListenResult` on shutdown, and with an error when a subscribed URI cannot be watched
 * (before any acknowledgement when it cannot be watched at all). Open streams are capped per principal
 * (`slots`), so one token cannot hold every connection slot of the transport.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import type * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { type McpError, RateLimited } from "../Schema/McpErrors.ts"
import { META_SUBSCRIPTION_ID } from "../Schema/McpWire.ts"
import type * as Catalogue from "./Catalogue.ts"
import * as Sse from "./Sse.ts"

/** @category constants */
export const KEEP_ALIVE: Duration.Duration = Duration.seconds(15)

/**
 * Frames a subscription holds for a client that does not read them. The transport writes a frame only
 * once the client has taken the ones before (back-pressure), so a client that stops reading would
 * otherwise have every keep-alive and notification queued for it for as long as its connection lasts.
 * At the bound the subscription's sources wait: no poll of Weaviate runs for such a client, and a
 * change made meanwhile is still seen at the first poll after it reads again. @category constants
 */
export const MAX_QUEUED_FRAMES = 16

/** Open streams per principal, counted. @category models */
export interface Slots {
  readonly max: number
  /** Takes a slot for the principal: the function that gives it back (idempotent), or `undefined` when all are taken. */
  readonly acquire: (principalId: string) => (() => void) | undefined
  readonly open: (principalId: string) => number
}

/** @category constructors */
export const slots = (max: number): Slots => {
  const open = new Map<string, number>()
  return {
    max,
    open: (principalId) => open.get(principalId) ?? 0,
    acquire: (principalId) => {
      const count = open.get(principalId) ?? 0
      if (count >= max) return undefined
      open.set(principalId, count + 1)
      let released = false
      return () => {
        if (released) return
        released = true
        const left = (open.get(principalId) ?? 1) - 1
        if (left <= 0) open.delete(principalId)
        else open.set(principalId, left)
      }
    }
  }
}

/** The answer when a principal has all its streams open: `-33010` with `Retry-After`. @category errors */
export const tooManyStreams = (max: number): RateLimited =>
  new RateLimited({
    message: `Too many open subscriptions/listen streams for this token (at most ${max}); close one first`,
    data: { reason: "subscriptions", limit: max },
    headers: { "retry-after": "1" }
  })

/** What a client may ask for (`params.notifications`). @category models */
export interface Requested {
  readonly resourcesListChanged?: boolean | undefined
  readonly resourceSubscriptions?: ReadonlyArray<string> | undefined
  readonly toolsListChanged?: boolean | undefined
  readonly promptsListChanged?: boolean | undefined
}

/** The subset of the request the server honours. @category models */
export interface Agreed {
  readonly resourcesListChanged?: true
  readonly resourceSubscriptions?: ReadonlyArray<string>
}

/** @category constructors */
export const agree = (requested: Requested): Agreed => {
  const uris = Array.from(new Set(requested.resourceSubscriptions ?? []))
  return {
    ...(requested.resourcesListChanged === true ? { resourcesListChanged: true as const } : {}),
    ...(uris.length > 0 ? { resourceSubscriptions: uris } : {})
  }
}

/**
 * The frames of a subscription, acknowledgement first; it ends only by failing or by interruption.
 *
 * The acknowledgement says the subscription is established, so it is emitted only once every
 * source is watching: the catalogue's watches are started together and each completes when it holds
 * what it compares against (a baseline read, a subscription), so a change made after the client saw
 * the acknowledgement is never missed. A URI that cannot be watched fails the request instead, with
 * no acknowledgement. The sources then run on fibers started on the spot (`Runtime.runFork` runs the
 * first pull synchronously up to its first wait), so their timers (keep-alive, polls) are set before
 * the acknowledgement too. Frames are queued in arrival order; a source that fails later ends the
 * subscription with its error. The sources live as long as the stream.
 *
 * @category constructors
 */
export const frames = (options: {
  readonly subscriptionId: string | number
  readonly agreed: Agreed
  readonly resources: Catalogue.Resources["Type"]
}): Stream.Stream<string, McpError, Catalogue.HandlerContext> => {
  const { agreed, resources } = options
  const meta = { [META_SUBSCRIPTION_ID]: options.subscriptionId }
  const ack = Sse.frame({
    jsonrpc: "2.0",
    method: "notifications/subscriptions/acknowledged",
    params: { _meta: meta, notifications: agreed }
  })
  type Source = Stream.Stream<string, McpError, Catalogue.HandlerContext>
  const watches: Array<Effect.Effect<Source, McpError, Scope.Scope | Catalogue.HandlerContext>> = []
  if (agreed.resourcesListChanged === true) {
    const listChanged = Sse.frame({ jsonrpc: "2.0", method: "notifications/resources/list_changed", params: { _meta: meta } })
    watches.push(Effect.map(resources.listChanged, Stream.as(listChanged)))
  }
  for (const uri of agreed.resourceSubscriptions ?? []) {
    const updated = Sse.frame({ jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri, _meta: meta } })
    watches.push(Effect.map(resources.watch(uri), Stream.as(updated)))
  }
  return Stream.unwrapScoped(Effect.gen(function*() {
    const scope = yield* Effect.scope
    const sources: ReadonlyArray<Source> = [
      Stream.fromSchedule(Schedule.spaced(KEEP_ALIVE)).pipe(Stream.as(Sse.keepAlive)),
      ...yield* Effect.all(watches, { concurrency: "unbounded" })
    ]
    const mailbox = yield* Mailbox.make<string, McpError>({ capacity: MAX_QUEUED_FRAMES, strategy: "suspend" })
    const start = Runtime.runFork(yield* Effect.runtime<Catalogue.HandlerContext>())
    for (const source of sources) {
      const pull = yield* Stream.toPull(source)
      start(forward(pull, mailbox), { scope })
    }
    return Stream.concat(Stream.make(ack), Mailbox.toStream(mailbox))
  }))
}

/** Moves a source's frames to the subscription's mailbox; a source that ends just stops, one that fails ends the subscription. */
const forward = <R>(
  pull: Effect.Effect<Chunk.Chunk<string>, Option.Option<McpError>, R>,
  mailbox: Mailbox.Mailbox<string, McpError>
): Effect.Effect<void, never, R> =>
  pull.pipe(
    Effect.flatMap((chunk) => mailbox.offerAll(chunk)),
    Effect.forever,
    Effect.catchAllCause((cause) => {
      if (Cause.isInterruptedOnly(cause)) return Effect.void
      const failure = Cause.failureOption(cause)
      if (Option.isSome(failure)) return Option.isNone(failure.value) ? Effect.void : mailbox.fail(failure.value.value)
      return mailbox.failCause(Cause.stripFailures(cause))
    }),
    Effect.asVoid
  )
