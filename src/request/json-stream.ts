// Large admin answers written in paced slices as the client reads them.
import { FastResponse } from 'srvx'
import { STATUS_TEXT } from './errors.ts'

/**
 * Large answers of the sandbox's own API (`/__sandbox/state`, `/export`)
 * written as a stream of slices: each slice is serialised when the client
 * takes the one before it, and a pacer shared by all of a sandbox's streams
 * hands the event loop back between slices, so that a health check is
 * answered while megabytes are being written to many clients, and a client
 * that reads nothing costs one slice, not the whole answer.
 */

/** Characters of JSON per slice: one write of node's socket, about. */
const SLICE_CHARS = 64 * 1024

/** Milliseconds of serialising, by all streams together, before the event loop gets a turn. */
const TURN_MS = 8

/** Shares the event loop among the streams of one sandbox. */
export interface Pacer {
  /**
   * Resolves once the caller may do another slice of work: at once while the
   * current turn lasts, else after the event loop has had a turn.
   */
  turn(): Promise<void>
}

// The host's quickest way to let the event loop run, where it has one
// (Node). @note A page or worker serves one user and no health check: it
// is not paced, and a test's fake timers (which stop every timer of the
// page) cannot hold its answers back.
const immediate = (
  globalThis as { setImmediate?: (callback: () => void) => unknown }
).setImmediate

const yieldToLoop = (): Promise<void> =>
  new Promise((resolve) => immediate!(resolve))

/**
 * Creates the pacer of one sandbox: its streams share one budget of
 * `TURN_MS` per turn of the event loop.
 *
 * @example
 * const pacer = createPacer()
 * await pacer.turn() // then serialise one slice
 */
export function createPacer(): Pacer {
  let started = performance.now()
  let waiting: Promise<void> | undefined
  return {
    async turn() {
      if (!immediate) return
      // @note Every waiter wakes in the same turn: each looks again, so that
      // the ones past the budget wait for the next turn instead of all
      // working at once.
      for (;;) {
        if (waiting === undefined && performance.now() - started < TURN_MS)
          return
        waiting ??= yieldToLoop().then(() => {
          waiting = undefined
          started = performance.now()
        })
        await waiting
      }
    },
  }
}

/**
 * The pieces of `value`'s JSON, in order: its plain objects are walked to
 * the depth where the sandbox's answers keep their lists, and each batch of
 * a list's items (records) is one piece. Joined, they are `JSON.stringify(value)`.
 *
 * @example
 * [...jsonPieces({ a: [1, 2] })].join('') // '{"a":[1,2]}'
 */
function* jsonPieces(value: unknown, depth = 0): Generator<string> {
  if (Array.isArray(value)) {
    // @note A batch of records is one native JSON.stringify, far cheaper
    // than one call (and one string to join) per record; cut out of its
    // brackets, it is the same text, nulls for holes included.
    for (let i = 0; i < value.length; i += BATCH) {
      const text = JSON.stringify(value.slice(i, i + BATCH))
      yield i === 0 ? text.slice(0, -1) : `,${text.slice(1, -1)}`
    }
    yield value.length === 0 ? '[]' : ']'
    return
  }
  if (depth < MAX_DEPTH && isPlainObject(value)) {
    yield '{'
    let first = true
    for (const key of Object.keys(value)) {
      const item = value[key]
      if (isSkipped(item)) continue
      yield `${first ? '' : ','}${JSON.stringify(key)}:`
      first = false
      yield* jsonPieces(item, depth + 1)
    }
    yield '}'
    return
  }
  yield JSON.stringify(value)
}

// `export` keeps its records at `data.customers`: two objects deep.
const MAX_DEPTH = 2

// Records per piece of a list: some 40 KB of customers.
const BATCH = 256

const isSkipped = (value: unknown): boolean =>
  value === undefined ||
  typeof value === 'function' ||
  typeof value === 'symbol'

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false
  const proto = Object.getPrototypeOf(value) as unknown
  return (
    (proto === Object.prototype || proto === null) &&
    typeof (value as { toJSON?: unknown }).toJSON !== 'function'
  )
}

/**
 * A JSON answer whose body is written in slices as the client reads it (see
 * the module's note), with the sandbox's content type. `value` is taken as
 * it is now: build it from a copy of the data, so that the answer is one
 * moment's.
 *
 * @example
 * return streamJson(pacer, 200, sandbox.export(), { 'cache-control': 'no-store' })
 */
export function streamJson(
  pacer: Pacer,
  status: number,
  value: unknown,
  headers?: Record<string, string>,
): Response {
  const pieces = jsonPieces(value)
  const encoder = new TextEncoder()
  let cancelled = false
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        await pacer.turn()
        if (cancelled) return
        let slice = ''
        for (;;) {
          const next = pieces.next()
          if (next.done) {
            if (slice !== '') controller.enqueue(encoder.encode(slice))
            controller.close()
            return
          }
          slice += next.value
          if (slice.length >= SLICE_CHARS) break
        }
        controller.enqueue(encoder.encode(slice))
      },
      cancel() {
        // The client left: the rest is never serialised.
        cancelled = true
        pieces.return(undefined)
      },
    },
    // @note Nothing is made ahead of what the client takes.
    { highWaterMark: 0 },
  )
  return new FastResponse(body, {
    status,
    statusText: STATUS_TEXT[status] ?? '',
    headers: { 'content-type': 'application/json', ...headers },
  })
}
