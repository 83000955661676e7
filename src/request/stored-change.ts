// Storing what a call of the sandbox's own API changed, for a sandbox with a
// durable store: loaded with the store, so a page without one carries none of it.
import { inTurn, type RouteCall, type SandboxContext } from './context.ts'
import { storageUnavailable } from './storage-errors.ts'
import { MAX_STORE_ATTEMPTS, storeBusy } from './errors.ts'
import {
  StoreConflict,
  type Replaced,
  type StateChange,
  type Store,
} from '../model/store.ts'

/** What a whole state makes useless of what other replicas stored before it. */
const replacedBy: Partial<Record<StateChange & string, Replaced>> = {
  replaced: 'all',
  restored: 'records',
}

/**
 * Runs a resolver of the sandbox's own API on a sandbox with a durable
 * store: a read as it is, a change through `storeChange`. A store that
 * loads accounts as asked (a fleet's replica) loads them all first for the
 * calls that read or change customers and tokens (the state, a snapshot
 * taken, the export); the others (the health check, polled, the clocks,
 * scenarios, latency, journal and keys, and a reset or a restore, which
 * replace them unread) load none.
 *
 * @example
 * await runStored(ctx, store, call, () => resolve(sandboxCall))
 */
export async function runStored(
  ctx: SandboxContext,
  store: Store,
  { request, path }: RouteCall,
  resolve: () => Response | Promise<Response>,
): Promise<Response> {
  const records = readsRecords(path)
  const release = records ? await loadAll(store) : undefined
  try {
    // A read changes nothing: the health check, polled, pays no watch.
    if (request.method === 'GET') return await resolve()
    return await storeChange(
      ctx,
      store,
      resolve,
      (response) => response.status < 300,
      records,
    )
  } finally {
    release?.()
  }
}

/**
 * The calls that neither read nor change customers and tokens, or that
 * replace them all unread (a reset, a restore): a replica that loads
 * accounts as asked answers them without loading any.
 */
const WITHOUT_RECORDS =
  /^\/__sandbox\/(?:health|clock|scenarios|latency|requests|assumptions|api-keys|account\/.*|reset|snapshots\/restore)$/

/** Whether a `/__sandbox/` call reads or changes customers and tokens. */
const readsRecords = (path: string): boolean => !WITHOUT_RECORDS.test(path)

/**
 * Runs `change`, a change of the sandbox's own state (a `/__sandbox/` call,
 * or `reset()`, `load()` or `restore()` of the JavaScript API), and stores
 * what it changed before it settles, when the sandbox has a durable store
 * and `stores(result)` says the change was made. Only what it changed is
 * stored: a clock move its clocks, a new key its account and key, a reset
 * the whole state. When another replica of a fleet wrote first, this copy
 * takes what the store holds and `change` runs again. A write the store
 * refuses throws `storage_unavailable` (503): a small change is taken back
 * first; a whole one stays in memory where the store cannot put back what
 * it holds (the data file), and the next write stores it. With `records`
 * false (a call that neither reads nor changes customers and tokens), a
 * store that loads accounts as asked loads none first.
 *
 * @example
 * await storeChange(ctx, store, () => unstored.reset(2))
 */
export async function storeChange<T>(
  ctx: SandboxContext,
  store: Store,
  change: () => T | Promise<T>,
  stores: (result: T) => boolean = () => true,
  records = true,
): Promise<T> {
  if (store.resync) return storeEachChange(ctx, store, change, stores, records)
  // @note One change at a time on a store that cannot put back what it
  // holds: a change taken back after a failure then never takes with it
  // another one decided on top of it.
  return inTurn(ctx, 'adminTurn', () =>
    storeEachChange(ctx, store, change, stores, records),
  )
}

async function storeEachChange<T>(
  ctx: SandboxContext,
  store: Store,
  change: () => T | Promise<T>,
  stores: (result: T) => boolean,
  records: boolean,
): Promise<T> {
  // Whether the change that lost the race replaced or edited records.
  let whole = false
  for (let attempt = 1; ; attempt++) {
    // A whole state stored from a copy without every account would drop
    // the others' records: each attempt loads them (a resync unloads).
    const release = records ? await loadAll(store) : undefined
    try {
      // @note Decided and stored with nothing of other replicas applied in
      // between: a reset is stored after whatever they wrote meanwhile, and
      // their writes, applied to the new data, would be stored with it.
      const decide = () => decideAndStore(ctx, store, change, stores)
      const decided = await (store.alone ? alone(ctx, store, decide) : decide())
      if (decided.done) return decided.result
      whole = decided.whole
    } finally {
      release?.()
    }
    // Another replica changed the state first: make this change again on
    // what the store holds, this copy's own change dropped.
    if (attempt >= MAX_STORE_ATTEMPTS) throw storeBusy()
    // @note A small change was taken back when it was refused, so catching
    // up is enough; putting back the whole state would drop every request
    // this replica is answering, with a 503 blaming a reset nobody made.
    // Only a store that can resync reports a conflict (decideAndStore).
    await (whole || !store.sync ? store.resync!() : store.sync()).catch(
      (error: Error) => {
        throw storageUnavailable(error, store)
      },
    )
  }
}

/**
 * Runs `work` while the replica applies nothing that other replicas wrote
 * and takes no queued scenario: a change stores the scenarios whole, as
 * this copy holds them, and a take of its own stored meanwhile (applied
 * here only once stored) would be missing from them, and come back.
 */
function alone<T>(
  ctx: SandboxContext,
  store: Store,
  work: () => Promise<T>,
): Promise<T> {
  return inTurn(ctx, 'scenarioTurn', () => store.alone!(work))
}

/**
 * Makes `change` once and stores what it changed: `done` unless another
 * replica changed the state first, and then whether the change was
 * `whole` (a state this copy cannot take back but by putting back the
 * store's).
 */
async function decideAndStore<T>(
  ctx: SandboxContext,
  store: Store,
  change: () => T | Promise<T>,
  stores: (result: T) => boolean,
): Promise<{ done: true; result: T } | { done: false; whole: boolean }> {
  const decidedAt = store.version?.()
  const watch = await ctx.watchState()
  const result = await change()
  // @note A call that changed nothing stored (a read, the journal, a
  // snapshot kept in memory) stores nothing.
  const changed = watch.changed()
  if (!stores(result) || changed === undefined) return { done: true, result }
  // @note A small change that is not stored is taken back, so that the
  // 503's "nothing was changed" is true; a whole one (a reset, a
  // restore) is not, and its 503 says what became of it.
  try {
    if (typeof changed === 'string')
      await store.saveState(decidedAt, replacedBy[changed])
    else await store.commit(changed, () => watch.undo(changed), decidedAt)
    return { done: true, result }
  } catch (error) {
    if (!(error instanceof StoreConflict) || !store.resync) {
      throw storageUnavailable(error as Error, store, {
        kept: typeof changed === 'string',
        admin: true,
      })
    }
  }
  return { done: false, whole: typeof changed === 'string' }
}

/** Loads every account's records from a store that loads them as asked, held until the release it gives; its failure is a 503. */
async function loadAll(store: Store): Promise<(() => void) | undefined> {
  if (!store.loadAll) return undefined
  return store.loadAll().catch((error: Error) => {
    throw storageUnavailable(error, store, { read: true })
  })
}
