// The request journal: a bounded ring buffer, newest first.
import type { Operation } from '../model/operations.ts'
import type { JournalEntry } from '../model/journal-entry.ts'

export type { JournalEntry, Operation }

/** The request journal: newest first, bounded. */
export interface Journal {
  /** Newest first; `limit` caps how many. */
  list(options?: { limit?: number }): JournalEntry[]
  /** The most recent entry, if any. */
  last(): JournalEntry | undefined
  clear(): void
  /** How many entries it holds. */
  readonly size: number
}

/**
 * Creates a journal that keeps the newest `limit` entries in a ring buffer.
 *
 * @example
 * const journal = createJournal(100)
 */
export function createJournal(limit: number): Journal & {
  record(entry: JournalEntry): void
} {
  const ring: JournalEntry[] = []
  let next = 0
  return {
    record(entry) {
      if (ring.length < limit) ring.push(entry)
      else ring[next] = entry
      next = (next + 1) % limit
    },
    list({ limit: take = ring.length } = {}) {
      const out: JournalEntry[] = []
      const count = Math.min(Math.max(0, take), ring.length)
      for (let i = 1; i <= count; i++) {
        out.push(ring[(next - i + limit * 2) % limit]!)
      }
      return out
    },
    last() {
      return ring.length === 0 ? undefined : ring[(next - 1 + limit) % limit]
    },
    clear() {
      ring.length = 0
      next = 0
    },
    get size() {
      return ring.length
    },
  }
}
