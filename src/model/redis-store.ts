// The store a fleet of replicas shares: one ordered log of writes in Redis
// (or Valkey), appended with a compare-and-swap on its length.
import { createClient } from '@redis/client'
import type { SandboxData } from './schemas.ts'
import {
  StoreConflict,
  type DurableExtras,
  type Store,
  type StoreFault,
  type StoreWrite,
} from './store.ts'

/**
 * One entry of the log: a write an API call made, or the whole state after
 * any other change (a reset, a clock, a scenario queued or taken).
 */
type LogEntry = { write: StoreWrite } | { state: SandboxData & DurableExtras }

/** What the Redis store reads and changes of the replica it serves. */
export interface RedisStoreSource {
  /** The whole state, to append when it changed other than by one write. */
  dump(): SandboxData & DurableExtras
  /** Puts back a whole state another replica appended. */
  replace(state: SandboxData & DurableExtras): Promise<void>
  /** Applies a write another replica appended. */
  apply(write: StoreWrite): Promise<void>
}

/** Options of `openRedisStore`. */
export interface RedisStoreOptions {
  /** `redis://[user:password@]host:port[/db]` (or `rediss://`). */
  url: string
  /**
   * Prefix of every key, so that several sandboxes can share one Redis.
   * @default 'cts'
   */
  namespace?: string
  /**
   * How long the first connection and each command may take, in ms.
   * @default 3000
   */
  timeoutMs?: number
  /** Hears the store's outages and recoveries, one line each. */
  onLog?: (line: string) => void
}

/** A running Redis store: the `Store` a server's core writes through, and its lifecycle. */
export interface RedisStore extends Store {
  close(): Promise<void>
}

/** The most log entries one read takes: a long catch-up reads in slices. */
const READ_SLICE = 1000
/** The largest entry read from Redis, in bytes of JSON. */
const MAX_ENTRY_BYTES = 256 * 1024 * 1024

// Appends ARGV[2..] to the log if it still holds ARGV[1] entries: the
// replica's view was whole when it decided. Returns the new length, or -1
// (another replica wrote first).
const APPEND = `
if redis.call('LLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return -1 end
for i = 2, #ARGV do redis.call('RPUSH', KEYS[1], ARGV[i]) end
return redis.call('LLEN', KEYS[1])
`

