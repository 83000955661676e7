// Where a sandbox's writes are kept beyond its memory: the interface every
// durable store (the data file, Redis, localStorage) implements.
import type { CreatedRecord } from './db.ts'
import type { Operation } from './operations.ts'
import type { JournalEntry } from './journal-entry.ts'
import type {
  AccountRecord,
  ApiKeyRecord,
  SandboxData,
  SavedIdempotencyKey,
  SavedScenarios,
} from './schemas.ts'

/**
 * One write an API call made, stored as a whole: the record it created, the
 * `Idempotency-Key` that replays its answer, or both. A store keeps both
 * parts or neither, so a retry after a restart never finds the record
 * without its key (a duplicate) nor the key without its record.
 */
export interface StoreWrite {
  created?: CreatedRecord
  idempotencyKey?: SavedIdempotencyKey
  /**
   * A queued scenario was taken: stored so that no restart brings it back
   * and no other replica takes it too.
   */
  taken?: { account_id: string | null; operation: Operation }
  /**
   * An account that a call of the sandbox's own API created, with the API
   * key it was given: stored beside the records, not as a whole state.
   */
  added?: AddedRecords
  /** The small parts of the state that a call of the sandbox's own API changed, each whole. */
  set?: StateParts
}

/**
 * A store's own words in `503 storage_unavailable`: "The sandbox could not
 * store this write {where} ({code}), so nothing was changed. Retry once
 * {until}; …".
 *
 * @example
 * const outage: StoreOutage = { where: 'in its Redis store', until: 'Redis takes writes again', code: 'REDIS_UNAVAILABLE' }
 */
export interface StoreOutage {
  /** Where the write was to go. */
  where: string
  /** When a retry can succeed. */
  until: string
  /** The code shown when the error carries none of its own. */
  code: string
  /**
   * What became of a change that replaced the records (a reset, a restore)
   * when it could not be stored, for a store that keeps it in memory rather
   * than put back what it holds; without it, nothing was changed.
   */
  kept?: string
  /**
   * Where a store that replicas share is read from before a request is
   * answered (`its Redis store`), and when a retry can succeed
   * (`Redis answers again`), for a read it could not bring up to date.
   */
  reads?: { from: string; until: string }
  /**
   * When a retry can succeed after an error of one code, where waiting
   * alone never helps (a Redis log that holds what is not this sandbox's).
   */
  untilFixed?: Record<string, string>
}

/** The account and API key one call created (`createApiKey`). */
export interface AddedRecords {
  account?: AccountRecord
  api_key?: ApiKeyRecord
}

/**
 * A saved clock as a durable store keeps it: a running one (set or
 * advanced under `clockAfterSet: 'running'`) with `host_now`, the host's
 * time (ISO 8601) when it read `now`, so that a restart or another replica
 * runs it on by the host's time since (`clock-anchors.ts`). Saved data
 * without it (an older release's, `dump()`) runs on from `now`.
 */
export type StoredClock<T = SandboxData['clock']> = T & { host_now?: string }

/**
 * The parts of the state that are not records and stay small whatever the
 * data holds: the clocks and the scenarios (with the latency). Each part
 * present replaces the stored one whole.
 */
export interface StateParts {
  clock?: StoredClock
  /** Every account's own clock; an account missing from it has none. */
  account_clocks?: StoredClock<
    NonNullable<SandboxData['account_clocks']>[number]
  >[]
  scenarios?: SavedScenarios
}

/**
 * What a call of the sandbox's own API changed, to store before it is
 * answered: nothing, one small write (`added`, `set`), `'whole'` when it
 * edited records (a delete), which only the whole state holds,
 * `'replaced'` when it replaced the data as a whole (a reset, a load): a
 * whole state that owes nothing to the one before it, or `'restored'` when
 * it replaced the data and kept the scenarios (a restore): it owes those.
 */
export type StateChange =
  StoreWrite | 'whole' | 'replaced' | 'restored' | undefined

/**
 * How much of what a fleet stored before a whole state the state makes
 * useless: all of it (a reset), or all but the scenarios, which it kept as
 * the replica held them (a restore).
 */
export type Replaced = 'all' | 'records'

/**
 * What a watch of the state tells once a call of the sandbox's own API is
 * done: what the call changed, and how to take a small change back.
 */
export interface StateWatch {
  /** What the call changed: nothing, one small write, `'whole'`, `'replaced'` or `'restored'`. */
  changed(): StateChange
  /**
   * Puts back the parts a small change set, as they were when the watch
   * began, and removes the account and key it added: for a store that
   * could not take the change, so that its `503` ("nothing was changed")
   * is true.
   */
  undo(change: StoreWrite): void
}

/**
 * The most admin changes (clocks, scenarios, accounts and keys) a durable
 * store keeps as small writes after its last whole state: they add nothing
 * to the data, so past this many the next write stores the whole state,
 * and what came before it can go.
 */
