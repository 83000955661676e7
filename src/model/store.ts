// Where a sandbox's writes are kept beyond its memory: the interface a
// durable store (today the server's data file) implements.
import type { CreatedRecord } from './db.ts'
import type { SavedIdempotencyKey, SavedScenarios } from './schemas.ts'

/**
 * One write an API call made, stored as a whole: the record it created, the
 * `Idempotency-Key` that replays its answer, or both. A store keeps both
 * parts or neither, so a retry after a restart never finds the record
 * without its key (a duplicate) nor the key without its record.
 */
export interface StoreWrite {
  created?: CreatedRecord
  idempotencyKey?: SavedIdempotencyKey
}

/** The storage error in force after a failed write. */
export interface StoreFault {
  /** The system's error code, e.g. `ENOSPC`, `EFBIG`, `EIO`, `EROFS`. */
  code: string
  message: string
  /** When the first write of this outage failed (wall clock, ISO 8601). */
  since: string
}

/**
 * What the sandbox keeps beside its records so that a restart changes
 * nothing a client can see: answered idempotency keys and queued scenarios.
 * Records, clocks and the seed are the data format's own (`dump()`).
 */
export interface DurableExtras {
  idempotency_keys: SavedIdempotencyKey[]
  scenarios?: SavedScenarios
}

/**
 * A durable store: each write is stored before it is answered. The
 * in-process memory store has none (a sandbox without one pays nothing);
 * the server's data file is one (`openDataFileLog`).
 *
 * @example
 * const store: Store = await openDataFileLog('sandbox.jsonl', sandbox)
 * await store.commit({ created: { customer } }, () => db.remove({ customer }))
 */
export interface Store {
  /** Which store this is, for the health check. */
  readonly kind: 'file'
  /**
   * Stores one write. On failure `undo` has run (the record is gone from
   * memory again) before the promise rejects.
   */
  commit(write: StoreWrite, undo?: () => void): Promise<void>
  /**
   * Stores the whole state after a change that is not one record (reset,
   * keys, clocks, scenarios, restore).
   */
  saveState(): Promise<void>
  /** The error of the last write when it failed, for the health check. */
  fault(): StoreFault | undefined
}
