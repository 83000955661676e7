/** A response kept for replay: status, headers and body, byte for byte. */
export interface StoredResponse {
  status: number
  headers: [string, string][]
  body: string
}

type Entry =
  | { state: 'in-flight'; fingerprint: string; expiresAt: number }
  | {
      state: 'done'
      fingerprint: string
      expiresAt: number
      response: StoredResponse
    }

/** What the store says of a key when a request arrives. */
export type IdempotencyLookup =
  | { kind: 'new' }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'in-flight' }
  | { kind: 'reused' }

/** Remembers `Idempotency-Key`s per account and operation, bounded in count and time. */
export interface IdempotencyStore {
  /** Claims `key` for a request with `fingerprint`, or says why it cannot. */
  begin(key: string, fingerprint: string, now: number): IdempotencyLookup
  /** Stores the answer to a claimed key. */
  complete(key: string, response: StoredResponse): void
  /** Lets a key go when its request was not answered in a way worth replaying. */
  abandon(key: string): void
  readonly size: number
}

/**
 * Creates an idempotency store. Entries expire `ttlMs` after they are claimed
 * on the sandbox clock; past `maxEntries` the oldest are dropped.
 *
 * @example
 * const store = createIdempotencyStore({ ttlMs: 86_400_000, maxEntries: 10_000 })
 */
export function createIdempotencyStore(options: {
  ttlMs: number
  maxEntries: number
}): IdempotencyStore {
  // @note A Map iterates in insertion order, so its first entries are the oldest.
  const entries = new Map<string, Entry>()

  const evict = (now: number): void => {
    for (const [key, entry] of entries) {
      if (entries.size <= options.maxEntries && entry.expiresAt > now) break
      entries.delete(key)
    }
  }

  return {
    begin(key, fingerprint, now) {
      const entry = entries.get(key)
      if (entry && entry.expiresAt > now) {
        if (entry.fingerprint !== fingerprint) return { kind: 'reused' }
        if (entry.state === 'in-flight') return { kind: 'in-flight' }
        return { kind: 'replay', response: entry.response }
      }
      entries.delete(key)
      entries.set(key, {
        state: 'in-flight',
        fingerprint,
        expiresAt: now + options.ttlMs,
      })
      evict(now)
      return { kind: 'new' }
    },
    complete(key, response) {
      const entry = entries.get(key)
      if (entry) entries.set(key, { ...entry, state: 'done', response })
    },
    abandon(key) {
      entries.delete(key)
    },
    get size() {
      return entries.size
    },
  }
}
