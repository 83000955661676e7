// The Idempotency-Key store: keys per account and operation, bounded in count and time.
import type { SavedIdempotencyKey } from '../model/schemas.ts'

export type { SavedIdempotencyKey }

/** A response kept for replay: status, headers and body, byte for byte. */
export interface StoredResponse {
  status: number
  headers: [string, string][]
  body: string
  /** The error code of a refusal kept for replay, for the journal. */
  code?: string
}

type Entry =
  | {
      state: 'in-flight'
      fingerprint: string
      expiresAt: number
      account: string
    }
  | {
      state: 'done'
      fingerprint: string
      expiresAt: number
      account: string
      response: StoredResponse
    }

/** What the store says of a key when a request arrives. */
export type IdempotencyLookup =
  | { kind: 'new' }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'in-flight' }
  | { kind: 'reused' }
  /** The store is full of live keys: in all, or of this account. */
  | {
      kind: 'full'
      option: 'idempotency.maxEntries' | 'idempotency.maxEntriesPerAccount'
      max: number
    }

/** Remembers `Idempotency-Key`s per account and operation, bounded in count and time. */
export interface IdempotencyStore {
  /**
   * Claims `key` of `account` for a request with `fingerprint`, or says why
   * it cannot. A key kept with the fingerprint of an earlier version (before
   * `sha256:`) matches what `legacy` gives, that request's `hashString`,
   * asked only then.
   */
  begin(
    key: string,
    fingerprint: string,
    now: number,
    account?: string,
    legacy?: () => string,
  ): IdempotencyLookup
  /** The form in which a durable store keeps a claimed key once `response` answers it. */
  toSaved(
    key: string,
    response: StoredResponse,
  ): SavedIdempotencyKey | undefined
  /** Stores the answer to a claimed key. */
  complete(key: string, response: StoredResponse): void
  /** Lets a key go when its request was not answered in a way worth replaying. */
  abandon(key: string): void
  readonly size: number
  /** The answered keys whose window is still open at `now`, oldest first. */
  saved(now: number): SavedIdempotencyKey[]
  /** Puts back keys that `saved()` gave, past their window or not: `begin` expires them. */
  restore(keys: readonly SavedIdempotencyKey[]): void
}

/**
 * Creates an idempotency store. Entries expire `ttlMs` after they are claimed
 * on the sandbox clock. A live key is never dropped to make room: past
 * `maxEntries` in all, or `maxEntriesPerAccount` for one account, a new key
 * is refused (`full`), so one account's traffic never evicts another's keys
 * and a retry within its window never becomes a duplicate.
 *
 * @example
 * const store = createIdempotencyStore({ ttlMs: 86_400_000, maxEntries: 50_000, maxEntriesPerAccount: 1000 })
 */
export function createIdempotencyStore(options: {
  ttlMs: number
  maxEntries: number
  maxEntriesPerAccount?: number
}): IdempotencyStore {
  const perAccount = options.maxEntriesPerAccount ?? options.maxEntries
  // @note A Map iterates in insertion order, so its first entries are the
  // oldest and (with one TTL) the first to expire, until the clock goes
  // back: a key claimed then expires before earlier ones.
  const entries = new Map<string, Entry>()
  // Whether the entries are in expiry order, and the expiry of the last one.
  let ordered = true
  let latest = Number.NEGATIVE_INFINITY
  const counts = new Map<string, number>()

  const remove = (key: string, entry: Entry): void => {
    entries.delete(key)
    const left = (counts.get(entry.account) ?? 1) - 1
    if (left === 0) counts.delete(entry.account)
    else counts.set(entry.account, left)
  }

  const dropExpired = (now: number): void => {
    if (ordered) {
      for (const [key, entry] of entries) {
        if (entry.expiresAt > now) break
        remove(key, entry)
      }
      return
    }
    // Out of order: look at every entry, and see whether the order is back.
    let previous = Number.NEGATIVE_INFINITY
    let inOrder = true
    for (const [key, entry] of entries) {
      if (entry.expiresAt <= now) {
        remove(key, entry)
        continue
      }
      if (entry.expiresAt < previous) inOrder = false
      previous = entry.expiresAt
    }
    if (inOrder) {
      ordered = true
      latest = previous
    }
  }

  return {
    begin(key, fingerprint, now, account = '', legacy) {
      const entry = entries.get(key)
      if (entry && entry.expiresAt > now) {
        // @note A key kept before `sha256:` fingerprints (a data file, a
        // Redis log, localStorage of an earlier version) is compared as it
        // was: a retry across the upgrade still replays.
        if (
          entry.fingerprint !== fingerprint &&
          (entry.fingerprint.startsWith('sha256:') ||
            entry.fingerprint !== legacy?.())
        )
          return { kind: 'reused' }
        if (entry.state === 'in-flight') return { kind: 'in-flight' }
        return { kind: 'replay', response: entry.response }
      }
      if (entry) remove(key, entry)
      dropExpired(now)
      if ((counts.get(account) ?? 0) >= perAccount) {
        return {
          kind: 'full',
          option: 'idempotency.maxEntriesPerAccount',
          max: perAccount,
        }
      }
      if (entries.size >= options.maxEntries) {
        return {
          kind: 'full',
          option: 'idempotency.maxEntries',
          max: options.maxEntries,
        }
      }
      const expiresAt = now + options.ttlMs
      entries.set(key, { state: 'in-flight', fingerprint, expiresAt, account })
      if (expiresAt < latest) ordered = false
      else latest = expiresAt
      counts.set(account, (counts.get(account) ?? 0) + 1)
      return { kind: 'new' }
    },
    toSaved(key, response) {
      const entry = entries.get(key)
      return (
        entry && {
          key,
          fingerprint: entry.fingerprint,
          expires_at: entry.expiresAt,
          account: entry.account,
          response,
        }
      )
    },
    complete(key, response) {
      const entry = entries.get(key)
      if (entry) entries.set(key, { ...entry, state: 'done', response })
    },
    abandon(key) {
      const entry = entries.get(key)
      if (entry) remove(key, entry)
    },
    get size() {
      return entries.size
    },
    saved(now) {
      const list: SavedIdempotencyKey[] = []
      for (const [key, entry] of entries) {
        if (entry.state !== 'done' || entry.expiresAt <= now) continue
        list.push({
          key,
          fingerprint: entry.fingerprint,
          expires_at: entry.expiresAt,
          account: entry.account,
          response: entry.response,
        })
      }
      return list
    },
    restore(keys) {
      for (const saved of keys) {
        const entry = entries.get(saved.key)
        if (entry) remove(saved.key, entry)
        entries.set(saved.key, {
          state: 'done',
          fingerprint: saved.fingerprint,
          expiresAt: saved.expires_at,
          account: saved.account,
          response: saved.response,
        })
        if (saved.expires_at < latest) ordered = false
        else latest = saved.expires_at
        counts.set(saved.account, (counts.get(saved.account) ?? 0) + 1)
      }
    },
  }
}
