// Large admin answers written in paced slices as the client reads them.
import { Answer } from '../model/problems.ts'
import { STATUS_TEXT } from './errors.ts'

/**
 * Large answers of the sandbox's own API (`/__sandbox/state`, `/export`)
 * written as a stream of slices: each slice is serialised when the client
 * takes the one before it, and a pacer shared by all of a sandbox's streams
 * hands the event loop back between slices, so that a health check is
 * answered while megabytes are being written to many clients, and a client
 * that reads nothing costs one slice, not the whole answer. The parts that
 * grow with the data (the record lists) are `shareJson()` parts: made once
 * per version of the data and written by every answer that carries them,
 * as the same bytes, so that 500 clients reading one export cost one
 * serialisation and one copy of the data, not 500.
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
 * a list's items (records) is one piece; a `shareJson()` part is one piece
 * of its own. Joined, they are `JSON.stringify(value)`.
 *
 * @example
 * [...jsonPieces({ a: [1, 2] })].join('') // '{"a":[1,2]}'
 */
function* jsonPieces(
  value: unknown,
  depth = 0,
): Generator<string | SharedJson> {
  if (value instanceof SharedJson) {
    yield value
    return
  }
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
 * JSON made once and written by every answer that carries it (see
 * `shareJson()`): its slices are serialised as the first answer that
 * reaches each one needs it, and kept as bytes for the others.
 */
class SharedJson {
  readonly #slices: Uint8Array[] = []
  // Dropped once every slice is made: the value is then no longer held.
  #pieces: Generator<string | SharedJson> | undefined

  constructor(value: unknown) {
    this.#pieces = jsonPieces(value)
  }

  /** The `index`th slice of the JSON, made now if no answer made it yet; none past the end. */
  slice(index: number): Uint8Array | undefined {
    while (index >= this.#slices.length && this.#pieces) {
      const slice = nextSlice(this.#pieces)
      if (slice.done) this.#pieces = undefined
      if (slice.text !== '') this.#slices.push(ENCODER.encode(slice.text))
      // A shared part within this one: its bytes become this one's.
      for (let i = 0, inner; (inner = slice.shared?.slice(i)); i++)
        this.#slices.push(inner)
    }
    return this.#slices[index]
  }
}

/**
 * Marks a part of an answer's value whose JSON many answers share: it is
 * serialised once, in slices as the answers reach them, and every answer
 * that carries the returned part writes the same bytes. Keep one part per
 * version of what it holds, and never change `value` after: the slices are
 * made from it as late as a client reads them.
 *
 * @example
 * const customers = shareJson(sandbox.customers.list()) // once per revision
 * streamJson(pacer, 200, { now, customers }) // for each client
 */
export function shareJson(value: unknown): unknown {
  return new SharedJson(value)
}

const ENCODER = new TextEncoder()

/**
 * The next slice of text from `pieces`: about `SLICE_CHARS` of string
 * pieces, cut short before a shared part, which it gives on its own.
 */
function nextSlice(pieces: Generator<string | SharedJson>): {
  text: string
  shared?: SharedJson
  done: boolean
} {
  let text = ''
  for (;;) {
    const next = pieces.next()
    if (next.done) return { text, done: true }
    if (next.value instanceof SharedJson)
      return { text, shared: next.value, done: false }
    text += next.value
    if (text.length >= SLICE_CHARS) return { text, done: false }
  }
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
  // The shared part being written, and its next slice.
  let shared: { part: SharedJson; index: number } | undefined
  let cancelled = false
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        await pacer.turn()
        if (cancelled) return
        // @note One enqueue per pull: the client's reading paces the rest.
        for (;;) {
          if (shared) {
            const slice = shared.part.slice(shared.index++)
            if (slice) {
              controller.enqueue(slice)
              return
            }
            shared = undefined
          }
          const next = nextSlice(pieces)
          if (next.shared) shared = { part: next.shared, index: 0 }
          if (next.text !== '') controller.enqueue(ENCODER.encode(next.text))
          if (next.done) {
            controller.close()
            return
          }
          if (next.text !== '') return
        }
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
  return new Answer(body, {
    status,
    statusText: STATUS_TEXT[status] ?? '',
    headers: { 'content-type': 'application/json', ...headers },
  })
}
