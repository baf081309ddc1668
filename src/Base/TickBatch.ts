/**
 * Work a request leaves behind (its activity line, its log line), done after the answer: what is
 * pushed during one turn of the event loop is handled as one batch, on the next turn
 * (`setImmediate`), and batches run one at a time, in order.
 *
 * Why not a fiber waiting on a queue: waking a waiting fiber costs a Deferred, a resumption and its
 * continuations. Measured on sequential `tools/list` calls (one batch per call): the two writer fibers
 * (activity and log lines) woken per call were 67 of the 95 KB a call allocated. A batch here is a
 * function call on a promise chain; nothing is allocated per item but the item.
 *
 * @since 0.1.0
 */

/** @category models */
export interface TickBatch<A> {
  /** Queues an item for the next batch; synchronous, never throws. */
  readonly push: (item: A) => void
  /** Resolves once every item pushed before the call is handled (what is queued is handled now). */
  readonly drained: () => Promise<void>
  /** Runs `task` after the batches already taken (the one being handled) and before items not yet batched. */
  readonly exclusive: <B>(task: () => Promise<B>) => Promise<B>
}

/**
 * A batcher whose batches are handled by `handle`. A batch that throws or rejects is reported to
 * `onError` and the next batch runs all the same. With `delayMs`, a batch takes what is pushed during
 * that many milliseconds after its first item instead of one turn of the event loop (a store whose
 * cost is per batch, such as an SQLite transaction, pays it once for many calls); the timer does not
 * keep the process alive, and `drained` takes what is pending at once.
 *
 * @category constructors
 */
export const make = <A>(
  handle: (items: ReadonlyArray<A>) => Promise<void> | void,
  onError: (error: unknown) => void,
  options: { readonly delayMs?: number } = {}
): TickBatch<A> => {
  let pending: Array<A> = []
  let scheduled = false
  let tail: Promise<void> = Promise.resolve()

  const chain = <B>(task: () => Promise<B> | B): Promise<B> => {
    const result = tail.then(task)
    tail = result.then(() => undefined, () => undefined)
    return result
  }

  const run = (): Promise<void> => {
    scheduled = false
    if (pending.length === 0) return tail
    const items = pending
    pending = []
    return chain(() => handle(items)).catch(onError)
  }

  return {
    push: (item) => {
      pending.push(item)
      if (!scheduled) {
        scheduled = true
        if (options.delayMs === undefined) setImmediate(run)
        else setTimeout(run, options.delayMs).unref()
      }
    },
    drained: () => run().then(() => tail),
    exclusive: (task) => chain(task)
  }
}