// Counts a hit in a fixed window: INCR, and the window's end as its expiry.
const HIT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return count
`

/**
 * Opens the Redis store at `options.url` for one replica: connects (a Redis
 * that cannot be reached within `timeoutMs` is an error naming the URL,
 * never a fall-back to memory), then either appends the replica's freshly
 * seeded state as the log's first entry, when the log is empty, or puts
 * back the state the log holds. Every keyed write is then one
 * compare-and-swap on the log's length: two replicas never both append
 * from the same view, and the one that lost catches up and decides again
 * (`StoreConflict`). Keys share one hash tag, so a Redis Cluster keeps the
 * log and its counters in one slot.
 *
 * @example
 * const store = await openRedisStore({ url: 'redis://127.0.0.1:6379/0' }, source)
 * await store.sync()
 */
export async function openRedisStore(
  options: RedisStoreOptions,
  source: RedisStoreSource,
): Promise<RedisStore> {
  const { url, namespace = 'cts', timeoutMs = 3000, onLog } = options
  const shown = redactUrl(url)
  const log = `${namespace}:{sandbox}:log`
  let connected = false
  let fault: StoreFault | undefined
  const client = createClient({
    url,
    // @note Commands fail at once while Redis is away, rather than wait in
    // a queue: the request answers 503 and nothing stale is served.
    disableOfflineQueue: true,
    socket: {
      connectTimeout: timeoutMs,
      // Never give up once connected; at start, one failure is the answer.
      reconnectStrategy: (retries, cause) =>
        connected ? Math.min(50 * 2 ** Math.min(retries, 5), 1000) : cause,
    },
  })
  client.on('error', (error: Error) => {
    if (!connected) return
    if (fault === undefined) {
      onLog?.(`The Redis store at ${shown} is unreachable: ${describe(error)}`)
    }
    fault ??= {
      code: 'REDIS_UNAVAILABLE',
      message: `Redis at ${shown} is unreachable (${describe(error)}).`,
      since: new Date().toISOString(),
    }
  })
  client.on('ready', () => {
    if (fault !== undefined) onLog?.(`The Redis store at ${shown} is back.`)
    fault = undefined
  })
  try {
    await client.connect()
  } catch (error) {
    throw new Error(
      `Cannot reach the Redis store at ${shown}: ${describe(error as Error)}. Start Redis there, or give --store another URL.`,
      { cause: error },
    )
  }
  connected = true

  // The log's entries this replica has applied, and the order they apply in.
  let seen = 0
  let applying: Promise<void> = Promise.resolve()

  /** Reads entries from `from` on, in slices, stopping at the log's end. */
  const read = async (from: number): Promise<LogEntry[]> => {
    const entries: LogEntry[] = []
    for (;;) {
      const slice = await client.lRange(log, from, from + READ_SLICE - 1)
      for (const text of slice)
        entries.push(parseEntry(text, from + entries.length))
      if (slice.length < READ_SLICE) return entries
      from += slice.length
    }
  }

  const applyEntries = async (from: number, entries: LogEntry[]) => {
    // Entries this replica applied meanwhile (or wrote itself) are skipped.
    let at = from
    for (const entry of entries) {
      if (at++ < seen) continue
      if ('state' in entry) await source.replace(entry.state)
      else await source.apply(entry.write)
      seen = at
    }
  }

  /** Reads what other replicas appended since this one last looked, and applies it. */
  const sync = (): Promise<void> => {
    const from = seen
    const reading = read(from)
    const done = applying.then(async () => applyEntries(from, await reading))
    applying = done.catch(() => {})
    return done
  }

  /** Applies the whole log again from its last whole state: after a change that lost the race. */
  const resync = (): Promise<void> => {
    const done = applying.then(async () => {
      const length = await client.lLen(log)
      // The last whole state and what follows it are all that count.
      let start = length - 1
      for (; start > 0; start--) {
        const [text] = await client.lRange(log, start, start)
        if (text?.startsWith('{"state"')) break
      }
      seen = Math.max(0, start)
      await applyEntries(seen, await read(seen))
    })
    applying = done.catch(() => {})
    return done
  }

  // Appends in the order decided: each append waits for the one before.
  let appending: Promise<unknown> = Promise.resolve()
  const append = (entry: LogEntry, undo?: () => void): Promise<void> => {
    const text = JSON.stringify(entry)
    const done = appending.then(async () => {
      await applying
      const length = (await client
        .evalSha(await scripts.append, {
          keys: [log],
          arguments: [String(seen), text],
        })
        .catch(reloadScripts(APPEND, [log], [String(seen), text]))) as number
      if (length === -1) {
        undo?.()
        throw new StoreConflict()
      }
      seen = length
    })
    appending = done.catch(() => {})
    return done.catch((error: Error) => {
      if (!(error instanceof StoreConflict)) undo?.()
      throw error
    })
  }

  const scripts = {
    append: client.scriptLoad(APPEND),
    hit: client.scriptLoad(HIT),
  }
  // After Redis restarted without them, scripts are loaded again.
  const reloadScripts =
    (script: string, keys: string[], args: string[]) =>
    async (error: Error): Promise<unknown> => {
      if (!/NOSCRIPT/.test(error.message)) throw error
      return client.eval(script, { keys, arguments: args })
    }

  try {
    await Promise.all(Object.values(scripts))
    if ((await client.lLen(log)) === 0) {
      // The first replica's seeded state is everyone's.
      await append({ state: source.dump() }).catch(async (error) => {
        if (!(error instanceof StoreConflict)) throw error
        await resync()
      })
    } else {
      await resync()
    }
  } catch (error) {
    await client.destroy()
    throw error instanceof Error && /Redis store/.test(error.message)
      ? error
      : new Error(
          `Cannot read the Redis store at ${shown}: ${describe(error as Error)}.`,
          { cause: error },
        )
  }

  return {
    kind: 'redis',
    sync,
    resync,
    commit: (write, undo) => append({ write }, undo),
    saveState: () => append({ state: source.dump() }),
    async hit(key, windowMs) {
      const name = `${namespace}:{sandbox}:hits:${key}`
      const args = [String(windowMs)]
      return (await client
        .evalSha(await scripts.hit, { keys: [name], arguments: args })
        .catch(reloadScripts(HIT, [name], args))) as number
    },
    fault: () => fault,
    async close() {
      connected = false
      await client.close().catch(() => client.destroy())
    },
  }
}

/** One log entry, read from Redis: bounded, and in the log's shape. */
function parseEntry(text: string, at: number): LogEntry {
  if (text.length > MAX_ENTRY_BYTES) {
    throw new Error(
      `The Redis store's log entry ${at} is larger than ${MAX_ENTRY_BYTES} bytes; it is not this sandbox's.`,
    )
  }
  const entry = JSON.parse(text) as unknown
  if (
    entry === null ||
    typeof entry !== 'object' ||
    !('write' in entry !== 'state' in entry)
  ) {
    throw new Error(
      `The Redis store's log entry ${at} is neither a write nor a state; the key holds something else.`,
    )
  }
  return entry as LogEntry
}

/** A URL without its password, for messages. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString().replace(/\/$/, '')
  } catch {
    return url
  }
}

/** An error in a sentence: its message, then its code. */
function describe(error: Error): string {
  const code = (error as { code?: string }).code
  const message = error.message || 'no answer'
  return code && !message.includes(code) ? `${message} (${code})` : message
}