export const MAX_CHANGES_BETWEEN_STATES = 1000

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
  /** Which store this is, named by the store itself (`'file'`, `'redis'`). */
  readonly kind: string
  /** How a write this store could not take reads in its `503` problem. */
  readonly outage: StoreOutage
  /**
   * Brings this copy up to what the store holds, before a request is
   * answered: a store that replicas share has writes this one has not seen.
   */
  /**
   * With the `credential` of the request (an API key or a token), it also
   * loads that account's records, for a store that loads them only as
   * asked, and holds them until the release it returns is called.
   */
  sync?(credential?: string): Promise<(() => void) | undefined>
  /**
   * Loads every account's records, for a change or read of them all (an
   * admin call, a whole state to store), and holds them until the release
   * it returns is called: a store that replicas share loads an account's
   * records only once a request asks for them, and lets go of those that
   * no request used for longest past its bound.
   */
  loadAll?(): Promise<() => void>
  /**
   * Whether this copy holds the account's records, for a store that loads
   * them as asked: `false` once a whole new state put back let go of them
   * under a request that `sync` loaded them for.
   */
  loaded?(accountId: string): boolean
  /**
   * Puts back what the store holds, dropping this copy's own changes that it
   * did not take (after a `StoreConflict` of `saveState`).
   */
  resync?(): Promise<void>
  /**
   * Counts one hit of `key` in a window of `windowMs` that every replica
   * shares, and returns the count so far (rate limits across a fleet).
   */
  hit?(key: string, windowMs: number): Promise<number>
  /** Forgets every count `hit` made: a reset starts each window again. */
  forgetHits?(): Promise<void>
  /**
   * How far this copy has followed a shared store: taken before a write is
   * decided and given to `commit`, so that a write decided before another
   * replica's was applied here is decided again.
   */
  version?(): number
  /**
   * The journal that every replica of a fleet writes, newest first: one
   * ordered list, each account's view a part of it.
   */
  journal?: SharedJournal
  /**
   * The named snapshots that every replica of a fleet takes and restores;
   * without it, each sandbox keeps its own in memory.
   */
  snapshots?: SharedSnapshots
  /**
   * Stores one write. On failure `undo` has run (the record is gone from
   * memory again) before the promise rejects; a `StoreConflict` says that
   * another replica wrote first, and the write is to be decided again after
   * `sync()`.
   */
  commit(
    write: StoreWrite,
    undo?: () => void,
    decidedAt?: number,
  ): Promise<void>
  /**
   * Stores the whole state after a change that replaced or edited records
   * (a reset, a restore, a load). With `replaced`, the state replaced the
   * data: a store that replicas share stores it after whatever they wrote
   * meanwhile, which it makes useless (`'all'`), or only when none of it
   * changed the scenarios, which the state kept as they were (`'records'`,
   * a restore); an edit, or a restore that other replicas' scenarios
   * changed, is decided again when another wrote first.
   */
  saveState(decidedAt?: number, replaced?: Replaced): Promise<void>
  /**
   * Runs `work` (a change of the sandbox's own API, decided and stored)
   * while this copy applies nothing that other replicas wrote: what it
   * decides on stays what it stores.
   */
  alone?<T>(work: () => Promise<T>): Promise<T>
  /** The error of the last write when it failed, for the health check. */
  fault(): StoreFault | undefined
}

/**
 * Another replica wrote to a shared store after this one last looked: the
 * write was not stored, and is to be decided again on what the store holds.
 *
 * @example
 * if (error instanceof StoreConflict) await store.sync()
 */
export class StoreConflict extends Error {
  constructor() {
    super('Another replica wrote first.')
    this.name = 'StoreConflict'
  }
}

/**
 * What a store that replicas share reads and changes of the sandbox it
 * serves: the whole state to store, and the writes of other replicas to
 * apply.
 */
export interface StoreSource {
  /** The whole state, to store when it changed other than by one write. */
  dump(): SandboxData & DurableExtras
  /** Puts back a whole state another replica stored. */
  replace(state: SandboxData & DurableExtras): Promise<void>
  /** Applies a write another replica stored. */
  apply(write: StoreWrite): Promise<void>
  /**
   * The whole state but customers and tokens: what a store that keeps
   * records apart, account by account, stores beside them (it counts them
   * itself, as it stored them).
   */
  dumpShared(): SandboxData & DurableExtras
  /** Adds records another replica stored, when their account is first asked for. */
  insert(records: readonly CreatedRecord[]): Promise<void>
  /** The account of a loaded API key or token with this secret. */
  accountOf(credential: string): string | undefined
  /** Tells how many customers and tokens the store holds beyond those loaded. */
  holdElsewhere(count: number): void
  /** How many customers and tokens this copy holds, and of one account. */
  heldRecords(accountId?: string): number
  /** Every account's id. */
  accountIds(): string[]
  /** Drops one account's customers and tokens from this copy (the store keeps them). */
  evict(accountId: string): Promise<void>
}

/** The journal of a fleet, kept in its shared store. */
export interface SharedJournal {
  /** Adds an entry; entries of one moment go to the store together. */
  append(entry: JournalEntry): void
  /** The newest entries first: all, or one account's since its view was cleared. */
  list(options: { limit?: number; accountId?: string }): Promise<JournalEntry[]>
  /**
   * Empties the journal, or hides the entries so far from one account's
   * view; `reset` when a reset of this copy's data comes with it, which the
   * copy takes back (putting back what the store holds) if the clear fails.
   */
  clear(accountId?: string, options?: { reset?: boolean }): Promise<void>
}

/** What a snapshot's list shows of it. */
export interface SharedSnapshotInfo {
  name: string
  created_at: string
  customers: number
  tokens: number
}

/** The named snapshots of a fleet, kept in its shared store. */
export interface SharedSnapshots {
  /**
   * Keeps `data` (a whole state's JSON) under `info.name`, replacing one of
   * that name; `false`, keeping nothing, when `most` others are kept.
   */
  take(info: SharedSnapshotInfo, data: string, most: number): Promise<boolean>
  /** The JSON of the snapshot named `name`; `undefined` when none is kept. */
  data(name: string): Promise<string | undefined>
  /** Every snapshot kept, the first taken first. */
  list(): Promise<SharedSnapshotInfo[]>
}
